//! Launcher agents: the command that starts a node daemon on a host (ssh, an exec template
//! such as `ip netns exec {host}`, or one `srun` for the whole allocation), and the agent
//! processes with the tail of what they said on stderr (to name why a host failed).

use super::Host;
use crate::error::{LaunchError, Result};
use std::io::BufRead;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};

/// How daemons get started on hosts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Agent {
    /// ssh-like: these words, the host (at `{host}` or appended), then the daemon's command as
    /// one string for the remote shell; the job secret goes through stdin.
    Ssh(Vec<String>),
    /// These words with `{host}` replaced (appended when absent), then the daemon's argv.
    Exec(Vec<String>),
    /// One `srun --ntasks-per-node=1 --nodes=K ...` starting every daemon of the allocation.
    Srun,
}

fn words(template: &str, what: &str) -> Result<Vec<String>> {
    let w: Vec<String> = template.split_whitespace().map(str::to_string).collect();
    if w.is_empty() {
        return Err(LaunchError::Usage(format!("{what} is empty")));
    }
    Ok(w)
}

fn with_host(words: &[String], host: &str) -> Vec<String> {
    let mut out: Vec<String> = words.iter().map(|w| w.replace("{host}", host)).collect();
    if !words.iter().any(|w| w.contains("{host}")) {
        out.push(host.to_string());
    }
    out
}

/// Whether `host` names this machine: `localhost`, a loopback address, this machine's host
/// name (with or without its domain), or an address of one of its interfaces. Its daemon then
/// starts without ssh, as mpirun and Hydra start theirs: `--hosts localhost:4` works where no
/// sshd runs, and a host file that lists the node it runs on needs no key for oneself.
pub fn is_this_machine(host: &str) -> bool {
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    if let Ok(ip) = bare.parse::<std::net::IpAddr>() {
        return ip.is_loopback()
            || ibdyn_verbs::iface::local_addresses().is_ok_and(|a| a.iter().any(|a| a.ip == ip));
    }
    if host.eq_ignore_ascii_case("localhost") {
        return true;
    }
    let me = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default();
    same_host_name(host, me.trim())
}

/// `node1` and `node1.cluster` are one host; `node1.a` and `node1.b` are not.
fn same_host_name(a: &str, b: &str) -> bool {
    if a.is_empty() || b.is_empty() {
        return false;
    }
    let first = |s: &str| s.split('.').next().unwrap_or_default().to_ascii_lowercase();
    a.eq_ignore_ascii_case(b) || ((!a.contains('.') || !b.contains('.')) && first(a) == first(b))
}

/// `'text'` for a POSIX shell.
pub fn shell_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

/// The shell script that finds `ibdyn` on a host (the same path as here, else on PATH) and
/// execs its daemon; a host without it says so on stderr and exits 127.
pub fn daemon_script(exe: &Path, daemon_args: &[String], env: &[(String, String)]) -> String {
    let exe_q = shell_quote(&exe.display().to_string());
    let args: Vec<String> = daemon_args.iter().map(|a| shell_quote(a)).collect();
    let args = args.join(" ");
    let exports: String = env
        .iter()
        .map(|(k, v)| format!("export {k}={}; ", shell_quote(v)))
        .collect();
    format!(
        "{exports}if [ -x {exe_q} ]; then exec {exe_q} daemon {args}; \
         elif command -v ibdyn >/dev/null 2>&1; then exec ibdyn daemon {args}; \
         else echo \"ibdyn: no ibdyn binary at \"{exe_q}\" nor on PATH on $(hostname)\" >&2; \
         exit 127; fi"
    )
}

/// The `IBDYN_*` settings a remote daemon (and so its ranks) should see: the log filter, the
/// provider, ... never the job secret.
pub fn forwarded_env() -> Vec<(String, String)> {
    std::env::vars()
        .filter(|(k, _)| {
            k.starts_with("IBDYN_") && k != ibdyn_pmi::env::JOB_SECRET && k != "IBDYN_ADOPTING"
        })
        .collect()
}

impl Agent {
    pub fn ssh(command: &str) -> Result<Agent> {
        Ok(Agent::Ssh(words(command, super::SSH_ENV)?))
    }

    pub fn exec(template: &str) -> Result<Agent> {
        Ok(Agent::Exec(words(template, "--launcher-exec")?))
    }

    /// How the daemon of `host` is started, for messages.
    pub fn name(&self, host: &str) -> &'static str {
        match self {
            Agent::Ssh(_) if is_this_machine(host) => "this machine",
            Agent::Ssh(_) => "ssh",
            Agent::Exec(_) => "launcher-exec",
            Agent::Srun => "srun",
        }
    }

    /// The job secret goes to the agent's stdin (ssh passes no environment).
    pub fn secret_on_stdin(&self) -> bool {
        matches!(self, Agent::Ssh(_))
    }

    /// The command starting the daemon of `host` (`Srun`: of every host; `host` is then the
    /// first and `hosts` all of them).
    pub fn command(&self, host: &str, hosts: &[Host], script: &str) -> Command {
        let mut argv: Vec<String> = match self {
            // The script as ssh's remote shell would run it (the secret still on stdin).
            Agent::Ssh(_) if is_this_machine(host) => {
                vec!["sh".into(), "-c".into(), script.to_string()]
            }
            Agent::Ssh(w) => {
                let mut a = with_host(w, host);
                a.extend(["sh".into(), "-c".into(), shell_quote(script)]);
                a
            }
            Agent::Exec(w) => {
                let mut a = with_host(w, host);
                a.extend(["sh".into(), "-c".into(), script.to_string()]);
                a
            }
            Agent::Srun => {
                let names: Vec<&str> = hosts.iter().map(|h| h.name.as_str()).collect();
                vec![
                    "srun".into(),
                    "--ntasks-per-node=1".into(),
                    format!("--nodes={}", hosts.len()),
                    format!("--ntasks={}", hosts.len()),
                    format!("--nodelist={}", names.join(",")),
                    "--kill-on-bad-exit".into(),
                    "--overlap".into(),
                    "--input=none".into(),
                    "sh".into(),
                    "-c".into(),
                    script.to_string(),
                ]
            }
        };
        let mut c = Command::new(argv.remove(0));
        c.args(argv);
        c
    }
}

/// The last lines an agent wrote to stderr, and whether its stderr reached EOF.
#[derive(Clone)]
pub struct StderrTail {
    lines: Arc<Mutex<Vec<String>>>,
    ended: crossbeam_channel::Receiver<()>,
}

impl StderrTail {
    const KEEP: usize = 20;

    pub fn text(&self) -> String {
        let lines = self.lines.lock().map(|l| l.clone()).unwrap_or_default();
        lines.join(" / ")
    }

    /// Everything the agent wrote, once its stderr is closed (at most `limit` later: a
    /// child of the agent may hold the pipe open).
    fn text_at_end(&self, limit: std::time::Duration) -> String {
        let _ = self.ended.recv_timeout(limit);
        self.text()
    }

    /// Reads `from` line by line until EOF: kept (last few), and echoed to our stderr once
    /// `echo` is set (after start-up: the daemon's own warnings).
    fn pump(
        from: impl std::io::Read + Send + 'static,
        echo: Arc<std::sync::atomic::AtomicBool>,
    ) -> StderrTail {
        let lines: Arc<Mutex<Vec<String>>> = Default::default();
        let (done, ended) = crossbeam_channel::bounded::<()>(0);
        let keep = lines.clone();
        let _ = std::thread::Builder::new()
            .name("agent-stderr".into())
            .spawn(move || {
                // Dropped at EOF: the receiver sees the channel closed.
                let _done = done;
                for line in std::io::BufReader::new(from).lines() {
                    let Ok(line) = line else { break };
                    if echo.load(std::sync::atomic::Ordering::Relaxed) {
                        say!("{line}");
                    }
                    if let Ok(mut k) = keep.lock() {
                        if k.len() == Self::KEEP {
                            k.remove(0);
                        }
                        k.push(line);
                    }
                }
            });
        StderrTail { lines, ended }
    }
}

/// One started agent (or a local daemon): its process, what it stands for, its stderr.
pub struct AgentProc {
    pub child: Child,
    /// `host NAME (ssh)`, `node daemon 3`.
    pub what: String,
    /// Daemon indices this process starts (one, or every one for srun).
    pub indices: Vec<u32>,
    pub stderr: Option<StderrTail>,
    echo: Arc<std::sync::atomic::AtomicBool>,
}

impl AgentProc {
    /// A process whose stderr is inherited (a daemon on this machine).
    pub fn local(child: Child, what: String, index: u32) -> AgentProc {
        AgentProc {
            child,
            what,
            indices: vec![index],
            stderr: None,
            echo: Default::default(),
        }
    }

    /// Starts `cmd` (stdin and stderr piped); writes `stdin_line` to its stdin first.
    pub fn start(
        mut cmd: Command,
        what: String,
        indices: Vec<u32>,
        stdin_line: Option<&str>,
    ) -> Result<AgentProc> {
        cmd.stdin(Stdio::piped()).stderr(Stdio::piped());
        let program = format!("{:?}", cmd.get_program());
        let mut child = cmd.spawn().map_err(|e| LaunchError::Host {
            host: what.clone(),
            why: format!("cannot start the launcher agent {program}: {e}"),
        })?;
        if let (Some(line), Some(mut stdin)) = (stdin_line, child.stdin.take()) {
            // Small enough for the pipe buffer: never blocks.
            let _ = std::io::Write::write_all(&mut stdin, format!("{line}\n").as_bytes());
        }
        let echo: Arc<std::sync::atomic::AtomicBool> = Default::default();
        let tail = child
            .stderr
            .take()
            .map(|e| StderrTail::pump(e, echo.clone()));
        Ok(AgentProc {
            child,
            what,
            indices,
            stderr: tail,
            echo,
        })
    }

    /// From now on the agent's stderr goes to ours as it comes.
    pub fn echo_stderr(&self) {
        if let Some(t) = &self.stderr {
            for line in t.lines.lock().map(|l| l.clone()).unwrap_or_default() {
                say!("{line}");
            }
        }
        self.echo.store(true, std::sync::atomic::Ordering::Relaxed);
    }

    /// Why this agent failed, with what it said (waits briefly for its stderr to drain).
    pub fn failure(&self, status: &std::process::ExitStatus) -> LaunchError {
        let said = self
            .stderr
            .as_ref()
            .map(|t| t.text_at_end(std::time::Duration::from_secs(1)))
            .unwrap_or_default();
        LaunchError::Host {
            host: self.what.clone(),
            why: if said.is_empty() {
                format!("the daemon's start exited ({status}) without a word")
            } else {
                format!("the daemon's start exited ({status}): {said}")
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_place_the_host_and_quote_the_remote_command() {
        let h = [Host {
            name: "n1".into(),
            slots: 1,
        }];
        let script = daemon_script(
            Path::new("/opt/it's/ibdyn"),
            &["--index".into(), "0".into()],
            &[("IBDYN_LOG".into(), "debug".into())],
        );
        assert!(script.starts_with("export IBDYN_LOG='debug'; "), "{script}");
        assert!(script.contains(r"'/opt/it'\''s/ibdyn'"), "{script}");
        let ssh = Agent::ssh("ssh -x -o BatchMode=yes").unwrap();
        let c = ssh.command("n1", &h, &script);
        let args: Vec<String> = c.get_args().map(|a| a.to_string_lossy().into()).collect();
        assert_eq!(c.get_program(), "ssh");
        assert_eq!(&args[..5], ["-x", "-o", "BatchMode=yes", "n1", "sh"]);
        assert_eq!(args[6], shell_quote(&script));
        let ns = Agent::exec("ip netns exec {host}").unwrap();
        let c = ns.command("h2", &h, &script);
        let args: Vec<String> = c.get_args().map(|a| a.to_string_lossy().into()).collect();
        assert_eq!(args, ["netns", "exec", "h2", "sh", "-c", &script]);
        assert!(Agent::exec("  ").is_err());
        let srun = Agent::Srun.command("n1", &h, &script);
        let args: Vec<String> = srun
            .get_args()
            .map(|a| a.to_string_lossy().into())
            .collect();
        assert!(
            args.contains(&"--nodes=1".to_string())
                && args.contains(&"--kill-on-bad-exit".to_string())
        );
    }

    #[test]
    fn this_machine_is_known_by_its_names_and_addresses() {
        for me in [
            "localhost",
            "LOCALHOST",
            "127.0.0.1",
            "127.1.2.3",
            "::1",
            "[::1]",
        ] {
            assert!(is_this_machine(me), "{me}");
        }
        let name = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap();
        assert!(is_this_machine(name.trim()));
        assert!(!is_this_machine("192.0.2.1"), "TEST-NET-1 is nobody's");
        assert!(!is_this_machine("ibdyn-surely-another-host"));
        assert!(same_host_name("node1", "node1.cluster"));
        assert!(same_host_name("Node1.cluster", "node1"));
        assert!(!same_host_name("node1.a", "node1.b"));
        assert!(!same_host_name("node1", "node12"));
        assert!(!same_host_name("", "node1"));
        // Its daemon starts in a shell here, not through ssh.
        let h = [Host {
            name: "localhost".into(),
            slots: 1,
        }];
        let ssh = Agent::ssh("ssh -x").unwrap();
        let c = ssh.command("localhost", &h, "exec true");
        let args: Vec<String> = c.get_args().map(|a| a.to_string_lossy().into()).collect();
        assert_eq!(
            (c.get_program(), &args[..]),
            (
                "sh".as_ref(),
                &["-c".to_string(), "exec true".to_string()][..]
            )
        );
        assert_eq!(ssh.name("localhost"), "this machine");
        assert_eq!(ssh.name("n1"), "ssh");
    }

    #[test]
    fn the_script_runs_in_a_shell_and_reports_a_missing_binary() {
        let script = daemon_script(Path::new("/nonexistent/ibdyn"), &["x y".into()], &[]);
        let out = Command::new("/bin/sh")
            .args(["-c", &script])
            .env("PATH", "/nonexistent")
            .output()
            .expect("sh");
        assert_eq!(out.status.code(), Some(127));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("no ibdyn binary at /nonexistent/ibdyn"),
            "{err}"
        );
    }
}
