//! The one error type of the shared-memory layer.

use std::io;

#[derive(Debug, thiserror::Error)]
pub enum ShmError {
    #[error("shared-memory segment {path}: {source}")]
    Io {
        path: String,
        #[source]
        source: io::Error,
    },
    #[error("shared-memory segment {name} does not exist (receiver not started, or gone)")]
    Missing { name: String },
    #[error("shared-memory segment {name} is already open as a receive queue in this process")]
    AlreadyOpen { name: String },
    #[error("shared-memory segment {name} is not an ibdyn segment (magic {found:#018x})")]
    BadMagic { name: String, found: u64 },
    #[error(
        "shared-memory segment {name} has layout version {found}, this build speaks {expected}"
    )]
    Version {
        name: String,
        found: u32,
        expected: u32,
    },
    #[error("shared-memory segment {name} has a malformed header: {what}")]
    Malformed { name: String, what: String },
    #[error("message of {len} bytes exceeds the shared-memory cell payload of {max} bytes")]
    TooLarge { len: usize, max: usize },
    #[error(
        "{what} needs {} of /dev/shm, which has {} free of {}: give /dev/shm more room \
         (`docker run --shm-size=1g`, or remount it larger) or place fewer processes per node",
        crate::room::mib(*bytes as u64), crate::room::mib(*free), crate::room::mib(*total)
    )]
    NoRoom {
        what: String,
        bytes: usize,
        free: u64,
        total: u64,
    },
    #[error("invalid shared-memory configuration: {0}")]
    Config(String),
    #[error("CMA access to process {pid} refused by the kernel (EPERM): {reason}")]
    CmaRefused { pid: i32, reason: String },
    #[error("CMA peer process {pid} is gone (ESRCH)")]
    PeerGone { pid: i32 },
    #[error("CMA {op} of {len} bytes at remote address {addr:#x} in process {pid}: bad address")]
    BadAddress {
        op: &'static str,
        pid: i32,
        addr: usize,
        len: usize,
    },
    #[error("CMA {op} with process {pid}: {source}")]
    Cma {
        op: &'static str,
        pid: i32,
        #[source]
        source: io::Error,
    },
    #[error("cannot permit CMA from peers: {0}")]
    CmaSetup(String),
    #[error("node collective buffer {name}: rank {rank} (pid {pid}) is gone")]
    CollPeerGone { name: String, rank: usize, pid: u32 },
    #[error("node collective buffer {name}: rank {rank} gave up on the operation")]
    CollAbandoned { name: String, rank: usize },
    #[error("node collective buffer {name}: rank {rank} did not take its part within {secs} s")]
    CollTimeout {
        name: String,
        rank: usize,
        secs: f64,
    },
    #[error("node collective buffer {name}: rank {rank} moves {got} bytes, this rank expects {expected} (mismatched counts across ranks?)")]
    CollMismatch {
        name: String,
        rank: usize,
        expected: usize,
        got: u64,
    },
}
