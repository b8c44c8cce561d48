//! The PMI client a process uses: under the ibdyn daemon (`IBDYN_PMI_SOCK`), under a PMI-1
//! launcher such as MPICH's hydra (`PMI_FD`), or alone (singleton: rank 0 of 1). It checks
//! arguments and numbers non-blocking requests; what differs between those three servers is
//! in their `Server` implementations.

use crate::env;
use crate::error::{PmiError, Result};
use crate::ibdyn::IbdynServer;
use crate::jobs::{JobStatus, SpawnReply};
use crate::pmi1::Pmi1Server;
use crate::server::{hostname, PmiCompletion, Served, Server, ServerKind};
use crate::singleton::SingletonServer;
use crate::wire::{self, hex_decode, hex_encode, SpawnRequest};
use std::os::fd::FromRawFd;
use std::os::unix::net::UnixStream;
use std::time::Duration;

/// Default bound of `get_wait`.
pub const DEFAULT_GET_WAIT: Duration = Duration::from_secs(30);
/// Default bound on any other wait for the server (`IBDYN_PMI_TIMEOUT` overrides it).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(300);

/// Handle of a non-blocking operation; complete it with `wait` (or poll with `test`).
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct PmiRequest {
    id: u64,
}

impl PmiRequest {
    pub fn id(&self) -> u64 {
        self.id
    }
}

pub struct PmiClient {
    server: Box<dyn Server>,
    next_reqid: u64,
    /// `job_status` requests so far (a liveness check's cost on the daemons).
    status_queries: u64,
}

fn env_u32(name: &str) -> Result<Option<u32>> {
    match std::env::var(name) {
        Err(_) => Ok(None),
        Ok(v) => v
            .trim()
            .parse()
            .map(Some)
            .map_err(|_| PmiError::Env(format!("{name}={v:?} is not a non-negative integer"))),
    }
}

/// The PMI connection a launcher handed this process in `PMI_FD`: an open socket, made
/// close-on-exec so that programs this process starts do not inherit it.
fn inherited_pmi_fd() -> Result<UnixStream> {
    let text = std::env::var(env::HYDRA_PMI_FD)
        .map_err(|_| PmiError::Env(format!("{} is not set", env::HYDRA_PMI_FD)))?;
    let fd: i32 = text
        .trim()
        .parse()
        .ok()
        .filter(|fd| *fd >= 0)
        .ok_or_else(|| PmiError::Env(format!("PMI_FD={text:?} is not a descriptor")))?;
    // SAFETY: fstat on an arbitrary integer only reports EBADF if it is not open; `st` is
    // valid for writes.
    let is_socket = unsafe {
        let mut st: libc::stat = std::mem::zeroed();
        libc::fstat(fd, &mut st) == 0 && st.st_mode & libc::S_IFMT == libc::S_IFSOCK
    };
    // The descriptor has one owner: a second client of this process must not wrap it too.
    static TAKEN: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    if is_socket && TAKEN.swap(true, std::sync::atomic::Ordering::SeqCst) {
        return Err(PmiError::Env(format!(
            "PMI_FD={fd} is already the connection of another PMI client of this process"
        )));
    }
    if !is_socket {
        return Err(PmiError::Env(format!(
            "PMI_FD={fd} is not an open socket (was this process started by a PMI-1 launcher?)"
        )));
    }
    // SAFETY: F_SETFD on a descriptor checked open above.
    unsafe { libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) };
    // SAFETY: the launcher handed this descriptor to us for PMI; nothing else in the
    // process owns it, and we checked above that it is an open socket.
    Ok(unsafe { UnixStream::from_raw_fd(fd) })
}

impl PmiClient {
    /// Connects to whatever launched this process (see the module comment).
    pub fn init() -> Result<PmiClient> {
        let mut c = Self::init_deferred()?;
        c.finish_startup()?;
        Ok(c)
    }

    /// Like `init`, but under an ibdyn daemon the start-up requests are only sent: their
    /// answers are read by `finish_startup` (or by the first call that waits for the
    /// server). Rank, size, job id and puts are usable at once; the key-value space name,
    /// process mapping, appnum and universe size are known after `finish_startup`. A spawned
    /// process greets its parent meanwhile.
    pub fn init_deferred() -> Result<PmiClient> {
        crate::prestart::await_assignment()?;
        let timeout = match std::env::var(env::PMI_TIMEOUT) {
            Ok(v) => Duration::from_secs_f64(
                v.parse::<f64>().ok().filter(|s| *s > 0.0).ok_or_else(|| {
                    PmiError::Env(format!(
                        "{}={v:?} is not a positive number",
                        env::PMI_TIMEOUT
                    ))
                })?,
            ),
            Err(_) => DEFAULT_TIMEOUT,
        };
        let server: Box<dyn Server> = if let Ok(path) = std::env::var(env::PMI_SOCK) {
            let rank = env_u32(env::RANK)?
                .ok_or_else(|| PmiError::Env(format!("{} is not set", env::RANK)))?;
            let size = env_u32(env::SIZE)?
                .ok_or_else(|| PmiError::Env(format!("{} is not set", env::SIZE)))?;
            let node_id = env_u32(env::NODE)?.unwrap_or(0);
            let served = Served {
                path,
                rank,
                size,
                job_id: env_u32(env::JOBID)?.unwrap_or(0),
                node_id,
                node_uid: std::env::var(env::NODE_UID)
                    .unwrap_or_else(|_| format!("{}-node{node_id}", hostname())),
            };
            // The daemon also hands each rank a connection (`PMI_FD`, for other MPIs'
            // clients): use it when it is there, else connect to the daemon's socket.
            match inherited_pmi_fd() {
                Ok(stream) => Box::new(IbdynServer::connect_on(stream, &served, timeout, true)?),
                Err(_) => Box::new(IbdynServer::connect(&served, timeout, true)?),
            }
        } else if std::env::var_os(env::HYDRA_PMI_FD).is_some() {
            let stream = inherited_pmi_fd()?;
            let rank = env_u32(env::HYDRA_PMI_RANK)?.unwrap_or(0);
            let size = env_u32(env::HYDRA_PMI_SIZE)?.unwrap_or(1);
            Box::new(Pmi1Server::connect(stream, rank, size, timeout)?)
        } else {
            Box::new(SingletonServer::new(timeout))
        };
        Ok(PmiClient {
            server,
            next_reqid: 1,
            status_queries: 0,
        })
    }

    /// Reads the answers of the start-up exchange if they are still owed (see
    /// `init_deferred`); at once otherwise.
    pub fn finish_startup(&mut self) -> Result<()> {
        self.server.finish_startup()
    }

    pub fn rank(&self) -> u32 {
        self.server.job().rank
    }
    pub fn size(&self) -> u32 {
        self.server.job().size
    }
    pub fn appnum(&self) -> i32 {
        self.server.job().appnum
    }
    pub fn kvsname(&self) -> &str {
        &self.server.job().kvsname
    }
    pub fn job_id(&self) -> u32 {
        self.server.job().job_id
    }
    /// Index of the node daemon (0 under hydra and as a singleton).
    pub fn node_id(&self) -> u32 {
        self.server.job().node_id
    }
    /// Unique per daemon instance: processes with equal values may use shared memory.
    pub fn node_uid(&self) -> &str {
        &self.server.job().node_uid
    }
    pub fn universe_size(&self) -> u32 {
        self.server.job().universe_size
    }
    pub fn server_kind(&self) -> ServerKind {
        self.server.kind()
    }
    /// Whether a put is visible to `get_wait` of other processes without a fence.
    pub fn puts_visible_without_fence(&self) -> bool {
        self.server.puts_visible_without_fence()
    }
    /// Node of `rank`, from `PMI_process_mapping` (0 for a rank out of range).
    pub fn node_of(&self, rank: u32) -> u32 {
        self.server
            .job()
            .nodes
            .get(rank as usize)
            .copied()
            .unwrap_or(0)
    }
    /// Ranks on this process's node, in order (this process included).
    pub fn local_ranks(&self) -> Vec<u32> {
        let me = self.node_of(self.rank());
        (0..self.size())
            .filter(|&r| self.node_of(r) == me)
            .collect()
    }

    // ---- key-value space -------------------------------------------------------------

    pub fn put(&mut self, key: &str, value: &str) -> Result<()> {
        wire::check_key("key", key)?;
        wire::check_value("value", value)?;
        self.server.put(key, value)
    }

    /// A put whose reply is read by the next call that waits for the server (a failure is
    /// reported there). Saves a round trip at start-up; a plain `put` on other servers.
    pub fn put_nowait(&mut self, key: &str, value: &str) -> Result<()> {
        wire::check_key("key", key)?;
        wire::check_value("value", value)?;
        self.server.put_nowait(key, value)
    }

    /// Puts arbitrary bytes (hex on the wire).
    pub fn put_bytes(&mut self, key: &str, value: &[u8]) -> Result<()> {
        self.put(key, &hex_encode(value))
    }

    pub fn get(&mut self, key: &str) -> Result<String> {
        let kvs = self.kvsname().to_string();
        self.get_from(&kvs, key)
    }

    /// A get in the key-value space `kvsname` (this job's or another's).
    pub fn get_from(&mut self, kvsname: &str, key: &str) -> Result<String> {
        wire::check_key("key", key)?;
        self.server.get_from(kvsname, key)
    }

    pub fn get_bytes(&mut self, key: &str) -> Result<Vec<u8>> {
        hex_decode(&self.get(key)?)
    }

    /// A get that waits (at most `timeout`) until some process of the job has put `key`;
    /// needs no fence under ibdyn. Under a plain PMI-1 server it is a get (fence first).
    pub fn get_wait(&mut self, key: &str, timeout: Duration) -> Result<String> {
        let kvs = self.kvsname().to_string();
        self.get_wait_from(&kvs, key, timeout)
    }

    /// `get_wait` in the key-value space of another job (`kvsname_of(job_id)`) of the same
    /// daemon set or DVM.
    pub fn get_wait_from(&mut self, kvsname: &str, key: &str, timeout: Duration) -> Result<String> {
        wire::check_key("key", key)?;
        wire::check_key("kvsname", kvsname)?;
        self.server.get_wait_from(kvsname, key, timeout)
    }

    pub fn get_wait_bytes_from(
        &mut self,
        kvsname: &str,
        key: &str,
        timeout: Duration,
    ) -> Result<Vec<u8>> {
        hex_decode(&self.get_wait_from(kvsname, key, timeout)?)
    }

    pub fn get_wait_bytes(&mut self, key: &str, timeout: Duration) -> Result<Vec<u8>> {
        hex_decode(&self.get_wait(key, timeout)?)
    }

    // ---- collectives -----------------------------------------------------------------

    /// PMI-1 barrier: every put before it is visible to every get after it.
    pub fn fence(&mut self) -> Result<()> {
        self.server.fence()
    }

    pub fn barrier(&mut self) -> Result<()> {
        self.fence()
    }

    /// One value per rank, returned in rank order.
    pub fn allgather(&mut self, value: &[u8]) -> Result<Vec<Vec<u8>>> {
        self.server.allgather(value)
    }

    fn new_request(&mut self) -> PmiRequest {
        let id = self.next_reqid;
        self.next_reqid += 1;
        PmiRequest { id }
    }

    /// Starts a fence the daemon progresses while the process works.
    pub fn ifence(&mut self) -> Result<PmiRequest> {
        let req = self.new_request();
        self.server.ifence(req.id)?;
        Ok(req)
    }

    /// Starts an allgather the daemon progresses while the process works.
    pub fn iallgather(&mut self, value: &[u8]) -> Result<PmiRequest> {
        let req = self.new_request();
        self.server.iallgather(req.id, value)?;
        Ok(req)
    }

    /// Completes a non-blocking operation.
    pub fn wait(&mut self, req: PmiRequest) -> Result<PmiCompletion> {
        self.server.finish_startup()?;
        if req.id >= self.next_reqid {
            return Err(PmiError::UnknownRequest(req.id));
        }
        self.server.wait(req.id)
    }

    /// Whether a non-blocking operation has completed (then `wait` returns at once).
    pub fn test(&mut self, req: &PmiRequest) -> Result<bool> {
        self.server.test(req.id)
    }

    // ---- name service ----------------------------------------------------------------

    pub fn publish_name(&mut self, service: &str, port: &str) -> Result<()> {
        wire::check_key("service name", service)?;
        wire::check_value("port name", port)?;
        self.server.publish_name(service, port)
    }

    pub fn lookup_name(&mut self, service: &str) -> Result<String> {
        wire::check_key("service name", service)?;
        self.server.lookup_name(service)
    }

    pub fn unpublish_name(&mut self, service: &str) -> Result<()> {
        wire::check_key("service name", service)?;
        self.server.unpublish_name(service)
    }

    // ---- process management ----------------------------------------------------------

    /// Whether this process belongs to a spawned job (`PMI_SPAWNED=1`).
    pub fn spawned(&self) -> bool {
        std::env::var(env::SPAWNED).is_ok_and(|v| v.trim() == "1")
    }

    /// The job that spawned this one (ibdyn only).
    pub fn parent_job_id(&self) -> Option<u32> {
        env_u32(env::PARENT_JOBID).ok().flatten()
    }

    /// Starts the processes of `req` as one new job (PMI-1 `mcmd=spawn`; several commands =
    /// spawn_multiple, ranks numbered across commands in order, `appnum` = command index).
    /// Returns once every child has been exec'd or failed to; when some could not start,
    /// the started ones are killed and the error carries every child's fate. A singleton
    /// first starts a private daemon (`ibdyn`, from `IBDYN_BIN`, beside this executable or
    /// on PATH) and becomes rank 0 of a one-process job under it.
    pub fn spawn(&mut self, req: &SpawnRequest) -> Result<SpawnReply> {
        if req.commands.is_empty() {
            return Err(PmiError::invalid("spawn request", "", "has no command"));
        }
        if req.commands.iter().any(|c| c.nprocs == 0) {
            return Err(PmiError::invalid(
                "spawn request",
                "",
                "a command has nprocs 0",
            ));
        }
        self.serve_singleton()?;
        self.server.spawn(req)
    }

    /// Ranks of job `job_id` (this job or another of the daemon set) that have ended.
    pub fn job_status(&mut self, job_id: u32) -> Result<JobStatus> {
        self.status_queries += 1;
        self.server.job_status(job_id)
    }

    /// How many `job_status` requests this client has made.
    pub fn job_status_queries(&self) -> u64 {
        self.status_queries
    }

    /// A request to the daemons' process-set registry: its answer, or the registry's
    /// refusal as `Err(text)` inside. A singleton first starts a private daemon (as for
    /// `spawn`).
    pub fn pset(
        &mut self,
        req: &crate::pset_ops::PsetRequest,
    ) -> Result<std::result::Result<crate::pset_ops::PsetReply, String>> {
        self.serve_singleton()?;
        self.server.pset(req)
    }

    /// A singleton becomes rank 0 of a one-process job under a private daemon now (spawn
    /// does it on first use). Afterwards `kvsname()` and `node_uid()` are the daemon's;
    /// call it before publishing anything that depends on them. No-op when served.
    pub fn serve_singleton(&mut self) -> Result<()> {
        if let Some(served) = self.server.promote()? {
            self.server = served;
        }
        Ok(())
    }

    /// Asks the launcher to end the whole job with `code`; never returns.
    pub fn abort(&mut self, code: i32, msg: &str) -> ! {
        self.server.abort(code, msg);
        std::process::exit(code)
    }

    /// Ends the conversation with the server.
    pub fn finalize(&mut self) -> Result<()> {
        self.server.finalize()
    }
}
