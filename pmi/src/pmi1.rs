//! A plain PMI-1 server, as MPICH's hydra serves it over `PMI_FD`: ibdyn's extensions fall
//! back to PMI-1 calls (allgather = put + barrier + gets, get_wait = get, ifence = barrier).

use crate::conn::LineConn;
use crate::error::{PmiError, Result};
use crate::jobs::{JobStatus, SpawnReply};
use crate::server::{hostname, JobInfo, PmiCompletion, Server, ServerKind};
use crate::session::Session;
use crate::wire::{hex_decode, hex_encode, Command, SpawnRequest};
use std::os::unix::net::UnixStream;
use std::time::Duration;

pub(crate) struct Pmi1Server {
    s: Session,
    /// Allgathers done through the fallback so far (names their keys).
    fallback_seq: u64,
}

/// FNV-1a: a stable 32-bit id from a kvsname when the launcher gives no job id.
fn fnv32(s: &str) -> u32 {
    s.bytes().fold(0x811c9dc5u32, |h, b| {
        (h ^ b as u32).wrapping_mul(0x01000193)
    })
}

impl Pmi1Server {
    /// Talks PMI-1 over `stream` as `rank` of `size`: the start-up exchange, one request at a
    /// time (a foreign server may not answer pipelined requests in order).
    pub fn connect(
        stream: UnixStream,
        rank: u32,
        size: u32,
        timeout: Duration,
    ) -> Result<Pmi1Server> {
        let job = JobInfo::new(rank, size);
        let mut s = Session::new(LineConn::new(stream), ServerKind::Pmi1, job, timeout);
        s.start_handshake(
            "cmd=init pmi_version=1 pmi_subversion=1\n",
            Vec::new(),
            false,
        )?;
        s.job.job_id = fnv32(&s.job.kvsname);
        s.job.node_id = s.job.nodes.get(rank as usize).copied().unwrap_or(0);
        s.job.node_uid = hostname();
        Ok(Pmi1Server { s, fallback_seq: 0 })
    }
}

impl Server for Pmi1Server {
    fn kind(&self) -> ServerKind {
        ServerKind::Pmi1
    }
    fn job(&self) -> &JobInfo {
        &self.s.job
    }
    /// Puts are seen by other processes only after a fence.
    fn puts_visible_without_fence(&self) -> bool {
        false
    }

    fn put(&mut self, key: &str, value: &str) -> Result<()> {
        if value.len() > self.s.vallen_max {
            return Err(PmiError::invalid(
                "value",
                key,
                &format!("longer than the server's {} bytes", self.s.vallen_max),
            ));
        }
        self.s.put(key, value)
    }
    fn get_from(&mut self, kvsname: &str, key: &str) -> Result<String> {
        self.s.get_from(kvsname, key)
    }
    fn get_wait_from(&mut self, kvsname: &str, key: &str, _timeout: Duration) -> Result<String> {
        tracing::debug!(
            key,
            "PMI-1 server: get_wait falls back to get (visible after a fence)"
        );
        self.s.get_from(kvsname, key)
    }

    fn fence(&mut self) -> Result<()> {
        self.s.fence()
    }
    fn allgather(&mut self, value: &[u8]) -> Result<Vec<Vec<u8>>> {
        tracing::debug!("PMI-1 server: allgather falls back to put + barrier + gets");
        let seq = self.fallback_seq;
        self.fallback_seq += 1;
        self.put(
            &format!("ibdyn-ag{seq}-{}", self.s.job.rank),
            &hex_encode(value),
        )?;
        self.fence()?;
        let kvs = self.s.job.kvsname.clone();
        (0..self.s.job.size)
            .map(|r| hex_decode(&self.s.get_from(&kvs, &format!("ibdyn-ag{seq}-{r}"))?))
            .collect()
    }
    fn ifence(&mut self, reqid: u64) -> Result<()> {
        tracing::debug!("PMI-1 server: ifence falls back to a blocking barrier");
        let r = self.fence().map(|_| PmiCompletion::Fence);
        self.s.complete(reqid, r);
        Ok(())
    }
    fn iallgather(&mut self, reqid: u64, value: &[u8]) -> Result<()> {
        tracing::debug!("PMI-1 server: iallgather falls back to a blocking allgather");
        let r = self.allgather(value).map(PmiCompletion::Allgather);
        self.s.complete(reqid, r);
        Ok(())
    }
    crate::session::forward_to_session!();

    fn job_status(&mut self, _job_id: u32) -> Result<JobStatus> {
        Err(PmiError::NotSupported("job_status".into()))
    }

    fn abort(&mut self, code: i32, msg: &str) {
        eprintln!(
            "rank {} aborts the job (code {code}): {msg}",
            self.s.job.rank
        );
        self.s.abort(Command::new("abort").arg("exitcode", code));
    }
    fn finalize(&mut self) -> Result<()> {
        self.s.finalize()
    }
}
