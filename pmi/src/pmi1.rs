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

/// Key of piece `i` of `rank`'s value in fallback allgather `seq`.
fn chunk_key(seq: u64, rank: u32, i: usize) -> String {
    match i {
        0 => format!("ibdyn-ag{seq}-{rank}"),
        _ => format!("ibdyn-ag{seq}-{rank}-{i}"),
    }
}

/// Splits `text` into PMI-1 values of at most `vallen_max` bytes (less one, for the C
/// clients' terminating NUL); the first starts with the number of pieces and ':'.
fn chunk_value(text: &str, vallen_max: usize) -> Vec<String> {
    // Room for "<count>:" in the first piece; a value fits in at least 16 bytes.
    let room = vallen_max.saturating_sub(1).max(32) - 16;
    let count = text.len().div_ceil(room).max(1);
    let mut out: Vec<String> = text
        .as_bytes()
        .chunks(room)
        .map(|c| String::from_utf8_lossy(c).into_owned())
        .collect();
    if out.is_empty() {
        out.push(String::new());
    }
    out[0] = format!("{count}:{}", out[0]);
    out
}

/// The number of pieces and the text of a first piece.
fn first_chunk(value: &str) -> Result<(usize, String)> {
    let bad = || PmiError::invalid("allgather value", value, "does not start with <pieces>:");
    let (count, rest) = value.split_once(':').ok_or_else(bad)?;
    let count: usize = count.parse().map_err(|_| bad())?;
    // A bound against a corrupt count: pieces of at least 16 bytes of a 16 MiB line.
    if count == 0 || count > crate::wire::MAX_LINE / 16 {
        return Err(bad());
    }
    Ok((count, rest.to_string()))
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
        let chunks = chunk_value(&hex_encode(value), self.s.vallen_max);
        for (i, chunk) in chunks.iter().enumerate() {
            self.put(&chunk_key(seq, self.s.job.rank, i), chunk)?;
        }
        self.fence()?;
        let kvs = self.s.job.kvsname.clone();
        (0..self.s.job.size)
            .map(|r| {
                let first = self.s.get_from(&kvs, &chunk_key(seq, r, 0))?;
                let (count, mut hex) = first_chunk(&first)?;
                for i in 1..count {
                    hex.push_str(&self.s.get_from(&kvs, &chunk_key(seq, r, i))?);
                }
                hex_decode(&hex)
            })
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_cut_to_the_server_limit_and_join_again() {
        for (len, max) in [
            (0, 1024),
            (1, 1024),
            (1006, 1024),
            (1007, 1024),
            (5000, 64),
            (3, 2),
        ] {
            let text: String = (0..len).map(|i| (b'a' + (i % 26) as u8) as char).collect();
            let pieces = chunk_value(&text, max);
            assert!(pieces.iter().all(|p| p.len() < max.max(33)), "{len}/{max}");
            let (count, mut joined) = first_chunk(&pieces[0]).unwrap();
            assert_eq!(count, pieces.len());
            for p in &pieces[1..] {
                joined.push_str(p);
            }
            assert_eq!(joined, text);
        }
        assert!(first_chunk("abc").is_err());
        assert!(first_chunk("0:").is_err());
        assert!(first_chunk("99999999999:").is_err());
    }
}
