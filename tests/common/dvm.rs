//! A DVM (`ibdyn dvm start`) in a test's scratch dir; stopped, and checked clean, on drop.

use super::{run_bounded, text, Scratch};
use std::process::{Child, Output, Stdio};
use std::time::Duration;

/// The status, stdout and stderr of a finished command, for assertion messages.
pub fn show(out: &Output) -> String {
    format!(
        "status {:?}\nstdout:\n{}\nstderr:\n{}",
        out.status,
        text(&out.stdout),
        text(&out.stderr)
    )
}

pub struct Dvm<'a> {
    s: &'a Scratch,
    env: Vec<(String, String)>,
    stopped: bool,
}

impl<'a> Dvm<'a> {
    pub fn start(s: &'a Scratch, nodes: u32) -> Dvm<'a> {
        Self::start_with(s, nodes, &[])
    }

    /// A DVM whose controller and daemons (and so every rank they start) have `env` set.
    pub fn start_with(s: &'a Scratch, nodes: u32, env: &[(&str, &str)]) -> Dvm<'a> {
        let mut cmd = s.ibdyn(&["dvm", "start", "--nodes", &nodes.to_string()]);
        cmd.envs(env.iter().copied());
        let out = run_bounded(cmd, None, Duration::from_secs(60));
        assert!(out.status.success(), "{}", show(&out));
        assert!(text(&out.stdout).contains("contact file"), "{}", show(&out));
        Dvm {
            s,
            env: env
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            stopped: false,
        }
    }

    /// `ibdyn run --dvm ARGS`, bounded by `limit`.
    pub fn run_for(&self, args: &[&str], limit: Duration) -> Output {
        let mut a = vec!["run", "--dvm"];
        a.extend_from_slice(args);
        let mut cmd = self.s.ibdyn(&a);
        cmd.envs(self.env.iter().map(|(k, v)| (k, v)));
        run_bounded(cmd, None, limit)
    }

    pub fn run(&self, args: &[&str]) -> Output {
        self.run_for(args, Duration::from_secs(60))
    }

    /// `ibdyn run --dvm ARGS` started, its output piped.
    pub fn spawn(&self, args: &[&str]) -> Child {
        let mut a = vec!["run", "--dvm"];
        a.extend_from_slice(args);
        let mut c = self.s.ibdyn(&a);
        c.envs(self.env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        c.spawn().expect("start ibdyn run --dvm")
    }

    /// The DVM still takes and runs a job (after a fault in an earlier one).
    pub fn assert_serves(&self) {
        let out = self.run(&["-n", "1", "true"]);
        assert!(out.status.success(), "{}", show(&out));
    }

    pub fn contact(&self) -> String {
        // SAFETY: getuid has no preconditions and cannot fail.
        let uid = unsafe { libc_getuid() };
        std::fs::read_to_string(self.s.dir.join(format!("ibdyn-dvm-{uid}/contact")))
            .expect("contact file")
    }

    pub fn stop(&mut self) {
        self.stopped = true;
        let out = run_bounded(
            self.s.ibdyn(&["dvm", "stop"]),
            None,
            Duration::from_secs(60),
        );
        assert!(out.status.success(), "{}", show(&out));
        self.s.assert_clean();
    }
}

impl Drop for Dvm<'_> {
    fn drop(&mut self) {
        if !self.stopped {
            let _ = run_bounded(
                self.s.ibdyn(&["dvm", "stop"]),
                None,
                Duration::from_secs(60),
            );
        }
    }
}

extern "C" {
    #[link_name = "getuid"]
    fn libc_getuid() -> u32;
}
