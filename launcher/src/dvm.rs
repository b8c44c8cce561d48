//! Persistent daemons (the paper's MPD ring): `ibdyn dvm start --nodes K` leaves K node
//! daemons and a controller running; `ibdyn run --dvm` submits a job to them over TCP and
//! gets its output and exit status back; `ibdyn dvm stop` ends them. Jobs under one DVM share
//! the name service and spawn without any daemon start-up.
//!
//! The contact file (`port=... secret=... pid=...`) lives in a private 0700 directory of the
//! user (`IBDYN_DVM_DIR`, else `$TMPDIR/ibdyn-dvm-<uid>`); a client must present the secret
//! in its first line or it is refused.
//!
//! A client submits one job per connection with its environment and working directory, which
//! the job's ranks (and the jobs they spawn) get, as under a plain `ibdyn run`; the
//! controller relays the jobs' output and abnormal ends and ends with the status (messages:
//! `protocol::client`).

mod controller;
mod serve;

pub use serve::dvm_serve;

use crate::error::{LaunchError, Result};
use crate::link;
use crate::mpmd::{self, AppLine};
use crate::output;
use crate::placement::MapBy;
use crate::protocol::{EncodedRequest, FromDvm, JobEnv, Role, ToDvm};
use crate::rank_files::RankFiles;
use crate::run::describe;
use crate::signals;
use crate::time_limit::{sooner, TimeLimit, TIMED_OUT_STATUS};
use ibdyn_pmi::wire::{Command, Frame};
use ibdyn_pmi::SpawnRequest;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::os::unix::fs::{DirBuilderExt, MetadataExt};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

const START_LIMIT: Duration = Duration::from_secs(30);
/// Default bound on the DVM taking a job (`IBDYN_SPAWN_TIMEOUT`, s; a spawn's bound too).
const DEFAULT_SPAWN_TIMEOUT: Duration = Duration::from_secs(60);

fn spawn_timeout() -> Duration {
    std::env::var("IBDYN_SPAWN_TIMEOUT")
        .ok()
        .and_then(|v| v.trim().parse::<f64>().ok())
        .and_then(|s| Duration::try_from_secs_f64(s).ok())
        .unwrap_or(DEFAULT_SPAWN_TIMEOUT)
}
const STOP_LIMIT: Duration = Duration::from_secs(30);

/// Where the user's private DVM directory is (`IBDYN_DVM_DIR`, or one per uid where session
/// directories go: `run::session_base`).
fn dvm_dir_path() -> (PathBuf, u32) {
    // SAFETY: getuid cannot fail.
    let uid = unsafe { libc::getuid() };
    let dir = match std::env::var_os("IBDYN_DVM_DIR") {
        Some(d) => PathBuf::from(d),
        None => crate::run::session_base()
            .0
            .join(format!("ibdyn-dvm-{uid}")),
    };
    (dir, uid)
}

/// The user's private DVM directory, created 0700 and checked (owner, mode): for the
/// controller, which writes the contact file there.
pub fn dvm_dir() -> Result<PathBuf> {
    let (dir, uid) = dvm_dir_path();
    match std::fs::DirBuilder::new().mode(0o700).create(&dir) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(LaunchError::io(format!("create {}", dir.display()), e)),
    }
    checked_private(dir, uid)
}

/// The directory of a running DVM, for its clients: not created (a client of a DVM that
/// has gone must not leave a directory behind), but checked as private before it is trusted.
fn existing_dvm_dir() -> Result<PathBuf> {
    let (dir, uid) = dvm_dir_path();
    if !dir.exists() {
        return Err(LaunchError::Usage(format!(
            "no DVM running (no {}; start one with `ibdyn dvm start`)",
            dir.display()
        )));
    }
    checked_private(dir, uid)
}

fn checked_private(dir: PathBuf, uid: u32) -> Result<PathBuf> {
    let meta = std::fs::symlink_metadata(&dir)
        .map_err(|e| LaunchError::io(format!("stat {}", dir.display()), e))?;
    if !meta.is_dir() || meta.uid() != uid || meta.mode() & 0o077 != 0 {
        return Err(LaunchError::Usage(format!(
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
        LaunchError::io(
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
pub fn dvm_start(nnodes: u32, host_args: &[String]) -> Result<PathBuf> {
    if nnodes == 0 {
        return Err(LaunchError::Usage("--nodes must be at least 1".into()));
    }
    let dir = dvm_dir()?;
    let contact = dir.join("contact");
    if let Ok(c) = read_contact(&contact) {
        if alive(c.pid) {
            return Err(LaunchError::Usage(format!(
                "a DVM is already running (pid {}, contact file {})",
                c.pid,
                contact.display()
            )));
        }
        let _ = std::fs::remove_file(&contact);
    }
    let exe =
        std::env::current_exe().map_err(|e| LaunchError::io("find the ibdyn executable", e))?;
    let mut cmd = std::process::Command::new(&exe);
    cmd.args(["dvm", "serve", "--nodes", &nnodes.to_string()])
        .args(host_args)
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
        .map_err(|e| LaunchError::io(format!("start {}", exe.display()), e))?;
    let deadline = Instant::now() + START_LIMIT;
    loop {
        if contact.exists() {
            return Ok(contact);
        }
        if let Ok(Some(st)) = child.try_wait() {
            return Err(LaunchError::Usage(format!(
                "the DVM controller exited during start-up ({st})"
            )));
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            return Err(LaunchError::Timeout {
                what: "the DVM to start".into(),
                secs: START_LIMIT.as_secs(),
            });
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn connect(contact: &Contact) -> Result<TcpStream> {
    let mut s = TcpStream::connect(("127.0.0.1", contact.port))
        .map_err(|e| LaunchError::io(format!("connect to the DVM on port {}", contact.port), e))?;
    link::connect_auth(
        &mut s,
        &contact.secret,
        Role::Client,
        0,
        (None, None),
        "the DVM",
    )?;
    let _ = s.set_nodelay(true);
    Ok(s)
}

/// `ibdyn dvm stop`: ends the DVM's jobs and daemons and waits (bounded) until it is gone.
pub fn dvm_stop() -> Result<()> {
    let path = existing_dvm_dir()?.join("contact");
    let c = read_contact(&path)?;
    if !alive(c.pid) {
        let _ = std::fs::remove_file(&path);
        return Err(LaunchError::Usage(format!(
            "the DVM (pid {}) is not running; removed its stale contact file",
            c.pid
        )));
    }
    let mut s = connect(&c)?;
    s.write_all(ToDvm::Stop.encode().to_line().as_bytes())
        .map_err(|e| LaunchError::io("write to the DVM", e))?;
    let deadline = Instant::now() + STOP_LIMIT;
    while alive(c.pid) || path.exists() {
        if Instant::now() >= deadline {
            return Err(LaunchError::Timeout {
                what: format!("the DVM (pid {}) to stop", c.pid),
                secs: STOP_LIMIT.as_secs(),
            });
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    Ok(())
}

/// The command of a job for the DVM.
pub struct DvmJob<'a> {
    /// The applications (one, or several for MPMD).
    pub apps: &'a [AppLine],
    /// Info keys of every command (`ibdyn_prestart`).
    pub info: Vec<(String, String)>,
    /// End the job after this many seconds (`--timeout`; None or 0: no limit).
    pub timeout_secs: Option<u64>,
    /// Each rank's stdout and stderr in files under this directory (`--output-filename`).
    pub output_dir: Option<&'a Path>,
}

/// `ibdyn run --dvm`: submits one job and relays its output; returns its exit status. The
/// DVM must take the job (or refuse it) within `IBDYN_SPAWN_TIMEOUT` seconds (default 60).
pub fn run_on_dvm(
    job: DvmJob<'_>,
    tag: bool,
    preput: Vec<(String, String)>,
    map_by: MapBy,
) -> Result<i32> {
    let DvmJob {
        apps,
        info,
        timeout_secs,
        output_dir,
    } = job;
    let mut files = output_dir.map(RankFiles::create).transpose()?;
    let time_limit = TimeLimit::starting_now(timeout_secs);
    if mpmd::total(apps).map_err(LaunchError::Usage)? == 0 {
        return Err(LaunchError::Usage("-n must be at least 1".into()));
    }
    let commands = mpmd::spawn_commands(apps, &info)?;
    // Ctrl-C, SIGTERM, SIGHUP end the job: this client exits, and the DVM tears down the job
    // of a client that left. Taken with sigwait, so this also works when the client started
    // with SIGINT ignored (a script's background job), as `ibdyn run` itself does.
    // SIGUSR1/SIGUSR2, Ctrl-Z and SIGCONT go on to the job's ranks, through the DVM.
    let to_dvm = ToDvmWriter::default();
    let passing = to_dvm.clone();
    signals::watch(move |sig| {
        if let Some(to_ranks) = signals::for_ranks(sig) {
            passing.send(&ToDvm::Signal(to_ranks));
            signals::stop_self_if_asked(sig);
            return;
        }
        say!("ibdyn run: {} received: ending the job", signals::name(sig));
        std::process::exit(128 + sig);
    })?;
    let c = read_contact(&existing_dvm_dir()?.join("contact"))?;
    let mut s = connect(&c)?;
    let req = EncodedRequest::new(&SpawnRequest { commands, preput })?;
    // The DVM's daemons may be on other hosts: what describes this one stays here.
    let env = JobEnv::for_other_hosts()
        .map_err(|e| LaunchError::io("find the current directory (the ranks run there)", e))?;
    s.write_all(
        ToDvm::Run {
            req,
            env: Some(env),
            map_by: Some(map_by),
        }
        .encode()
        .to_line()
        .as_bytes(),
    )
    .map_err(|e| LaunchError::io("write to the DVM", e))?;
    to_dvm.open(
        s.try_clone()
            .map_err(|e| LaunchError::io("clone the DVM connection", e))?,
    );
    start_stdin_pump(to_dvm);
    let mut framer = ibdyn_pmi::wire::Framer::default();
    let mut buf = vec![0u8; 65536];
    let mut mine: Option<u32> = None;
    let mut lost = output::LostOutput::default();
    // Until the DVM has taken the job (or refused it), a wait on its state: bounded.
    let limit = spawn_timeout();
    let deadline = Instant::now() + limit;
    let mut answered = false;
    loop {
        // The DVM ends the jobs of a client that left.
        if let Some(t) = time_limit.filter(|t| t.reached()) {
            say!("ibdyn run: {}", t.message());
            return Ok(TIMED_OUT_STATUS);
        }
        let left = deadline.saturating_duration_since(Instant::now());
        let wait = sooner((!answered).then_some(left), time_limit.map(|t| t.left()))
            .map(|w| w.max(Duration::from_millis(1)));
        s.set_read_timeout(wait)
            .map_err(|e| LaunchError::io("set_read_timeout", e))?;
        let n = match s.read(&mut buf) {
            Ok(0) => {
                return Err(LaunchError::Protocol {
                    peer: "DVM".into(),
                    why: "closed the connection before the job ended".into(),
                })
            }
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                if answered || Instant::now() < deadline {
                    continue;
                }
                return Err(LaunchError::Timeout {
                    what: "the DVM to start the job (raise IBDYN_SPAWN_TIMEOUT if it is busy)"
                        .into(),
                    secs: limit.as_secs(),
                });
            }
            Err(e) => return Err(LaunchError::io("read from the DVM", e)),
        };
        for f in framer.push(&buf[..n]) {
            let Frame::Line(cmd) = f else { continue };
            let msg = FromDvm::decode(&cmd).map_err(|e| LaunchError::Protocol {
                peer: "DVM".into(),
                why: e.to_string(),
            })?;
            answered |= msg.answers_submission();
            match msg {
                FromDvm::Started { job } => mine = Some(job),
                FromDvm::Output {
                    job,
                    rank,
                    fd,
                    data,
                } => {
                    if let Some(files) = &mut files {
                        if let Err(e) = files.write(job, rank, fd, mine, &data) {
                            lost.record(&e);
                        }
                        continue;
                    }
                    let prefix = tag.then(|| output::tag(job, rank, mine));
                    match output::write_out(fd, prefix.as_deref(), &data) {
                        // The DVM ends the jobs of a client that left.
                        Err(e) if output::reader_gone(&e) => {
                            std::process::exit(output::READER_GONE_STATUS)
                        }
                        Err(e) => lost.record(&e),
                        Ok(()) => {}
                    }
                }
                FromDvm::Exit {
                    job,
                    rank,
                    code,
                    signal,
                } => {
                    let (how, _) = describe(code, signal);
                    if Some(job) == mine {
                        say!("ibdyn run: rank {rank} {how}; tearing the job down");
                    } else {
                        say!("ibdyn run: job {job} rank {rank} {how}");
                    }
                }
                FromDvm::Error(msg) => say!("ibdyn run: {msg}"),
                FromDvm::TornDown { ranks } => crate::run::report_torn_down(ranks),
                FromDvm::Done { status } => return Ok(lost.status(status)),
            }
        }
    }
}

/// A client's requests after its submission, from the stdin and signal threads: one line at a
/// time, so that theirs never interleave.
#[derive(Clone, Default)]
struct ToDvmWriter(std::sync::Arc<std::sync::Mutex<Option<TcpStream>>>);

impl ToDvmWriter {
    fn open(&self, s: TcpStream) {
        *self.0.lock().unwrap_or_else(|p| p.into_inner()) = Some(s);
    }

    /// False once the connection is gone (nothing is sent before it is open).
    fn send(&self, m: &ToDvm) -> bool {
        let mut w = self.0.lock().unwrap_or_else(|p| p.into_inner());
        match w.as_mut() {
            Some(s) => s.write_all(m.encode().to_line().as_bytes()).is_ok(),
            None => true,
        }
    }
}

/// Sends this process's stdin to rank 0 of the job, as `ibdyn run` does (a thread: the read
/// may block for as long as stdin stays open; the process exits around it).
fn start_stdin_pump(w: ToDvmWriter) {
    let spawned = std::thread::Builder::new()
        .name("stdin".into())
        .spawn(move || {
            let mut stdin = std::io::stdin();
            let mut buf = vec![0u8; 65536];
            loop {
                let data = match crate::stdin_fg::read(&mut stdin, &mut buf) {
                    Ok(0) | Err(_) => None,
                    Ok(n) => Some(buf[..n].to_vec()),
                };
                let eof = data.is_none();
                if !w.send(&ToDvm::Stdin(data)) || eof {
                    return;
                }
            }
        });
    if let Err(e) = spawned {
        tracing::warn!("cannot start the stdin thread: {e}");
    }
}
