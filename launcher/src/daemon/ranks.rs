//! Starting, watching and stopping the ranks of a job on this daemon.

use super::{launch, starts, Daemon, Event};
use crate::placement::tree;
use crate::protocol::{JobEnv, RankEnd, StartResult};
use crate::signals;
use crossbeam_channel::Sender;
use ibdyn_pmi::env;
use ibdyn_pmi::state::CollectiveTable;
use ibdyn_pmi::ProcessMapping;
use std::collections::BTreeMap;
use std::collections::HashMap;
use std::ffi::{OsStr, OsString};
use std::io::Write;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// After a rank is reaped, how long its output pipes may stay open (a grandchild holding
/// them) before its exit is reported anyway.
pub(crate) const EOF_GRACE: Duration = Duration::from_secs(1);

/// One command of a job: `nprocs` consecutive ranks run `program` with application number
/// `appnum` (its index in a spawn_multiple).
#[derive(Clone, Debug)]
pub struct App {
    pub program: String,
    pub args: Vec<String>,
    pub nprocs: u32,
    pub appnum: i32,
    /// `wdir` info key.
    pub wdir: Option<String>,
    /// `env` info entries (`KEY=VALUE`) and `ibdyn_*` keys as `IBDYN_INFO_*`.
    pub env: Vec<(String, String)>,
    /// `ibdyn_bind` info key (`ibdyn run --bind-to`, `--cpus-per-rank`).
    pub bind: crate::placement::Binding,
    /// `ibdyn_report_bindings` info key (`ibdyn run --report-bindings`).
    pub report_bindings: bool,
}

/// Everything needed to start ranks of one job: "start these ranks of this job here".
#[derive(Clone, Debug)]
pub struct JobSpec {
    pub jobid: u32,
    pub kvsname: String,
    pub size: u32,
    pub apps: Vec<App>,
    /// Daemon of every rank.
    pub node_of: Vec<u32>,
    /// Job whose process spawned this one (None for a job the launcher started).
    pub parent: Option<u32>,
    /// Rank 0 reads the launcher's stdin.
    pub stdin: bool,
    pub session_dir: PathBuf,
    pub pmi_sock: PathBuf,
    /// Names of the keys put for the job before it started (comma-separated).
    pub preput_keys: String,
    /// Their values, hex, in the same order (None when too large for the environment).
    pub preput_values: Option<String>,
    /// The environment and working directory the ranks start from (this daemon's when None).
    pub(crate) env: Option<JobEnv>,
}

impl JobSpec {
    /// The command rank `rank` runs.
    pub fn app_of(&self, rank: u32) -> Option<&App> {
        let mut first = 0;
        self.apps.iter().find(|a| {
            first += a.nprocs;
            rank < first
        })
    }

    pub fn ranks_on(&self, node: u32) -> Vec<u32> {
        (0..self.node_of.len() as u32)
            .filter(|&r| self.node_of[r as usize] == node)
            .collect()
    }

    /// `PMI_process_mapping` of an arbitrary placement: one block per run of equal nodes.
    pub fn mapping(&self) -> ProcessMapping {
        let mut blocks: Vec<(u32, u32, u32)> = Vec::new();
        for &n in &self.node_of {
            match blocks.last_mut() {
                Some((s, 1, k)) if *s == n => *k += 1,
                _ => blocks.push((n, 1, 1)),
            }
        }
        ProcessMapping { blocks }
    }
}

#[derive(Default)]
pub(crate) struct RankState {
    pub(crate) pid: Option<i32>,
    pub(crate) stdin: Option<Sender<Option<Vec<u8>>>>,
    /// Sequence number of the next collective this rank enters.
    pub(crate) next_seq: u64,
    pub(crate) conn: Option<super::ConnId>,
    pub(crate) finalized: bool,
    /// Reported as gone to the collectives (finalized, disconnected or exited).
    pub(crate) gone: bool,
    pub(crate) exit: Option<(Option<i32>, Option<i32>)>,
    pub(crate) eofs: u8,
    pub(crate) reaped_at: Option<Instant>,
    pub(crate) reported: bool,
    /// Not started by us: the singleton that asked for this daemon.
    pub(crate) adopted: bool,
    /// Killed because its spawn failed elsewhere: its end is not news.
    pub(crate) cancelled: bool,
    /// Its `PMI_ID` while unused (a key of `Daemon::pmi_ids`).
    pub(crate) pmi_id: Option<u32>,
    /// The CPUs it is bound to (`--bind-to`).
    pub(crate) cpus: Option<Vec<usize>>,
    /// When reaped, processes of its group (helpers it started) still ran: a teardown ends
    /// them too. While any of them runs, no new process gets the group's number.
    pub(crate) helpers_left: bool,
}

pub(crate) struct Job {
    pub(crate) spec: JobSpec,
    pub(crate) ranks: BTreeMap<u32, RankState>,
    pub(crate) colls: CollectiveTable,
    pub(crate) coll_waiters: HashMap<u64, Vec<super::coll::CollWaiter>>,
}

impl Job {
    /// `me` of `nnodes` daemons: collectives complete here when the ranks of the subtree
    /// have arrived.
    pub(crate) fn new(spec: JobSpec, me: u32, nnodes: u32) -> Job {
        let expected: u32 = tree::subtree(me, nnodes)
            .iter()
            .map(|&d| spec.ranks_on(d).len() as u32)
            .sum();
        Job {
            spec,
            ranks: BTreeMap::new(),
            colls: CollectiveTable::new(expected),
            coll_waiters: HashMap::new(),
        }
    }
}

pub(super) fn wait_for(pid: i32, job: u32, rank: u32, tx: super::inbox::EventTx) {
    let spawned = std::thread::Builder::new()
        .name(format!("wait{job}.{rank}"))
        .spawn(move || {
            use nix::sys::wait::{waitpid, WaitStatus};
            loop {
                match waitpid(nix::unistd::Pid::from_raw(pid), None) {
                    Ok(WaitStatus::Exited(_, code)) => {
                        let _ = tx.send(Event::Exited {
                            job,
                            rank,
                            pid,
                            code: Some(code),
                            signal: None,
                        });
                        return;
                    }
                    Ok(WaitStatus::Signaled(_, sig, _)) => {
                        let _ = tx.send(Event::Exited {
                            job,
                            rank,
                            pid,
                            code: None,
                            signal: Some(sig as i32),
                        });
                        return;
                    }
                    Ok(_) | Err(nix::errno::Errno::EINTR) => continue,
                    Err(e) => {
                        tracing::warn!("waitpid({pid}) for rank {rank}: {e}");
                        let _ = tx.send(Event::Exited {
                            job,
                            rank,
                            pid,
                            code: None,
                            signal: None,
                        });
                        return;
                    }
                }
            }
        });
    if let Err(e) = spawned {
        tracing::warn!("cannot start a wait thread for rank {rank}: {e}");
    }
}

/// errno of a failed start, -1 when the error has none.
fn errno_of(e: &std::io::Error) -> i32 {
    e.raw_os_error().unwrap_or(-1)
}

/// A connected pair of sockets: the daemon's end and the rank's, the rank's numbered 3 or
/// above (so that it survives the rank's stdio set-up); both close-on-exec here.
pub(super) fn inherited_pmi_socket() -> std::io::Result<(UnixStream, OwnedFd)> {
    let (ours, theirs) = UnixStream::pair()?;
    let ours = UnixStream::from(super::kept_fds::keep_high(OwnedFd::from(ours)));
    let theirs = OwnedFd::from(theirs);
    // SAFETY: F_DUPFD_CLOEXEC on an open descriptor returns a new one (or -1), owned by us.
    let fd = unsafe { libc::fcntl(theirs.as_raw_fd(), libc::F_DUPFD_CLOEXEC, 3) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: the descriptor was just made and nothing else owns it.
    Ok((ours, unsafe { OwnedFd::from_raw_fd(fd) }))
}

impl Daemon {
    /// A fresh `PMI_ID`: random, positive as a C int (MPICH reads it with atoi), unused.
    fn new_pmi_id(&self) -> std::io::Result<u32> {
        loop {
            let r =
                crate::secret::random_u64().map_err(|e| std::io::Error::other(e.to_string()))?;
            let id = (r as u32) & 0x7fff_ffff;
            if id != 0 && !self.pmi_ids.contains_key(&id) {
                return Ok(id);
            }
        }
    }

    /// Serves PMI on the daemon's end of a rank's inherited socket, as that rank.
    fn attach_pmi(&mut self, stream: UnixStream, job: u32, rank: u32) {
        let id = self.next_attached_conn;
        self.next_attached_conn += 1;
        match self.reactor.attach_client(stream, id) {
            Ok(out) => {
                let mut client = super::pmi::Client::new(out);
                client.attached = Some((job, rank));
                self.clients.insert(id, client);
            }
            Err(e) => tracing::warn!(
                "daemon {}: job {job} rank {rank}: cannot serve its PMI_FD: {e}",
                self.me
            ),
        }
    }

    /// Starts the ranks of job `spec` placed on this daemon (the one place processes are
    /// created); returns (rank, errno, message) of each, errno 0 when it was exec'd.
    pub(crate) fn start_ranks(&mut self, spec: &JobSpec) -> Vec<StartResult> {
        let mut out = Vec::new();
        let mut ready = Vec::new();
        let here = spec.ranks_on(self.me);
        let local_size = here.len() as u32;
        let live = || {
            let running = self.jobs.values().flat_map(|j| j.ranks.values());
            running
                .filter(|rs| rs.pid.is_some() && rs.reaped_at.is_none())
                .count()
                + here.len()
        };
        if let Some(w) = self.shm_room.check(live) {
            say!("ibdyn daemon {}: {w}", self.me);
        }
        let bound = spec
            .apps
            .iter()
            .any(|a| a.bind.unit != crate::placement::Bind::None);
        let busy = if bound {
            self.bound_cpus_of_others(spec.jobid)
        } else {
            Vec::new()
        };
        for (local, r) in (0..).zip(here) {
            match self.prepare_rank(spec, r, (local, local_size), &busy) {
                Ok(p) => ready.push(p),
                Err(e) => out.push(self.not_started_here(spec, r, &e)),
            }
        }
        let mut cold = Vec::new();
        for p in ready {
            let Some(app) = spec.app_of(p.rank) else {
                cold.push(p);
                continue;
            };
            match self.start_on_copy(app, spec.jobid, p) {
                Ok((p, child)) => {
                    let rank = p.rank;
                    self.rank_started(spec, p, child, true);
                    out.push(StartResult {
                        rank,
                        errno: 0,
                        message: String::new(),
                    });
                }
                Err(p) => cold.push(p),
            }
        }
        let started = self.starters.start_all(spec, &mut cold);
        for (p, s) in cold.into_iter().zip(started) {
            let rank = p.rank;
            match s {
                Ok(child) => {
                    self.rank_started(spec, p, child, false);
                    out.push(StartResult {
                        rank,
                        errno: 0,
                        message: String::new(),
                    });
                }
                Err(e) => {
                    self.pmi_ids.remove(&p.pmi_id);
                    out.push(self.not_started_here(spec, rank, &e));
                }
            }
        }
        out.sort_by_key(|r| r.rank);
        shorten_repeats(&mut out);
        out
    }

    /// The result of a rank that could not be started, which is then over.
    fn not_started_here(&mut self, spec: &JobSpec, r: u32, e: &std::io::Error) -> StartResult {
        let program = spec.app_of(r).map_or("?", |a| a.program.as_str());
        let wdir = spec
            .app_of(r)
            .and_then(|a| a.wdir.as_deref())
            .map(|w| format!(" in {w:?}"))
            .unwrap_or_default();
        let mut msg = format!("cannot execute {program:?}{wdir}: {e}");
        if matches!(e.raw_os_error(), Some(libc::EMFILE | libc::ENFILE)) {
            // Each rank holds a few of its node daemon's descriptors (output, PMI).
            msg.push_str(
                " (the node daemon ran out of file descriptors: raise `ulimit -n` or place \
                 fewer ranks per node)",
            );
        }
        tracing::debug!("daemon {}: job {} rank {r}: {msg}", self.me, spec.jobid);
        if let Some(job) = self.jobs.get_mut(&spec.jobid) {
            let rs = job.ranks.entry(r).or_default();
            rs.gone = true;
            rs.reported = true;
        }
        StartResult {
            rank: r,
            errno: errno_of(e),
            message: msg,
        }
    }

    /// The CPUs bound to running ranks of jobs other than `job` here (several jobs of a DVM
    /// each bound from the first core would share cores while others idle).
    fn bound_cpus_of_others(&self, job: u32) -> Vec<usize> {
        self.jobs
            .iter()
            .filter(|(&j, _)| j != job)
            .flat_map(|(_, j)| j.ranks.values())
            .filter(|rs| rs.exit.is_none())
            .filter_map(|rs| rs.cpus.as_deref())
            .flatten()
            .copied()
            .collect()
    }

    /// Everything rank `rank` needs to start, its `PMI_ID` reserved; `local` is its index
    /// among the job's ranks on this node, and their number; `busy`: CPUs bound to other
    /// jobs' ranks here.
    fn prepare_rank(
        &mut self,
        spec: &JobSpec,
        rank: u32,
        local: (u32, u32),
        busy: &[usize],
    ) -> std::io::Result<starts::Prepared> {
        let app = spec
            .app_of(rank)
            .ok_or_else(|| std::io::Error::from_raw_os_error(libc::EINVAL))?;
        let text = |n: u32| OsString::from(n.to_string());
        let (rank_s, size_s, job_s) = (text(rank), text(spec.size), text(spec.jobid));
        let (node_s, nnodes_s) = (text(self.me), text(self.nnodes));
        let appnum_s = OsString::from(app.appnum.to_string());
        let (local_s, local_size_s) = (text(local.0), text(local.1));
        let parent_s = spec.parent.map(text);
        // The rank's PMI-1 connection the way MPICH's launcher hands it over (`PMI_FD`):
        // other MPIs' clients use it as it is, ibdyn's own client too.
        let (pmi_ours, pmi_theirs) = inherited_pmi_socket()?;
        let pmi_fd_s = text(pmi_theirs.as_raw_fd() as u32);
        let pmi_id = self.new_pmi_id()?;
        let pmi_id_s = text(pmi_id);
        let rank_env = [
            (env::PMI_SOCK, Some(spec.pmi_sock.as_os_str())),
            (env::RANK, Some(rank_s.as_os_str())),
            (env::SIZE, Some(size_s.as_os_str())),
            (env::JOBID, Some(job_s.as_os_str())),
            (env::NODE, Some(node_s.as_os_str())),
            (env::NODE_UID, Some(OsStr::new(&self.node_uid))),
            (env::NNODES, Some(nnodes_s.as_os_str())),
            (env::JOB_SECRET, Some(OsStr::new(&self.secret_hex))),
            (env::SESSION_DIR, Some(spec.session_dir.as_os_str())),
            (
                ibdyn_verbs::iface::FABRIC_IP_ENV,
                self.fabric_ip.as_deref().map(OsStr::new),
            ),
            (env::APPNUM, Some(appnum_s.as_os_str())),
            (env::LOCAL_RANK, Some(local_s.as_os_str())),
            (env::LOCAL_SIZE, Some(local_size_s.as_os_str())),
            (env::HYDRA_LOCAL_RANK, Some(local_s.as_os_str())),
            (env::HYDRA_LOCAL_SIZE, Some(local_size_s.as_os_str())),
            (env::OMPI_RANK, Some(rank_s.as_os_str())),
            (env::OMPI_SIZE, Some(size_s.as_os_str())),
            (env::OMPI_LOCAL_RANK, Some(local_s.as_os_str())),
            (env::OMPI_LOCAL_SIZE, Some(local_size_s.as_os_str())),
            (env::HYDRA_PMI_FD, Some(pmi_fd_s.as_os_str())),
            (env::HYDRA_PMI_RANK, Some(rank_s.as_os_str())),
            (env::HYDRA_PMI_SIZE, Some(size_s.as_os_str())),
            (env::PMI_PORT, Some(OsStr::new(&self.pmi_port))),
            (env::PMI_ID, Some(pmi_id_s.as_os_str())),
            (
                env::PREPUT_KEYS,
                Some(OsStr::new(&spec.preput_keys)).filter(|k| !k.is_empty()),
            ),
            (
                env::PREPUT_VALUES,
                spec.preput_values
                    .as_deref()
                    .map(OsStr::new)
                    .filter(|_| !spec.preput_keys.is_empty()),
            ),
            (env::SPAWNED, spec.parent.map(|_| OsStr::new("1"))),
            (env::PARENT_JOBID, parent_s.as_deref()),
        ];
        let mut set: Vec<(&OsStr, Option<&OsStr>)> =
            rank_env.iter().map(|(k, v)| (OsStr::new(*k), *v)).collect();
        set.extend(
            app.env
                .iter()
                .map(|(k, v)| (OsStr::new(k.as_str()), Some(OsStr::new(v.as_str())))),
        );
        // A relative `wdir` is taken from where the job's submitter ran.
        let cwd = match &spec.env {
            Some(e) => e.rank_cwd(app.wdir.as_deref()),
            None => app.wdir.as_ref().map(PathBuf::from),
        };
        // A shell's notion of where it is follows the directory chosen.
        if let Some(c) = &cwd {
            set.push((OsStr::new("PWD"), Some(c.as_os_str())));
        }
        let base = spec.env.as_ref().map(|e| e.base_here());
        self.pmi_ids.insert(pmi_id, (spec.jobid, rank));
        Ok(starts::Prepared {
            rank,
            env: launch::environment(base, &set),
            cwd,
            stdin_pipe: rank == 0 && spec.stdin,
            cpus: super::binding::cpus_for(app.bind, local.0, busy),
            pmi_ours,
            pmi_theirs,
            pmi_id,
            per_rank: rank_env.iter().map(|(k, _)| *k).collect(),
        })
    }

    /// Watches a started rank: its PMI connection, output, end (unless `watched` already, as
    /// a prestarted copy is) and stdin.
    fn rank_started(
        &mut self,
        spec: &JobSpec,
        p: starts::Prepared,
        mut child: launch::Started,
        watched: bool,
    ) {
        let starts::Prepared {
            rank,
            pmi_ours,
            pmi_theirs,
            pmi_id,
            cpus,
            ..
        } = p;
        drop(pmi_theirs);
        self.attach_pmi(pmi_ours, spec.jobid, rank);
        let pid = child.pid;
        let job = spec.jobid;
        if spec.app_of(rank).is_some_and(|a| a.report_bindings) {
            // Sent before the reactor reads any of the rank's own output.
            let line = super::binding::report_line(rank, self.me, pid, cpus.as_deref());
            self.to_launcher(crate::protocol::Report::Output {
                job,
                rank,
                fd: 2,
                data: line.into_bytes(),
            });
        }
        tracing::debug!(
            "daemon {}: job {job} rank {rank} started as pid {pid}",
            self.me
        );
        let stdin_file = child.take_stdin();
        self.reactor.watch_output(child.stdout, job, rank, 1);
        self.reactor.watch_output(child.stderr, job, rank, 2);
        let stdin = stdin_file.map(|mut w| {
            let (stx, srx) = crossbeam_channel::unbounded::<Option<Vec<u8>>>();
            let _ = std::thread::Builder::new()
                .name("stdin".into())
                .spawn(move || {
                    for chunk in srx {
                        match chunk {
                            Some(data) if w.write_all(&data).is_ok() => {}
                            _ => return,
                        }
                    }
                });
            stx
        });
        if !watched && !self.reactor.watch_child(pid, job, rank) {
            wait_for(pid, job, rank, self.events.clone());
        }
        self.left_groups.forget(pid);
        if let Some(j) = self.jobs.get_mut(&job) {
            let rs = j.ranks.entry(rank).or_default();
            rs.pid = Some(pid);
            rs.stdin = stdin;
            rs.pmi_id = Some(pmi_id);
            rs.cpus = cpus;
        }
    }

    pub(crate) fn stdin_to_rank0(&mut self, data: Option<Vec<u8>>) {
        if let Some(job) = self.initial_job {
            self.stdin_to(job, data);
        }
    }

    /// Stdin for rank 0 of `job`, if it runs here and reads it.
    pub(crate) fn stdin_to(&mut self, job: u32, data: Option<Vec<u8>>) {
        if let Some(rs) = self.jobs.get_mut(&job).and_then(|j| j.ranks.get_mut(&0)) {
            match (&rs.stdin, data) {
                (Some(tx), Some(d)) => {
                    let _ = tx.send(Some(d));
                }
                (Some(_), None) => rs.stdin = None,
                _ => {}
            }
        }
    }

    /// Signals every live rank of `only` (or of every job).
    pub(crate) fn signal_ranks(&mut self, sig: i32, only: Option<u32>) {
        self.signal_groups(sig, only, false);
    }

    /// Ends the ranks of `only` (or of every job) with `sig`: the live ones, and the process
    /// groups of those reaped with helpers still running (a helper a rank started in the
    /// background outlives it otherwise).
    pub(crate) fn end_ranks(&mut self, sig: i32, only: Option<u32>) {
        self.signal_groups(sig, only, true);
    }

    fn signal_groups(&mut self, sig: i32, only: Option<u32>, reaped_too: bool) {
        if reaped_too {
            self.left_groups.signal(self.me, sig, only);
        }
        for (j, job) in &self.jobs {
            if only.is_some_and(|o| o != *j) {
                continue;
            }
            for (r, rs) in &job.ranks {
                let reaped = rs.reaped_at.is_some();
                let wanted = !reaped || (reaped_too && rs.helpers_left);
                if let Some(pid) = rs.pid.filter(|_| wanted) {
                    tracing::debug!(
                        "daemon {}: {} to job {j} rank {r} (pid {pid})",
                        self.me,
                        signals::name(sig)
                    );
                    // SAFETY: kill(2) on the process group the rank leads (helpers it
                    // started go too); a group with no member left gives ESRCH.
                    unsafe { libc::kill(-pid, sig) };
                }
            }
        }
    }

    pub(crate) fn on_output_eof(&mut self, job: u32, rank: u32) {
        if let Some(rs) = self.rank_mut(job, rank) {
            rs.eofs += 1;
        }
        self.report_exit(job, rank, false);
    }

    pub(crate) fn rank_mut(&mut self, job: u32, rank: u32) -> Option<&mut RankState> {
        self.jobs.get_mut(&job).and_then(|j| j.ranks.get_mut(&rank))
    }

    pub(crate) fn on_exited(
        &mut self,
        job: u32,
        rank: u32,
        pid: i32,
        code: Option<i32>,
        signal: Option<i32>,
    ) {
        let (job, rank) = if job == super::prestart::WARM_JOB {
            match self.prestart.on_exit(pid) {
                Some(jr) => jr,
                // A copy that ended while waiting (it opened its receive queue ahead).
                None => {
                    remove_segments(self.me, &[pid], "a prestarted copy");
                    return;
                }
            }
        } else {
            (job, rank)
        };
        self.shm_left.ended(pid);
        let Some(rs) = self.rank_mut(job, rank) else {
            return;
        };
        let now = Instant::now();
        if let Some(id) = rs.pmi_id.take() {
            self.pmi_ids.remove(&id);
        }
        let Some(rs) = self.rank_mut(job, rank) else {
            return;
        };
        rs.exit = Some((code, signal));
        rs.reaped_at = Some(now);
        rs.helpers_left = !rs.adopted && super::left_groups::has_members(pid);
        rs.stdin = None;
        self.output_grace.push((now + EOF_GRACE, job, rank));
        if signal == Some(libc::SIGBUS) {
            if let Some(w) = self.shm_room.explain_sigbus() {
                say!("ibdyn daemon {}: job {job} rank {rank}: {w}", self.me);
            }
        }
        let why = match (code, signal) {
            (_, Some(s)) => format!("was killed by {}", signals::name(s)),
            (Some(c), _) => format!("exited with code {c}"),
            _ => "exited".to_string(),
        };
        self.rank_gone(job, rank, &why);
        self.report_exit(job, rank, false);
    }

    /// Tells the launcher (and the root) that a rank is done once it is reaped and its
    /// output drained.
    pub(crate) fn report_exit(&mut self, job: u32, rank: u32, force: bool) {
        let Some(rs) = self.rank_mut(job, rank) else {
            return;
        };
        let Some((code, signal)) = rs.exit else {
            return;
        };
        if rs.reported || !(force || rs.eofs >= 2) {
            return;
        }
        rs.reported = true;
        let ran = RankEnd::Ran { code, signal };
        let end = if rs.cancelled {
            RankEnd::Cancelled
        } else {
            ran
        };
        self.send_exit(job, rank, end, code, signal);
    }
}

/// Removes what processes `pids` left in /dev/shm (`what` names them in the log).
pub(crate) fn remove_segments(daemon: u32, pids: &[i32], what: &str) {
    match ibdyn_shm::remove_segments_of_any(pids) {
        Ok(n) if n > 0 => {
            tracing::debug!("daemon {daemon}: removed {n} shared-memory segments of {what}")
        }
        Ok(_) => {}
        Err(e) => tracing::warn!("daemon {daemon}: cleaning /dev/shm after {what}: {e}"),
    }
}

/// A failure repeated by many ranks (a node out of file descriptors) is told in full once:
/// the others say "as rank R", so the report to the launcher stays small.
fn shorten_repeats(results: &mut [StartResult]) {
    let mut first: Option<(u32, String)> = None;
    for r in results.iter_mut().filter(|r| r.errno != 0) {
        match &first {
            Some((rank, msg)) if *msg == r.message => r.message = format!("as rank {rank}"),
            Some(_) => {}
            None => first = Some((r.rank, r.message.clone())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_repeated_start_failure_is_told_in_full_once() {
        let r = |rank, errno, message: &str| StartResult {
            rank,
            errno,
            message: message.to_string(),
        };
        let mut out = vec![
            r(0, 0, ""),
            r(1, 24, "too many open files"),
            r(2, 24, "too many open files"),
            r(3, 2, "no such file"),
            r(4, 24, "too many open files"),
        ];
        shorten_repeats(&mut out);
        let msgs: Vec<&str> = out.iter().map(|r| r.message.as_str()).collect();
        assert_eq!(
            msgs,
            [
                "",
                "too many open files",
                "as rank 1",
                "no such file",
                "as rank 1"
            ]
        );
    }
}
