//! Persistent daemons (the paper's MPD ring): `ibdyn dvm start --nodes K` leaves K node
//! daemons and a controller running; `ibdyn run --dvm` submits a job to them over TCP and
//! gets its output and exit status back; `ibdyn dvm stop` ends them. Jobs under one DVM share
//! the name service and spawn without any daemon start-up.
//!
//! The contact file (`port=... secret=... pid=...`) lives in a private 0700 directory of the
//! user (`IBDYN_DVM_DIR`, else `$TMPDIR/ibdyn-dvm-<uid>`); a client must present the secret
//! in its first line or it is refused.
//!
//! Client lines: `c_run tag= req=` (a job), `c_stop`. Controller lines: `c_started job=`,
//! `c_io job= rank= fd= data=`, `c_exit job= rank= ...`, `c_error msg=`, `c_done status=`.

use crate::error::{Result, SpawnError};
use crate::launcher::{describe, start_daemons, DaemonSet, LEvent};
use crate::link::{self, Outbox};
use crate::{secret, signals};
use crossbeam_channel::Sender;
use ibdyn_pmi::wire::{hex_decode, hex_encode, msg_text, msg_token, Command, Frame};
use ibdyn_pmi::{SpawnCommand, SpawnRequest};
use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

const START_LIMIT: Duration = Duration::from_secs(30);
const STOP_LIMIT: Duration = Duration::from_secs(30);

/// The user's private DVM directory, created 0700 and checked (owner, mode).
pub fn dvm_dir() -> Result<PathBuf> {
    // SAFETY: getuid cannot fail.
    let uid = unsafe { libc::getuid() };
    let dir = match std::env::var_os("IBDYN_DVM_DIR") {
        Some(d) => PathBuf::from(d),
        None => std::env::temp_dir().join(format!("ibdyn-dvm-{uid}")),
    };
    match std::fs::DirBuilder::new().mode(0o700).create(&dir) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(SpawnError::io(format!("create {}", dir.display()), e)),
    }
    let meta = std::fs::symlink_metadata(&dir)
        .map_err(|e| SpawnError::io(format!("stat {}", dir.display()), e))?;
    if !meta.is_dir() || meta.uid() != uid || meta.mode() & 0o077 != 0 {
        return Err(SpawnError::Usage(format!(
            "{} is not a private (0700) directory of uid {uid}",
            dir.display()
        )));
    }
    Ok(dir)
}

struct Contact {
    port: u16,
    secret: String,
    pid: u32,
}

fn read_contact(path: &Path) -> Result<Contact> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        SpawnError::io(
            format!("no DVM running (cannot read {})", path.display()),
            e,
        )
    })?;
    let c = Command::parse(&format!("cmd=contact {}", text.trim()))?;
    Ok(Contact {
        port: c.num("port")?,
        secret: c.require("secret")?.to_string(),
        pid: c.num("pid")?,
    })
}

/// Whether `pid` runs (a zombie nobody has reaped yet counts as gone).
fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().next())
            .is_some_and(|state| state != "Z" && state != "X"),
        Err(_) => false,
    }
}

/// `ibdyn dvm start`: starts the controller in the background and returns its contact file.
pub fn dvm_start(nnodes: u32) -> Result<PathBuf> {
    if nnodes == 0 {
        return Err(SpawnError::Usage("--nodes must be at least 1".into()));
    }
    let dir = dvm_dir()?;
    let contact = dir.join("contact");
    if let Ok(c) = read_contact(&contact) {
        if alive(c.pid) {
            return Err(SpawnError::Usage(format!(
                "a DVM is already running (pid {}, contact file {})",
                c.pid,
                contact.display()
            )));
        }
        let _ = std::fs::remove_file(&contact);
    }
    let exe =
        std::env::current_exe().map_err(|e| SpawnError::io("find the ibdyn executable", e))?;
    let mut cmd = std::process::Command::new(&exe);
    cmd.args(["dvm", "serve", "--nodes", &nnodes.to_string()])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    // SAFETY: setsid is async-signal-safe; the controller leaves our session and terminal.
    unsafe {
        cmd.pre_exec(|| {
            libc::setsid();
            Ok(())
        });
    }
    let mut child = cmd
        .spawn()
        .map_err(|e| SpawnError::io(format!("start {}", exe.display()), e))?;
    let deadline = Instant::now() + START_LIMIT;
    loop {
        if contact.exists() {
            return Ok(contact);
        }
        if let Ok(Some(st)) = child.try_wait() {
            return Err(SpawnError::Usage(format!(
                "the DVM controller exited during start-up ({st})"
            )));
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            return Err(SpawnError::Timeout {
                what: "the DVM to start".into(),
                secs: START_LIMIT.as_secs(),
            });
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn connect(contact: &Contact) -> Result<TcpStream> {
    let mut s = TcpStream::connect(("127.0.0.1", contact.port))
        .map_err(|e| SpawnError::io(format!("connect to the DVM on port {}", contact.port), e))?;
    s.write_all(
        link::hello(&contact.secret, "client", 0)
            .to_line()
            .as_bytes(),
    )
    .map_err(|e| SpawnError::io("write to the DVM", e))?;
    let _ = s.set_nodelay(true);
    Ok(s)
}

/// `ibdyn dvm stop`: ends the DVM's jobs and daemons and waits (bounded) until it is gone.
pub fn dvm_stop() -> Result<()> {
    let path = dvm_dir()?.join("contact");
    let c = read_contact(&path)?;
    if !alive(c.pid) {
        let _ = std::fs::remove_file(&path);
        return Err(SpawnError::Usage(format!(
            "the DVM (pid {}) is not running; removed its stale contact file",
            c.pid
        )));
    }
    let mut s = connect(&c)?;
    s.write_all(Command::new("c_stop").to_line().as_bytes())
        .map_err(|e| SpawnError::io("write to the DVM", e))?;
    let deadline = Instant::now() + STOP_LIMIT;
    while alive(c.pid) || path.exists() {
        if Instant::now() >= deadline {
            return Err(SpawnError::Timeout {
                what: format!("the DVM (pid {}) to stop", c.pid),
                secs: STOP_LIMIT.as_secs(),
            });
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    Ok(())
}

/// `ibdyn run --dvm`: submits one job and relays its output; returns its exit status.
pub fn run_on_dvm(nprocs: u32, program: &str, args: &[String], tag: bool) -> Result<i32> {
    if nprocs == 0 {
        return Err(SpawnError::Usage("-n must be at least 1".into()));
    }
    let program = crate::launcher::resolve_program(program)?;
    let c = read_contact(&dvm_dir()?.join("contact"))?;
    let mut s = connect(&c)?;
    let req = SpawnRequest {
        commands: vec![SpawnCommand {
            program: program.display().to_string(),
            args: args.to_vec(),
            nprocs,
            info: vec![],
        }],
        preput: vec![],
    };
    let text = ibdyn_pmi::wire::format_spawn(&req)?;
    let run = Command::new("c_run").arg("req", hex_encode(text.as_bytes()));
    s.write_all(run.to_line().as_bytes())
        .map_err(|e| SpawnError::io("write to the DVM", e))?;
    let mut framer = ibdyn_pmi::wire::Framer::default();
    let mut buf = vec![0u8; 65536];
    let mut mine: Option<u32> = None;
    loop {
        let n = match s.read(&mut buf) {
            Ok(0) => {
                return Err(SpawnError::Protocol {
                    peer: "DVM".into(),
                    why: "closed the connection before the job ended".into(),
                })
            }
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(SpawnError::io("read from the DVM", e)),
        };
        for f in framer.push(&buf[..n]) {
            let Frame::Line(cmd) = f else { continue };
            match cmd.name.as_str() {
                "c_started" => mine = cmd.num("job").ok(),
                "c_io" => {
                    let (job, rank, fd): (u32, u32, u32) =
                        (cmd.num("job")?, cmd.num("rank")?, cmd.num("fd")?);
                    let data = hex_decode(cmd.get("data").unwrap_or(""))?;
                    let prefix = tag.then(|| {
                        if Some(job) == mine {
                            format!("[{rank}] ")
                        } else {
                            format!("[{job}.{rank}] ")
                        }
                    });
                    write_out(fd, prefix.as_deref(), &data);
                }
                "c_exit" => {
                    let (job, rank): (u32, u32) = (cmd.num("job")?, cmd.num("rank")?);
                    let code = cmd.get("code").and_then(|c| c.parse().ok());
                    let signal = cmd.get("signal").and_then(|c| c.parse().ok());
                    let (how, _) = describe(code, signal);
                    if Some(job) == mine {
                        eprintln!("ibdyn run: rank {rank} {how}; tearing the job down");
                    } else {
                        eprintln!("ibdyn run: job {job} rank {rank} {how}");
                    }
                }
                "c_error" => eprintln!("ibdyn run: {}", msg_text(cmd.get("msg").unwrap_or(""))),
                "c_done" => return Ok(cmd.num("status")?),
                other => tracing::warn!("unknown line {other} from the DVM"),
            }
        }
    }
}

fn write_out(fd: u32, prefix: Option<&str>, data: &[u8]) {
    let mut buf = Vec::with_capacity(data.len() + 16);
    match prefix {
        Some(p) => {
            for line in data.split_inclusive(|&b| b == b'\n') {
                buf.extend_from_slice(p.as_bytes());
                buf.extend_from_slice(line);
                if !line.ends_with(b"\n") {
                    buf.push(b'\n');
                }
            }
        }
        None => buf.extend_from_slice(data),
    }
    let _ = if fd == 2 {
        let mut e = std::io::stderr().lock();
        e.write_all(&buf).and_then(|_| e.flush())
    } else {
        let mut o = std::io::stdout().lock();
        o.write_all(&buf).and_then(|_| o.flush())
    };
}

/// Accepts clients that present the secret; every other connection is closed unanswered.
fn serve_clients(listener: TcpListener, secret: String, tx: Sender<LEvent>) {
    let _ = std::thread::Builder::new()
        .name("dvm-accept".into())
        .spawn(move || {
            let mut next: u64 = 1;
            for s in listener.incoming() {
                let Ok(mut s) = s else { continue };
                if let Err(e) = link::accept_hello(&mut s, &secret) {
                    tracing::warn!("dvm: refused a client: {e}");
                    continue;
                }
                let id = next;
                next += 1;
                let Ok(w) = s.try_clone() else { continue };
                let out = link::start_writer(w, format!("client{id}"));
                if tx.send(LEvent::ClientOpen(id, out)).is_err() {
                    return;
                }
                let (t1, t2) = (tx.clone(), tx.clone());
                let _ = link::start_reader(
                    s,
                    format!("client{id}"),
                    move |f| {
                        let _ = t1.send(LEvent::Client(id, f));
                    },
                    move || {
                        let _ = t2.send(LEvent::ClientClosed(id));
                    },
                );
            }
        });
}

struct DJob {
    owner: u64,
    exited: Vec<bool>,
}

struct Client {
    out: Outbox,
    job: Option<u32>,
    status: Option<i32>,
    done: bool,
}

struct Controller {
    root: Outbox,
    all: Vec<Outbox>,
    clients: HashMap<u64, Client>,
    jobs: HashMap<u32, DJob>,
    early_exits: HashMap<u32, Vec<Command>>,
    stopping: Option<Instant>,
}

impl Controller {
    fn to_client(&self, id: u64, cmd: Command) {
        if let Some(c) = self.clients.get(&id) {
            let _ = c.out.send(cmd.to_line());
        }
    }

    fn kill_jobs_of(&mut self, owner: u64) {
        for (j, d) in &self.jobs {
            if d.owner == owner {
                let _ = self
                    .root
                    .send(Command::new("l_kill_job").arg("job", j).to_line());
            }
        }
    }

    /// Sends `c_done` to a client whose jobs have all ended.
    fn check_done(&mut self, owner: u64) {
        let busy = self.jobs.values().any(|d| d.owner == owner);
        if let Some(c) = self.clients.get_mut(&owner) {
            if !busy && c.job.is_some() && !c.done {
                c.done = true;
                let st = c.status.unwrap_or(0);
                let _ = c
                    .out
                    .send(Command::new("c_done").arg("status", st).to_line());
            }
        }
    }

    fn fail_client(&mut self, id: u64, msg: &str, status: i32) {
        self.to_client(id, Command::new("c_error").arg("msg", msg_token(msg)));
        if let Some(c) = self.clients.get_mut(&id) {
            c.status.get_or_insert(status);
            c.job.get_or_insert(0);
        }
        self.check_done(id);
    }

    fn on_client(&mut self, id: u64, cmd: Command) {
        match cmd.name.as_str() {
            "c_run" => {
                let line = Command::new("l_spawn")
                    .arg("id", id)
                    .arg("req", cmd.get("req").unwrap_or(""));
                let _ = self.root.send(line.to_line());
            }
            "c_stop" => self.stop(),
            other => tracing::warn!("dvm: unknown client line {other}"),
        }
    }

    fn stop(&mut self) {
        if self.stopping.is_none() {
            self.stopping = Some(Instant::now());
            for o in &self.all {
                let _ = o.send(Command::new("l_kill").to_line());
            }
        }
    }

    fn on_daemon(&mut self, cmd: Command) -> std::result::Result<(), ibdyn_pmi::PmiError> {
        match cmd.name.as_str() {
            "d_job" => {
                let job: u32 = cmd.num("job")?;
                let owner = match cmd.get("parent").and_then(|p| p.parse::<u32>().ok()) {
                    Some(p) => self.jobs.get(&p).map_or(0, |d| d.owner),
                    None => cmd.num("id").unwrap_or(0),
                };
                let size: u32 = cmd.num("size")?;
                if cmd.get("parent").is_none() {
                    if let Some(c) = self.clients.get_mut(&owner) {
                        c.job = Some(job);
                    }
                    self.to_client(owner, Command::new("c_started").arg("job", job));
                }
                self.jobs.insert(
                    job,
                    DJob {
                        owner,
                        exited: vec![false; size as usize],
                    },
                );
                for early in self.early_exits.remove(&job).unwrap_or_default() {
                    self.on_daemon(early)?;
                }
            }
            "d_spawn_result" => {
                let id: u64 = cmd.num("id")?;
                let children = ibdyn_pmi::jobs::decode_children(cmd.get("children").unwrap_or(""))?;
                match cmd.get("jobid").and_then(|j| j.parse::<u32>().ok()) {
                    None => self.fail_client(
                        id,
                        &msg_text(cmd.get("msg").unwrap_or("cannot start the job")),
                        127,
                    ),
                    Some(_) => {
                        if let Some(bad) = children.iter().find(|c| !c.started()) {
                            let msg = format!("cannot start rank {}: {}", bad.rank, bad.message);
                            self.fail_client(id, &msg, 127);
                        }
                    }
                }
            }
            "d_io" => {
                let job: u32 = cmd.num("job")?;
                if let Some(owner) = self.jobs.get(&job).map(|d| d.owner) {
                    let mut c = cmd.clone();
                    c.name = "c_io".into();
                    self.to_client(owner, c);
                }
            }
            "d_exit" => {
                let (job, rank): (u32, u32) = (cmd.num("job")?, cmd.num("rank")?);
                let Some(d) = self.jobs.get_mut(&job) else {
                    // Its d_job (on the root's link) may still be on the way.
                    self.early_exits.entry(job).or_default().push(cmd);
                    return Ok(());
                };
                if let Some(e) = d.exited.get_mut(rank as usize) {
                    *e = true;
                }
                let owner = d.owner;
                let finished = d.exited.iter().all(|e| *e);
                let quiet = cmd.get("failed").is_some() || cmd.get("cancelled").is_some();
                let code = cmd.get("code").and_then(|c| c.parse::<i32>().ok());
                if !quiet && code != Some(0) {
                    let mut c = cmd.clone();
                    c.name = "c_exit".into();
                    self.to_client(owner, c);
                    let submitted = self.clients.get(&owner).and_then(|c| c.job) == Some(job);
                    if submitted {
                        let (_, st) =
                            describe(code, cmd.get("signal").and_then(|s| s.parse().ok()));
                        if let Some(c) = self.clients.get_mut(&owner) {
                            c.status.get_or_insert(st);
                        }
                        let _ = self
                            .root
                            .send(Command::new("l_kill_job").arg("job", job).to_line());
                    }
                }
                if finished {
                    self.jobs.remove(&job);
                    self.check_done(owner);
                }
            }
            "d_abort" => {
                let (job, rank, code): (u32, u32, i32) =
                    (cmd.num("job")?, cmd.num("rank")?, cmd.num("code")?);
                if let Some(owner) = self.jobs.get(&job).map(|d| d.owner) {
                    let msg = format!(
                        "rank {rank} of job {job} aborted with code {code}: {}",
                        msg_text(cmd.get("msg").unwrap_or(""))
                    );
                    self.to_client(owner, Command::new("c_error").arg("msg", msg_token(&msg)));
                    if let Some(c) = self.clients.get_mut(&owner) {
                        c.status.get_or_insert(code);
                    }
                    self.kill_jobs_of(owner);
                }
            }
            other => tracing::warn!("dvm: unknown daemon line {other}"),
        }
        Ok(())
    }
}

/// `ibdyn dvm serve` (started by `dvm start`): runs until `dvm stop` or a signal.
pub fn dvm_serve(nnodes: u32) -> Result<i32> {
    let dir = dvm_dir()?;
    let contact_path = dir.join("contact");
    let exe =
        std::env::current_exe().map_err(|e| SpawnError::io("find the ibdyn executable", e))?;
    let (tx, rx) = crossbeam_channel::unbounded::<LEvent>();
    let sig_tx = tx.clone();
    signals::watch(move |s| {
        let _ = sig_tx.send(LEvent::Signal(s));
    })?;
    let DaemonSet {
        mut daemons,
        outboxes,
        session,
        ..
    } = start_daemons(nnodes, &exe, &tx)?;
    let listener =
        TcpListener::bind("127.0.0.1:0").map_err(|e| SpawnError::io("bind a TCP port", e))?;
    let port = listener
        .local_addr()
        .map_err(|e| SpawnError::io("local_addr", e))?
        .port();
    let secret_hex = secret::format_secret(secret::random_u64()?);
    let tmp = dir.join(format!("contact.{}", std::process::id()));
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&tmp)
        .and_then(|mut f| {
            writeln!(
                f,
                "port={port} secret={secret_hex} pid={}",
                std::process::id()
            )
        })
        .and_then(|_| std::fs::rename(&tmp, &contact_path))
        .map_err(|e| SpawnError::io(format!("write {}", contact_path.display()), e))?;
    serve_clients(listener, secret_hex, tx.clone());
    drop(tx);
    let mut ctl = Controller {
        root: outboxes[0].clone(),
        all: outboxes,
        clients: HashMap::new(),
        jobs: HashMap::new(),
        early_exits: HashMap::new(),
        stopping: None,
    };
    loop {
        if let Some(t) = ctl.stopping {
            if ctl.jobs.is_empty() || t.elapsed() >= Duration::from_secs(10) {
                break;
            }
        }
        let ev = match rx.recv_timeout(Duration::from_millis(200)) {
            Ok(ev) => ev,
            Err(crossbeam_channel::RecvTimeoutError::Timeout) => continue,
            Err(_) => break,
        };
        match ev {
            LEvent::Daemon(_, Frame::Line(cmd)) => {
                if let Err(e) = ctl.on_daemon(cmd) {
                    tracing::warn!("dvm: bad daemon line: {e}");
                }
            }
            LEvent::Daemon(..) | LEvent::Stdin(_) => {}
            LEvent::DaemonClosed(d) => {
                if ctl.stopping.is_none() {
                    tracing::warn!("dvm: node daemon {d} died: stopping");
                    ctl.stop();
                }
            }
            LEvent::ClientOpen(id, out) => {
                ctl.clients.insert(
                    id,
                    Client {
                        out,
                        job: None,
                        status: None,
                        done: false,
                    },
                );
            }
            LEvent::Client(id, Frame::Line(cmd)) => ctl.on_client(id, cmd),
            LEvent::Client(..) => {}
            LEvent::ClientClosed(id) => {
                ctl.kill_jobs_of(id);
                ctl.clients.remove(&id);
            }
            LEvent::Signal(_) => ctl.stop(),
        }
    }
    for o in &ctl.all {
        let _ = o.send(Command::new("l_shutdown").to_line());
    }
    ctl.clients.clear();
    drop(ctl);
    daemons.reap(Duration::from_secs(5));
    drop(session);
    let _ = std::fs::remove_file(&contact_path);
    // The private directory goes too when nothing else is in it.
    let _ = std::fs::remove_dir(&dir);
    Ok(0)
}
