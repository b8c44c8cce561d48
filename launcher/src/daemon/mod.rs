//! The node daemon: one per (simulated) node. It serves PMI to its ranks over a Unix socket
//! in a private session directory, starts and watches them, forwards their output to the
//! launcher, and runs fence / allgather / key look-ups as a tree with the other daemons
//! (daemon 0 is the root and holds the authoritative key-value space and name service).
//!
//! Everything happens on one event-loop thread. It waits itself on the PMI sockets, the
//! ranks' pipes and pidfds (`reactor`); the links to the launcher and the other daemons, and
//! signals, are read by small threads that hand `Event`s over through its `inbox`.

mod address;
mod adopted;
mod binding;
mod coll;
mod inbox;
mod inherit;
pub(crate) mod jobs;
mod kept_fds;
pub(crate) mod kvs;
mod launch;
mod left_groups;
mod pmi;
mod prestart;
mod ranks;
mod reactor;
mod shm_left;
mod shm_room;
mod starts;

use crate::error::{LaunchError, Result};
use crate::link::{self, Outbox};
use crate::placement::tree;
use crate::protocol::{Down, Report, Role, ToDaemon, Up};
use crate::{secret, signals};
use ibdyn_pmi::state::Directory;
use ibdyn_pmi::wire::Frame;
use std::collections::HashMap;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::os::unix::net::UnixListener;
use std::path::PathBuf;
use std::time::{Duration, Instant};

pub use ranks::{App, JobSpec};

/// What `ibdyn daemon` is started with (the secret comes in `IBDYN_JOB_SECRET`).
#[derive(Clone, Debug)]
pub struct DaemonOptions {
    pub index: u32,
    pub nnodes: u32,
    pub session_dir: PathBuf,
    /// Where the launcher listens, best first: the first one reached is used.
    pub launcher: Vec<SocketAddr>,
    /// The interface (or address) to use instead of the one that reaches the launcher.
    pub iface: Option<String>,
    /// The job secret is the first line of stdin (else `IBDYN_JOB_SECRET`).
    pub secret_stdin: bool,
    /// The job's host names by daemon index (for the `host` info key).
    pub host_names: Vec<String>,
}

pub(crate) type ConnId = u64;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Peer {
    Launcher,
    Parent,
    Child(u32),
}

pub(crate) enum Event {
    ClientOpen(ConnId, Outbox),
    ClientFrame(ConnId, Frame),
    ClientClosed(ConnId),
    Peer(Peer, Frame),
    PeerClosed(Peer),
    Output {
        job: u32,
        rank: u32,
        fd: u8,
        data: Vec<u8>,
    },
    OutputEof {
        job: u32,
        rank: u32,
    },
    Exited {
        job: u32,
        rank: u32,
        pid: i32,
        code: Option<i32>,
        signal: Option<i32>,
    },
    Signal(i32),
    /// The thread starting copies ahead (`prestart`) has one ready, or why it could not.
    Prestarted,
}

/// How long start-up waits for the launcher and the other daemons.
const STARTUP_LIMIT: Duration = Duration::from_secs(30);
/// After SIGTERM, how long ranks get before SIGKILL.
const KILL_GRACE: Duration = Duration::from_secs(3);

pub(crate) struct Daemon {
    pub(crate) me: u32,
    pub(crate) nnodes: u32,
    /// Every job with ranks in this daemon set (each daemon knows them all, for routing
    /// collectives), by job id.
    pub(crate) jobs: std::collections::BTreeMap<u32, ranks::Job>,
    /// The job that gets the launcher's stdin (and `init` without a job id).
    pub(crate) initial_job: Option<u32>,
    pub(crate) registry: jobs::Registry,
    pub(crate) session_dir: PathBuf,
    pub(crate) pmi_sock: PathBuf,
    pub(crate) launcher: Outbox,
    pub(crate) parent: Option<Outbox>,
    pub(crate) children: HashMap<u32, Outbox>,
    pub(crate) clients: HashMap<ConnId, pmi::Client>,
    /// Id of the next connection the daemon makes itself (a rank's `PMI_FD`); the reader
    /// thread numbers accepted ones from 1, far below.
    pub(crate) next_attached_conn: ConnId,
    /// `PMI_PORT` of the ranks here: the daemon's PMI listener by TCP (host:port).
    pub(crate) pmi_port: String,
    /// `PMI_ID` of each rank started here (random, so that another local user cannot
    /// easily pass for a rank on the TCP port): the (job, rank) it stands for.
    pub(crate) pmi_ids: HashMap<u32, (u32, u32)>,
    pub(crate) dir: Directory,
    pub(crate) forwarded: HashMap<u64, kvs::Forwarded>,
    pub(crate) next_forward: u64,
    pub(crate) key_waiters: Vec<kvs::KeyWaiter>,
    pub(crate) events: inbox::EventTx,
    pub(crate) reactor: reactor::Reactor,
    /// Helper threads that start ranks beside the main thread.
    pub(crate) starters: starts::Starters,
    /// Copies of spawned commands started ahead (`ibdyn_prestart`).
    pub(crate) prestart: prestart::Pool,
    pub(crate) node_uid: String,
    pub(crate) secret_hex: String,
    /// The address this node's ranks bind their fabric endpoints to (None: loopback).
    pub(crate) fabric_ip: Option<String>,
    pub(crate) killing_since: Option<Instant>,
    /// Reaped ranks whose output may still be draining: (report by, job, rank). Kept apart
    /// so that the event loop does not scan every rank of every job on each event.
    pub(crate) output_grace: Vec<(Instant, u32, u32)>,
    pub(crate) abandon_deadline: Option<Instant>,
    pub(crate) shm_left: shm_left::ShmLeft,
    pub(crate) shm_room: shm_room::ShmRoom,
    pub(crate) left_groups: left_groups::LeftGroups,
    pub(crate) stop: bool,
}

impl Daemon {
    pub(crate) fn is_root(&self) -> bool {
        self.me == 0
    }

    pub(crate) fn send_up(&self, m: &Up) {
        if let Some(p) = &self.parent {
            let _ = p.send(m.encode().to_line());
        }
    }

    pub(crate) fn send_children(&self, m: &Down) {
        if self.children.is_empty() {
            return;
        }
        let line = m.encode().to_line();
        for c in self.children.values() {
            let _ = c.send(line.clone());
        }
    }

    /// Sends toward daemon `origin` down the tree (or handles it here if it is us).
    pub(crate) fn send_toward(&mut self, origin: u32, m: Down) {
        if origin == self.me {
            self.on_from_parent(m);
            return;
        }
        match tree::next_hop_down(self.me, origin).and_then(|c| self.children.get(&c)) {
            Some(out) => {
                let _ = out.send(m.encode().to_line());
            }
            None => tracing::warn!("daemon {}: no route to daemon {origin} for {m:?}", self.me),
        }
    }

    pub(crate) fn to_launcher(&self, r: Report) {
        let _ = self.launcher.send(r.encode().to_line());
    }

    fn next_deadline(&self) -> Option<Instant> {
        let mut d: Option<Instant> = self.key_waiters.iter().map(|w| w.deadline).min();
        let mut consider = |t: Instant| d = Some(d.map_or(t, |x| x.min(t)));
        if let Some(t) = self.killing_since {
            consider(t + KILL_GRACE);
        }
        if let Some(t) = self.abandon_deadline {
            consider(t);
        }
        if let Some(t) = self.registry.pending.values().map(|p| p.deadline).min() {
            consider(t);
        }
        if let Some(t) = self.registry.psets.next_deadline() {
            consider(t);
        }
        // Entries of ranks already reported may linger until `on_timers` drops them: at most
        // an early wake-up.
        if let Some(t) = self.output_grace.iter().map(|g| g.0).min() {
            consider(t);
        }
        d
    }

    fn run(&mut self, inbox: inbox::Inbox) {
        let mut batch = Vec::new();
        while !self.stop {
            for ev in inbox.take() {
                self.on_event(ev);
            }
            self.on_timers();
            self.finish_exits();
            if self.stop {
                break;
            }
            let timeout = self
                .next_deadline()
                .map(|t| t.saturating_duration_since(Instant::now()));
            if let Err(e) = self.reactor.poll(timeout, &mut batch) {
                tracing::warn!("daemon {}: epoll_wait: {e}: tearing down", self.me);
                self.abandon();
                std::thread::sleep(Duration::from_millis(10));
            }
            for ev in batch.drain(..) {
                self.on_event(ev);
            }
            self.finish_exits();
        }
    }

    fn on_timers(&mut self) {
        let now = Instant::now();
        self.check_abandon(now);
        self.expire_key_waiters(now);
        self.expire_spawns(now);
        self.pset_timers(now);
        if let Some(t) = self.killing_since {
            if now >= t + KILL_GRACE {
                self.end_ranks(libc::SIGKILL, None);
                self.killing_since = None;
            }
        }
        let mut due: Vec<(u32, u32)> = Vec::new();
        let jobs = &self.jobs;
        self.output_grace.retain(|&(t, j, r)| {
            let unreported = jobs
                .get(&j)
                .and_then(|job| job.ranks.get(&r))
                .is_some_and(|rs| !rs.reported);
            if unreported && now >= t {
                due.push((j, r));
            }
            unreported && now < t
        });
        for (j, r) in due {
            self.report_exit(j, r, true);
        }
    }

    fn on_event(&mut self, ev: Event) {
        match ev {
            Event::ClientOpen(id, out) => {
                self.clients.insert(id, pmi::Client::new(out));
            }
            Event::ClientFrame(id, frame) => self.on_client_frame(id, frame),
            Event::ClientClosed(id) => self.on_client_closed(id),
            Event::Peer(peer, Frame::Line(cmd)) => match peer {
                Peer::Launcher => match ToDaemon::decode(&cmd) {
                    Ok(m) => self.on_launcher(m),
                    Err(e) => tracing::warn!("daemon {}: bad launcher line: {e}", self.me),
                },
                Peer::Parent => match Down::decode(&cmd) {
                    Ok(m) => self.on_from_parent(m),
                    Err(e) => tracing::warn!("daemon {}: bad line from the parent: {e}", self.me),
                },
                Peer::Child(c) => match Up::decode(&cmd) {
                    Ok(m) => self.on_from_child(m),
                    Err(e) => tracing::warn!("daemon {}: bad line from daemon {c}: {e}", self.me),
                },
            },
            Event::Peer(peer, other) => {
                tracing::warn!("daemon {}: bad frame from {peer:?}: {other:?}", self.me)
            }
            Event::PeerClosed(Peer::Launcher) => {
                tracing::debug!(
                    "daemon {}: launcher connection closed: tearing down",
                    self.me
                );
                self.abandon();
            }
            Event::PeerClosed(p) => tracing::debug!("daemon {}: {p:?} connection closed", self.me),
            Event::Output {
                job,
                rank,
                fd,
                data,
            } => self.to_launcher(Report::Output {
                job,
                rank,
                fd: u32::from(fd),
                data,
            }),
            Event::OutputEof { job, rank } => self.on_output_eof(job, rank),
            Event::Exited {
                job,
                rank,
                pid,
                code,
                signal,
            } => self.on_exited(job, rank, pid, code, signal),
            Event::Signal(sig) => match signals::for_ranks(sig) {
                // Also to the ranks of a daemon that srun started (`srun --signal`, scancel -s).
                Some(to_ranks) => self.signal_ranks(to_ranks, None),
                None => {
                    tracing::debug!(
                        "daemon {}: {} received: tearing down",
                        self.me,
                        signals::name(sig)
                    );
                    self.abandon();
                }
            },
            Event::Prestarted => self.on_prestarted(),
        }
    }

    fn on_launcher(&mut self, m: ToDaemon) {
        match m {
            ToDaemon::Stdin(data) => self.stdin_to_rank0(Some(data)),
            ToDaemon::StdinEof => self.stdin_to_rank0(None),
            ToDaemon::JobStdin { job, data } => self.stdin_to(job, data),
            ToDaemon::Signal(sig) => self.signal_ranks(sig, None),
            ToDaemon::SignalJob { job, signum } => self.signal_ranks(signum, Some(job)),
            ToDaemon::Kill => {
                self.end_ranks(libc::SIGTERM, None);
                self.killing_since = Some(Instant::now());
            }
            ToDaemon::Spawn(s) if self.is_root() => self.on_launcher_spawn(s),
            ToDaemon::Adopt { id, jobid } if self.is_root() => self.on_launcher_adopt(id, jobid),
            ToDaemon::KillJob(job) if self.is_root() => self.kill_job_everywhere(job),
            ToDaemon::Shutdown => self.stop = true,
            other => tracing::warn!("daemon {}: unexpected launcher command {other:?}", self.me),
        }
    }

    /// The launcher is gone or we were told to stop by a signal: kill every rank, wait a
    /// bounded time to reap them (and remove their shared memory), then leave.
    fn abandon(&mut self) {
        self.end_ranks(libc::SIGKILL, None);
        self.abandon_deadline
            .get_or_insert(Instant::now() + Duration::from_secs(2));
    }

    fn check_abandon(&mut self, now: Instant) {
        if let Some(t) = self.abandon_deadline {
            let all_reaped = self
                .jobs
                .values()
                .flat_map(|j| j.ranks.values())
                .all(|rs| rs.pid.is_none() || rs.reaped_at.is_some());
            if all_reaped || now >= t {
                self.stop = true;
            }
        }
    }
}

fn accept_children(
    listener: &TcpListener,
    secret: &str,
    me: u32,
    expected: &[u32],
) -> Result<Vec<(u32, TcpStream)>> {
    let mut got: Vec<(u32, TcpStream)> = Vec::new();
    let deadline = Instant::now() + STARTUP_LIMIT;
    listener
        .set_nonblocking(true)
        .map_err(|e| LaunchError::io("set_nonblocking", e))?;
    while got.len() < expected.len() {
        match listener.accept() {
            Ok((mut s, addr)) => {
                s.set_nonblocking(false)
                    .map_err(|e| LaunchError::io("set_nonblocking", e))?;
                match link::accept_hello(&mut s, secret) {
                    Ok(h)
                        if h.role == Role::Daemon
                            && expected.contains(&h.index)
                            && !got.iter().any(|(g, _)| *g == h.index) =>
                    {
                        got.push((h.index, s))
                    }
                    Ok(_) => tracing::warn!(
                        "daemon {me}: refused connection from {addr}: not one of my children"
                    ),
                    Err(e) => tracing::warn!("daemon {me}: refused TCP connection: {e}"),
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                if Instant::now() >= deadline {
                    return Err(LaunchError::Timeout {
                        what: "child daemons".into(),
                        secs: STARTUP_LIMIT.as_secs(),
                    });
                }
                std::thread::sleep(Duration::from_millis(2));
            }
            Err(e) => return Err(LaunchError::io("accept", e)),
        }
    }
    listener
        .set_nonblocking(false)
        .map_err(|e| LaunchError::io("set_nonblocking", e))?;
    Ok(got)
}

/// Test knob `IBDYN_TEST_SLOW_LAUNCHER_LINK=<daemon index|all>:<ms>`: that daemon (or every
/// one) holds each line to the launcher back for ms milliseconds, so that the lines of the
/// other daemons, or of the launcher's other peers, overtake them.
const SLOW_LAUNCHER_LINK: &str = "IBDYN_TEST_SLOW_LAUNCHER_LINK";

/// Test knob `IBDYN_TEST_SLOW_LAUNCHER_COMMANDS=<daemon index|all>:<ms>`: that daemon holds
/// each line from the launcher back, so that what the other daemons say overtakes it.
const SLOW_LAUNCHER_COMMANDS: &str = "IBDYN_TEST_SLOW_LAUNCHER_COMMANDS";

fn link_delay(knob: &str, me: u32) -> Duration {
    let Ok(v) = std::env::var(knob) else {
        return Duration::ZERO;
    };
    let parsed = v.split_once(':').and_then(|(who, ms)| {
        let ms = ms.parse::<u64>().ok()?;
        let mine = who == "all" || who.parse::<u32>().ok()? == me;
        Some(if mine { ms } else { 0 })
    });
    match parsed {
        Some(ms) => Duration::from_millis(ms),
        None => {
            tracing::warn!("{knob}={v:?} is not <daemon index|all>:<milliseconds>");
            Duration::ZERO
        }
    }
}

/// Delays of a link: (each line sent, each line received).
type Delays = (Duration, Duration);

fn start_peer(
    stream: TcpStream,
    peer: Peer,
    tx: &inbox::EventTx,
    (out_delay, in_delay): Delays,
) -> Result<Outbox> {
    let _ = stream.set_nodelay(true);
    let w = stream
        .try_clone()
        .map_err(|e| LaunchError::io("clone a TCP stream", e))?;
    let out = link::start_writer_slowed(w, format!("{peer:?}"), out_delay);
    let (t1, t2) = (tx.clone(), tx.clone());
    link::start_reader(
        stream,
        format!("{peer:?}"),
        move |f| {
            if !in_delay.is_zero() {
                std::thread::sleep(in_delay);
            }
            t1.send(Event::Peer(peer, f));
        },
        move || {
            t2.send(Event::PeerClosed(peer));
        },
    )?;
    Ok(out)
}

/// Runs a node daemon until the launcher shuts it down; returns its exit status.
pub fn daemon_main(o: DaemonOptions) -> Result<i32> {
    let secret_hex = match o.secret_stdin {
        true => {
            let mut line = String::new();
            let _ = std::io::BufRead::read_line(&mut std::io::stdin().lock(), &mut line);
            Some(line.trim().to_string())
        }
        false => std::env::var(ibdyn_pmi::env::JOB_SECRET).ok(),
    }
    .filter(|s| secret::parse_secret(s).is_some())
    .ok_or_else(|| {
        LaunchError::Usage(format!(
            "{} is not set to a hex u64",
            ibdyn_pmi::env::JOB_SECRET
        ))
    })?;
    let me = o.index;
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default();
    let node_uid = format!("{}-{}-node{me}", host.trim(), std::process::id());
    // The first launcher address that answers and proves the secret; the listener for the
    // child daemons on the address that reached it.
    let (mut lstream, tcp, local_ip) =
        address::reach_launcher(&o.launcher, o.iface.as_deref(), |mut s, ip| {
            let tcp = TcpListener::bind((ip, 0))
                .map_err(|e| LaunchError::io(format!("bind a TCP port on {ip}"), e))?;
            let port = tcp
                .local_addr()
                .map_err(|e| LaunchError::io("local_addr", e))?
                .port();
            let extra = (Some(port), Some(node_uid.clone()));
            link::connect_auth(&mut s, &secret_hex, Role::Daemon, me, extra, "launcher")?;
            Ok((s, tcp, ip))
        })?;
    // Before any thread exists (nothing reads the environment concurrently): the ranks
    // inherit the interface choice.
    if let Some(i) = &o.iface {
        std::env::set_var(ibdyn_verbs::iface::IFACE_ENV, i);
    }
    let (tx, inbox) =
        inbox::inbox().map_err(|e| LaunchError::io("make the event loop's eventfd", e))?;
    let sig_tx = tx.clone();
    signals::watch(move |s| {
        sig_tx.send(Event::Signal(s));
    })?;
    // A host that is not the launcher's has no session directory yet.
    let made_session_dir = !o.session_dir.exists();
    if made_session_dir {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&o.session_dir)
            .map_err(|e| LaunchError::io(format!("create {}", o.session_dir.display()), e))?;
    }

    let node_dir = o.session_dir.join(format!("node{me}"));
    std::fs::DirBuilder::new()
        .mode(0o700)
        .create(&node_dir)
        .map_err(|e| LaunchError::io(format!("create {}", node_dir.display()), e))?;
    let result = (|| {
        let sock_path = node_dir.join("pmi.sock");
        let pmi_listener = UnixListener::bind(&sock_path)
            .map_err(|e| LaunchError::io(format!("bind {}", sock_path.display()), e))?;
        let _ = std::fs::set_permissions(&sock_path, std::fs::Permissions::from_mode(0o600));
        let port = tcp
            .local_addr()
            .map_err(|e| LaunchError::io("local_addr", e))?
            .port();
        std::fs::write(node_dir.join("tcp.port"), format!("{port}\n"))
            .map_err(|e| LaunchError::io("write tcp.port", e))?;
        let first = link::read_first_line(&mut lstream, STARTUP_LIMIT, "launcher")?;
        let bad = |why: String| LaunchError::Protocol {
            peer: "launcher".into(),
            why,
        };
        let (parent_port, parent_ip) = match ToDaemon::decode(&first) {
            Ok(ToDaemon::Peers {
                parent_port,
                parent_ip,
            }) => (parent_port, parent_ip),
            Ok(other) => return Err(bad(format!("expected the tree peers, got {other:?}"))),
            Err(e) => return Err(bad(e.to_string())),
        };
        let parent_stream = match (tree::parent(me), parent_port) {
            (Some(p), Some(pp)) => {
                let ip = parent_ip.unwrap_or(std::net::Ipv4Addr::LOCALHOST.into());
                let mut s = TcpStream::connect((ip, pp)).map_err(|e| {
                    LaunchError::io(format!("connect to parent daemon {p} at {ip}:{pp}"), e)
                })?;
                let who = format!("parent daemon {p}");
                link::connect_auth(&mut s, &secret_hex, Role::Daemon, me, (None, None), &who)?;
                Some(s)
            }
            (Some(_), None) => {
                return Err(LaunchError::Protocol {
                    peer: "launcher".into(),
                    why: "no parent_port".into(),
                })
            }
            _ => None,
        };
        let kids = tree::children(me, o.nnodes);
        let child_streams = accept_children(&tcp, &secret_hex, me, &kids)?;
        link::refuse_late_connections(tcp, secret_hex.clone(), format!("daemon {me}"));

        let delays = (
            link_delay(SLOW_LAUNCHER_LINK, me),
            link_delay(SLOW_LAUNCHER_COMMANDS, me),
        );
        let launcher = start_peer(lstream, Peer::Launcher, &tx, delays)?;
        let parent = parent_stream
            .map(|s| start_peer(s, Peer::Parent, &tx, Default::default()))
            .transpose()?;
        let mut children = HashMap::new();
        for (i, s) in child_streams {
            children.insert(i, start_peer(s, Peer::Child(i), &tx, Default::default())?);
        }
        let pmi_tcp = TcpListener::bind("127.0.0.1:0")
            .map_err(|e| LaunchError::io("bind the PMI_PORT listener", e))?;
        let pmi_port = pmi_tcp
            .local_addr()
            .map_err(|e| LaunchError::io("local_addr", e))?
            .to_string();
        let reactor = reactor::Reactor::new(pmi_listener, pmi_tcp, inbox.bell())
            .map_err(|e| LaunchError::io("watch the daemon's PMI sockets (epoll)", e))?;

        let mut d = Daemon {
            me,
            nnodes: o.nnodes,
            jobs: Default::default(),
            initial_job: None,
            registry: jobs::Registry {
                load: vec![0; o.nnodes as usize],
                host_names: o.host_names.clone(),
                ..Default::default()
            },
            session_dir: o.session_dir.clone(),
            pmi_sock: sock_path.clone(),
            launcher,
            parent,
            children,
            clients: HashMap::new(),
            next_attached_conn: 1 << 48,
            pmi_port,
            pmi_ids: HashMap::new(),
            dir: Directory::default(),
            forwarded: HashMap::new(),
            next_forward: 1,
            key_waiters: Vec::new(),
            events: tx.clone(),
            reactor,
            starters: starts::Starters::new(ibdyn_shm::usable_cores()),
            prestart: prestart::Pool::default(),
            node_uid,
            secret_hex: secret_hex.clone(),
            fabric_ip: (!local_ip.is_loopback()).then(|| local_ip.to_string()),
            killing_since: None,
            output_grace: Vec::new(),
            abandon_deadline: None,
            shm_left: Default::default(),
            shm_room: Default::default(),
            left_groups: Default::default(),
            stop: false,
        };
        drop(tx);
        d.run(inbox);
        d.end_copies();
        if d.killing_since.is_some() {
            // A teardown was under way: helpers that outlived its SIGTERM go before the
            // daemon does, as its SIGKILL a grace period later would have ended them (their
            // job's record may still be here, or gone to `left_groups`).
            d.end_ranks(libc::SIGKILL, None);
        }
        // A node daemon killed on this host (now or in an earlier job) left its ranks'
        // objects, which nobody else on the host would remove: the next daemon out does.
        crate::run::remove_objects_of_exited(&format!("daemon {me}"));
        Ok(d.abandon_deadline.is_some())
    })();
    let _ = std::fs::remove_dir_all(&node_dir);
    // Abandoned (the launcher died, or a signal): the launcher may not clean up, so the last
    // daemon out removes the session dir.
    if matches!(result, Ok(true)) || made_session_dir {
        let _ = std::fs::remove_file(o.session_dir.join("launcher.port"));
        let _ = std::fs::remove_dir(&o.session_dir);
    }
    result.map(i32::from)
}
