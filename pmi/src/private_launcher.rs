//! A singleton that spawns starts a private `ibdyn run --adopt` for itself: one node daemon
//! whose job 0 has this process as its only rank. The launcher's stdin is a pipe we hold:
//! when this process ends the launcher sees EOF. After a finalize (we write a line first) it
//! waits for the spawned jobs and removes everything; otherwise (killed by a signal, say) it
//! kills the spawned jobs at once and removes everything.

use crate::env;
use crate::error::{PmiError, Result};
use crate::server::Served;
use crate::wire::Command;
use std::io::Read;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Stdio};
use std::time::{Duration, Instant};

/// Descriptor number the launcher writes its ready line to.
const READY_FD: i32 = 3;

pub(crate) struct PrivateLauncher {
    stdin: ChildStdin,
    _child: Child,
}

/// The line that tells the private launcher this process finalized: when its stdin then
/// closes, the process ended as it should, and the launcher waits for the spawned jobs.
/// Without it, a closed stdin means the process was killed, and everything goes at once.
pub const FINALIZED_LINE: &str = "finalized\n";

impl PrivateLauncher {
    /// Tells the launcher this process has finalized (see `FINALIZED_LINE`).
    pub(crate) fn finalized(&mut self) {
        use std::io::Write;
        if let Err(e) = self.stdin.write_all(FINALIZED_LINE.as_bytes()) {
            tracing::debug!("singleton: cannot tell the private launcher we finalized: {e}");
        }
    }
}

/// `IBDYN_BIN`, else `ibdyn` beside this executable (or one directory up, for cargo's
/// examples/), else on PATH.
fn find_ibdyn() -> Result<PathBuf> {
    if let Some(p) = std::env::var_os(env::BIN) {
        let p = PathBuf::from(p);
        if p.is_file() {
            return Ok(p);
        }
        return Err(PmiError::Singleton(format!(
            "{}={} is not a file",
            env::BIN,
            p.display()
        )));
    }
    if let Ok(exe) = std::env::current_exe() {
        for dir in exe.ancestors().skip(1).take(2) {
            let p = dir.join("ibdyn");
            if p.is_file() {
                return Ok(p);
            }
        }
    }
    if let Some(path) = std::env::var_os("PATH") {
        if let Some(p) = std::env::split_paths(&path)
            .map(|d| d.join("ibdyn"))
            .find(|p| p.is_file())
        {
            return Ok(p);
        }
    }
    Err(PmiError::Singleton(format!(
        "no `ibdyn` binary found (set {}, put it beside this program, or on PATH)",
        env::BIN
    )))
}

fn pipe() -> Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0i32; 2];
    // SAFETY: fds is valid for two ints.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(PmiError::io("pipe", std::io::Error::last_os_error()));
    }
    // SAFETY: pipe2 just returned these two descriptors, owned by nobody else.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// Starts the private launcher and waits (bounded) for its ready line.
pub(crate) fn start(job_id: u32, timeout: Duration) -> Result<(PrivateLauncher, Served)> {
    let bin = find_ibdyn()?;
    let me = std::env::current_exe()
        .map(|p| p.display().to_string())
        .unwrap_or_else(|_| "singleton".into());
    let (read_end, write_end) = pipe()?;
    let w = write_end.as_raw_fd();
    // The private job's secret is chosen here and shared with the launcher, so this process
    // (already running) knows it too: the fabric's control datagrams carry it.
    let secret = format!("{:016x}", random_secret()?);
    std::env::set_var(env::JOB_SECRET, &secret);
    let mut cmd = std::process::Command::new(&bin);
    cmd.env(env::JOB_SECRET, &secret).env("IBDYN_ADOPTING", "1");
    cmd.args(["run", "--adopt-ready-fd"])
        .arg(READY_FD.to_string())
        .args(["--jobid", &job_id.to_string(), "-n", "1", "--"])
        .arg(&me)
        .stdin(Stdio::piped())
        .env_remove(env::PMI_SOCK)
        .env_remove(env::HYDRA_PMI_FD);
    // SAFETY: dup2 is async-signal-safe; it gives the child the write end as fd 3 (without
    // close-on-exec).
    unsafe {
        cmd.pre_exec(move || {
            if libc::dup2(w, READY_FD) < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let mut child = cmd
        .spawn()
        .map_err(|e| PmiError::Singleton(format!("cannot run {}: {e}", bin.display())))?;
    drop(write_end);
    let stdin = child
        .stdin
        .take()
        .ok_or_else(|| PmiError::Singleton("no stdin pipe".into()))?;
    let line = read_ready(read_end, timeout.min(Duration::from_secs(60)), &mut child)?;
    let c = Command::parse(&line).map_err(|e| PmiError::Singleton(e.to_string()))?;
    let served = Served {
        path: c.require("sock")?.to_string(),
        rank: 0,
        size: 1,
        job_id: c.num("jobid")?,
        node_id: 0,
        node_uid: c.require("node_uid")?.to_string(),
    };
    tracing::debug!("singleton: private daemon ready at {}", served.path);
    Ok((
        PrivateLauncher {
            stdin,
            _child: child,
        },
        served,
    ))
}

fn read_ready(fd: OwnedFd, limit: Duration, child: &mut Child) -> Result<String> {
    let deadline = Instant::now() + limit;
    let mut file = std::fs::File::from(fd);
    let mut got = Vec::new();
    let mut buf = [0u8; 1024];
    loop {
        let ms = deadline
            .saturating_duration_since(Instant::now())
            .as_millis()
            .min(1000) as i32;
        let mut pfd = libc::pollfd {
            fd: file.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd.
        let n = unsafe { libc::poll(&mut pfd, 1, ms) };
        if n > 0 {
            let k = file
                .read(&mut buf)
                .map_err(|e| PmiError::io("read the private daemon's ready line", e))?;
            got.extend_from_slice(&buf[..k]);
            if let Some(p) = got.iter().position(|&b| b == b'\n') {
                return Ok(String::from_utf8_lossy(&got[..p]).into_owned());
            }
            if k == 0 {
                let st = child.wait().map(|s| s.to_string()).unwrap_or_default();
                return Err(PmiError::Singleton(format!(
                    "the private launcher exited before it was ready ({st})"
                )));
            }
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            return Err(PmiError::Timeout {
                what: "the private daemon to start".into(),
                secs: limit.as_secs_f64(),
            });
        }
    }
}

fn random_secret() -> Result<u64> {
    let mut b = [0u8; 8];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut b))
        .map_err(|e| PmiError::io("read /dev/urandom", e))?;
    Ok(u64::from_le_bytes(b))
}
