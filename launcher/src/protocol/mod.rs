//! The process manager's protocol as types: one enum per direction, each with `encode` (one
//! `Command`, one line on the wire) and `decode` (an error, never a panic, for a line that is
//! not one of its messages). Message names are built and matched only in this module.
//!
//! | module | direction |
//! |---|---|
//! | `hello` | the first line of every TCP connection (secret, role); a singleton's ready line |
//! | `to_daemon` | launcher (`ibdyn run` or the DVM controller) -> node daemon |
//! | `report` | node daemon -> launcher |
//! | `client` | `ibdyn run --dvm` / `ibdyn dvm stop` -> DVM controller, and back |
//! | `tree` | node daemon <-> node daemon along the tree (`Up` to the root, `Down` from it) |
//!
//! (The spawn wire-up between ranks is `ibdyn_spawn::dynamic::wire`; PMI is `ibdyn_pmi::wire`.)

mod client;
mod hello;
mod report;
mod to_daemon;
mod tree;

pub(crate) use client::{FromDvm, ToDvm};
pub(crate) use hello::{Challenge, Hello, Ready, Role, Welcome};
pub(crate) use report::{start_failure, JobAnnounce, RankEnd, Report, SpawnOutcome, NOT_FOUND};
pub(crate) use to_daemon::{Submission, ToDaemon};
pub(crate) use tree::{Answer, Down, Gone, NameOp, SpawnAnswer, Start, StartResult, Up};

use ibdyn_pmi::wire::{self, hex_decode, hex_encode, Command, Frame, Framer};
use ibdyn_pmi::{PmiError, SpawnRequest};
use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::PathBuf;

/// The error of a line that is not what its reader expects.
pub(crate) fn malformed(cmd: &Command, why: impl Into<String>) -> PmiError {
    PmiError::Malformed {
        line: cmd.to_line().trim_end().to_string(),
        why: why.into(),
    }
}

/// A spawn request in its wire form (hex of the PMI `mcmd=spawn` block), checked when made and
/// when read, so that it passes through a controller without being parsed again.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct EncodedRequest(String);

impl EncodedRequest {
    pub(crate) fn new(req: &SpawnRequest) -> Result<EncodedRequest, PmiError> {
        Ok(EncodedRequest(hex_encode(
            wire::format_spawn(req)?.as_bytes(),
        )))
    }

    fn from_wire(cmd: &Command, hex: &str) -> Result<EncodedRequest, PmiError> {
        let e = EncodedRequest(hex.to_string());
        e.request()
            .map_err(|err| malformed(cmd, format!("bad spawn request: {err}")))?;
        Ok(e)
    }

    pub(crate) fn as_wire(&self) -> &str {
        &self.0
    }

    pub(crate) fn request(&self) -> Result<SpawnRequest, PmiError> {
        let text = hex_decode(&self.0)?;
        let mut req = SpawnRequest::default();
        for f in Framer::default().push(&text) {
            match f {
                Frame::Spawn(block) => {
                    let b = wire::parse_spawn_block(&block)?;
                    req.commands.push(b.command);
                    req.preput = b.preput;
                }
                other => {
                    return Err(PmiError::Malformed {
                        line: format!("{other:?}"),
                        why: "not a spawn block".into(),
                    })
                }
            }
        }
        if req.commands.is_empty() {
            return Err(PmiError::Malformed {
                line: self.0.clone(),
                why: "a spawn request without a command".into(),
            });
        }
        Ok(req)
    }
}

/// The environment and working directory a submitted job's ranks (and the jobs they spawn)
/// run with: those of the `ibdyn run --dvm` that submitted it, or of the `ibdyn run` whose
/// daemons run on other hosts. A working directory that does not exist on a daemon's host
/// leaves its ranks in the daemon's own (the home directory under ssh), as mpirun does.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct JobEnv {
    pub(crate) vars: Vec<(OsString, OsString)>,
    pub(crate) cwd: PathBuf,
}

/// Variables that describe the host or the login session a process runs in rather than the
/// user's settings: an environment sent to other hosts leaves them out, and a daemon gives
/// its ranks its own values of those a submitted environment lacks.
const HOST_BOUND: &[&str] = &[
    "HOSTNAME",
    "HOST",
    "PWD",
    "OLDPWD",
    "SHLVL",
    "DISPLAY",
    "XAUTHORITY",
    "TMUX",
    "TMUX_PANE",
    "STY",
    "DBUS_SESSION_BUS_ADDRESS",
    "XDG_RUNTIME_DIR",
    "XDG_SESSION_ID",
    "XDG_SESSION_TYPE",
    "XDG_SESSION_CLASS",
];
/// ... and every variable of these families (a Slurm step's variables are per node).
const HOST_BOUND_PREFIXES: &[&str] = &["SSH_", "SLURM_"];

fn host_bound(name: &OsStr) -> bool {
    let name = name.as_bytes();
    HOST_BOUND.iter().any(|h| h.as_bytes() == name)
        || HOST_BOUND_PREFIXES
            .iter()
            .any(|p| name.starts_with(p.as_bytes()))
}

impl JobEnv {
    /// This process's environment and working directory.
    fn current() -> std::io::Result<JobEnv> {
        Ok(JobEnv {
            vars: std::env::vars_os().collect(),
            cwd: std::env::current_dir()?,
        })
    }

    /// This process's environment without its host-bound variables, and its working
    /// directory: for ranks on other hosts (ssh passes no environment and starts in the
    /// home directory).
    pub(crate) fn for_other_hosts() -> std::io::Result<JobEnv> {
        let mut e = JobEnv::current()?;
        e.vars.retain(|(k, _)| !host_bound(k));
        Ok(e)
    }

    /// A rank's base environment on this host: these variables, with this process's own
    /// values of the host-bound ones they lack.
    pub(crate) fn base_here(&self) -> Vec<(OsString, OsString)> {
        // This process's own are read once: a daemon calls this for every rank it starts.
        static HERE: std::sync::OnceLock<Vec<(OsString, OsString)>> = std::sync::OnceLock::new();
        let here =
            HERE.get_or_init(|| std::env::vars_os().filter(|(k, _)| host_bound(k)).collect());
        let mut vars = self.vars.clone();
        vars.extend(
            here.iter()
                .filter(|(k, _)| !self.vars.iter().any(|(have, _)| have == k))
                .cloned(),
        );
        vars
    }

    /// The working directory of a rank on this host: `wdir` (relative to the submitter's),
    /// else the submitter's if it exists here; None: the daemon's own.
    pub(crate) fn rank_cwd(&self, wdir: Option<&str>) -> Option<PathBuf> {
        match wdir {
            Some(w) => Some(self.cwd.join(w)),
            None => self.cwd.is_dir().then(|| self.cwd.clone()),
        }
    }

    pub(crate) fn add_to(&self, cmd: Command) -> Command {
        let mut text = Vec::new();
        for (k, v) in &self.vars {
            text.extend_from_slice(k.as_bytes());
            text.push(b'=');
            text.extend_from_slice(v.as_bytes());
            text.push(0);
        }
        cmd.arg("env", hex_encode(&text))
            .arg("cwd", hex_encode(self.cwd.as_os_str().as_bytes()))
    }

    /// The `env=` / `cwd=` pair of `cmd`, if it has one.
    pub(crate) fn from_wire(cmd: &Command) -> Result<Option<JobEnv>, PmiError> {
        let (Some(env), Some(cwd)) = (cmd.get("env"), cmd.get("cwd")) else {
            return Ok(None);
        };
        let mut vars = Vec::new();
        for entry in hex_decode(env)?
            .split(|&b| b == 0)
            .filter(|e| !e.is_empty())
        {
            let eq = entry
                .iter()
                .position(|&b| b == b'=')
                .ok_or_else(|| malformed(cmd, "an environment entry without '='"))?;
            vars.push((
                OsString::from_vec(entry[..eq].to_vec()),
                OsString::from_vec(entry[eq + 1..].to_vec()),
            ));
        }
        let cwd = PathBuf::from(OsString::from_vec(hex_decode(cwd)?));
        Ok(Some(JobEnv { vars, cwd }))
    }
}

fn encode_u32s(v: &[u32]) -> String {
    v.iter().map(u32::to_string).collect::<Vec<_>>().join(",")
}

fn decode_u32s(cmd: &Command, text: &str) -> Result<Vec<u32>, PmiError> {
    text.split(',')
        .map(|n| {
            n.parse()
                .map_err(|_| malformed(cmd, format!("{n:?} is not a number")))
        })
        .collect()
}

/// Free text sent as hex (exact, whatever it contains).
fn text(cmd: &Command, key: &str) -> Result<String, PmiError> {
    Ok(String::from_utf8_lossy(&hex_decode(cmd.require(key)?)?).into_owned())
}

/// An optional number: absent is None, present but not a number is an error.
fn opt_num<T: std::str::FromStr>(cmd: &Command, key: &str) -> Result<Option<T>, PmiError> {
    cmd.get(key).map(|_| cmd.num(key)).transpose()
}

#[cfg(test)]
mod fuzz;

#[cfg(test)]
mod tests {
    use super::*;
    use ibdyn_pmi::SpawnCommand;

    #[test]
    fn an_environment_for_other_hosts_leaves_out_what_describes_this_one() {
        for name in [
            "HOSTNAME",
            "PWD",
            "SSH_CONNECTION",
            "SLURM_NODEID",
            "XDG_RUNTIME_DIR",
        ] {
            assert!(host_bound(OsStr::new(name)), "{name}");
        }
        for name in [
            "PATH",
            "OMP_NUM_THREADS",
            "LD_LIBRARY_PATH",
            "HOME",
            "SSHX",
            "HOSTS",
        ] {
            assert!(!host_bound(OsStr::new(name)), "{name}");
        }
        let e = JobEnv::for_other_hosts().unwrap();
        assert!(e.vars.iter().all(|(k, _)| !host_bound(k)));
        assert_eq!(e.cwd, std::env::current_dir().unwrap());
    }

    #[test]
    fn a_rank_gets_this_hosts_values_of_the_host_bound_variables_it_lacks() {
        let Some((name, value)) = std::env::vars_os().find(|(k, _)| host_bound(k)) else {
            return; // this process has none (PWD is usually set by the shell)
        };
        let sent = JobEnv {
            vars: vec![("A".into(), "1".into())],
            cwd: "/".into(),
        };
        let base = sent.base_here();
        assert!(base.contains(&("A".into(), "1".into())));
        assert!(base.contains(&(name.clone(), value)));
        let kept = JobEnv {
            vars: vec![(name.clone(), "theirs".into())],
            cwd: "/".into(),
        };
        let base = kept.base_here();
        assert_eq!(base.iter().filter(|(k, _)| *k == name).count(), 1);
        assert!(base.contains(&(name, "theirs".into())));
    }

    #[test]
    fn a_submitters_directory_missing_here_leaves_the_rank_in_the_daemons() {
        let e = |cwd: &str| JobEnv {
            vars: vec![],
            cwd: cwd.into(),
        };
        assert_eq!(e("/").rank_cwd(None), Some(PathBuf::from("/")));
        assert_eq!(e("/no/such/dir/ibdyn").rank_cwd(None), None);
        // An explicit wdir is the caller's to get right (a start error names it).
        assert_eq!(
            e("/no/such").rank_cwd(Some("sub")),
            Some(PathBuf::from("/no/such/sub"))
        );
        assert_eq!(e("/a").rank_cwd(Some("/b")), Some(PathBuf::from("/b")));
    }

    /// A message through its wire line and back.
    pub(crate) fn line_of(cmd: Command) -> Command {
        Command::parse(cmd.to_line().trim_end()).expect("a line parses")
    }

    pub(crate) fn request() -> EncodedRequest {
        EncodedRequest::new(&SpawnRequest {
            commands: vec![SpawnCommand {
                program: "/bin/echo".into(),
                args: vec!["a b".into(), "c".into()],
                nprocs: 3,
                info: vec![("wdir".into(), "/tmp".into())],
            }],
            preput: vec![("k".into(), "v".into())],
        })
        .expect("a valid request")
    }

    #[test]
    fn a_request_and_an_environment_read_back_as_written() {
        let r = request();
        let back = EncodedRequest::from_wire(&Command::new("x"), r.as_wire()).expect("valid");
        assert_eq!(back.request().expect("decodes").commands[0].nprocs, 3);
        assert!(EncodedRequest::from_wire(&Command::new("x"), "zz").is_err());
        assert!(EncodedRequest::from_wire(&Command::new("x"), &hex_encode(b"cmd=x\n")).is_err());
        let env = JobEnv {
            vars: vec![
                ("A".into(), "x y=z".into()),
                ("EMPTY".into(), "".into()),
                (OsString::from_vec(vec![b'B', 0xff]), "\n".into()),
            ],
            cwd: "/some dir".into(),
        };
        let cmd = line_of(env.add_to(Command::new("x")));
        assert_eq!(JobEnv::from_wire(&cmd).expect("decodes"), Some(env));
        assert_eq!(JobEnv::from_wire(&Command::new("x")).expect("none"), None);
        let bad = Command::new("x")
            .arg("env", hex_encode(b"NOEQUALS\0"))
            .arg("cwd", "");
        assert!(JobEnv::from_wire(&bad).is_err());
        let bad = Command::new("x").arg("env", "q").arg("cwd", "");
        assert!(JobEnv::from_wire(&bad).is_err());
    }
}
