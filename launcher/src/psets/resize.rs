//! `ibdyn resize [JOB] --grow N | --shrink N | --shrink-set NAME`: the scheduler's side of a
//! resource change. It finds the root daemon of a running `ibdyn run` or `ibdyn dvm` (the
//! `node0/pmi.sock` of the session directories `ibdyn-UID-*` under TMPDIR, or `--contact`),
//! and posts the change against the job's main set; the job's processes see it pending.

use super::registry::BUSY;
use crate::{LaunchError, Result};
use ibdyn_pmi::pset_ops::{decode_reply, PsetDesc, PsetOp, PsetReply, PsetRequest};
use ibdyn_pmi::wire::{msg_text, Command};
use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// How long the root daemon has to answer.
const ANSWER_LIMIT: Duration = Duration::from_secs(30);

/// What `ibdyn resize` asks for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Resize {
    Grow(u32),
    Shrink(u32),
    ShrinkSet(String),
}

impl Resize {
    fn request(&self, job: u32) -> PsetRequest {
        let (op, n, set) = match self {
            Resize::Grow(n) => (PsetOp::Grow, *n, None),
            Resize::Shrink(n) => (PsetOp::Shrink, *n, None),
            Resize::ShrinkSet(s) => (PsetOp::Sub, 0, Some(s.clone())),
        };
        PsetRequest::Resize { job, op, n, set }
    }
}

/// The root-daemon sockets of this user's running daemon sets, newest first.
fn root_sockets() -> Vec<PathBuf> {
    let (base, _) = crate::run::session_base();
    // SAFETY: getuid cannot fail.
    let prefix = format!("ibdyn-{}-", unsafe { libc::getuid() });
    let mut found: Vec<(std::time::SystemTime, PathBuf)> = std::fs::read_dir(&base)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with(&prefix))
        .map(|e| e.path().join("node0").join("pmi.sock"))
        .filter_map(|p| {
            let t = std::fs::metadata(&p).and_then(|m| m.modified()).ok()?;
            Some((t, p))
        })
        .collect();
    found.sort_by_key(|f| std::cmp::Reverse(f.0));
    // A session directory a killed launcher left keeps its socket file; nothing listens.
    found
        .into_iter()
        .map(|(_, p)| p)
        .filter(|p| UnixStream::connect(p).is_ok())
        .collect()
}

/// One request to one root daemon: its answer, or the daemon's refusal as `Err(text)`.
fn ask(sock: &Path, req: &PsetRequest) -> Result<std::result::Result<PsetReply, String>> {
    let io = |what: &str, e| LaunchError::io(format!("{what} {}", sock.display()), e);
    let mut s = UnixStream::connect(sock).map_err(|e| io("connect to", e))?;
    s.set_read_timeout(Some(ANSWER_LIMIT))
        .map_err(|e| io("set a timeout on", e))?;
    s.write_all(req.encode().to_line().as_bytes())
        .map_err(|e| io("write to", e))?;
    let mut line = String::new();
    BufReader::new(s)
        .read_line(&mut line)
        .map_err(|e| io("read the answer of", e))?;
    let cmd = Command::parse(&line)?;
    if cmd.name == "error" {
        return Ok(Err(msg_text(cmd.get("msg").unwrap_or("refused"))));
    }
    Ok(decode_reply(&cmd)?)
}

/// `ask`, asked again while the job's previous change is still being integrated (the
/// application has not finalized it yet), for up to `ANSWER_LIMIT`: a script's
/// `ibdyn resize --grow 2; ibdyn resize --shrink 3` does what it says.
fn ask_while_busy(
    sock: &Path,
    req: &PsetRequest,
) -> Result<std::result::Result<PsetReply, String>> {
    let deadline = Instant::now() + ANSWER_LIMIT;
    let mut pause = Duration::from_millis(5);
    loop {
        match ask(sock, req)? {
            Err(refused) if refused.contains(BUSY) && Instant::now() < deadline => {
                std::thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_millis(200));
            }
            Err(refused) if refused.contains(BUSY) => {
                return Ok(Err(format!(
                    "{refused} (still so after {} s)",
                    ANSWER_LIMIT.as_secs()
                )))
            }
            answer => return Ok(answer),
        }
    }
}

/// The main set of every job of every daemon set found (or of the one at `contact`), by
/// root-daemon socket.
pub fn list(contact: Option<&Path>) -> Result<Vec<(PathBuf, Vec<PsetDesc>)>> {
    let sockets = match contact {
        Some(c) => vec![c.to_path_buf()],
        None => root_sockets(),
    };
    let mut out = Vec::new();
    for sock in sockets {
        match ask(&sock, &PsetRequest::Jobs) {
            Ok(Ok(PsetReply::Made(sets))) => out.push((sock, sets)),
            Ok(Ok(other)) => {
                return Err(LaunchError::Request(format!(
                    "{}: unexpected answer {other:?}",
                    sock.display()
                )))
            }
            Ok(Err(refused)) => return Err(LaunchError::Request(refused)),
            // A stale session directory of a job that ended.
            Err(_) if contact.is_none() => {}
            Err(e) => return Err(e),
        }
    }
    Ok(out)
}

/// Posts `change` against job `job` (None: the only job of the only daemon set running);
/// returns the delta set and the new main set.
pub fn resize(job: Option<u32>, change: &Resize, contact: Option<&Path>) -> Result<Vec<PsetDesc>> {
    let sockets = match contact {
        Some(c) => vec![c.to_path_buf()],
        None => root_sockets(),
    };
    if sockets.is_empty() {
        return Err(LaunchError::Usage(
            "no running ibdyn run or ibdyn dvm found (looked for ibdyn-UID-*/node0/pmi.sock \
             under TMPDIR); name one with --contact"
                .into(),
        ));
    }
    if job.is_none() && sockets.len() > 1 {
        return Err(LaunchError::Usage(format!(
            "{} daemon sets are running: name the job (ibdyn resize JOB ...) or --contact",
            sockets.len()
        )));
    }
    let req = change.request(job.unwrap_or(0));
    let mut why = Vec::new();
    for sock in &sockets {
        match ask_while_busy(sock, &req) {
            Ok(Ok(PsetReply::Made(sets))) => return Ok(sets),
            Ok(Ok(other)) => why.push(format!("{}: unexpected answer {other:?}", sock.display())),
            Ok(Err(refused)) => {
                // Another daemon set's job: try the next; else the refusal is the answer.
                if sockets.len() == 1 || !refused.contains("no job") {
                    return Err(LaunchError::Request(refused));
                }
                why.push(refused);
            }
            Err(e) => why.push(e.to_string()),
        }
    }
    Err(LaunchError::Request(format!(
        "no daemon set took the change: {}",
        why.join("; ")
    )))
}
