//! Persistent daemons: `ibdyn dvm start` / `run --dvm` / `dvm stop`, two jobs under one DVM
//! meeting through the name service, spawns under the DVM, a client without the secret
//! refused, and nothing left behind after the stop.

mod common;

use common::*;
use std::io::{Read, Write};
use std::process::Output;
use std::time::Duration;

fn show(out: &Output) -> String {
    format!(
        "status {:?}\nstdout:\n{}\nstderr:\n{}",
        out.status,
        text(&out.stdout),
        text(&out.stderr)
    )
}

/// A DVM in the scratch dir; stopped (and checked) on drop.
struct Dvm<'a> {
    s: &'a Scratch,
    stopped: bool,
}

impl<'a> Dvm<'a> {
    fn start(s: &'a Scratch, nodes: u32) -> Dvm<'a> {
        let out = run_bounded(
            s.ibdyn(&["dvm", "start", "--nodes", &nodes.to_string()]),
            None,
            Duration::from_secs(60),
        );
        assert!(out.status.success(), "{}", show(&out));
        assert!(text(&out.stdout).contains("contact file"), "{}", show(&out));
        Dvm { s, stopped: false }
    }

    fn run(&self, args: &[&str]) -> Output {
        let mut a = vec!["run", "--dvm"];
        a.extend_from_slice(args);
        run_bounded(self.s.ibdyn(&a), None, Duration::from_secs(60))
    }

    fn contact(&self) -> String {
        // SAFETY: getuid has no preconditions and cannot fail.
        let uid = unsafe { libc_getuid() };
        std::fs::read_to_string(self.s.dir.join(format!("ibdyn-dvm-{uid}/contact")))
            .expect("contact file")
    }

    fn stop(&mut self) {
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

#[test]
fn dvm_runs_jobs_returns_status_and_stops_clean() {
    let s = Scratch::new("dvm");
    let mut dvm = Dvm::start(&s, 2);
    let hello = example_bin("hello");
    for _ in 0..2 {
        let out = dvm.run(&["-n", "3", "--tag-output", hello.to_str().unwrap()]);
        assert!(out.status.success(), "{}", show(&out));
        assert_eq!(lines_with(&out, "[").len(), 3, "{}", show(&out));
    }
    let out = dvm.run(&["-n", "2", "sh", "-c", "exit 3"]);
    assert_eq!(out.status.code(), Some(3), "{}", show(&out));
    assert!(
        text(&out.stderr).contains("exited with code 3"),
        "{}",
        show(&out)
    );
    let out = dvm.run(&["-n", "1", "no-such-program-ibdyn"]);
    assert_eq!(out.status.code(), Some(127), "{}", show(&out));
    // The DVM still serves after those.
    let spawn = example_bin("spawn_check");
    let out = dvm.run(&["-n", "1", spawn.to_str().unwrap(), "parent", "3"]);
    assert_all_ok(&out, 1);
    assert_eq!(lines_with(&out, "CHILD ").len(), 3, "{}", show(&out));
    dvm.stop();
}

#[test]
fn two_jobs_under_one_dvm_meet_through_the_name_service() {
    let s = Scratch::new("dvmns");
    let mut dvm = Dvm::start(&s, 2);
    let prog = example_bin("spawn_check");
    let server = {
        let mut c = s.ibdyn(&["run", "--dvm", "-n", "1", prog.to_str().unwrap(), "server"]);
        c.stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        c.spawn().expect("start server job")
    };
    let client = dvm.run(&["-n", "1", prog.to_str().unwrap(), "client"]);
    let server = server.wait_with_output().expect("server output");
    assert_all_ok(&client, 1);
    assert_all_ok(&server, 1);
    let c = lines_with(&client, "CLIENT");
    let sv = lines_with(&server, "SERVER");
    assert_eq!(
        (c.len(), sv.len()),
        (1, 1),
        "{}\n{}",
        show(&client),
        show(&server)
    );
    // Each names the other's job.
    let cjob = c[0].split(' ').nth(1).unwrap();
    let sjob = sv[0].split(' ').nth(1).unwrap();
    assert!(
        c[0].ends_with(sjob) && sv[0].ends_with(cjob),
        "{c:?} {sv:?}"
    );
    dvm.stop();
}

#[test]
fn a_client_without_the_secret_is_refused() {
    let s = Scratch::new("dvmsecret");
    let mut dvm = Dvm::start(&s, 1);
    let contact = dvm.contact();
    let port: u16 = contact
        .split_whitespace()
        .find_map(|t| t.strip_prefix("port="))
        .and_then(|p| p.parse().ok())
        .expect("port in contact file");
    let mut sock = std::net::TcpStream::connect(("127.0.0.1", port)).expect("connect");
    sock.set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    sock.write_all(b"cmd=ibdyn_auth secret=0123456789abcdef role=client index=0\ncmd=c_stop\n")
        .unwrap();
    let mut buf = Vec::new();
    let _ = sock.read_to_end(&mut buf);
    assert!(buf.is_empty(), "a wrong-secret client got {:?}", text(&buf));
    // The DVM was not stopped by it and still runs jobs.
    let out = dvm.run(&["-n", "1", "true"]);
    assert!(out.status.success(), "{}", show(&out));
    dvm.stop();
}
