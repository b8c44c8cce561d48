//! Prestarted processes (spawn info key `ibdyn_prestart=N`): once a spawn's ranks are started
//! and answered, the daemon has a thread of its own start up to N further copies of the same
//! command, which wait inside ibdyn's initialisation. A later spawn of the same command
//! (program file, arguments, environment, directory) takes a waiting copy: the daemon sends it
//! its rank's variables (`ibdyn_pmi::prestart::Assignment`) and serves its PMI connection as
//! that rank's. The exec and the program's start-up are then off the spawn's path. A spawn
//! that finds a copy of its command still being started waits for it rather than starting
//! another.
//!
//! The first copy a command needs starts a template of it (`template`); the copies are then
//! forked from the template rather than exec'd (unless the command's environment sets
//! `IBDYN_PRESTART_FORK=0`, or its template cannot serve).
//!
//! A copy is a child of the daemon like a rank, watched from its start under `WARM_JOB`; its
//! output pipes are read only once it is a rank (until then they buffer what it printed). A
//! copy that dies while waiting is reaped and forgotten, and the shared memory it opened ahead
//! removed; copies still waiting when the daemon ends are killed, reaped and cleaned the same
//! way (and `PR_SET_PDEATHSIG` as for ranks).

mod template;

use super::launch::{self, Launch, Started};
use super::ranks::App;
use super::starts::Prepared;
use super::Daemon;
use ibdyn_pmi::env;
use ibdyn_pmi::prestart::template::{fork_allowed, FORK_ENV};
use ibdyn_pmi::prestart::{Assignment, COPY, PRESTARTED_ENV};
use std::collections::{HashMap, HashSet, VecDeque};
use std::ffi::{OsStr, OsString};
use std::io::Write;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::os::unix::fs::MetadataExt;
use std::os::unix::net::UnixStream;
use std::path::PathBuf;

/// The job id waiting copies are watched under (real job ids are below 2^31).
pub(crate) const WARM_JOB: u32 = u32::MAX;
/// The spawn's info key as the ranks' environment carries it.
const INFO_VAR: &str = "IBDYN_INFO_PRESTART";
/// At most this many copies wait on one daemon, over every command.
const MAX_WAITING: usize = 64;
/// A spawn waits this long at most for a copy already being started.
const COPY_LIMIT: std::time::Duration = std::time::Duration::from_secs(10);

/// What makes two starts interchangeable: the same program file (by identity and
/// modification time, so a rebuilt binary is not served by an old copy), arguments,
/// environment (without the per-rank variables; by a 64-bit hash, so that finding a copy
/// costs no copy of the environment) and directory.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
struct Key {
    path: PathBuf,
    file: (u64, u64, i64, i64),
    args: Vec<String>,
    env_hash: u64,
    cwd: Option<PathBuf>,
}

/// How to start more copies of a command, and how many to keep waiting.
struct Recipe {
    program: String,
    /// The copies' environment (without the per-rank variables).
    env: Vec<(OsString, OsString)>,
    want: usize,
    /// Its copies may be forked from a template (`IBDYN_PRESTART_FORK`).
    fork: bool,
}

/// A copy waiting for its assignment.
struct Waiting {
    pid: i32,
    /// The daemon's end of its PMI connection.
    pmi: UnixStream,
    /// The descriptor number of the other end in the copy (its `PMI_FD`).
    fd_in_copy: RawFd,
    stdout: OwnedFd,
    stderr: OwnedFd,
}

/// A copy to start, handed to the starting thread.
struct Order {
    key: Key,
    program: String,
    env: Vec<(OsString, OsString)>,
    /// Fork it from a template of the command rather than exec it.
    fork: bool,
}

/// The starting thread's answers.
enum Made {
    Copy {
        key: Key,
        result: std::io::Result<Waiting>,
    },
    /// A template was started (it is reaped and, at the end, killed like a copy).
    Template { pid: i32 },
}

/// The starting thread: a clone suspends the thread that makes it until the exec, which
/// must not be the event loop's for a start nobody waits for yet.
struct Starter {
    orders: crossbeam_channel::Sender<Order>,
    made: crossbeam_channel::Receiver<Made>,
}

#[derive(Default)]
pub(crate) struct Pool {
    recipes: HashMap<Key, Recipe>,
    waiting: HashMap<Key, VecDeque<Waiting>>,
    /// Copies ordered from the starting thread and not yet back.
    starting: HashMap<Key, usize>,
    /// Copies that became ranks: pid → (job, rank).
    assigned: HashMap<i32, (u32, u32)>,
    /// The templates copies are forked from.
    templates: HashSet<i32>,
    /// Assignments to write once the spawn that took the copies is answered.
    unsent: Vec<(UnixStream, Vec<u8>, i32)>,
    /// Made on first use.
    starter: Option<Starter>,
}

impl Pool {
    fn count(&self, key: &Key) -> usize {
        self.waiting.get(key).map_or(0, VecDeque::len)
            + self.starting.get(key).copied().unwrap_or(0)
    }

    fn total(&self) -> usize {
        self.waiting.values().map(VecDeque::len).sum::<usize>()
            + self.starting.values().sum::<usize>()
    }

    /// A copy has ended: forgotten if it was still waiting (None); the job and rank it
    /// stood for if it had been assigned.
    pub(crate) fn on_exit(&mut self, pid: i32) -> Option<(u32, u32)> {
        if let Some(jr) = self.assigned.remove(&pid) {
            return Some(jr);
        }
        self.templates.remove(&pid);
        for q in self.waiting.values_mut() {
            q.retain(|w| w.pid != pid);
        }
        None
    }
}

fn is_per_rank(name: &OsStr, per_rank: &[&str]) -> bool {
    per_rank.iter().any(|r| OsStr::new(r) == name)
}

/// The key of rank `p`'s start, None when its program cannot be found (the cold start then
/// reports why).
fn key_of(app: &App, p: &Prepared, per_rank: &[&str]) -> Option<Key> {
    use std::hash::{Hash, Hasher};
    let path = launch::resolve(&app.program, &p.env).ok()?;
    let m = std::fs::metadata(&path).ok()?;
    // The environment is built in the same order for every rank of a command.
    let mut h = std::collections::hash_map::DefaultHasher::new();
    for (k, v) in p.env.iter().filter(|(k, _)| !is_per_rank(k, per_rank)) {
        (k, v).hash(&mut h);
    }
    Some(Key {
        path,
        file: (m.dev(), m.ino(), m.mtime(), m.mtime_nsec()),
        args: app.args.clone(),
        env_hash: h.finish(),
        cwd: p.cwd.clone(),
    })
}

/// A value of the `ibdyn_prestart` info key: the copies to keep, clamped to the daemon's
/// limit; None (and a log line) when it is not a count.
pub(crate) fn parse_count(v: &str) -> Option<usize> {
    match v.trim().parse::<usize>() {
        Ok(n) => Some(n.min(MAX_WAITING)),
        Err(_) => {
            tracing::warn!("info ibdyn_prestart={v:?} is not a count: ignored");
            None
        }
    }
}

/// The copies a command asks for (its `ibdyn_prestart`, carried in its environment).
fn wanted(app: &App) -> Option<usize> {
    parse_count(&app.env.iter().rev().find(|(k, _)| k == INFO_VAR)?.1)
}

impl Daemon {
    /// Starts rank `p` of `app` on a waiting copy if there is one: Ok(started) with the
    /// copy's pipes and PMI connection in `p`, Err(p) unchanged otherwise. Remembers what
    /// the command asks to keep waiting.
    pub(crate) fn start_on_copy(
        &mut self,
        app: &App,
        job: u32,
        mut p: Prepared,
    ) -> Result<(Prepared, Started), Prepared> {
        // A bound rank's CPUs depend on what runs when it starts: a copy started ahead could
        // not have them. It starts cold, and no copies are kept for it.
        if p.cpus.is_some() {
            return Err(p);
        }
        let per_rank = std::mem::take(&mut p.per_rank);
        // Spawns of a daemon that never saw the info key pay nothing for this.
        let want = wanted(app);
        if want.is_none() && self.prestart.recipes.is_empty() {
            return Err(p);
        }
        let Some(key) = key_of(app, &p, &per_rank) else {
            return Err(p);
        };
        if let Some(want) = want {
            match self.prestart.recipes.get_mut(&key) {
                Some(r) => r.want = want,
                None => {
                    let env: Vec<(OsString, OsString)> = p
                        .env
                        .iter()
                        .filter(|(k, _)| !is_per_rank(k, &per_rank))
                        .cloned()
                        .collect();
                    let fork = fork_allowed(
                        env.iter()
                            .rev()
                            .find(|(k, _)| k == FORK_ENV)
                            .and_then(|(_, v)| v.to_str()),
                    );
                    let program = app.program.clone();
                    let recipe = Recipe {
                        program,
                        env,
                        want,
                        fork,
                    };
                    self.prestart.recipes.insert(key.clone(), recipe);
                }
            }
        }
        // A copy's stdin is /dev/null: it cannot be the rank that reads the launcher's.
        if p.stdin_pipe {
            return Err(p);
        }
        loop {
            let Some(w) = self.next_copy(&key) else {
                return Err(p);
            };
            let fd_text = w.fd_in_copy.to_string();
            let assignment = Assignment {
                vars: p
                    .env
                    .iter()
                    .filter(|(k, _)| is_per_rank(k, &per_rank))
                    .map(|(k, v)| {
                        let v = if k == env::HYDRA_PMI_FD {
                            fd_text.clone()
                        } else {
                            v.to_string_lossy().into_owned()
                        };
                        (k.to_string_lossy().into_owned(), v)
                    })
                    .collect(),
            };
            // Sent once the spawn is answered (`send_assignments`): the copy, woken, may
            // take this core before the daemon is done with the spawn.
            let writer = match w.pmi.try_clone() {
                Ok(s) => s,
                Err(e) => {
                    tracing::warn!("daemon {}: prestarted pid {}: {e}", self.me, w.pid);
                    continue;
                }
            };
            self.prestart
                .unsent
                .push((writer, assignment.encode(), w.pid));
            let pmi = w.pmi;
            tracing::debug!(
                "daemon {}: job {job} rank {} on prestarted pid {}",
                self.me,
                p.rank,
                w.pid
            );
            self.prestart.assigned.insert(w.pid, (job, p.rank));
            p.pmi_ours = pmi;
            return Ok((
                p,
                Started {
                    pid: w.pid,
                    stdin: None,
                    stdout: w.stdout,
                    stderr: w.stderr,
                },
            ));
        }
    }

    /// The daemon is ending: its waiting copies end and are reaped here rather than left to
    /// whoever inherits them.
    pub(crate) fn end_copies(&mut self) {
        use nix::sys::wait::{waitpid, WaitPidFlag, WaitStatus};
        // Copies made but not yet taken from the starting thread are waiting too.
        self.on_prestarted();
        let pids: Vec<nix::unistd::Pid> = self
            .prestart
            .waiting
            .drain()
            .flat_map(|(_, q)| q)
            .map(|w| w.pid)
            .chain(self.prestart.templates.drain())
            .map(nix::unistd::Pid::from_raw)
            .collect();
        for &pid in &pids {
            let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGKILL);
        }
        // Killed processes end at once; one stuck in the kernel is left to init after this.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(2);
        for pid in pids {
            while matches!(
                waitpid(pid, Some(WaitPidFlag::WNOHANG)),
                Ok(WaitStatus::StillAlive)
            ) && std::time::Instant::now() < deadline
            {
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
            super::ranks::remove_segments(self.me, &[pid.as_raw()], "a prestarted copy");
        }
    }

    /// Writes the assignments of the copies just taken. A copy that died meanwhile refuses
    /// the write (EPIPE) and is reported as that rank's end by its watch.
    pub(crate) fn send_assignments(&mut self) {
        for (mut s, frame, pid) in self.prestart.unsent.drain(..) {
            if let Err(e) = s.write_all(&frame) {
                tracing::debug!("daemon {}: prestarted pid {pid}: {e}", self.me);
            }
        }
    }

    /// A waiting copy for `key`; if none is waiting but one is being started, waits for it
    /// (no longer than a start of its own would take).
    fn next_copy(&mut self, key: &Key) -> Option<Waiting> {
        let deadline = std::time::Instant::now() + COPY_LIMIT;
        loop {
            if let Some(w) = self
                .prestart
                .waiting
                .get_mut(key)
                .and_then(VecDeque::pop_front)
            {
                if has_ended(w.pid) {
                    // Its watch reaps it; a spawn must not get a dead process.
                    continue;
                }
                return Some(w);
            }
            if self.prestart.starting.get(key).copied().unwrap_or(0) == 0 {
                return None;
            }
            let made = self.prestart.starter.as_ref()?.made.recv_deadline(deadline);
            match made {
                Ok(m) => self.copy_made(m),
                Err(_) => return None,
            }
        }
    }

    /// Orders the copies that commands are short of (after a spawn took some).
    pub(crate) fn order_copies(&mut self) {
        let mut short: Vec<(Key, usize)> = self
            .prestart
            .recipes
            .iter()
            .filter_map(|(k, r)| {
                let have = self.prestart.count(k);
                (have < r.want).then(|| (k.clone(), r.want - have))
            })
            .collect();
        if short.is_empty() {
            return;
        }
        if self.prestart.starter.is_none() {
            self.prestart.starter = starting_thread(self.events.clone());
        }
        for (key, n) in short.drain(..) {
            for _ in 0..n {
                if self.prestart.total() >= MAX_WAITING {
                    return;
                }
                let Some(r) = self.prestart.recipes.get(&key) else {
                    break;
                };
                let order = Order {
                    key: key.clone(),
                    program: r.program.clone(),
                    env: r.env.clone(),
                    fork: r.fork,
                };
                let sent = self
                    .prestart
                    .starter
                    .as_ref()
                    .is_some_and(|s| s.orders.send(order).is_ok());
                if !sent {
                    tracing::warn!("daemon {}: no thread to prestart copies", self.me);
                    self.prestart.recipes.clear();
                    return;
                }
                *self.prestart.starting.entry(key.clone()).or_default() += 1;
            }
        }
    }

    /// Takes the copies the starting thread has made (it rang with `Event::Prestarted`).
    pub(crate) fn on_prestarted(&mut self) {
        loop {
            let made = match &self.prestart.starter {
                Some(s) => s.made.try_recv(),
                None => return,
            };
            match made {
                Ok(m) => self.copy_made(m),
                Err(_) => return,
            }
        }
    }

    fn copy_made(&mut self, made: Made) {
        let (key, result) = match made {
            Made::Copy { key, result } => (key, result),
            Made::Template { pid } => {
                if !self.reactor.watch_child(pid, WARM_JOB, 0) {
                    super::ranks::wait_for(pid, WARM_JOB, 0, self.events.clone());
                }
                self.prestart.templates.insert(pid);
                return;
            }
        };
        if let Some(n) = self.prestart.starting.get_mut(&key) {
            *n = n.saturating_sub(1);
        }
        match result {
            Ok(w) => {
                if !self.reactor.watch_child(w.pid, WARM_JOB, 0) {
                    super::ranks::wait_for(w.pid, WARM_JOB, 0, self.events.clone());
                }
                self.prestart.waiting.entry(key).or_default().push_back(w);
            }
            Err(e) => {
                // Not retried at once: the next spawn of the command asks again.
                tracing::warn!(
                    "daemon {}: cannot prestart {}: {e}",
                    self.me,
                    key.path.display()
                );
                self.prestart.recipes.remove(&key);
            }
        }
    }
}

/// True if `pid` (a child of the daemon) has ended; it is left to be reaped by its watch.
fn has_ended(pid: i32) -> bool {
    use nix::sys::wait::{waitid, Id, WaitPidFlag, WaitStatus};
    let flags = WaitPidFlag::WEXITED | WaitPidFlag::WNOHANG | WaitPidFlag::WNOWAIT;
    !matches!(
        waitid(Id::Pid(nix::unistd::Pid::from_raw(pid)), flags),
        Ok(WaitStatus::StillAlive)
    )
}

/// The thread that starts copies; it lives as long as the daemon (a copy's
/// `PR_SET_PDEATHSIG` follows the thread that started it).
fn starting_thread(events: super::inbox::EventTx) -> Option<Starter> {
    let (orders, todo) = crossbeam_channel::unbounded::<Order>();
    let (done, made) = crossbeam_channel::unbounded::<Made>();
    std::thread::Builder::new()
        .name("prestart".into())
        .spawn(move || {
            let mut templates = template::Templates::default();
            for o in todo {
                let mut started = |pid| {
                    let _ = done.send(Made::Template { pid });
                };
                let result = match templates.fork(&o, &mut started) {
                    Some(w) => Ok(w),
                    None => start_copy(&o),
                };
                let m = Made::Copy { key: o.key, result };
                if done.send(m).is_err() || !events.send(super::Event::Prestarted) {
                    return;
                }
            }
        })
        .ok()?;
    Some(Starter { orders, made })
}

fn start_copy(o: &Order) -> std::io::Result<Waiting> {
    let (started, pmi, fd_in_copy) = launch_copy(o, COPY)?;
    Ok(Waiting {
        pid: started.pid,
        pmi,
        fd_in_copy,
        stdout: started.stdout,
        stderr: started.stderr,
    })
}

/// Starts the program of `o` with `IBDYN_PRESTARTED=role` and a PMI connection: the process,
/// the daemon's end of the connection and its descriptor number in the process.
fn launch_copy(o: &Order, role: &str) -> std::io::Result<(Started, UnixStream, RawFd)> {
    let (ours, theirs) = super::ranks::inherited_pmi_socket()?;
    let fd = theirs.as_raw_fd();
    let mut env = o.env.clone();
    env.push((PRESTARTED_ENV.into(), role.into()));
    env.push((env::HYDRA_PMI_FD.into(), OsString::from(fd.to_string())));
    let started = launch::start(&Launch {
        program: &o.program,
        args: &o.key.args,
        env: &env,
        cwd: o.key.cwd.as_deref(),
        stdin_pipe: false,
        inherit: Some(fd),
        cpus: None,
    })?;
    drop(theirs);
    Ok((started, ours, fd))
}
