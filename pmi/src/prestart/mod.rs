//! Prestarted processes (the `ibdyn_prestart` spawn info key): a node daemon starts a copy of
//! a spawned program before it is asked for one. The copy runs up to ibdyn's initialisation
//! and waits there on its inherited PMI connection for an [`Assignment`]: the per-rank
//! environment (rank, job, PMI id, ...) a process started for that spawn would have had. A
//! later spawn of the same program, arguments, environment and directory then takes the
//! waiting copy instead of paying for an exec and the program's start-up.
//!
//! A copy that is never used ends quietly: when its daemon closes the connection, or after
//! [`IDLE_ENV`] seconds. After its first copies a daemon makes the others by forking a
//! [`template`] of the program rather than exec'ing it again.

pub mod template;
pub use template::{serve_forks, was_forked};

use crate::env;
use crate::error::{PmiError, Result};
use std::io::{ErrorKind, Read};
use std::os::fd::RawFd;
use std::time::{Duration, Instant};

/// Set in a prestarted process until it is assigned: to [`COPY`] in a waiting copy, to
/// [`template::TEMPLATE`] in a template.
pub const PRESTARTED_ENV: &str = "IBDYN_PRESTARTED";
/// `IBDYN_PRESTARTED`'s value in a waiting copy.
pub const COPY: &str = "1";
/// Seconds a prestarted process waits for an assignment before it ends (default 600).
pub const IDLE_ENV: &str = "IBDYN_PRESTART_IDLE";
const DEFAULT_IDLE: Duration = Duration::from_secs(600);
const MAGIC: &[u8; 8] = b"IBDYNPS1";
/// An assignment is an environment: far below this.
const MAX_BODY: usize = 1 << 20;
/// Each read of the rest of a frame whose first byte has arrived.
const REST_OF_FRAME: Duration = Duration::from_secs(30);

/// The daemon's message to a prestarted process: the variables to set before it goes on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Assignment {
    pub vars: Vec<(String, String)>,
}

fn malformed(why: &str) -> PmiError {
    PmiError::Env(format!(
        "malformed prestart assignment from the node daemon ({why}); \
         is this program's ibdyn the same version as the daemon's?"
    ))
}

impl Assignment {
    pub fn encode(&self) -> Vec<u8> {
        let mut body = Vec::new();
        body.extend_from_slice(&(self.vars.len() as u32).to_le_bytes());
        for (k, v) in &self.vars {
            for s in [k, v] {
                body.extend_from_slice(&(s.len() as u32).to_le_bytes());
                body.extend_from_slice(s.as_bytes());
            }
        }
        let mut out = MAGIC.to_vec();
        out.extend_from_slice(&(body.len() as u32).to_le_bytes());
        out.extend_from_slice(&body);
        out
    }

    /// The body's length from a frame's 12-byte header.
    pub fn body_len(header: &[u8; 12]) -> Result<usize> {
        if &header[..8] != MAGIC {
            return Err(malformed("wrong magic"));
        }
        let n = u32::from_le_bytes(header[8..].try_into().expect("4 bytes")) as usize;
        if n > MAX_BODY {
            return Err(malformed("body too large"));
        }
        Ok(n)
    }

    pub fn decode_body(mut b: &[u8]) -> Result<Assignment> {
        fn take<'a>(b: &mut &'a [u8], n: usize) -> Result<&'a [u8]> {
            if b.len() < n {
                return Err(malformed("truncated"));
            }
            let (head, rest) = b.split_at(n);
            *b = rest;
            Ok(head)
        }
        fn u32_of(b: &mut &[u8]) -> Result<usize> {
            Ok(u32::from_le_bytes(take(b, 4)?.try_into().expect("4 bytes")) as usize)
        }
        fn text(b: &mut &[u8]) -> Result<String> {
            let n = u32_of(b)?;
            let s = std::str::from_utf8(take(b, n)?).map_err(|_| malformed("not UTF-8"))?;
            if s.contains('\0') {
                return Err(malformed("NUL in a variable"));
            }
            Ok(s.to_string())
        }
        let count = u32_of(&mut b)?;
        let mut vars = Vec::new();
        for _ in 0..count {
            let k = text(&mut b)?;
            if k.is_empty() || k.contains('=') {
                return Err(malformed("bad variable name"));
            }
            vars.push((k, text(&mut b)?));
        }
        if !b.is_empty() {
            return Err(malformed("trailing bytes"));
        }
        Ok(Assignment { vars })
    }
}

fn idle_limit() -> Duration {
    std::env::var(IDLE_ENV)
        .ok()
        .and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|s| *s > 0.0)
        .map_or(DEFAULT_IDLE, Duration::from_secs_f64)
}

/// A copy's connection to its daemon (`PMI_FD`).
fn pmi_fd() -> Result<RawFd> {
    let text = std::env::var(env::HYDRA_PMI_FD).unwrap_or_default();
    text.trim().parse().map_err(|_| {
        PmiError::Env(format!(
            "{PRESTARTED_ENV} is set but {}={text:?} is not a descriptor",
            env::HYDRA_PMI_FD
        ))
    })
}

static ASSIGNED: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();

/// True in a process that was prestarted and then assigned to a spawn.
pub fn was_prestarted() -> bool {
    ASSIGNED.get().is_some()
}

/// When a prestarted process got its assignment (its initialisation's own time starts there).
pub fn assigned_at() -> Option<Instant> {
    ASSIGNED.get().copied()
}

/// True in a prestarted process that has not been assigned yet: what it can prepare before
/// [`wait_for_assignment`] must not depend on its job or rank.
pub fn is_waiting_copy() -> bool {
    std::env::var_os(PRESTARTED_ENV).is_some()
}

/// What [`wait_for_assignment`] found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Waited {
    /// This process was started for its rank: nothing to wait for.
    NotACopy,
    /// The assignment's variables are set: go on as that rank.
    Assigned,
    /// The daemon closed the connection, or the copy waited [`IDLE_ENV`] seconds: end quietly.
    NotNeeded,
}

/// In a prestarted process: waits for the daemon's assignment and ends the process quietly
/// if none comes ([`wait_for_assignment`]); elsewhere returns at once.
pub fn await_assignment() -> Result<()> {
    if wait_for_assignment()? == Waited::NotNeeded {
        std::process::exit(0);
    }
    Ok(())
}

/// In a prestarted process: waits for the daemon's assignment and sets its variables (the
/// first thing ibdyn's initialisation does, before anything reads the environment). A
/// template first serves forks ([`serve_forks`]) and waits in the copies it forks.
///
/// The variables are set with `std::env::set_var`: a prestarted program must initialise ibdyn
/// before it starts threads of its own that read the environment.
pub fn wait_for_assignment() -> Result<Waited> {
    serve_forks()?;
    if !is_waiting_copy() {
        return Ok(Waited::NotACopy);
    }
    let fd = pmi_fd()?;
    // SAFETY: the daemon handed this process the descriptor for PMI; it is only borrowed here
    // (never closed: ManuallyDrop), before the PMI client takes it.
    let stream = std::mem::ManuallyDrop::new(unsafe {
        <std::os::unix::net::UnixStream as std::os::fd::FromRawFd>::from_raw_fd(fd)
    });
    let conn: &std::os::unix::net::UnixStream = &stream;
    let io = |what: &str, e: std::io::Error| {
        PmiError::Env(format!(
            "{what} the prestart assignment on PMI_FD={fd}: {e}"
        ))
    };
    let timeout = |d| {
        conn.set_read_timeout(Some(d))
            .map_err(|e| io("waiting for", e))
    };
    timeout(idle_limit())?;
    // (`Read` is implemented for `&UnixStream`: reads through a copy of the reference.)
    let mut reader = conn;
    let mut header = [0u8; 12];
    match reader.read(&mut header[..1]) {
        Ok(1) => {}
        // Not needed: the daemon closed the connection, or kept it unused too long.
        Ok(_) => return Ok(Waited::NotNeeded),
        Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
            return Ok(Waited::NotNeeded)
        }
        Err(e) => return Err(io("reading", e)),
    }
    timeout(REST_OF_FRAME)?;
    let mut rest = |buf: &mut [u8]| {
        reader.read_exact(buf).map_err(|e| match e.kind() {
            ErrorKind::UnexpectedEof => malformed("connection closed inside the message"),
            ErrorKind::WouldBlock | ErrorKind::TimedOut => {
                malformed("the message stopped half way")
            }
            _ => io("reading", e),
        })
    };
    rest(&mut header[1..])?;
    let mut body = vec![0u8; Assignment::body_len(&header)?];
    rest(&mut body)?;
    // The PMI client waits with its own bounds.
    conn.set_read_timeout(None).map_err(|e| io("after", e))?;
    let a = Assignment::decode_body(&body)?;
    for (k, v) in &a.vars {
        std::env::set_var(k, v);
    }
    std::env::remove_var(PRESTARTED_ENV);
    let _ = ASSIGNED.set(Instant::now());
    Ok(Waited::Assigned)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn roundtrip(a: &Assignment) -> Result<Assignment> {
        let f = a.encode();
        let header: [u8; 12] = f[..12].try_into().unwrap();
        assert_eq!(Assignment::body_len(&header)?, f.len() - 12);
        Assignment::decode_body(&f[12..])
    }

    #[test]
    fn an_assignment_survives_the_wire() {
        let a = Assignment {
            vars: vec![
                ("IBDYN_RANK".into(), "3".into()),
                ("EMPTY".into(), String::new()),
                ("UNICODE".into(), "é x=y".into()),
            ],
        };
        assert_eq!(roundtrip(&a).unwrap(), a);
        let none = Assignment { vars: vec![] };
        assert_eq!(roundtrip(&none).unwrap(), none);
    }

    #[test]
    fn malformed_frames_are_errors_not_panics() {
        let good = Assignment {
            vars: vec![("K".into(), "V".into())],
        }
        .encode();
        let mut bad_magic: [u8; 12] = good[..12].try_into().unwrap();
        bad_magic[0] = b'X';
        assert!(Assignment::body_len(&bad_magic).is_err());
        let mut huge: [u8; 12] = good[..12].try_into().unwrap();
        huge[8..].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(Assignment::body_len(&huge).is_err());
        let body = &good[12..];
        for cut in 0..body.len() {
            assert!(Assignment::decode_body(&body[..cut]).is_err(), "cut {cut}");
        }
        let mut trailing = body.to_vec();
        trailing.push(0);
        assert!(Assignment::decode_body(&trailing).is_err());
        for name in ["", "A=B"] {
            let f = Assignment {
                vars: vec![(name.into(), "v".into())],
            }
            .encode();
            assert!(Assignment::decode_body(&f[12..]).is_err(), "{name:?}");
        }
        let nul = Assignment {
            vars: vec![("K".into(), "a\0b".into())],
        }
        .encode();
        assert!(Assignment::decode_body(&nul[12..]).is_err());
        let mut not_utf8 = body.to_vec();
        *not_utf8.last_mut().unwrap() = 0xff;
        assert!(Assignment::decode_body(&not_utf8).is_err());
    }

    #[test]
    fn a_process_that_was_not_prestarted_does_not_wait() {
        assert!(std::env::var_os(PRESTARTED_ENV).is_none());
        await_assignment().unwrap();
        assert!(!was_prestarted());
    }
}
