//! Key-value space and name service across daemons: puts are written through to the root
//! (daemon 0); a get that misses the local cache, or waits for a key, is answered by the root.

use super::{ConnId, Daemon};
pub(crate) use crate::protocol::NameOp;
use crate::protocol::{Answer, Down, Up};
use ibdyn_pmi::wire::{msg_token, Command};
use std::time::{Duration, Instant};

/// Who gets the answer of a request served at the root.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Target {
    Local(ConnId),
    Remote { origin: u32, id: u64 },
}

pub(crate) struct KeyWaiter {
    kvs: String,
    key: String,
    target: Target,
    pub(crate) deadline: Instant,
}

/// A request this daemon passed up to the root, waiting for its answer.
pub(crate) enum Forwarded {
    Get { conn: ConnId },
    Spawn { conn: ConnId },
    Status { conn: ConnId },
    Name { conn: ConnId, op: NameOp },
    Pset { conn: ConnId },
}

fn get_reply(key: &str, value: Option<&str>, timed_out: bool) -> Command {
    match value {
        Some(v) => Command::new("get_result")
            .arg("rc", 0)
            .arg("msg", "success")
            .arg("value", v),
        None if timed_out => Command::new("get_result")
            .arg("rc", -1)
            .arg(
                "msg",
                msg_token(&format!("timed out waiting for key {key}")),
            )
            .arg("value", "unknown"),
        None => Command::new("get_result")
            .arg("rc", -1)
            .arg("msg", format!("key_{key}_not_found"))
            .arg("value", "unknown"),
    }
}

fn name_reply(op: NameOp, r: &Result<String, String>) -> Command {
    let name = format!("{}_result", op.name());
    match (op, r) {
        (NameOp::Lookup, Ok(port)) => Command::new(&name)
            .arg("port", port)
            .arg("info", "ok")
            .arg("rc", 0)
            .arg("msg", "success"),
        (_, Ok(_)) => Command::new(&name)
            .arg("info", "ok")
            .arg("rc", 0)
            .arg("msg", "success"),
        (_, Err(m)) => Command::new(&name).arg("rc", 1).arg("msg", msg_token(m)),
    }
}

impl Daemon {
    pub(crate) fn kvs_put(&mut self, kvs: &str, key: &str, value: &str) {
        if self.is_root() {
            self.dir.kvs(kvs).put(key, value);
            self.wake_key_waiters(kvs, key, value);
        } else {
            self.dir.kvs(kvs).learn(key, value);
            self.send_up(&Up::Put {
                kvs: kvs.into(),
                key: key.into(),
                value: value.into(),
            });
        }
    }

    /// A get from a local rank; `wait_ms` > 0 waits that long for some process to put the key.
    pub(crate) fn kvs_get(&mut self, conn: ConnId, kvs: &str, key: &str, wait_ms: u64) {
        if let Some(v) = self.dir.kvs(kvs).get(key) {
            let reply = get_reply(key, Some(v), false);
            self.reply(conn, reply);
        } else if self.is_root() {
            self.root_get(kvs, key, wait_ms, Target::Local(conn));
        } else {
            let id = self.next_forward;
            self.next_forward += 1;
            self.forwarded.insert(id, Forwarded::Get { conn });
            self.send_up(&Up::Get {
                origin: self.me,
                id,
                kvs: kvs.into(),
                key: key.into(),
                wait_ms,
            });
        }
    }

    fn root_get(&mut self, kvs: &str, key: &str, wait_ms: u64, target: Target) {
        let found = self.dir.kvs(kvs).get(key).map(str::to_string);
        match found {
            Some(v) => self.answer_get(target, kvs, key, Some(&v), false),
            None if wait_ms > 0 && !self.job_over(kvs) => self.key_waiters.push(KeyWaiter {
                kvs: kvs.into(),
                key: key.into(),
                target,
                deadline: Instant::now() + Duration::from_millis(wait_ms),
            }),
            None => self.answer_get(target, kvs, key, None, false),
        }
    }

    fn answer_get(
        &mut self,
        target: Target,
        kvs: &str,
        key: &str,
        value: Option<&str>,
        timed_out: bool,
    ) {
        match target {
            Target::Local(conn) => self.reply(conn, get_reply(key, value, timed_out)),
            Target::Remote { origin, id } => {
                let answer = Answer::Get {
                    kvs: kvs.into(),
                    key: key.into(),
                    value: value.map(str::to_string),
                    timed_out,
                };
                self.send_toward(origin, Down::Answer { origin, id, answer });
            }
        }
    }

    pub(crate) fn wake_key_waiters(&mut self, kvs: &str, key: &str, value: &str) {
        let (hit, keep): (Vec<KeyWaiter>, Vec<KeyWaiter>) = std::mem::take(&mut self.key_waiters)
            .into_iter()
            .partition(|w| w.kvs == kvs && w.key == key);
        self.key_waiters = keep;
        for w in hit {
            self.answer_get(w.target, kvs, key, Some(value), false);
        }
    }

    /// Root: whether `kvs` is the key-value space of a job whose ranks have all ended.
    fn job_over(&self, kvs: &str) -> bool {
        self.registry
            .finished
            .iter()
            .any(|&j| ibdyn_pmi::kvsname_of(j) == kvs)
    }

    /// Root: the waits for keys of `kvs` fail now (its job has ended).
    pub(crate) fn end_key_waits(&mut self, kvs: &str) {
        let (hit, keep): (Vec<KeyWaiter>, Vec<KeyWaiter>) = std::mem::take(&mut self.key_waiters)
            .into_iter()
            .partition(|w| w.kvs == kvs);
        self.key_waiters = keep;
        for w in hit {
            self.answer_get(w.target, &w.kvs, &w.key, None, false);
        }
    }

    pub(crate) fn expire_key_waiters(&mut self, now: Instant) {
        if self.key_waiters.iter().all(|w| w.deadline > now) {
            return;
        }
        let (late, keep): (Vec<KeyWaiter>, Vec<KeyWaiter>) = std::mem::take(&mut self.key_waiters)
            .into_iter()
            .partition(|w| w.deadline <= now);
        self.key_waiters = keep;
        for w in late {
            self.answer_get(w.target, &w.kvs, &w.key, None, true);
        }
    }

    pub(crate) fn name_op(&mut self, conn: ConnId, op: NameOp, service: &str, port: &str) {
        let owner = self.rank_of(conn).ok();
        if self.is_root() {
            let r = self.root_name(op, service, port, owner);
            self.reply(conn, name_reply(op, &r));
            return;
        }
        let id = self.next_forward;
        self.next_forward += 1;
        self.forwarded.insert(id, Forwarded::Name { conn, op });
        self.send_up(&Up::Name {
            origin: self.me,
            id,
            op,
            service: service.into(),
            port: port.into(),
            owner,
        });
    }

    fn root_name(
        &mut self,
        op: NameOp,
        service: &str,
        port: &str,
        owner: Option<(u32, u32)>,
    ) -> Result<String, String> {
        let ns = &mut self.dir.names;
        match op {
            NameOp::Publish => ns.publish(service, port, owner).map(|_| String::new()),
            NameOp::Lookup => ns.lookup(service).map(str::to_string),
            NameOp::Unpublish => ns.unpublish(service).map(|_| String::new()),
        }
        .map_err(|e| e.to_string())
    }

    /// Messages coming up from a child daemon: served at the root, else passed on up.
    pub(crate) fn on_from_child(&mut self, m: Up) {
        match m {
            Up::Put { kvs, key, value } => self.kvs_put(&kvs, &key, &value),
            Up::Coll {
                job,
                seq,
                kind,
                count,
                vals,
            } => self.on_coll_up(job, seq, kind, count, vals),
            Up::Gone(g) => self.on_gone_up(g),
            m if !self.is_root() => self.send_up(&m),
            Up::Get {
                origin,
                id,
                kvs,
                key,
                wait_ms,
            } => self.root_get(&kvs, &key, wait_ms, Target::Remote { origin, id }),
            Up::Name {
                origin,
                id,
                op,
                service,
                port,
                owner,
            } => {
                let answer = Answer::Name(self.root_name(op, &service, &port, owner));
                self.send_toward(origin, Down::Answer { origin, id, answer });
            }
            Up::Spawn {
                origin,
                id,
                req,
                parent,
            } => self.on_spawn_up(origin, id, &req, parent),
            Up::Pset {
                origin,
                id,
                who,
                req,
            } => self.on_pset_up(origin, id, who, &req),
            Up::Status { origin, id, job } => {
                let answer = Answer::Status(self.job_status(job));
                self.send_toward(origin, Down::Answer { origin, id, answer });
            }
            Up::Started { job, node, results } => self.on_started(job, node, results),
            Up::Exited {
                job,
                rank,
                code,
                signal,
                ..
            } => self.on_exited_up(job, rank, code, signal),
        }
    }

    /// Messages coming down from the parent daemon (or answers to our own forwarded requests).
    pub(crate) fn on_from_parent(&mut self, m: Down) {
        match m {
            Down::Start(start) => {
                self.send_children(&Down::Start(start.clone()));
                self.on_start(&start);
            }
            Down::KillJob(job) => {
                self.send_children(&m);
                self.on_kill_job(job);
            }
            Down::JobDone(job) => {
                self.send_children(&m);
                self.on_job_done(job);
            }
            Down::Answer { origin, .. } if origin != self.me => self.send_toward(origin, m),
            Down::Answer { id, answer, .. } => self.on_answer(id, answer),
            Down::CollDone {
                job,
                seq,
                kind,
                ref fenced,
                ref result,
            } => {
                self.send_children(&m);
                let result = result.as_ref().map(String::as_str).map_err(String::as_str);
                self.deliver_done(job, seq, kind, fenced.as_ref(), result);
            }
            Down::CollFail(g) => {
                self.send_children(&Down::CollFail(g.clone()));
                self.apply_gone(&g);
            }
            Down::KillRank { job, rank } => {
                self.send_children(&m);
                self.kill_rank(job, rank);
            }
        }
    }

    /// The root's answer to a request this daemon forwarded for one of its ranks.
    fn on_answer(&mut self, id: u64, answer: Answer) {
        let Some(f) = self.forwarded.remove(&id) else {
            tracing::warn!("daemon {}: answer to unknown request {id}", self.me);
            return;
        };
        match (f, answer) {
            (
                Forwarded::Get { conn },
                Answer::Get {
                    kvs,
                    key,
                    value,
                    timed_out,
                },
            ) => {
                if let Some(v) = &value {
                    self.dir.kvs(&kvs).learn(&key, v);
                }
                self.reply(conn, get_reply(&key, value.as_deref(), timed_out));
            }
            (Forwarded::Spawn { conn }, Answer::Spawn(outcome)) => {
                self.reply(conn, super::jobs::spawn_reply(&outcome))
            }
            (Forwarded::Status { conn }, Answer::Status(status)) => {
                self.reply(conn, super::jobs::status_reply(&status))
            }
            (Forwarded::Name { conn, op }, Answer::Name(r)) => self.reply(conn, name_reply(op, &r)),
            (Forwarded::Pset { conn }, Answer::Pset(r)) => self.on_pset_answer(conn, &r),
            (_, a) => tracing::warn!("daemon {}: answer {a:?} does not fit request {id}", self.me),
        }
    }
}
