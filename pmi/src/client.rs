//! The PMI client a process uses: under the ibdyn daemon (`IBDYN_PMI_SOCK`), under a PMI-1
//! launcher such as MPICH's hydra (`PMI_FD`), or alone (singleton: rank 0 of 1).

use crate::conn::LineConn;
use crate::env;
use crate::error::{PmiError, Result};
use crate::jobs::{self, ChildStart, JobStatus, SpawnReply};
use crate::mapping::{ProcessMapping, PROCESS_MAPPING_KEY};
use crate::state::Directory;
use crate::wire::{self, hex_decode, hex_encode, msg_text, Command, SpawnRequest};
use std::collections::HashMap;
use std::os::fd::FromRawFd;
use std::os::unix::net::UnixStream;
use std::time::{Duration, Instant};

/// Default bound of `get_wait`.
pub const DEFAULT_GET_WAIT: Duration = Duration::from_secs(30);
/// Default bound on any other wait for the server (`IBDYN_PMI_TIMEOUT` overrides it).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(300);

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

/// Result of a completed non-blocking operation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PmiCompletion {
    Fence,
    /// One value per rank, in rank order.
    Allgather(Vec<Vec<u8>>),
}

enum Server {
    Conn(LineConn),
    Singleton(Box<Directory>),
}

pub struct PmiClient {
    server: Server,
    kind: ServerKind,
    rank: u32,
    size: u32,
    appnum: i32,
    kvsname: String,
    job_id: u32,
    node_id: u32,
    node_uid: String,
    universe_size: u32,
    nodes: Vec<u32>,
    vallen_max: usize,
    timeout: Duration,
    next_reqid: u64,
    done: HashMap<u64, Result<PmiCompletion>>,
    /// Replies still owed for requests sent without waiting (`put_nowait`), oldest first.
    owed: std::collections::VecDeque<&'static str>,
    /// The failure of such a request, reported by the next call that waits for the server.
    owed_error: Option<PmiError>,
    /// Values of this job's pre-put keys, fetched at start-up (they never change).
    preput: HashMap<String, String>,
    fallback_seq: u64,
    finalized: bool,
    /// A singleton that spawned: the private launcher, alive while we hold its stdin.
    private_launcher: Option<crate::singleton::PrivateLauncher>,
    /// The start-up exchange, sent but not yet answered (see `init_deferred`).
    startup: Option<PendingStartup>,
    /// A put went out under the guessed key-value space name before the start-up answers.
    early_put: bool,
}

/// The pipelined start-up requests whose replies are still to be read, in order.
struct PendingStartup {
    /// (reply name, request name) of each request.
    steps: Vec<(&'static str, &'static str)>,
    /// Pre-put keys asked for after the process mapping.
    fetched: Vec<String>,
    kvs_guess: String,
    started: Instant,
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

fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .ok()
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "localhost".into())
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

/// FNV-1a: a stable 32-bit id from a kvsname when the launcher gives no job id.
fn fnv32(s: &str) -> u32 {
    s.bytes().fold(0x811c9dc5u32, |h, b| {
        (h ^ b as u32).wrapping_mul(0x01000193)
    })
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
        if let Ok(path) = std::env::var(env::PMI_SOCK) {
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
            return PmiClient::connect_ibdyn(&served, timeout, true);
        }
        if let Ok(fdtext) = std::env::var(env::HYDRA_PMI_FD) {
            let fd: i32 = fdtext
                .trim()
                .parse()
                .map_err(|_| PmiError::Env(format!("PMI_FD={fdtext:?} is not a descriptor")))?;
            let rank = env_u32(env::HYDRA_PMI_RANK)?.unwrap_or(0);
            let size = env_u32(env::HYDRA_PMI_SIZE)?.unwrap_or(1);
            // SAFETY: fcntl on an arbitrary integer only reports EBADF if it is not open.
            if unsafe { libc::fcntl(fd, libc::F_GETFD) } < 0 {
                return Err(PmiError::Env(format!(
                    "PMI_FD={fd} is not an open descriptor"
                )));
            }
            // SAFETY: the launcher handed this descriptor to us for PMI; nothing else in the
            // process owns it, and we checked above that it is open.
            let stream = unsafe { UnixStream::from_raw_fd(fd) };
            let mut c = PmiClient::blank(
                Server::Conn(LineConn::new(stream)),
                ServerKind::Pmi1,
                rank,
                size,
                timeout,
            );
            c.start_handshake("cmd=init pmi_version=1 pmi_subversion=1\n", Vec::new())?;
            c.job_id = fnv32(&c.kvsname);
            c.node_id = c.nodes.get(rank as usize).copied().unwrap_or(0);
            c.node_uid = hostname();
            return Ok(c);
        }
        let mut c = PmiClient::blank(
            Server::Singleton(Box::default()),
            ServerKind::Singleton,
            0,
            1,
            timeout,
        );
        c.kvsname = format!("singleton_{}", std::process::id());
        c.job_id = std::process::id();
        c.node_uid = format!("{}-singleton-{}", hostname(), std::process::id());
        c.nodes = vec![0];
        tracing::debug!("no PMI server in the environment: running as a singleton");
        Ok(c)
    }

    /// Connects to an ibdyn node daemon as `served.rank` of job `served.job_id`.
    pub(crate) fn connect_ibdyn(
        served: &Served,
        timeout: Duration,
        defer: bool,
    ) -> Result<PmiClient> {
        let stream = UnixStream::connect(&served.path).map_err(|source| PmiError::Connect {
            path: served.path.clone(),
            source,
        })?;
        let mut c = PmiClient::blank(
            Server::Conn(LineConn::new(stream)),
            ServerKind::Ibdyn,
            served.rank,
            served.size,
            timeout,
        );
        c.job_id = served.job_id;
        c.node_id = served.node_id;
        c.node_uid = served.node_uid.clone();
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
                c.preput = preput_keys.into_iter().zip(values).collect();
                Vec::new()
            }
            None => preput_keys,
        };
        c.start_handshake(
            &format!(
                "cmd=init pmi_version=1 pmi_subversion=1 ibdyn_rank={} ibdyn_jobid={}\n",
                served.rank, served.job_id
            ),
            fetch,
        )?;
        if !defer {
            c.finish_startup()?;
        }
        Ok(c)
    }

    fn blank(
        server: Server,
        kind: ServerKind,
        rank: u32,
        size: u32,
        timeout: Duration,
    ) -> PmiClient {
        PmiClient {
            server,
            kind,
            rank,
            size,
            appnum: 0,
            kvsname: String::new(),
            job_id: 0,
            node_id: 0,
            node_uid: String::new(),
            universe_size: size,
            nodes: vec![0; size as usize],
            vallen_max: 1024,
            timeout,
            next_reqid: 1,
            done: HashMap::new(),
            owed: Default::default(),
            owed_error: None,
            preput: HashMap::new(),
            fallback_seq: 0,
            finalized: false,
            private_launcher: None,
            startup: None,
            early_put: false,
        }
    }

    /// Sends the start-up exchange; `preput_keys` (ours only) are fetched with it. Our own
    /// server answers in order, so the whole conversation goes in one write and costs one
    /// round trip, whose answers `finish_startup` reads; a foreign PMI-1 server gets one
    /// request at a time, answered here.
    fn start_handshake(&mut self, init_line: &str, preput_keys: Vec<String>) -> Result<()> {
        let pipelined = self.kind == ServerKind::Ibdyn;
        let kvs_guess = crate::jobs::kvsname_of(self.job_id);
        let mut steps: Vec<(String, &'static str, &'static str)> = vec![
            (init_line.to_string(), "response_to_init", "init"),
            (Command::new("get_maxes").to_line(), "maxes", "get_maxes"),
            (
                Command::new("get_my_kvsname").to_line(),
                "my_kvsname",
                "get_my_kvsname",
            ),
            (Command::new("get_appnum").to_line(), "appnum", "get_appnum"),
            (
                Command::new("get_universe_size").to_line(),
                "universe_size",
                "get_universe_size",
            ),
        ];
        if !pipelined {
            let timeout = self.timeout;
            let replies = steps
                .iter()
                .map(|(line, reply, what)| self.exchange(line, reply, what, timeout))
                .collect::<Result<Vec<_>>>()?;
            return self.apply_startup(&replies, &[], &kvs_guess);
        }
        for key in
            std::iter::once(PROCESS_MAPPING_KEY).chain(preput_keys.iter().map(String::as_str))
        {
            let line = Command::new("get")
                .arg("kvsname", &kvs_guess)
                .arg("key", key)
                .to_line();
            steps.push((line, "get_result", "get"));
        }
        let text: String = steps.iter().map(|(l, _, _)| l.as_str()).collect();
        self.conn()?.send(&text, "init")?;
        // Until the answers come, the key-value space is the one our server names after the job.
        self.kvsname = kvs_guess.clone();
        self.startup = Some(PendingStartup {
            steps: steps
                .iter()
                .map(|(_, reply, what)| (*reply, *what))
                .collect(),
            fetched: preput_keys,
            kvs_guess,
            started: Instant::now(),
        });
        Ok(())
    }

    /// Reads the answers of the start-up exchange if they are still owed (see
    /// `init_deferred`); at once otherwise.
    pub fn finish_startup(&mut self) -> Result<()> {
        let Some(p) = self.startup.take() else {
            return Ok(());
        };
        let deadline = p.started + self.timeout;
        let mut replies = Vec::with_capacity(p.steps.len());
        for (reply, what) in &p.steps {
            // Straight off the connection: these answers precede those of any later request.
            let r = self.conn()?.recv(deadline, what, p.started)?;
            if r.name != *reply {
                return Err(PmiError::Server {
                    cmd: (*what).into(),
                    msg: msg_text(r.get("msg").unwrap_or(&r.name)),
                });
            }
            replies.push(r);
        }
        self.apply_startup(&replies, &p.fetched, &p.kvs_guess)
    }

    fn apply_startup(
        &mut self,
        replies: &[Command],
        preput_keys: &[String],
        kvs_guess: &str,
    ) -> Result<()> {
        let [init, maxes, kvs, appnum, us, rest @ ..] = replies else {
            return Err(PmiError::Malformed {
                line: String::new(),
                why: "start-up replies missing".into(),
            });
        };
        if init.rc() != 0 {
            return Err(PmiError::Server {
                cmd: "init".into(),
                msg: format!("rc={}", init.rc()),
            });
        }
        self.vallen_max = maxes
            .get("vallen_max")
            .and_then(|v| v.parse().ok())
            .unwrap_or(1024);
        self.kvsname = kvs.require("kvsname")?.to_string();
        if self.early_put && self.kvsname != kvs_guess {
            return Err(PmiError::Malformed {
                line: kvs.to_line(),
                why: format!("the server's key-value space is not {kvs_guess}, where puts went"),
            });
        }
        self.appnum = appnum.num("appnum")?;
        let us: i64 = us.num("size")?;
        self.universe_size = if us > 0 { us as u32 } else { self.size };
        if self.kvsname == kvs_guess {
            for (key, r) in preput_keys.iter().zip(rest.iter().skip(1)) {
                if r.rc() == 0 {
                    let value = r.get("value").unwrap_or("").to_string();
                    self.preput.insert(key.clone(), value);
                }
            }
        }
        let mapping = match rest.first() {
            Some(r) if self.kvsname == kvs_guess && r.rc() == 0 => {
                Ok(r.get("value").unwrap_or("").to_string())
            }
            _ => self.get(PROCESS_MAPPING_KEY),
        };
        match mapping {
            Ok(text) => self.nodes = ProcessMapping::parse(&text)?.nodes(self.size),
            Err(e) => tracing::debug!("no {PROCESS_MAPPING_KEY} ({e}): every rank on node 0"),
        }
        tracing::debug!(rank = self.rank, size = self.size, kvsname = %self.kvsname, kind = ?self.kind, "PMI initialised");
        Ok(())
    }

    pub fn rank(&self) -> u32 {
        self.rank
    }
    pub fn size(&self) -> u32 {
        self.size
    }
    pub fn appnum(&self) -> i32 {
        self.appnum
    }
    pub fn kvsname(&self) -> &str {
        &self.kvsname
    }
    pub fn job_id(&self) -> u32 {
        self.job_id
    }
    /// Index of the node daemon (0 under hydra and as a singleton).
    pub fn node_id(&self) -> u32 {
        self.node_id
    }
    /// Unique per daemon instance: processes with equal values may use shared memory.
    pub fn node_uid(&self) -> &str {
        &self.node_uid
    }
    pub fn universe_size(&self) -> u32 {
        self.universe_size
    }
    pub fn server_kind(&self) -> ServerKind {
        self.kind
    }
    /// Whether a put is visible to `get_wait` of other processes without a fence.
    pub fn puts_visible_without_fence(&self) -> bool {
        self.kind != ServerKind::Pmi1
    }
    /// Node of `rank`, from `PMI_process_mapping` (0 for a rank out of range).
    pub fn node_of(&self, rank: u32) -> u32 {
        self.nodes.get(rank as usize).copied().unwrap_or(0)
    }
    /// Ranks on this process's node, in order (this process included).
    pub fn local_ranks(&self) -> Vec<u32> {
        let me = self.node_of(self.rank);
        (0..self.size).filter(|&r| self.node_of(r) == me).collect()
    }

    // ---- plumbing --------------------------------------------------------------------

    fn conn(&mut self) -> Result<&mut LineConn> {
        if self.finalized {
            return Err(PmiError::Finalized);
        }
        match &mut self.server {
            Server::Conn(c) => Ok(c),
            Server::Singleton(_) => Err(PmiError::NotSupported(
                "a server round trip as a singleton".into(),
            )),
        }
    }

    /// Files a completion line of a non-blocking request.
    fn absorb(&mut self, line: Command) -> Result<()> {
        let id: u64 = line.num("reqid")?;
        let result = if line.rc() != 0 {
            Err(PmiError::Server {
                cmd: line.name.clone(),
                msg: msg_text(line.get("msg").unwrap_or("failed")),
            })
        } else if line.name == "ibdyn_iallgather_result" {
            wire::decode_array(line.get("values").unwrap_or(""), self.size as usize)
                .map(PmiCompletion::Allgather)
        } else {
            Ok(PmiCompletion::Fence)
        };
        self.done.insert(id, result);
        Ok(())
    }

    fn request_line(&mut self, line: &str, reply: &str, what: &str) -> Result<Command> {
        let timeout = self.timeout;
        self.exchange(line, reply, what, timeout)
    }

    fn request(&mut self, cmd: Command, reply: &str) -> Result<Command> {
        let what = cmd.name.clone();
        self.request_line(&cmd.to_line(), reply, &what)
    }

    /// Sends one request and returns its reply, filing completions that arrive meanwhile.
    fn exchange(
        &mut self,
        line: &str,
        reply: &str,
        what: &str,
        timeout: Duration,
    ) -> Result<Command> {
        self.conn()?.send(line, what)?;
        let started = Instant::now();
        self.await_reply(reply, what, started + timeout, started)
    }

    fn await_reply(
        &mut self,
        reply: &str,
        what: &str,
        deadline: Instant,
        started: Instant,
    ) -> Result<Command> {
        self.finish_startup()?;
        loop {
            let r = self.conn()?.recv(deadline, what, started)?;
            let Some(r) = self.file_line(r)? else {
                continue;
            };
            if let Some(e) = self.owed_error.take() {
                return Err(e);
            }
            if r.name == reply {
                return Ok(r);
            }
            let msg = msg_text(r.get("msg").unwrap_or(&r.name));
            return Err(PmiError::Server {
                cmd: what.into(),
                msg,
            });
        }
    }

    /// Files a line that is not the reply being waited for: a completion of a non-blocking
    /// request, or the owed reply of a request sent without waiting. Returns any other line.
    fn file_line(&mut self, line: Command) -> Result<Option<Command>> {
        if line.get("reqid").is_some() {
            self.absorb(line)?;
            return Ok(None);
        }
        let Some(owed) = self.owed.pop_front() else {
            return Ok(Some(line));
        };
        if line.name != owed || line.rc() != 0 {
            let msg = msg_text(line.get("msg").unwrap_or(&line.name));
            self.owed_error.get_or_insert(PmiError::Server {
                cmd: owed.trim_end_matches("_result").into(),
                msg,
            });
        }
        Ok(None)
    }

    fn ok_or_server(&self, r: &Command, what: &str) -> Result<()> {
        if r.rc() != 0 {
            return Err(PmiError::Server {
                cmd: what.into(),
                msg: msg_text(r.get("msg").unwrap_or("failed")),
            });
        }
        Ok(())
    }

    // ---- key-value space -------------------------------------------------------------

    pub fn put(&mut self, key: &str, value: &str) -> Result<()> {
        wire::check_key("key", key)?;
        wire::check_value("value", value)?;
        if self.kind == ServerKind::Pmi1 && value.len() > self.vallen_max {
            return Err(PmiError::invalid(
                "value",
                key,
                &format!("longer than the server's {} bytes", self.vallen_max),
            ));
        }
        if let Server::Singleton(dir) = &mut self.server {
            dir.kvs("singleton").put(key, value);
            return Ok(());
        }
        self.early_put |= self.startup.is_some();
        let cmd = Command::new("put")
            .arg("kvsname", &self.kvsname)
            .arg("key", key)
            .arg("value", value);
        let r = self.request(cmd, "put_result")?;
        self.ok_or_server(&r, "put")
    }

    /// A put whose reply is read by the next call that waits for the server (a failure is
    /// reported there). Saves a round trip at start-up; a plain `put` on other servers.
    pub fn put_nowait(&mut self, key: &str, value: &str) -> Result<()> {
        if self.kind != ServerKind::Ibdyn {
            return self.put(key, value);
        }
        wire::check_key("key", key)?;
        wire::check_value("value", value)?;
        self.early_put |= self.startup.is_some();
        let line = Command::new("put")
            .arg("kvsname", &self.kvsname)
            .arg("key", key)
            .arg("value", value)
            .to_line();
        self.conn()?.send(&line, "put")?;
        self.owed.push_back("put_result");
        Ok(())
    }

    /// Puts arbitrary bytes (hex on the wire).
    pub fn put_bytes(&mut self, key: &str, value: &[u8]) -> Result<()> {
        self.put(key, &hex_encode(value))
    }

    pub fn get(&mut self, key: &str) -> Result<String> {
        let kvs = self.kvsname.clone();
        self.get_from(&kvs, key)
    }

    /// A get in the key-value space `kvsname` (this job's or another's).
    pub fn get_from(&mut self, kvsname: &str, key: &str) -> Result<String> {
        wire::check_key("key", key)?;
        if let Server::Singleton(dir) = &mut self.server {
            let kvs = if kvsname == self.kvsname {
                "singleton"
            } else {
                kvsname
            };
            return dir
                .kvs(kvs)
                .get(key)
                .map(str::to_string)
                .ok_or_else(|| PmiError::KeyNotFound(key.into()));
        }
        if kvsname == self.kvsname {
            if let Some(v) = self.preput.get(key) {
                return Ok(v.clone());
            }
        }
        let cmd = Command::new("get").arg("kvsname", kvsname).arg("key", key);
        let r = self.request(cmd, "get_result")?;
        if r.rc() != 0 {
            return Err(PmiError::KeyNotFound(key.into()));
        }
        Ok(r.get("value").unwrap_or("").to_string())
    }

    pub fn get_bytes(&mut self, key: &str) -> Result<Vec<u8>> {
        hex_decode(&self.get(key)?)
    }

    /// A get that waits (at most `timeout`) until some process of the job has put `key`;
    /// needs no fence under ibdyn. Under a plain PMI-1 server it is a get (fence first).
    pub fn get_wait(&mut self, key: &str, timeout: Duration) -> Result<String> {
        let kvs = self.kvsname.clone();
        self.get_wait_from(&kvs, key, timeout)
    }

    /// `get_wait` in the key-value space of another job (`kvsname_of(job_id)`) of the same
    /// daemon set or DVM.
    pub fn get_wait_from(&mut self, kvsname: &str, key: &str, timeout: Duration) -> Result<String> {
        wire::check_key("key", key)?;
        wire::check_key("kvsname", kvsname)?;
        match self.kind {
            ServerKind::Ibdyn => {}
            ServerKind::Pmi1 => {
                tracing::debug!(
                    key,
                    "PMI-1 server: get_wait falls back to get (visible after a fence)"
                );
                return self.get_from(kvsname, key);
            }
            ServerKind::Singleton => {
                return self
                    .get_from(kvsname, key)
                    .map_err(|_| PmiError::KeyWaitTimeout {
                        key: key.into(),
                        secs: 0.0,
                    })
            }
        }
        let ms = timeout.as_millis().min(u64::MAX as u128) as u64;
        let line = Command::new("ibdyn_get_wait")
            .arg("kvsname", kvsname)
            .arg("key", key)
            .arg("timeout_ms", ms)
            .to_line();
        let r = self.exchange(
            &line,
            "get_result",
            "get_wait",
            timeout + Duration::from_secs(10),
        )?;
        if r.rc() != 0 {
            return Err(PmiError::KeyWaitTimeout {
                key: key.into(),
                secs: timeout.as_secs_f64(),
            });
        }
        Ok(r.get("value").unwrap_or("").to_string())
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
        if matches!(self.server, Server::Singleton(_)) {
            return Ok(());
        }
        let r = self.request(Command::new("barrier_in"), "barrier_out")?;
        self.ok_or_server(&r, "fence")
    }

    pub fn barrier(&mut self) -> Result<()> {
        self.fence()
    }

    /// One value per rank, returned in rank order.
    pub fn allgather(&mut self, value: &[u8]) -> Result<Vec<Vec<u8>>> {
        match self.kind {
            ServerKind::Singleton => Ok(vec![value.to_vec()]),
            ServerKind::Pmi1 => self.allgather_fallback(value),
            ServerKind::Ibdyn => {
                let r = self.request(
                    Command::new("ibdyn_allgather").arg("value", hex_encode(value)),
                    "ibdyn_allgather_result",
                )?;
                self.ok_or_server(&r, "allgather")?;
                wire::decode_array(r.get("values").unwrap_or(""), self.size as usize)
            }
        }
    }

    fn allgather_fallback(&mut self, value: &[u8]) -> Result<Vec<Vec<u8>>> {
        tracing::debug!("PMI-1 server: allgather falls back to put + barrier + gets");
        let seq = self.fallback_seq;
        self.fallback_seq += 1;
        self.put_bytes(&format!("ibdyn-ag{seq}-{}", self.rank), value)?;
        self.fence()?;
        (0..self.size)
            .map(|r| self.get_bytes(&format!("ibdyn-ag{seq}-{r}")))
            .collect()
    }

    fn new_request(&mut self) -> PmiRequest {
        let id = self.next_reqid;
        self.next_reqid += 1;
        PmiRequest { id }
    }

    /// Starts a fence the daemon progresses while the process works.
    pub fn ifence(&mut self) -> Result<PmiRequest> {
        let req = self.new_request();
        if self.kind == ServerKind::Ibdyn {
            let line = Command::new("ibdyn_ifence").arg("reqid", req.id).to_line();
            self.conn()?.send(&line, "ifence")?;
        } else {
            if self.kind == ServerKind::Pmi1 {
                tracing::debug!("PMI-1 server: ifence falls back to a blocking barrier");
            }
            let r = self.fence().map(|_| PmiCompletion::Fence);
            self.done.insert(req.id, r);
        }
        Ok(req)
    }

    /// Starts an allgather the daemon progresses while the process works.
    pub fn iallgather(&mut self, value: &[u8]) -> Result<PmiRequest> {
        let req = self.new_request();
        if self.kind == ServerKind::Ibdyn {
            let line = Command::new("ibdyn_iallgather")
                .arg("reqid", req.id)
                .arg("value", hex_encode(value))
                .to_line();
            self.conn()?.send(&line, "iallgather")?;
        } else {
            if self.kind == ServerKind::Pmi1 {
                tracing::debug!("PMI-1 server: iallgather falls back to a blocking allgather");
            }
            let r = self.allgather(value).map(PmiCompletion::Allgather);
            self.done.insert(req.id, r);
        }
        Ok(req)
    }

    /// Completes a non-blocking operation.
    pub fn wait(&mut self, req: PmiRequest) -> Result<PmiCompletion> {
        self.finish_startup()?;
        let started = Instant::now();
        let deadline = started + self.timeout;
        loop {
            if let Some(r) = self.done.remove(&req.id) {
                return r;
            }
            if req.id >= self.next_reqid {
                return Err(PmiError::UnknownRequest(req.id));
            }
            let line = self.conn()?.recv(deadline, "wait", started)?;
            if let Some(line) = self.file_line(line)? {
                return Err(PmiError::Malformed {
                    line: line.to_line(),
                    why: "unexpected reply while waiting".into(),
                });
            }
        }
    }

    /// Whether a non-blocking operation has completed (then `wait` returns at once).
    pub fn test(&mut self, req: &PmiRequest) -> Result<bool> {
        if self.done.contains_key(&req.id) {
            return Ok(true);
        }
        if matches!(self.server, Server::Singleton(_)) {
            return Err(PmiError::UnknownRequest(req.id));
        }
        self.finish_startup()?;
        while let Some(line) = self.conn()?.try_recv("test")? {
            if let Some(line) = self.file_line(line)? {
                return Err(PmiError::Malformed {
                    line: line.to_line(),
                    why: "unexpected reply while testing".into(),
                });
            }
        }
        Ok(self.done.contains_key(&req.id))
    }

    // ---- name service ----------------------------------------------------------------

    pub fn publish_name(&mut self, service: &str, port: &str) -> Result<()> {
        wire::check_key("service name", service)?;
        wire::check_value("port name", port)?;
        if let Server::Singleton(dir) = &mut self.server {
            return dir
                .names
                .publish(service, port)
                .map_err(|e| PmiError::Server {
                    cmd: "publish_name".into(),
                    msg: e.to_string(),
                });
        }
        let r = self.request(
            Command::new("publish_name")
                .arg("service", service)
                .arg("port", port),
            "publish_result",
        )?;
        self.ok_or_server(&r, "publish_name")
    }

    pub fn lookup_name(&mut self, service: &str) -> Result<String> {
        wire::check_key("service name", service)?;
        if let Server::Singleton(dir) = &mut self.server {
            return dir
                .names
                .lookup(service)
                .map(str::to_string)
                .map_err(|_| PmiError::ServiceNotFound(service.into()));
        }
        let r = self.request(
            Command::new("lookup_name").arg("service", service),
            "lookup_result",
        )?;
        if r.rc() != 0 {
            return Err(PmiError::ServiceNotFound(service.into()));
        }
        Ok(r.require("port")?.to_string())
    }

    pub fn unpublish_name(&mut self, service: &str) -> Result<()> {
        wire::check_key("service name", service)?;
        if let Server::Singleton(dir) = &mut self.server {
            return dir
                .names
                .unpublish(service)
                .map_err(|_| PmiError::ServiceNotFound(service.into()));
        }
        let r = self.request(
            Command::new("unpublish_name").arg("service", service),
            "unpublish_result",
        )?;
        if r.rc() != 0 {
            return Err(PmiError::ServiceNotFound(service.into()));
        }
        Ok(())
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
        if matches!(self.server, Server::Singleton(_)) {
            self.become_served()?;
        }
        let text = wire::format_spawn(req)?;
        let r = self.request_line(&text, "spawn_result", "spawn")?;
        let size: u32 = req.commands.iter().map(|c| c.nprocs).sum();
        let Some(job) = r.get("jobid") else {
            // A plain PMI-1 server: only success or failure.
            self.ok_or_server(&r, "spawn")?;
            return Ok(SpawnReply {
                job_id: 0,
                kvsname: String::new(),
                size,
                children: (0..size)
                    .map(|rank| ChildStart {
                        rank,
                        node: 0,
                        errno: 0,
                        message: String::new(),
                    })
                    .collect(),
            });
        };
        let job_id: u32 = job.parse().map_err(|_| PmiError::Malformed {
            line: r.to_line(),
            why: "jobid is not a number".into(),
        })?;
        let reply = SpawnReply {
            job_id,
            kvsname: r.get("kvsname").unwrap_or("").to_string(),
            size: r.num("size")?,
            children: jobs::decode_children(r.get("children").unwrap_or(""))?,
        };
        if reply.children.len() as u32 != reply.size {
            return Err(PmiError::Malformed {
                line: r.to_line(),
                why: "children do not match size".into(),
            });
        }
        if !reply.all_started() {
            return Err(PmiError::SpawnFailed(Box::new(reply)));
        }
        Ok(reply)
    }

    /// Ranks of job `job_id` (this job or another of the daemon set) that have ended.
    pub fn job_status(&mut self, job_id: u32) -> Result<JobStatus> {
        if matches!(self.server, Server::Singleton(_)) {
            if job_id == self.job_id {
                return Ok(JobStatus {
                    job_id,
                    size: 1,
                    exited: Vec::new(),
                });
            }
            return Err(PmiError::NotSupported(
                "job_status of another job as a singleton".into(),
            ));
        }
        if self.kind == ServerKind::Pmi1 {
            return Err(PmiError::NotSupported("job_status".into()));
        }
        let r = self.request(
            Command::new("ibdyn_job_status").arg("jobid", job_id),
            "job_status_result",
        )?;
        self.ok_or_server(&r, "job_status")?;
        Ok(JobStatus {
            job_id,
            size: r.num("size")?,
            exited: jobs::decode_exits(r.get("exited").unwrap_or(""))?,
        })
    }

    /// A singleton becomes rank 0 of a one-process job under a private daemon now (spawn
    /// does it on first use). Afterwards `kvsname()` and `node_uid()` are the daemon's;
    /// call it before publishing anything that depends on them. No-op when served.
    pub fn serve_singleton(&mut self) -> Result<()> {
        if matches!(self.server, Server::Singleton(_)) {
            self.become_served()?;
        }
        Ok(())
    }

    /// A singleton turns into rank 0 of a one-process job under a private daemon.
    fn become_served(&mut self) -> Result<()> {
        let (launcher, served) = crate::singleton::start(self.job_id, self.timeout)?;
        let mut c = PmiClient::connect_ibdyn(&served, self.timeout, false)?;
        if let Server::Singleton(dir) = &mut self.server {
            let entries: Vec<(String, String)> = dir
                .kvs("singleton")
                .entries()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
            for (k, v) in entries {
                c.put(&k, &v)?;
            }
            let names: Vec<(String, String)> = dir
                .names
                .entries()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
            for (k, v) in names {
                c.publish_name(&k, &v)?;
            }
        }
        c.private_launcher = Some(launcher);
        c.next_reqid = self.next_reqid;
        c.done = std::mem::take(&mut self.done);
        *self = c;
        Ok(())
    }

    /// Asks the launcher to end the whole job with `code`; never returns.
    pub fn abort(&mut self, code: i32, msg: &str) -> ! {
        let mut cmd = Command::new("abort").arg("exitcode", code);
        match self.kind {
            ServerKind::Ibdyn => cmd = cmd.arg("msg", wire::msg_token(msg)),
            _ => eprintln!("rank {} aborts the job (code {code}): {msg}", self.rank),
        }
        if let Server::Conn(c) = &mut self.server {
            if c.send(&cmd.to_line(), "abort").is_ok() {
                // The launcher tears the job down; wait a bounded time for that.
                let started = Instant::now();
                let _ = c.recv(started + Duration::from_secs(10), "abort", started);
            }
        }
        std::process::exit(code)
    }

    /// Ends the conversation with the server.
    pub fn finalize(&mut self) -> Result<()> {
        if self.finalized {
            return Err(PmiError::Finalized);
        }
        if matches!(self.server, Server::Conn(_)) {
            self.request(Command::new("finalize"), "finalize_ack")?;
        }
        self.finalized = true;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jobs::kvsname_of;
    use std::io::{BufRead, BufReader, Write};

    /// A PMI server on the other end of a socket pair: answers each request line with the
    /// reply `answer` gives (None: no reply); returns how many lines came in its first read
    /// (to see pipelining) and in all.
    fn fake_server(
        answer: impl Fn(&Command) -> Option<String> + Send + 'static,
    ) -> (PmiClient, std::thread::JoinHandle<(usize, usize)>) {
        let (ours, theirs) = UnixStream::pair().expect("socket pair");
        let server = std::thread::spawn(move || {
            let mut w = theirs.try_clone().expect("clone");
            let mut r = BufReader::new(theirs);
            let mut first_batch = 0;
            let mut total = 0;
            let mut line = String::new();
            while r.read_line(&mut line).unwrap_or(0) > 0 {
                total += 1;
                if first_batch == 0 {
                    first_batch = 1 + r.buffer().iter().filter(|&&b| b == b'\n').count();
                }
                let cmd = Command::parse(line.trim_end()).expect("a command");
                if let Some(reply) = answer(&cmd) {
                    w.write_all(reply.as_bytes()).expect("write");
                }
                line.clear();
            }
            (first_batch, total)
        });
        let mut c = PmiClient::blank(
            Server::Conn(LineConn::new(ours)),
            ServerKind::Ibdyn,
            1,
            2,
            Duration::from_secs(5),
        );
        c.job_id = 7;
        (c, server)
    }

    fn standard_answer(cmd: &Command) -> Option<String> {
        Some(match cmd.name.as_str() {
            "init" => "cmd=response_to_init rc=0 pmi_version=1 pmi_subversion=1\n".into(),
            "get_maxes" => "cmd=maxes kvsname_max=256 keylen_max=64 vallen_max=1024\n".into(),
            "get_my_kvsname" => format!("cmd=my_kvsname kvsname={}\n", kvsname_of(7)),
            "get_appnum" => "cmd=appnum appnum=3\n".into(),
            "get_universe_size" => "cmd=universe_size size=5\n".into(),
            "get" if cmd.get("key") == Some(PROCESS_MAPPING_KEY) => {
                "cmd=get_result rc=0 value=(vector,(0,1,1),(1,1,1))\n".into()
            }
            "get" if cmd.get("key") == Some("parent-info") => {
                "cmd=get_result rc=0 value=card\n".into()
            }
            "put" => "cmd=put_result rc=1 msg=store_full\n".into(),
            "get" => "cmd=get_result rc=0 value=v\n".into(),
            _ => "cmd=error rc=1 msg=unexpected\n".into(),
        })
    }

    #[test]
    fn start_up_is_one_pipelined_exchange_with_our_server() {
        let (mut c, server) = fake_server(standard_answer);
        c.start_handshake(
            "cmd=init pmi_version=1 pmi_subversion=1\n",
            vec!["parent-info".to_string()],
        )
        .expect("sent");
        c.finish_startup().expect("answered");
        assert_eq!(c.kvsname(), kvsname_of(7));
        // The pre-put key came with the start-up exchange: no further request.
        assert_eq!(c.get("parent-info").expect("prefetched"), "card");
        assert_eq!(c.appnum(), 3);
        assert_eq!(c.universe_size, 5);
        assert_eq!(c.nodes, vec![0, 1]);
        drop(c);
        assert_eq!(
            server.join().expect("server"),
            (7, 7),
            "seven requests, all in one write"
        );
    }

    #[test]
    fn puts_may_go_out_before_the_start_up_answers_are_read() {
        let (mut c, server) = fake_server(standard_answer);
        c.start_handshake("cmd=init pmi_version=1 pmi_subversion=1\n", Vec::new())
            .expect("sent");
        // Usable before the answers: the key-value space is the one named after the job.
        c.put_nowait("card-1", "abc").expect("sent");
        assert_eq!(c.appnum(), 0, "not answered yet");
        // The next call that waits reads the start-up answers first, then the put's reply.
        match c.get("other") {
            Err(PmiError::Server { cmd, .. }) => assert_eq!(cmd, "put"),
            other => panic!("expected the put's failure, got {other:?}"),
        }
        assert_eq!(c.appnum(), 3);
        assert_eq!(c.kvsname(), kvsname_of(7));
        drop(c);
        assert_eq!(server.join().expect("server").1, 8);
    }

    #[test]
    fn a_failed_put_without_wait_is_reported_by_the_next_call() {
        let (mut c, server) = fake_server(standard_answer);
        c.kvsname = kvsname_of(7);
        c.put_nowait("card-1", "abc").expect("sent");
        match c.get("other") {
            Err(PmiError::Server { cmd, msg }) => {
                assert_eq!(cmd, "put");
                assert!(msg.contains("store"), "{msg}");
            }
            other => panic!("expected the put's failure, got {other:?}"),
        }
        // The get's own reply was consumed too: the conversation is still in step.
        assert_eq!(c.get("other").expect("get"), "v");
        drop(c);
        server.join().expect("server");
    }
}
