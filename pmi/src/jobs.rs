//! What a spawn returns and what a job-status query reports, with their wire forms.

use crate::error::{PmiError, Result};
use crate::wire::{hex_decode, hex_encode};
use std::fmt;

/// The key-value space name of job `job_id` (every job of one daemon set or DVM).
pub fn kvsname_of(job_id: u32) -> String {
    format!("kvs_{job_id}_0")
}

/// How one child of a spawn fared: started (exec succeeded) or not, with the OS error.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChildStart {
    /// Rank in the new job.
    pub rank: u32,
    /// Index of the node daemon it was placed on.
    pub node: u32,
    /// 0 when started; else the errno of the failed exec (or -1 for another failure).
    pub errno: i32,
    /// The OS message naming the program, empty when started.
    pub message: String,
}

impl ChildStart {
    pub fn started(&self) -> bool {
        self.errno == 0
    }
}

/// The reply to a spawn: the new job and the fate of each of its processes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpawnReply {
    pub job_id: u32,
    pub kvsname: String,
    pub size: u32,
    pub children: Vec<ChildStart>,
}

impl SpawnReply {
    pub fn all_started(&self) -> bool {
        self.children.iter().all(ChildStart::started)
    }
}

impl fmt::Display for SpawnReply {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let failed: Vec<String> = self
            .children
            .iter()
            .filter(|c| !c.started())
            .map(|c| format!("rank {} (errno {}): {}", c.rank, c.errno, c.message))
            .collect();
        write!(
            f,
            "job {} ({} processes): {} could not start: {}",
            self.job_id,
            self.size,
            failed.len(),
            failed.join("; ")
        )
    }
}

/// Wire form of the children: `node:errno:hexmsg` per rank, joined by ','.
pub fn encode_children(children: &[ChildStart]) -> String {
    let items: Vec<String> = children
        .iter()
        .map(|c| {
            format!(
                "{}:{}:{}",
                c.node,
                c.errno,
                hex_encode(c.message.as_bytes())
            )
        })
        .collect();
    items.join(",")
}

pub fn decode_children(text: &str) -> Result<Vec<ChildStart>> {
    let bad = || PmiError::invalid("spawn children", text, "not node:errno:hexmsg,...");
    if text.is_empty() {
        return Ok(Vec::new());
    }
    text.split(',')
        .enumerate()
        .map(|(rank, item)| {
            let mut it = item.splitn(3, ':');
            let node = it.next().and_then(|n| n.parse().ok()).ok_or_else(bad)?;
            let errno = it.next().and_then(|n| n.parse().ok()).ok_or_else(bad)?;
            let msg = hex_decode(it.next().ok_or_else(bad)?)?;
            Ok(ChildStart {
                rank: rank as u32,
                node,
                errno,
                message: String::from_utf8_lossy(&msg).into_owned(),
            })
        })
        .collect()
}

/// How a rank ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RankExit {
    pub rank: u32,
    /// Exit code when it exited.
    pub code: Option<i32>,
    /// Signal number when it was killed.
    pub signal: Option<i32>,
    /// Set when the process never started (the OS message).
    pub start_error: Option<String>,
}

impl RankExit {
    /// Exited with code 0.
    pub fn normal(&self) -> bool {
        self.code == Some(0) && self.start_error.is_none()
    }

    /// "exited with code 3", "was killed by signal 9 (SIGKILL)", "never started: ...".
    pub fn how(&self) -> String {
        describe_exit(self.code, self.signal, self.start_error.as_deref())
    }
}

/// Words for an exit, shared by the launcher's reports and `RankExit::how`.
pub fn describe_exit(code: Option<i32>, signal: Option<i32>, start_error: Option<&str>) -> String {
    match (start_error, code, signal) {
        (Some(e), _, _) => format!("never started: {e}"),
        (_, _, Some(s)) => format!("was killed by signal {s} ({})", signal_name(s)),
        (_, Some(c), _) => format!("exited with code {c}"),
        _ => "vanished".into(),
    }
}

/// "SIGKILL" for 9.
pub fn signal_name(sig: i32) -> String {
    nix::sys::signal::Signal::try_from(sig)
        .map(|s| s.as_str().to_string())
        .unwrap_or_else(|_| format!("signal {sig}"))
}

/// Ranks of a job that have ended so far.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JobStatus {
    pub job_id: u32,
    pub size: u32,
    pub exited: Vec<RankExit>,
}

impl JobStatus {
    /// The first rank that ended other than by exiting with 0.
    pub fn first_abnormal(&self) -> Option<&RankExit> {
        self.exited.iter().find(|e| !e.normal())
    }

    pub fn all_exited(&self) -> bool {
        self.exited.len() as u32 >= self.size
    }
}

/// Wire form: `rank:code:signal:hexerr` per exited rank ('-' for none), joined by ','.
pub fn encode_exits(exits: &[RankExit]) -> String {
    let opt = |v: Option<i32>| v.map_or("-".to_string(), |x| x.to_string());
    let items: Vec<String> = exits
        .iter()
        .map(|e| {
            format!(
                "{}:{}:{}:{}",
                e.rank,
                opt(e.code),
                opt(e.signal),
                e.start_error
                    .as_ref()
                    .map_or("-".to_string(), |s| hex_encode(s.as_bytes()))
            )
        })
        .collect();
    items.join(",")
}

pub fn decode_exits(text: &str) -> Result<Vec<RankExit>> {
    let bad = || PmiError::invalid("exits", text, "not rank:code:signal:err,...");
    if text.is_empty() {
        return Ok(Vec::new());
    }
    let opt = |s: Option<&str>| -> Result<Option<i32>> {
        match s.ok_or_else(bad)? {
            "-" => Ok(None),
            v => v.parse().map(Some).map_err(|_| bad()),
        }
    };
    text.split(',')
        .map(|item| {
            let mut it = item.split(':');
            let rank = it.next().and_then(|r| r.parse().ok()).ok_or_else(bad)?;
            let code = opt(it.next())?;
            let signal = opt(it.next())?;
            let start_error = match it.next().ok_or_else(bad)? {
                "-" => None,
                h => Some(String::from_utf8_lossy(&hex_decode(h)?).into_owned()),
            };
            Ok(RankExit {
                rank,
                code,
                signal,
                start_error,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn children_and_exits_round_trip() {
        let ch = vec![
            ChildStart {
                rank: 0,
                node: 2,
                errno: 0,
                message: String::new(),
            },
            ChildStart {
                rank: 1,
                node: 0,
                errno: 2,
                message: "cannot execute \"x\": No such file or directory".into(),
            },
        ];
        assert_eq!(decode_children(&encode_children(&ch)).unwrap(), ch);
        assert!(decode_children("1:x:00").is_err());
        let ex = vec![
            RankExit {
                rank: 3,
                code: Some(1),
                signal: None,
                start_error: None,
            },
            RankExit {
                rank: 0,
                code: None,
                signal: Some(9),
                start_error: None,
            },
            RankExit {
                rank: 1,
                code: None,
                signal: None,
                start_error: Some("no such file".into()),
            },
        ];
        assert_eq!(decode_exits(&encode_exits(&ex)).unwrap(), ex);
        assert!(ex[1].how().contains("SIGKILL"));
        assert!(decode_exits("1:2").is_err());
        assert_eq!(kvsname_of(7), "kvs_7_0");
    }
}
