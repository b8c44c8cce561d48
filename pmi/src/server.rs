//! What a `PmiClient` talks to, as one interface with three implementations: an ibdyn node
//! daemon (`IbdynServer`, every extension native), a plain PMI-1 server such as MPICH's
//! hydra (`Pmi1Server`, extensions fall back to PMI-1 calls) and no server at all
//! (`SingletonServer`, rank 0 of 1 with an in-process key-value space). Arguments are
//! checked by the client before they get here.

use crate::error::Result;
use crate::jobs::{JobStatus, SpawnReply};
use crate::wire::SpawnRequest;
use std::time::Duration;

/// Which server the client talks to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ServerKind {
    /// An ibdyn node daemon: every extension is native.
    Ibdyn,
    /// A plain PMI-1 server (hydra): extensions fall back to PMI-1 calls.
    Pmi1,
    /// No server: rank 0 of 1, in-process key-value space.
    Singleton,
}

/// Result of a completed non-blocking operation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PmiCompletion {
    Fence,
    /// One value per rank, in rank order.
    Allgather(Vec<Vec<u8>>),
}

pub(crate) trait Server {
    fn kind(&self) -> ServerKind;
    /// What the server told this process about itself and its job.
    fn job(&self) -> &JobInfo;

    /// Whether a put is visible to `get_wait` of other processes without a fence.
    fn puts_visible_without_fence(&self) -> bool {
        true
    }
    /// Reads the start-up exchange's answers if they are still owed.
    fn finish_startup(&mut self) -> Result<()> {
        Ok(())
    }

    fn put(&mut self, key: &str, value: &str) -> Result<()>;
    /// A put whose reply may be read by the next call that waits for the server.
    fn put_nowait(&mut self, key: &str, value: &str) -> Result<()> {
        self.put(key, value)
    }
    fn get_from(&mut self, kvsname: &str, key: &str) -> Result<String>;
    fn get_wait_from(&mut self, kvsname: &str, key: &str, timeout: Duration) -> Result<String>;

    fn fence(&mut self) -> Result<()>;
    fn allgather(&mut self, value: &[u8]) -> Result<Vec<Vec<u8>>>;
    /// Starts a fence named `reqid` (completed by `wait`).
    fn ifence(&mut self, reqid: u64) -> Result<()>;
    fn iallgather(&mut self, reqid: u64, value: &[u8]) -> Result<()>;
    /// Completes request `reqid`, which `ifence` or `iallgather` started.
    fn wait(&mut self, reqid: u64) -> Result<PmiCompletion>;
    fn test(&mut self, reqid: u64) -> Result<bool>;

    fn publish_name(&mut self, service: &str, port: &str) -> Result<()>;
    fn lookup_name(&mut self, service: &str) -> Result<String>;
    fn unpublish_name(&mut self, service: &str) -> Result<()>;

    fn spawn(&mut self, req: &SpawnRequest) -> Result<SpawnReply>;
    fn job_status(&mut self, job_id: u32) -> Result<JobStatus>;
    /// A request to the process-set registry of the daemons (ibdyn only).
    fn pset(
        &mut self,
        _req: &crate::pset_ops::PsetRequest,
    ) -> Result<std::result::Result<crate::pset_ops::PsetReply, String>> {
        Err(crate::PmiError::NotSupported(
            "dynamic process sets (run the program under ibdyn run or ibdyn dvm)".into(),
        ))
    }
    /// The server to use from now on in place of this one, if this one cannot serve
    /// everything (a singleton starts a private daemon and hands its state over).
    fn promote(&mut self) -> Result<Option<Box<dyn Server>>> {
        Ok(None)
    }

    /// Asks the launcher to end the whole job with `code` (the caller exits afterwards).
    fn abort(&mut self, code: i32, msg: &str);
    /// Ends the conversation.
    fn finalize(&mut self) -> Result<()>;
}

/// What the process manager tells a process about itself and its job.
pub(crate) struct JobInfo {
    pub rank: u32,
    pub size: u32,
    pub appnum: i32,
    pub kvsname: String,
    pub job_id: u32,
    pub node_id: u32,
    /// Unique per daemon instance: processes with equal values may use shared memory.
    pub node_uid: String,
    pub universe_size: u32,
    /// Node of each rank.
    pub nodes: Vec<u32>,
}

impl JobInfo {
    /// Rank `rank` of `size`, everything else unknown yet (every rank on node 0).
    pub fn new(rank: u32, size: u32) -> JobInfo {
        JobInfo {
            rank,
            size,
            appnum: 0,
            kvsname: String::new(),
            job_id: 0,
            node_id: 0,
            node_uid: String::new(),
            universe_size: size,
            nodes: vec![0; size as usize],
        }
    }
}

/// Where and as whom a process reaches its ibdyn node daemon.
pub(crate) struct Served {
    pub(crate) path: String,
    pub(crate) rank: u32,
    pub(crate) size: u32,
    pub(crate) job_id: u32,
    pub(crate) node_id: u32,
    pub(crate) node_uid: String,
}

pub(crate) fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .ok()
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "localhost".into())
}
