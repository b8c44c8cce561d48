//! No server: the process is rank 0 of 1 with an in-process key-value space and name
//! service. To spawn, it becomes rank 0 of a one-process job under a private daemon
//! (`promote`), which takes over what was put and published so far.

use crate::error::{PmiError, Result};
use crate::ibdyn::IbdynServer;
use crate::jobs::{JobStatus, SpawnReply};
use crate::server::{hostname, JobInfo, PmiCompletion, Server, ServerKind};
use crate::state::Directory;
use crate::wire::SpawnRequest;
use std::collections::HashMap;
use std::time::Duration;

/// The key-value space of this job in `dir`; other names are other jobs' spaces.
const OWN_KVS: &str = "singleton";

pub(crate) struct SingletonServer {
    job: JobInfo,
    dir: Box<Directory>,
    /// Results of non-blocking requests (all complete at once).
    done: HashMap<u64, Result<PmiCompletion>>,
    timeout: Duration,
    finalized: bool,
}

impl SingletonServer {
    pub fn new(timeout: Duration) -> SingletonServer {
        let pid = std::process::id();
        let mut job = JobInfo::new(0, 1);
        job.kvsname = format!("singleton_{pid}");
        job.job_id = pid;
        job.node_uid = format!("{}-singleton-{pid}", hostname());
        tracing::debug!("no PMI server in the environment: running as a singleton");
        SingletonServer {
            job,
            dir: Box::default(),
            done: HashMap::new(),
            timeout,
            finalized: false,
        }
    }
}

impl Server for SingletonServer {
    fn kind(&self) -> ServerKind {
        ServerKind::Singleton
    }
    fn job(&self) -> &JobInfo {
        &self.job
    }

    fn put(&mut self, key: &str, value: &str) -> Result<()> {
        self.dir.kvs(OWN_KVS).put(key, value);
        Ok(())
    }
    fn get_from(&mut self, kvsname: &str, key: &str) -> Result<String> {
        let kvs = if kvsname == self.job.kvsname {
            OWN_KVS
        } else {
            kvsname
        };
        self.dir
            .kvs(kvs)
            .get(key)
            .map(str::to_string)
            .ok_or_else(|| PmiError::KeyNotFound(key.into()))
    }
    /// Nothing else can put: a missing key never comes.
    fn get_wait_from(&mut self, kvsname: &str, key: &str, _timeout: Duration) -> Result<String> {
        self.get_from(kvsname, key)
            .map_err(|_| PmiError::KeyWaitTimeout {
                key: key.into(),
                secs: 0.0,
            })
    }

    fn fence(&mut self) -> Result<()> {
        Ok(())
    }
    fn allgather(&mut self, value: &[u8]) -> Result<Vec<Vec<u8>>> {
        Ok(vec![value.to_vec()])
    }
    fn ifence(&mut self, reqid: u64) -> Result<()> {
        self.done.insert(reqid, Ok(PmiCompletion::Fence));
        Ok(())
    }
    fn iallgather(&mut self, reqid: u64, value: &[u8]) -> Result<()> {
        let r = Ok(PmiCompletion::Allgather(vec![value.to_vec()]));
        self.done.insert(reqid, r);
        Ok(())
    }
    fn wait(&mut self, reqid: u64) -> Result<PmiCompletion> {
        self.done
            .remove(&reqid)
            .unwrap_or(Err(PmiError::UnknownRequest(reqid)))
    }
    fn test(&mut self, reqid: u64) -> Result<bool> {
        if self.done.contains_key(&reqid) {
            return Ok(true);
        }
        Err(PmiError::UnknownRequest(reqid))
    }

    fn publish_name(&mut self, service: &str, port: &str) -> Result<()> {
        self.dir
            .names
            .publish(service, port, None)
            .map_err(|e| PmiError::Server {
                cmd: "publish_name".into(),
                msg: e.to_string(),
            })
    }
    fn lookup_name(&mut self, service: &str) -> Result<String> {
        self.dir
            .names
            .lookup(service)
            .map(str::to_string)
            .map_err(|_| PmiError::ServiceNotFound(service.into()))
    }
    fn unpublish_name(&mut self, service: &str) -> Result<()> {
        self.dir
            .names
            .unpublish(service)
            .map_err(|_| PmiError::ServiceNotFound(service.into()))
    }

    /// The client promotes a singleton before it spawns; this one cannot.
    fn spawn(&mut self, _req: &SpawnRequest) -> Result<SpawnReply> {
        Err(PmiError::NotSupported(
            "spawn as a singleton without a private daemon".into(),
        ))
    }
    fn job_status(&mut self, job_id: u32) -> Result<JobStatus> {
        if job_id == self.job.job_id {
            return Ok(JobStatus {
                job_id,
                size: 1,
                exited: Vec::new(),
            });
        }
        Err(PmiError::NotSupported(
            "job_status of another job as a singleton".into(),
        ))
    }

    /// Starts the private daemon, connects to it as rank 0 of job `job_id`, and hands over
    /// every put, published name and completed request.
    fn promote(&mut self) -> Result<Option<Box<dyn Server>>> {
        let (launcher, served) = crate::private_launcher::start(self.job.job_id, self.timeout)?;
        let mut c = IbdynServer::connect(&served, self.timeout, false)?;
        let entries: Vec<(String, String)> = self
            .dir
            .kvs(OWN_KVS)
            .entries()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        for (k, v) in entries {
            c.put(&k, &v)?;
        }
        let names: Vec<(String, String)> = self
            .dir
            .names
            .entries()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        for (k, v) in names {
            c.publish_name(&k, &v)?;
        }
        c.adopt(launcher, std::mem::take(&mut self.done));
        Ok(Some(Box::new(c)))
    }

    fn abort(&mut self, code: i32, msg: &str) {
        eprintln!("rank {} aborts the job (code {code}): {msg}", self.job.rank);
    }
    fn finalize(&mut self) -> Result<()> {
        if self.finalized {
            return Err(PmiError::Finalized);
        }
        self.finalized = true;
        Ok(())
    }
}
