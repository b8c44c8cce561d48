//! An ibdyn node daemon as the server: PMI-1 plus ibdyn's extensions, all native (get_wait,
//! allgather, ifence/iallgather, job status, puts answered later, a pipelined start-up).

use crate::conn::LineConn;
use crate::env;
use crate::error::{PmiError, Result};
use crate::jobs::{JobStatus, SpawnReply};
use crate::private_launcher::PrivateLauncher;
use crate::server::{JobInfo, PmiCompletion, Served, Server, ServerKind};
use crate::session::Session;
use crate::wire::{self, hex_decode, hex_encode, Command, SpawnRequest};
use std::collections::HashMap;
use std::os::unix::net::UnixStream;
use std::time::Duration;

pub(crate) struct IbdynServer {
    s: Session,
    /// A singleton that spawned: the private launcher, alive while we hold its stdin.
    private_launcher: Option<PrivateLauncher>,
}

/// The pre-put values the daemon passed in the environment, in the order of `keys`.
fn preput_from_env(keys: &[String]) -> Option<Vec<String>> {
    let text = std::env::var(env::PREPUT_VALUES).ok()?;
    let values: Vec<String> = text
        .split(',')
        .map(|v| hex_decode(v).ok().and_then(|b| String::from_utf8(b).ok()))
        .collect::<Option<_>>()?;
    (values.len() == keys.len()).then_some(values)
}

impl IbdynServer {
    /// Connects to the daemon as `served.rank` of job `served.job_id` and sends the start-up
    /// exchange; with `defer` its answers are read by `finish_startup` (or by the first call
    /// that waits for the server).
    pub fn connect(served: &Served, timeout: Duration, defer: bool) -> Result<IbdynServer> {
        let stream = UnixStream::connect(&served.path).map_err(|source| PmiError::Connect {
            path: served.path.clone(),
            source,
        })?;
        Self::connect_on(stream, served, timeout, defer)
    }

    /// Like `connect`, on a connection the daemon made for this process (its `PMI_FD`).
    pub fn connect_on(
        stream: UnixStream,
        served: &Served,
        timeout: Duration,
        defer: bool,
    ) -> Result<IbdynServer> {
        let mut job = JobInfo::new(served.rank, served.size);
        job.job_id = served.job_id;
        job.node_id = served.node_id;
        job.node_uid = served.node_uid.clone();
        let mut s = Session::new(LineConn::new(stream), ServerKind::Ibdyn, job, timeout);
        let preput_keys: Vec<String> = std::env::var(env::PREPUT_KEYS)
            .map(|k| {
                k.split(',')
                    .filter(|k| wire::check_key("key", k).is_ok())
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default();
        // The daemon may hand the pre-put values over in the environment: no need to ask.
        let fetch = match preput_from_env(&preput_keys) {
            Some(values) => {
                s.preput = preput_keys.into_iter().zip(values).collect();
                Vec::new()
            }
            None => preput_keys,
        };
        s.start_handshake(
            &format!(
                "cmd=init pmi_version=1 pmi_subversion=1 ibdyn_rank={} ibdyn_jobid={}\n",
                served.rank, served.job_id
            ),
            fetch,
            true,
        )?;
        if !defer {
            s.finish_startup()?;
        }
        Ok(IbdynServer {
            s,
            private_launcher: None,
        })
    }

    /// Takes over a singleton's private launcher (kept alive as long as this server) and the
    /// completions of the requests it started.
    pub fn adopt(&mut self, launcher: PrivateLauncher, done: HashMap<u64, Result<PmiCompletion>>) {
        self.private_launcher = Some(launcher);
        self.s.adopt_completions(done);
    }
}

impl Server for IbdynServer {
    fn kind(&self) -> ServerKind {
        ServerKind::Ibdyn
    }
    fn job(&self) -> &JobInfo {
        &self.s.job
    }
    fn finish_startup(&mut self) -> Result<()> {
        self.s.finish_startup()
    }

    fn put(&mut self, key: &str, value: &str) -> Result<()> {
        self.s.put(key, value)
    }
    /// Saves a round trip at start-up.
    fn put_nowait(&mut self, key: &str, value: &str) -> Result<()> {
        self.s.put_nowait(key, value)
    }
    fn get_from(&mut self, kvsname: &str, key: &str) -> Result<String> {
        self.s.get_from(kvsname, key)
    }
    fn get_wait_from(&mut self, kvsname: &str, key: &str, timeout: Duration) -> Result<String> {
        let ms = timeout.as_millis().min(u64::MAX as u128) as u64;
        let line = Command::new("ibdyn_get_wait")
            .arg("kvsname", kvsname)
            .arg("key", key)
            .arg("timeout_ms", ms)
            .to_line();
        let r = self.s.exchange(
            &line,
            "get_result",
            "get_wait",
            timeout + Duration::from_secs(10),
        )?;
        if r.rc() != 0 {
            // The daemon answers a wait before its bound only when the key's job has ended.
            if !r.get("msg").unwrap_or("").starts_with("timed_out") {
                return Err(PmiError::Server {
                    cmd: "get_wait".into(),
                    msg: format!(
                        "key {key:?} of {kvsname} was not put, and every process of its job has ended"
                    ),
                });
            }
            return Err(PmiError::KeyWaitTimeout {
                key: key.into(),
                secs: timeout.as_secs_f64(),
            });
        }
        Ok(r.get("value").unwrap_or("").to_string())
    }

    fn fence(&mut self) -> Result<()> {
        self.s.fence()
    }
    fn allgather(&mut self, value: &[u8]) -> Result<Vec<Vec<u8>>> {
        let r = self.s.request(
            Command::new("ibdyn_allgather").arg("value", hex_encode(value)),
            "ibdyn_allgather_result",
        )?;
        self.s.ok_or_server(&r, "allgather")?;
        wire::decode_array(r.get("values").unwrap_or(""), self.s.job.size as usize)
    }
    fn ifence(&mut self, reqid: u64) -> Result<()> {
        let line = Command::new("ibdyn_ifence").arg("reqid", reqid).to_line();
        self.s.send(&line, "ifence")
    }
    fn iallgather(&mut self, reqid: u64, value: &[u8]) -> Result<()> {
        let line = Command::new("ibdyn_iallgather")
            .arg("reqid", reqid)
            .arg("value", hex_encode(value))
            .to_line();
        self.s.send(&line, "iallgather")
    }
    crate::session::forward_to_session!();

    fn job_status(&mut self, job_id: u32) -> Result<JobStatus> {
        let r = self.s.request(
            Command::new("ibdyn_job_status").arg("jobid", job_id),
            "job_status_result",
        )?;
        self.s.ok_or_server(&r, "job_status")?;
        Ok(JobStatus {
            job_id,
            size: r.num("size")?,
            exited: crate::jobs::decode_exits(r.get("exited").unwrap_or(""))?,
        })
    }

    fn pset(
        &mut self,
        req: &crate::pset_ops::PsetRequest,
    ) -> Result<std::result::Result<crate::pset_ops::PsetReply, String>> {
        let r = self.s.request(req.encode(), crate::pset_ops::REPLY)?;
        crate::pset_ops::decode_reply(&r)
    }

    fn abort(&mut self, code: i32, msg: &str) {
        let cmd = Command::new("abort")
            .arg("exitcode", code)
            .arg("msg", wire::msg_token(msg));
        self.s.abort(cmd);
    }
    fn finalize(&mut self) -> Result<()> {
        self.s.finalize()?;
        if let Some(pl) = &mut self.private_launcher {
            pl.finalized();
        }
        Ok(())
    }
}
