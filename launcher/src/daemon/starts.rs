//! Starting the ranks of a job placed on this daemon, from several threads at once.
//!
//! `clone(CLONE_VFORK)` suspends only the thread that calls it, until the child has exec'd.
//! With one thread, a spawn of eight waits for eight of those suspensions in a row, each
//! behind the ranks already started, which take the cores for their own start-up. Helper
//! threads (one per further core) overlap them and give the daemon more turns on the cores.
//! The helpers live as long as the daemon: a rank's `PR_SET_PDEATHSIG` fires when the
//! *thread* that started it ends, not its process.

use super::launch::{self, Launch, Started};
use super::ranks::JobSpec;
use crossbeam_channel::{Receiver, Sender};
use std::ffi::OsString;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::time::Duration;

/// Fewer ranks than this start from the daemon's own thread: handing them over costs more
/// than it overlaps.
const THREADED_FROM: usize = 4;
/// At most this many helper threads.
const MAX_HELPERS: usize = 3;
/// A helper answers once its clone has returned; this bounds a wait on a helper that died.
const HELPER_LIMIT: Duration = Duration::from_secs(30);

/// A rank ready to start: what `launch::start` needs beyond the job's command, owned so
/// that another thread can start it.
pub(crate) struct Prepared {
    pub rank: u32,
    pub env: Vec<(OsString, OsString)>,
    pub cwd: Option<PathBuf>,
    pub stdin_pipe: bool,
    /// The daemon's end of the rank's PMI connection.
    pub pmi_ours: UnixStream,
    /// The rank's end, inherited across the exec.
    pub pmi_theirs: OwnedFd,
    pub pmi_id: u32,
    /// The CPUs the rank is bound to (`--bind-to`).
    pub cpus: Option<Vec<usize>>,
    /// The names of the variables that differ from rank to rank (the rest is the command's).
    pub per_rank: Vec<&'static str>,
}

/// One start handed to a helper: everything owned but the inherited descriptor, which the
/// daemon keeps open until the answer is back.
struct Work {
    /// Which `start_all` call it belongs to: an answer that comes after its call gave up
    /// waiting must not be taken for one of a later call.
    batch: u64,
    index: usize,
    program: String,
    args: Vec<String>,
    env: Vec<(OsString, OsString)>,
    cwd: Option<PathBuf>,
    stdin_pipe: bool,
    inherit: RawFd,
    cpus: Option<Vec<usize>>,
}

impl Work {
    fn start(&self) -> std::io::Result<Started> {
        launch::start(&Launch {
            program: &self.program,
            args: &self.args,
            env: &self.env,
            cwd: self.cwd.as_deref(),
            stdin_pipe: self.stdin_pipe,
            inherit: Some(self.inherit),
            cpus: self.cpus.as_deref(),
        })
    }
}

type Answer = (u64, usize, std::io::Result<Started>);

/// The daemon's helper threads for starting ranks.
pub(crate) struct Starters {
    work: Sender<Work>,
    answers: Receiver<Answer>,
    helpers: usize,
    batch: std::cell::Cell<u64>,
}

impl Starters {
    /// One helper per core beyond the first (at most `MAX_HELPERS`); none on one core or
    /// when no thread can be made.
    pub(crate) fn new(cores: usize) -> Starters {
        let (work, todo) = crossbeam_channel::unbounded::<Work>();
        let (done, answers) = crossbeam_channel::unbounded::<Answer>();
        let mut helpers = 0;
        for _ in 1..cores.min(MAX_HELPERS + 1) {
            let (todo, done) = (todo.clone(), done.clone());
            let made = std::thread::Builder::new()
                .name("start".into())
                .spawn(move || {
                    for w in todo {
                        let r = w.start();
                        if done.send((w.batch, w.index, r)).is_err() {
                            return;
                        }
                    }
                });
            match made {
                Ok(_) => helpers += 1,
                Err(e) => {
                    tracing::debug!("daemon: no helper thread to start ranks: {e}");
                    break;
                }
            }
        }
        Starters {
            work,
            answers,
            helpers,
            batch: std::cell::Cell::new(0),
        }
    }

    /// Starts every rank of `ready`; the results are in the same order. With enough ranks,
    /// rank `i` goes to the daemon's thread when `i % (helpers + 1) == 0` and to a helper
    /// otherwise, so the first ranks start first.
    pub(crate) fn start_all(
        &self,
        spec: &JobSpec,
        ready: &mut [Prepared],
    ) -> Vec<std::io::Result<Started>> {
        let own = |p: &Prepared| -> std::io::Result<Started> {
            let app = app_of(spec, p.rank)?;
            launch::start(&Launch {
                program: &app.program,
                args: &app.args,
                env: &p.env,
                cwd: p.cwd.as_deref(),
                stdin_pipe: p.stdin_pipe,
                inherit: Some(p.pmi_theirs.as_raw_fd()),
                cpus: p.cpus.as_deref(),
            })
        };
        if ready.len() < THREADED_FROM || self.helpers == 0 {
            return ready.iter().map(own).collect();
        }
        let stride = self.helpers + 1;
        let batch = self.batch.get() + 1;
        self.batch.set(batch);
        let mut out: Vec<Option<std::io::Result<Started>>> =
            (0..ready.len()).map(|_| None).collect();
        let mut handed = 0;
        for (i, p) in ready.iter_mut().enumerate() {
            if i % stride == 0 {
                continue;
            }
            let app = match app_of(spec, p.rank) {
                Ok(a) => a,
                Err(e) => {
                    out[i] = Some(Err(e));
                    continue;
                }
            };
            let w = Work {
                batch,
                index: i,
                program: app.program.clone(),
                args: app.args.clone(),
                env: std::mem::take(&mut p.env),
                cwd: p.cwd.clone(),
                stdin_pipe: p.stdin_pipe,
                inherit: p.pmi_theirs.as_raw_fd(),
                cpus: p.cpus.clone(),
            };
            match self.work.send(w) {
                Ok(()) => handed += 1,
                Err(crossbeam_channel::SendError(w)) => out[i] = Some(w.start()),
            }
        }
        for (i, p) in ready.iter().enumerate().step_by(stride) {
            out[i] = Some(own(p));
        }
        while handed > 0 {
            match self.answers.recv_timeout(HELPER_LIMIT) {
                Ok((b, i, r)) if b == batch => {
                    out[i] = Some(r);
                    handed -= 1;
                }
                // A late answer of an earlier call, which reported the rank as not started.
                Ok((_, _, r)) => {
                    if let Ok(child) = r {
                        tracing::warn!("daemon: pid {} started after its spawn gave up", child.pid);
                    }
                }
                Err(_) => break,
            }
        }
        out.into_iter()
            .map(|r| {
                r.unwrap_or_else(|| {
                    Err(std::io::Error::other(
                        "the thread starting it did not answer",
                    ))
                })
            })
            .collect()
    }
}

fn app_of(spec: &JobSpec, rank: u32) -> std::io::Result<&super::ranks::App> {
    spec.app_of(rank)
        .ok_or_else(|| std::io::Error::from_raw_os_error(libc::EINVAL))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::daemon::ranks::App;
    use std::ffi::OsStr;
    use std::io::Read;

    fn spec(apps: Vec<App>, size: u32) -> JobSpec {
        JobSpec {
            jobid: 7,
            kvsname: "kvs_7".into(),
            size,
            apps,
            node_of: vec![0; size as usize],
            parent: None,
            stdin: false,
            session_dir: std::env::temp_dir(),
            pmi_sock: std::env::temp_dir().join("none"),
            preput_keys: String::new(),
            preput_values: None,
            env: None,
        }
    }

    fn prepared(rank: u32) -> Prepared {
        let (pmi_ours, theirs) = UnixStream::pair().unwrap();
        let env = launch::environment(
            None,
            &[(
                OsStr::new("IBDYN_T_RANK"),
                Some(OsStr::new(&rank.to_string())),
            )],
        );
        Prepared {
            rank,
            env,
            cwd: None,
            stdin_pipe: false,
            pmi_ours,
            pmi_theirs: OwnedFd::from(theirs),
            pmi_id: rank + 1,
            cpus: None,
            per_rank: Vec::new(),
        }
    }

    /// The rank's stdout, once it has exited with 0.
    fn output(s: Started) -> String {
        let mut out = String::new();
        std::fs::File::from(s.stdout)
            .read_to_string(&mut out)
            .unwrap();
        let pid = nix::unistd::Pid::from_raw(s.pid);
        let st = nix::sys::wait::waitpid(pid, None).unwrap();
        assert_eq!(st, nix::sys::wait::WaitStatus::Exited(pid, 0));
        out
    }

    /// `nprocs` ranks that print their rank (from their environment).
    fn echo(nprocs: u32, appnum: i32) -> App {
        App {
            program: "sh".into(),
            args: vec!["-c".into(), "echo $IBDYN_T_RANK".into()],
            nprocs,
            appnum,
            wdir: None,
            env: Vec::new(),
            bind: Default::default(),
            report_bindings: false,
        }
    }

    #[test]
    fn ranks_started_from_several_threads_keep_their_order_environment_and_errors() {
        let missing = App {
            program: "ibdyn-no-such-program".into(),
            args: Vec::new(),
            ..echo(1, 1)
        };
        let spec = spec(vec![echo(3, 0), missing, echo(4, 2)], 8);
        let mut ready: Vec<Prepared> = (0..8).map(prepared).collect();
        // Kept until the ranks are reaped: a helper that ends takes its ranks with it.
        let starters = Starters::new(4);
        let results = starters.start_all(&spec, &mut ready);
        assert_eq!(results.len(), 8);
        for (rank, r) in results.into_iter().enumerate() {
            if rank == 3 {
                let e = r.err().expect("rank 3 runs a missing program");
                assert_eq!(e.raw_os_error(), Some(libc::ENOENT));
            } else {
                let out = output(r.expect("started"));
                assert_eq!(out.trim(), rank.to_string());
            }
        }
    }

    #[test]
    fn a_few_ranks_start_from_the_calling_thread() {
        let spec = spec(vec![echo(2, 0)], 2);
        let mut ready: Vec<Prepared> = (0..2).map(prepared).collect();
        let starters = Starters::new(8);
        let outs: Vec<String> = starters
            .start_all(&spec, &mut ready)
            .into_iter()
            .map(|r| output(r.unwrap()))
            .collect();
        assert_eq!(outs, ["0\n", "1\n"]);
    }
}
