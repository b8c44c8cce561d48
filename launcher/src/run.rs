//! `ibdyn run`: starts the node daemons, wires them into a tree, relays the job's I/O and
//! signals, reports a rank that dies, tears the job down and exits with its status.

use crate::error::{LaunchError, Result};
use crate::jobtable::JobTable;
use crate::link::Outbox;
use crate::mpmd::{self, AppLine};
use crate::placement::{MapBy, Placement};
use crate::protocol::{
    start_failure, EncodedRequest, JobEnv, Ready, Report, SpawnOutcome, Submission, ToDaemon,
    NOT_FOUND,
};
use crate::rank_files::RankFiles;
use crate::time_limit::{TimeLimit, TIMED_OUT_STATUS};
use crate::{output, secret, signals};
use crossbeam_channel::Sender;
use ibdyn_pmi::wire::Frame;
use ibdyn_pmi::SpawnRequest;
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

mod startup;
pub(crate) use startup::{start_daemons, DaemonSet};

#[derive(Clone, Debug)]
pub struct RunOptions {
    /// Job-level keys the ranks find in their key-value space (e.g. process sets).
    pub preput: Vec<(String, String)>,
    pub nnodes: u32,
    pub map_by: MapBy,
    pub tag_output: bool,
    /// The applications (one, or several for MPMD), ranks numbered across them in order.
    pub apps: Vec<AppLine>,
    /// The binary that serves `daemon` (default: this executable).
    pub daemon_exe: Option<PathBuf>,
    /// A rank of the initial job ending abnormally is reported, not fatal.
    pub keep_going: bool,
    /// Info keys of the job's command (`ibdyn_prestart`).
    pub info: Vec<(String, String)>,
    /// Serve a singleton instead of starting a job (see `Adopt`).
    pub adopt: Option<Adopt>,
    /// Daemons on these hosts (one each) instead of `nnodes` on this machine.
    pub hosts: Option<crate::hosts::HostPlan>,
    /// Tear the job down after this many seconds (`--timeout`; None or 0: no limit).
    pub timeout_secs: Option<u64>,
    /// Each rank's stdout and stderr in files under this directory (`--output-filename`).
    pub output_dir: Option<PathBuf>,
    /// Ranks per node (`--ppn`): every node (or host) takes this many at a time, in place of
    /// the hosts' slots.
    pub ppn: Option<u32>,
}

/// `ibdyn run --adopt-ready-fd FD --jobid J`: the private launcher of a singleton that
/// spawns. Job J's only rank is the singleton itself; the ready line (socket, job id, node
/// uid) goes to FD; EOF on stdin means the singleton is gone.
#[derive(Clone, Copy, Debug)]
pub struct Adopt {
    pub ready_fd: i32,
    pub jobid: u32,
}

pub(crate) enum LEvent {
    Daemon(u32, Frame),
    DaemonClosed(u32),
    /// A DVM client (`ibdyn run --dvm`, `ibdyn dvm stop`) connected, sent a frame, left.
    ClientOpen(u64, Outbox),
    Client(u64, Frame),
    ClientClosed(u64),
    Stdin(Option<Vec<u8>>),
    Signal(i32),
}

/// On Ctrl-Z, the longest wait for the lines that stop the ranks to leave before the launcher
/// stops itself.
const SENT_BEFORE_STOP: Duration = Duration::from_secs(1);

/// After asking the daemons to kill the job, how long to wait for the ranks' exits.
const TEARDOWN_LIMIT: Duration = Duration::from_secs(10);
/// ... and after a node daemon died: its ranks will never be reported as ended, so this is
/// time for the other daemons' ranks, killed, to end and be reported.
const LOST_DAEMON_TEARDOWN: Duration = Duration::from_secs(2);

/// Finds `program` the way execvp would and checks that it can be executed.
pub fn resolve_program(program: &str) -> Result<PathBuf> {
    let err = |source: std::io::Error| LaunchError::Program {
        program: program.to_string(),
        source,
    };
    let check = |p: &Path| -> std::io::Result<()> {
        let meta = std::fs::metadata(p)?;
        if meta.is_dir() {
            return Err(std::io::Error::from_raw_os_error(libc::EISDIR));
        }
        let c = std::ffi::CString::new(p.as_os_str().as_encoded_bytes())
            .map_err(|_| std::io::Error::from_raw_os_error(libc::EINVAL))?;
        // SAFETY: a valid NUL-terminated path.
        if unsafe { libc::access(c.as_ptr(), libc::X_OK) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(())
    };
    if program.is_empty() {
        return Err(err(std::io::Error::from_raw_os_error(libc::ENOENT)));
    }
    if program.contains('/') {
        let p = PathBuf::from(program);
        check(&p).map_err(err)?;
        return std::path::absolute(&p).map_err(err);
    }
    let path = std::env::var_os("PATH").unwrap_or_else(|| "/usr/local/bin:/usr/bin:/bin".into());
    let mut first_error: Option<std::io::Error> = None;
    for dir in std::env::split_paths(&path) {
        let candidate = dir.join(program);
        match check(&candidate) {
            Ok(()) => return std::path::absolute(&candidate).map_err(err),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => {
                first_error.get_or_insert(e);
            }
        }
    }
    Err(err(first_error.unwrap_or_else(|| {
        std::io::Error::from_raw_os_error(libc::ENOENT)
    })))
}

/// The job's private directory; removed (with everything in it) when dropped.
pub(crate) struct SessionDir(pub(crate) PathBuf);

/// Bytes a session directory's deepest socket path adds to its base:
/// `/ibdyn-UID-PID-XXXXXXXX/nodeN/pmi.sock` with 10-digit uid, 7-digit pid, 5-digit node.
const SESSION_PATH_TAIL: usize = 53;

/// The longest path a Unix socket can be bound to (`sun_path` less its NUL).
const SOCKET_PATH_MAX: usize = 107;

/// Where session directories go: `$TMPDIR`, or `/tmp` when it is unset, is not a directory,
/// or is so long that a daemon's socket under it would not fit in a socket address (a long
/// per-job `TMPDIR` of a batch system made every daemon fail to bind). The second value says
/// why `$TMPDIR` was passed over, for a user who set it to a place that does not exist.
pub(crate) fn session_base() -> (PathBuf, Option<String>) {
    let Some(tmp) = std::env::var_os("TMPDIR").filter(|t| !t.is_empty()) else {
        return ("/tmp".into(), None);
    };
    let tmp = PathBuf::from(tmp);
    if !tmp.is_dir() {
        let why = format!(
            "TMPDIR={} is not a directory: the job's files go to /tmp",
            tmp.display()
        );
        return ("/tmp".into(), Some(why));
    }
    if tmp.as_os_str().len() + SESSION_PATH_TAIL > SOCKET_PATH_MAX {
        tracing::debug!(
            "TMPDIR={} is too long for socket paths: using /tmp",
            tmp.display()
        );
        return ("/tmp".into(), None);
    }
    (tmp, None)
}

impl SessionDir {
    fn create() -> Result<SessionDir> {
        let (base, passed_over) = session_base();
        if let Some(why) = passed_over {
            say!("ibdyn: {why}");
        }
        // SAFETY: getuid cannot fail.
        let uid = unsafe { libc::getuid() };
        let path = base.join(format!(
            "ibdyn-{uid}-{}-{:08x}",
            std::process::id(),
            secret::random_u64()? as u32
        ));
        std::fs::DirBuilder::new()
            .mode(0o700)
            .create(&path)
            .map_err(|e| {
                LaunchError::io(format!("create session directory {}", path.display()), e)
            })?;
        let _ = std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o700));
        Ok(SessionDir(path))
    }
}

impl Drop for SessionDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Turns the sweeps of [`remove_objects_of_exited`] off (`0`, `no`, `false`, `off`).
const SHM_SWEEP_ENV: &str = "IBDYN_SHM_SWEEP";

/// Removes what exited processes of this user left in /dev/shm (`who` names the sweeper in
/// the log): after a node daemon died, since its ranks died with it and nobody else would,
/// and as each node daemon ends, so that a daemon lost on another host leaves nothing there
/// beyond the next job. A process in another pid namespace sharing this /dev/shm looks
/// exited from here: `IBDYN_SHM_SWEEP=0` keeps such hosts' objects.
pub(crate) fn remove_objects_of_exited(who: &str) {
    if std::env::var(SHM_SWEEP_ENV).is_ok_and(|v| ibdyn_pmi::env::is_off(&v)) {
        return;
    }
    match ibdyn_shm::remove_segments_of_exited() {
        Ok(0) => {}
        Ok(n) => tracing::debug!("{who}: removed {n} /dev/shm object(s) of exited processes"),
        Err(e) => tracing::warn!("{who}: cannot sweep /dev/shm: {e}"),
    }
}

/// The one line for the spawned ranks a teardown ended (`ibdyn run`, and its DVM client).
pub(crate) fn report_torn_down(ranks: u32) {
    say!("ibdyn run: {ranks} rank(s) of spawned jobs ended abnormally during the teardown");
}

pub(crate) fn describe(code: Option<i32>, signal: Option<i32>) -> (String, i32) {
    match (code, signal) {
        (_, Some(s)) => (
            format!("was killed by signal {s} ({})", signals::name(s)),
            128 + s,
        ),
        (Some(c), _) => (format!("exited with code {c}"), c),
        _ => ("vanished".into(), 1),
    }
}

struct Launcher {
    opts: RunOptions,
    outboxes: Vec<Outbox>,
    jobs: JobTable,
    initial: u32,
    /// The initial job's spawn reply has come (its ranks are known to be running).
    started: bool,
    node_uid0: String,
    session: PathBuf,
    status: Option<i32>,
    /// Abnormal ends seen under --keep-going.
    failures: u32,
    /// Spawned jobs' ranks that ended abnormally once the teardown had begun (killed by it,
    /// or failing as their parents went first): summed up in one line at the end rather than a
    /// line each (a master's thousands of workers).
    torn_down: u32,
    teardown_since: Option<Instant>,
    signals_seen: u32,
    /// Adopting: the singleton said it finalized (its stdin's EOF is then a normal end).
    singleton_finalized: bool,
    shutting_down: bool,
    /// A node daemon died: its ranks will not be reported as ended.
    lost_daemon: bool,
    lost_output: output::LostOutput,
    files: Option<RankFiles>,
}

impl Launcher {
    fn broadcast(&self, msg: &ToDaemon) {
        let line = msg.encode().to_line();
        for o in &self.outboxes {
            let _ = o.send(line.clone());
        }
    }

    fn teardown(&mut self) {
        if self.teardown_since.is_none() {
            self.teardown_since = Some(Instant::now());
            self.broadcast(&ToDaemon::Kill);
        }
    }

    /// A daemon's report that cannot be read may have carried anything (the start of ranks,
    /// an exit): waiting on could wait forever, so the job ends.
    fn daemon_unreadable(&mut self, d: impl std::fmt::Display, why: &str) {
        tracing::warn!("launcher: unreadable report from daemon {d}: {why}");
        self.fail(
            &format!(
                "node daemon {d} sent a report the launcher cannot read ({why}); ending the job"
            ),
            1,
        );
    }

    fn fail(&mut self, msg: &str, status: i32) {
        if self.status.is_none() && self.teardown_since.is_none() {
            say!("ibdyn run: {msg}");
            self.status = Some(status);
        }
        self.teardown();
    }

    /// The time limit overrides an earlier failure's status (under --keep-going).
    fn time_out(&mut self, limit: &TimeLimit) {
        say!("ibdyn run: {}", limit.message());
        self.status = Some(TIMED_OUT_STATUS);
        self.teardown();
    }

    fn all_done(&self) -> bool {
        self.started && !self.jobs.any_live()
    }

    fn output(&mut self, job: u32, rank: u32, fd: u32, data: &[u8]) {
        if let Some(files) = &mut self.files {
            if let Err(e) = files.write(job, rank, fd, Some(self.initial), data) {
                self.lost_output.record(&e);
            }
            return;
        }
        let prefix = self
            .opts
            .tag_output
            .then(|| output::tag(job, rank, Some(self.initial)));
        match output::write_out(fd, prefix.as_deref(), data) {
            // Like the first command of a pipeline whose reader left (`ibdyn run .. | head`):
            // the job ends, quietly, rather than running on with its output thrown away.
            Err(e) if output::reader_gone(&e) => {
                if self.status.is_none() && self.teardown_since.is_none() {
                    self.status = Some(output::READER_GONE_STATUS);
                }
                self.teardown();
            }
            Err(e) => self.lost_output.record(&e),
            Ok(()) => {}
        }
    }

    fn on_daemon(&mut self, report: Report) {
        match report {
            Report::Output {
                job,
                rank,
                fd,
                data,
            } => self.output(job, rank, fd, &data),
            Report::Job(a) => {
                self.jobs.announce(a);
            }
            Report::SpawnResult { outcome, .. } => self.on_initial_started(outcome),
            Report::Exit { job, rank, end } => {
                self.jobs.end(job, rank);
                let Some((code, signal)) = end.abnormal() else {
                    return;
                };
                let (how, status) = describe(code, signal);
                if job != self.initial && self.teardown_since.is_some() {
                    self.torn_down += 1;
                } else if job == self.initial && !self.opts.keep_going {
                    self.fail(&format!("rank {rank} {how}; tearing the job down"), status);
                } else {
                    say!("ibdyn run: job {job} rank {rank} {how}");
                    if job == self.initial {
                        self.failures += 1;
                        self.status.get_or_insert(status);
                    }
                }
            }
            Report::Abort {
                job,
                rank,
                code,
                msg,
            } => {
                if job != self.initial {
                    // A spawned job's abort ends that job only; its parents see its ranks
                    // go (an error on their intercommunicator).
                    say!(
                        "ibdyn run: job {job} rank {rank} aborted its job with code {code}: {msg}"
                    );
                    if let Some(root) = self.outboxes.first() {
                        let _ = root.send(ToDaemon::KillJob(job).encode().to_line());
                    }
                    return;
                }
                self.fail(
                    &format!("rank {rank} aborted the job with code {code}: {msg}"),
                    code,
                );
            }
        }
    }

    /// The root's answer to the initial `l_spawn` / `l_adopt`.
    fn on_initial_started(&mut self, outcome: SpawnOutcome) {
        self.started = true;
        let failure = match outcome {
            Err(msg) => Some((msg, NOT_FOUND)),
            Ok((_, children)) => start_failure(&children),
        };
        if let Some((msg, status)) = failure {
            self.fail(&msg, status);
            return;
        }
        if let Some(a) = self.opts.adopt {
            let sock = self.session.join("node0/pmi.sock");
            let ready = Ready {
                sock: &sock,
                jobid: a.jobid,
                node_uid: &self.node_uid0,
            }
            .encode();
            // SAFETY: the fd was handed to us by the singleton for this one line; we own it.
            let mut f =
                unsafe { <std::fs::File as std::os::fd::FromRawFd>::from_raw_fd(a.ready_fd) };
            if let Err(e) = f.write_all(ready.to_line().as_bytes()) {
                self.fail(&format!("cannot tell the singleton we are ready: {e}"), 1);
            }
        }
    }

    fn on_event(&mut self, ev: LEvent) {
        match ev {
            LEvent::Daemon(d, Frame::Line(cmd)) => match Report::decode(&cmd) {
                Ok(r) => self.on_daemon(r),
                Err(e) => self.daemon_unreadable(d, &e.to_string()),
            },
            LEvent::Daemon(d, f) => self.daemon_unreadable(d, &format!("{f:?}")),
            LEvent::DaemonClosed(d) => {
                if !self.shutting_down {
                    self.lost_daemon = true;
                    self.fail(&format!("node daemon {d} died: its ranks are lost"), 1);
                }
            }
            LEvent::Stdin(data) => {
                if self.opts.adopt.is_some() {
                    let finalized = ibdyn_pmi::SINGLETON_FINALIZED_LINE.as_bytes();
                    match data {
                        Some(d) => self.singleton_finalized |= d.starts_with(finalized),
                        // The singleton is gone (its end of our stdin closed).
                        None if self.singleton_finalized => {
                            self.jobs.end(self.initial, 0);
                            self.started = true;
                        }
                        None => self.fail(
                            "the singleton ended without finalizing (killed?): \
                             ending the jobs it spawned",
                            1,
                        ),
                    }
                    return;
                }
                self.broadcast(&match data {
                    Some(d) => ToDaemon::Stdin(d),
                    None => ToDaemon::StdinEof,
                });
            }
            LEvent::ClientOpen(..) | LEvent::Client(..) | LEvent::ClientClosed(_) => {}
            LEvent::Signal(s) => match signals::for_ranks(s) {
                Some(to_ranks) => self.pass_on(s, to_ranks),
                None => self.on_ending_signal(s),
            },
        }
    }

    /// A signal that goes on to the ranks as `to_ranks`; on Ctrl-Z, this process then stops.
    fn pass_on(&self, sig: i32, to_ranks: i32) {
        self.broadcast(&ToDaemon::Signal(to_ranks));
        if sig == libc::SIGTSTP {
            // The daemons' lines leave before this process stops.
            for o in &self.outboxes {
                o.wait_sent(SENT_BEFORE_STOP);
            }
        }
        signals::stop_self_if_asked(sig);
    }

    /// Ctrl-C, SIGTERM, SIGHUP: passed on the first time, SIGKILL for the job the second.
    fn on_ending_signal(&mut self, s: i32) {
        self.signals_seen += 1;
        tracing::debug!("launcher: {} received", signals::name(s));
        if self.signals_seen == 1 {
            self.broadcast(&ToDaemon::Signal(s));
        } else {
            self.fail(
                &format!("{} received again: killing the job", signals::name(s)),
                128 + s,
            );
            self.broadcast(&ToDaemon::Signal(libc::SIGKILL));
        }
    }
}

fn start_stdin_pump(tx: Sender<LEvent>) {
    let _ = std::thread::Builder::new()
        .name("stdin".into())
        .spawn(move || {
            let mut stdin = std::io::stdin();
            let mut buf = vec![0u8; 16384];
            loop {
                match crate::stdin_fg::read(&mut stdin, &mut buf) {
                    Ok(0) | Err(_) => {
                        let _ = tx.send(LEvent::Stdin(None));
                        return;
                    }
                    Ok(n) => {
                        if tx.send(LEvent::Stdin(Some(buf[..n].to_vec()))).is_err() {
                            return;
                        }
                    }
                }
            }
        });
}

/// Runs a job to its end (and every job it spawned); returns the job's exit status.
pub fn run(o: RunOptions) -> Result<i32> {
    let limit = TimeLimit::starting_now(o.timeout_secs);
    let nprocs = mpmd::total(&o.apps).map_err(LaunchError::Usage)?;
    let nnodes = o.hosts.as_ref().map_or(o.nnodes, |h| h.hosts.len() as u32);
    let placement = match (&o.hosts, o.ppn) {
        (_, Some(ppn)) => Placement::by_slots(nprocs, &vec![ppn; nnodes as usize], o.map_by)?,
        (Some(h), None) => {
            let slots: Vec<u32> = h.hosts.iter().map(|x| x.slots).collect();
            Placement::by_slots(nprocs, &slots, o.map_by)?
        }
        (None, None) => Placement::new(nprocs, o.nnodes, o.map_by)?,
    };
    // An adopted singleton is running already: nothing to find.
    let commands = match o.adopt {
        Some(_) => Vec::new(),
        None => mpmd::spawn_commands(&o.apps, &o.info)?,
    };
    let exe = match &o.daemon_exe {
        Some(p) => p.clone(),
        None => {
            std::env::current_exe().map_err(|e| LaunchError::io("find the ibdyn executable", e))?
        }
    };
    let (tx, rx) = crossbeam_channel::unbounded::<LEvent>();
    let sig_tx = tx.clone();
    signals::watch(move |s| {
        let _ = sig_tx.send(LEvent::Signal(s));
    })?;
    // Everything that can be refused is, before any daemon starts.
    let files = o.output_dir.as_deref().map(RankFiles::create).transpose()?;
    let jobid = o.adopt.map_or(std::process::id(), |a| a.jobid);
    let first = match o.adopt {
        Some(a) => ToDaemon::Adopt {
            id: 0,
            jobid: a.jobid,
        },
        None => ToDaemon::Spawn(Submission {
            id: 0,
            req: EncodedRequest::new(&SpawnRequest {
                commands,
                preput: o.preput.clone(),
            })?,
            jobid: Some(jobid),
            nodes: Some(placement.node_of.clone()),
            stdin: true,
            // Daemons on this machine pass on the launcher's environment; ssh would not.
            env: match o.hosts {
                Some(_) => Some(JobEnv::for_other_hosts().map_err(|e| {
                    LaunchError::io("find the current directory (the ranks run there)", e)
                })?),
                None => None,
            },
        }),
    };
    let set = start_daemons(nnodes, o.hosts.as_ref(), &exe, &tx)?;
    let DaemonSet {
        mut daemons,
        outboxes,
        node_uid0,
        session,
    } = set;
    let _ = outboxes[0].send(first.encode().to_line());
    start_stdin_pump(tx.clone());
    drop(tx);

    let mut l = Launcher {
        jobs: JobTable::new(nnodes),
        initial: jobid,
        started: false,
        node_uid0,
        session: session.0.clone(),
        opts: o,
        outboxes,
        status: None,
        failures: 0,
        torn_down: 0,
        teardown_since: None,
        signals_seen: 0,
        singleton_finalized: false,
        shutting_down: false,
        lost_daemon: false,
        lost_output: Default::default(),
        files,
    };
    while !l.all_done() {
        let ev = match l.teardown_since {
            None => match limit {
                None => rx.recv().ok(),
                // A job that keeps its launcher busy (output) times out too.
                Some(limit) if limit.reached() => {
                    l.time_out(&limit);
                    continue;
                }
                Some(limit) => match rx.recv_timeout(limit.left()) {
                    Ok(ev) => Some(ev),
                    Err(crossbeam_channel::RecvTimeoutError::Timeout) => {
                        l.time_out(&limit);
                        continue;
                    }
                    Err(crossbeam_channel::RecvTimeoutError::Disconnected) => None,
                },
            },
            Some(t) => {
                let limit = if l.lost_daemon {
                    LOST_DAEMON_TEARDOWN
                } else {
                    TEARDOWN_LIMIT
                };
                let left = (t + limit).saturating_duration_since(Instant::now());
                if left.is_zero() {
                    if !l.lost_daemon {
                        tracing::warn!(
                            "launcher: ranks did not exit within {limit:?} of the teardown"
                        );
                    }
                    break;
                }
                rx.recv_timeout(left).ok()
            }
        };
        match ev {
            Some(ev) => l.on_event(ev),
            None if l.teardown_since.is_none() => break,
            None => {}
        }
    }
    if l.failures > 0 {
        say!(
            "ibdyn run: {} rank(s) of the job ended abnormally (--keep-going)",
            l.failures
        );
    }
    if l.torn_down > 0 {
        report_torn_down(l.torn_down);
    }
    l.shutting_down = true;
    l.broadcast(&ToDaemon::Shutdown);
    drop(l.outboxes);
    daemons.reap(Duration::from_secs(5));
    if l.lost_daemon {
        remove_objects_of_exited("launcher");
    }
    drop(session);
    Ok(l.lost_output.status(l.status.unwrap_or(0)))
}
