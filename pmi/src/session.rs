//! A conversation with a line server (an ibdyn node daemon or a plain PMI-1 server): requests
//! and their replies, completions of non-blocking requests filed as they come in, replies
//! owed to requests sent without waiting, and the start-up exchange. The PMI-1 wire format
//! is `wire`'s; this only keeps the conversation in step.

use crate::conn::LineConn;
use crate::error::{PmiError, Result};
use crate::jobs::{self, ChildStart, SpawnReply};
use crate::mapping::{ProcessMapping, PROCESS_MAPPING_KEY};
use crate::server::{JobInfo, PmiCompletion, ServerKind};
use crate::wire::{self, msg_text, Command, SpawnRequest};
use std::collections::{HashMap, VecDeque};
use std::time::{Duration, Instant};

pub(crate) struct Session {
    conn: LineConn,
    /// For logs only: the server's behaviour lives in its `Server` implementation.
    kind: ServerKind,
    pub job: JobInfo,
    /// Bound on any wait for the server.
    pub timeout: Duration,
    /// Longest value the server stores.
    pub vallen_max: usize,
    /// Completed non-blocking requests, by id.
    done: HashMap<u64, Result<PmiCompletion>>,
    /// Replies still owed for requests sent without waiting (`put_nowait`), oldest first.
    owed: VecDeque<&'static str>,
    /// The failure of such a request, reported by the next call that waits for the server.
    owed_error: Option<PmiError>,
    /// Values of this job's pre-put keys, fetched at start-up (they never change).
    pub preput: HashMap<String, String>,
    /// The start-up exchange, sent but not yet answered.
    startup: Option<PendingStartup>,
    /// A put went out under the guessed key-value space name before the start-up answers.
    early_put: bool,
    finalized: bool,
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

impl Session {
    pub fn new(conn: LineConn, kind: ServerKind, job: JobInfo, timeout: Duration) -> Session {
        Session {
            conn,
            kind,
            job,
            timeout,
            vallen_max: 1024,
            done: HashMap::new(),
            owed: VecDeque::new(),
            owed_error: None,
            preput: HashMap::new(),
            startup: None,
            early_put: false,
            finalized: false,
        }
    }

    /// Takes over completions of requests started elsewhere (a singleton promoted to a
    /// served process).
    pub fn adopt_completions(&mut self, done: HashMap<u64, Result<PmiCompletion>>) {
        self.done.extend(done);
    }

    /// Files the result of request `reqid`, completed without the server.
    pub fn complete(&mut self, reqid: u64, result: Result<PmiCompletion>) {
        self.done.insert(reqid, result);
    }

    fn conn(&mut self) -> Result<&mut LineConn> {
        if self.finalized {
            return Err(PmiError::Finalized);
        }
        Ok(&mut self.conn)
    }

    /// Sends a request whose reply (if any) is read later.
    pub fn send(&mut self, line: &str, what: &str) -> Result<()> {
        self.conn()?.send(line, what)
    }

    // ---- start-up ----

    /// Sends the start-up exchange; `preput_keys` are fetched with it. `pipelined` (our own
    /// server, which answers in order): the whole conversation goes in one write and costs
    /// one round trip, whose answers `finish_startup` reads; otherwise one request at a
    /// time, answered here.
    pub fn start_handshake(
        &mut self,
        init_line: &str,
        preput_keys: Vec<String>,
        pipelined: bool,
    ) -> Result<()> {
        let kvs_guess = crate::jobs::kvsname_of(self.job.job_id);
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
        self.job.kvsname = kvs_guess.clone();
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

    /// Reads the answers of the start-up exchange if they are still owed; at once otherwise.
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
        self.job.kvsname = kvs.require("kvsname")?.to_string();
        if self.early_put && self.job.kvsname != kvs_guess {
            return Err(PmiError::Malformed {
                line: kvs.to_line(),
                why: format!("the server's key-value space is not {kvs_guess}, where puts went"),
            });
        }
        self.job.appnum = appnum.num("appnum")?;
        let us: i64 = us.num("size")?;
        self.job.universe_size = if us > 0 { us as u32 } else { self.job.size };
        if self.job.kvsname == kvs_guess {
            for (key, r) in preput_keys.iter().zip(rest.iter().skip(1)) {
                if r.rc() == 0 {
                    let value = r.get("value").unwrap_or("").to_string();
                    self.preput.insert(key.clone(), value);
                }
            }
        }
        let mapping = match rest.first() {
            Some(r) if self.job.kvsname == kvs_guess && r.rc() == 0 => {
                Ok(r.get("value").unwrap_or("").to_string())
            }
            _ => {
                let kvs = self.job.kvsname.clone();
                self.get_from(&kvs, PROCESS_MAPPING_KEY)
            }
        };
        match mapping {
            Ok(text) => self.job.nodes = ProcessMapping::parse(&text)?.nodes(self.job.size),
            Err(e) => tracing::debug!("no {PROCESS_MAPPING_KEY} ({e}): every rank on node 0"),
        }
        tracing::debug!(rank = self.job.rank, size = self.job.size, kvsname = %self.job.kvsname, kind = ?self.kind, "PMI initialised");
        Ok(())
    }

    // ---- requests and replies ----

    /// Files a completion line of a non-blocking request.
    fn absorb(&mut self, line: Command) -> Result<()> {
        let id: u64 = line.num("reqid")?;
        let result = if line.rc() != 0 {
            Err(PmiError::Server {
                cmd: line.name.clone(),
                msg: msg_text(line.get("msg").unwrap_or("failed")),
            })
        } else if line.name == "ibdyn_iallgather_result" {
            wire::decode_array(line.get("values").unwrap_or(""), self.job.size as usize)
                .map(PmiCompletion::Allgather)
        } else {
            Ok(PmiCompletion::Fence)
        };
        self.done.insert(id, result);
        Ok(())
    }

    pub fn request_line(&mut self, line: &str, reply: &str, what: &str) -> Result<Command> {
        let timeout = self.timeout;
        self.exchange(line, reply, what, timeout)
    }

    pub fn request(&mut self, cmd: Command, reply: &str) -> Result<Command> {
        let what = cmd.name.clone();
        self.request_line(&cmd.to_line(), reply, &what)
    }

    /// Sends one request and returns its reply, filing completions that arrive meanwhile.
    pub fn exchange(
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

    pub fn ok_or_server(&self, r: &Command, what: &str) -> Result<()> {
        if r.rc() != 0 {
            return Err(PmiError::Server {
                cmd: what.into(),
                msg: msg_text(r.get("msg").unwrap_or("failed")),
            });
        }
        Ok(())
    }

    // ---- PMI-1 operations, the same on every line server ----

    pub fn put(&mut self, key: &str, value: &str) -> Result<()> {
        self.early_put |= self.startup.is_some();
        let cmd = Command::new("put")
            .arg("kvsname", &self.job.kvsname)
            .arg("key", key)
            .arg("value", value);
        let r = self.request(cmd, "put_result")?;
        self.ok_or_server(&r, "put")
    }

    /// A put whose reply is read by the next call that waits for the server (a failure is
    /// reported there).
    pub fn put_nowait(&mut self, key: &str, value: &str) -> Result<()> {
        self.early_put |= self.startup.is_some();
        let line = Command::new("put")
            .arg("kvsname", &self.job.kvsname)
            .arg("key", key)
            .arg("value", value)
            .to_line();
        self.conn()?.send(&line, "put")?;
        self.owed.push_back("put_result");
        Ok(())
    }

    pub fn get_from(&mut self, kvsname: &str, key: &str) -> Result<String> {
        if kvsname == self.job.kvsname {
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

    pub fn fence(&mut self) -> Result<()> {
        let r = self.request(Command::new("barrier_in"), "barrier_out")?;
        self.ok_or_server(&r, "fence")
    }

    pub fn wait(&mut self, reqid: u64) -> Result<PmiCompletion> {
        self.finish_startup()?;
        let started = Instant::now();
        let deadline = started + self.timeout;
        loop {
            if let Some(r) = self.done.remove(&reqid) {
                return r;
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

    pub fn test(&mut self, reqid: u64) -> Result<bool> {
        if self.done.contains_key(&reqid) {
            return Ok(true);
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
        Ok(self.done.contains_key(&reqid))
    }

    pub fn publish_name(&mut self, service: &str, port: &str) -> Result<()> {
        let r = self.request(
            Command::new("publish_name")
                .arg("service", service)
                .arg("port", port),
            "publish_result",
        )?;
        self.ok_or_server(&r, "publish_name")
    }

    pub fn lookup_name(&mut self, service: &str) -> Result<String> {
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
        let r = self.request(
            Command::new("unpublish_name").arg("service", service),
            "unpublish_result",
        )?;
        if r.rc() != 0 {
            return Err(PmiError::ServiceNotFound(service.into()));
        }
        Ok(())
    }

    /// PMI-1 `mcmd=spawn`; our server answers with the job and every child's fate, a plain
    /// PMI-1 server with success or failure only.
    pub fn spawn(&mut self, req: &SpawnRequest) -> Result<SpawnReply> {
        if self.kind == ServerKind::Pmi1 {
            wire::check_plain_args(req)?;
        }
        let text = wire::format_spawn(req)?;
        let r = self.request_line(&text, "spawn_result", "spawn")?;
        let size: u32 = req.commands.iter().map(|c| c.nprocs).sum();
        let Some(job) = r.get("jobid") else {
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

    /// Sends `cmd` (an abort) and waits a bounded time for the launcher to tear the job down.
    pub fn abort(&mut self, cmd: Command) {
        if self.conn.send(&cmd.to_line(), "abort").is_ok() {
            let started = Instant::now();
            let _ = self
                .conn
                .recv(started + Duration::from_secs(10), "abort", started);
        }
    }

    pub fn finalize(&mut self) -> Result<()> {
        if self.finalized {
            return Err(PmiError::Finalized);
        }
        self.request(Command::new("finalize"), "finalize_ack")?;
        self.finalized = true;
        Ok(())
    }
}

/// The `Server` methods that the servers speaking over a line session (ibdyn's daemons and
/// PMI-1) answer the same way: requests completed by the session, the name service and spawn.
/// Expands inside `impl Server for X` where `X` keeps its session in a field `s`.
macro_rules! forward_to_session {
    () => {
        fn wait(&mut self, reqid: u64) -> Result<PmiCompletion> {
            self.s.wait(reqid)
        }
        fn test(&mut self, reqid: u64) -> Result<bool> {
            self.s.test(reqid)
        }
        fn publish_name(&mut self, service: &str, port: &str) -> Result<()> {
            self.s.publish_name(service, port)
        }
        fn lookup_name(&mut self, service: &str) -> Result<String> {
            self.s.lookup_name(service)
        }
        fn unpublish_name(&mut self, service: &str) -> Result<()> {
            self.s.unpublish_name(service)
        }
        fn spawn(&mut self, req: &SpawnRequest) -> Result<SpawnReply> {
            self.s.spawn(req)
        }
    };
}
pub(crate) use forward_to_session;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jobs::kvsname_of;
    use std::io::{BufRead, BufReader, Write};
    use std::os::unix::net::UnixStream;

    /// A PMI server on the other end of a socket pair: answers each request line with the
    /// reply `answer` gives (None: no reply); returns how many lines came in its first read
    /// (to see pipelining) and in all.
    fn fake_server(
        answer: impl Fn(&Command) -> Option<String> + Send + 'static,
    ) -> (Session, std::thread::JoinHandle<(usize, usize)>) {
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
        let mut job = JobInfo::new(1, 2);
        job.job_id = 7;
        let s = Session::new(
            LineConn::new(ours),
            ServerKind::Ibdyn,
            job,
            Duration::from_secs(5),
        );
        (s, server)
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

    fn get(s: &mut Session, key: &str) -> Result<String> {
        let kvs = s.job.kvsname.clone();
        s.get_from(&kvs, key)
    }

    #[test]
    fn start_up_is_one_pipelined_exchange_with_our_server() {
        let (mut c, server) = fake_server(standard_answer);
        c.start_handshake(
            "cmd=init pmi_version=1 pmi_subversion=1\n",
            vec!["parent-info".to_string()],
            true,
        )
        .expect("sent");
        c.finish_startup().expect("answered");
        assert_eq!(c.job.kvsname, kvsname_of(7));
        // The pre-put key came with the start-up exchange: no further request.
        assert_eq!(get(&mut c, "parent-info").expect("prefetched"), "card");
        assert_eq!(c.job.appnum, 3);
        assert_eq!(c.job.universe_size, 5);
        assert_eq!(c.job.nodes, vec![0, 1]);
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
        c.start_handshake(
            "cmd=init pmi_version=1 pmi_subversion=1\n",
            Vec::new(),
            true,
        )
        .expect("sent");
        // Usable before the answers: the key-value space is the one named after the job.
        c.put_nowait("card-1", "abc").expect("sent");
        assert_eq!(c.job.appnum, 0, "not answered yet");
        // The next call that waits reads the start-up answers first, then the put's reply.
        match get(&mut c, "other") {
            Err(PmiError::Server { cmd, .. }) => assert_eq!(cmd, "put"),
            other => panic!("expected the put's failure, got {other:?}"),
        }
        assert_eq!(c.job.appnum, 3);
        assert_eq!(c.job.kvsname, kvsname_of(7));
        drop(c);
        assert_eq!(server.join().expect("server").1, 8);
    }

    #[test]
    fn a_failed_put_without_wait_is_reported_by_the_next_call() {
        let (mut c, server) = fake_server(standard_answer);
        c.job.kvsname = kvsname_of(7);
        c.put_nowait("card-1", "abc").expect("sent");
        match get(&mut c, "other") {
            Err(PmiError::Server { cmd, msg }) => {
                assert_eq!(cmd, "put");
                assert!(msg.contains("store"), "{msg}");
            }
            other => panic!("expected the put's failure, got {other:?}"),
        }
        // The get's own reply was consumed too: the conversation is still in step.
        assert_eq!(get(&mut c, "other").expect("get"), "v");
        drop(c);
        server.join().expect("server");
    }
}
