//! Key-value space and name service across daemons: puts are written through to the root
//! (daemon 0); a get that misses the local cache, or waits for a key, is answered by the root.

use super::{ConnId, Daemon};
use ibdyn_pmi::wire::{msg_text, msg_token, Command};
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

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum NameOp {
    Publish,
    Lookup,
    Unpublish,
}

impl NameOp {
    fn name(self) -> &'static str {
        match self {
            NameOp::Publish => "publish",
            NameOp::Lookup => "lookup",
            NameOp::Unpublish => "unpublish",
        }
    }

    fn parse(s: &str) -> Option<NameOp> {
        [NameOp::Publish, NameOp::Lookup, NameOp::Unpublish]
            .into_iter()
            .find(|o| o.name() == s)
    }
}

/// A request this daemon passed up to the root, waiting for its answer.
pub(crate) enum Forwarded {
    Get { conn: ConnId },
    Spawn { conn: ConnId },
    Status { conn: ConnId },
    Name { conn: ConnId, op: NameOp },
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
            self.send_up(
                &Command::new("d_put")
                    .arg("kvs", kvs)
                    .arg("key", key)
                    .arg("value", value),
            );
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
            self.send_up(
                &Command::new("d_get")
                    .arg("origin", self.me)
                    .arg("id", id)
                    .arg("kvs", kvs)
                    .arg("key", key)
                    .arg("wait_ms", wait_ms),
            );
        }
    }

    fn root_get(&mut self, kvs: &str, key: &str, wait_ms: u64, target: Target) {
        let found = self.dir.kvs(kvs).get(key).map(str::to_string);
        match found {
            Some(v) => self.answer_get(target, kvs, key, Some(&v), false),
            None if wait_ms > 0 => self.key_waiters.push(KeyWaiter {
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
                let mut c = Command::new("d_get_result")
                    .arg("origin", origin)
                    .arg("id", id)
                    .arg("kvs", kvs)
                    .arg("key", key);
                c = match value {
                    Some(v) => c.arg("rc", 0).arg("value", v),
                    None => c.arg("rc", -1).arg("timed_out", u8::from(timed_out)),
                };
                self.send_toward(origin, c);
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
        if self.is_root() {
            let r = self.root_name(op, service, port);
            self.reply(conn, name_reply(op, &r));
            return;
        }
        let id = self.next_forward;
        self.next_forward += 1;
        self.forwarded.insert(id, Forwarded::Name { conn, op });
        self.send_up(
            &Command::new("d_ns")
                .arg("origin", self.me)
                .arg("id", id)
                .arg("op", op.name())
                .arg("service", service)
                .arg("port", if port.is_empty() { "-" } else { port }),
        );
    }

    fn root_name(&mut self, op: NameOp, service: &str, port: &str) -> Result<String, String> {
        let ns = &mut self.dir.names;
        match op {
            NameOp::Publish => ns.publish(service, port).map(|_| String::new()),
            NameOp::Lookup => ns.lookup(service).map(str::to_string),
            NameOp::Unpublish => ns.unpublish(service).map(|_| String::new()),
        }
        .map_err(|e| e.to_string())
    }

    /// Messages coming up from a child daemon.
    pub(crate) fn on_from_child(&mut self, child: u32, cmd: Command) {
        let r = (|| -> Result<(), ibdyn_pmi::PmiError> {
            match cmd.name.as_str() {
                "d_put" => self.kvs_put(
                    cmd.require("kvs")?,
                    cmd.require("key")?,
                    cmd.get("value").unwrap_or(""),
                ),
                "d_get" if self.is_root() => {
                    let target = Target::Remote {
                        origin: cmd.num("origin")?,
                        id: cmd.num("id")?,
                    };
                    self.root_get(
                        cmd.require("kvs")?,
                        cmd.require("key")?,
                        cmd.num("wait_ms")?,
                        target,
                    );
                }
                "d_ns" if self.is_root() => {
                    let op = NameOp::parse(cmd.require("op")?).unwrap_or(NameOp::Lookup);
                    let origin: u32 = cmd.num("origin")?;
                    let r = self.root_name(op, cmd.require("service")?, cmd.require("port")?);
                    let mut c = Command::new("d_ns_result")
                        .arg("origin", origin)
                        .arg("id", cmd.num::<u64>("id")?);
                    c = match r {
                        Ok(port) => c
                            .arg("rc", 0)
                            .arg("port", if port.is_empty() { "-".into() } else { port }),
                        Err(m) => c.arg("rc", 1).arg("msg", msg_token(&m)),
                    };
                    self.send_toward(origin, c);
                }
                "d_spawn" if self.is_root() => self.on_spawn_up(&cmd),
                "d_status" if self.is_root() => self.on_status_up(&cmd),
                "d_started" if self.is_root() => self.on_started(&cmd),
                "d_exited" if self.is_root() => self.on_exited_up(&cmd),
                "d_get" | "d_ns" | "d_spawn" | "d_status" | "d_started" | "d_exited" => {
                    self.send_up(&cmd)
                }
                "d_coll" => self.on_coll_up(&cmd)?,
                "d_gone" => self.on_gone_up(cmd),
                other => tracing::warn!(
                    "daemon {}: unknown message {other} from daemon {child}",
                    self.me
                ),
            }
            Ok(())
        })();
        if let Err(e) = r {
            tracing::warn!("daemon {}: bad message from daemon {child}: {e}", self.me);
        }
    }

    /// Messages coming down from the parent daemon (or answers to our own forwarded requests).
    pub(crate) fn on_from_parent(&mut self, cmd: Command) {
        let r = (|| -> Result<(), ibdyn_pmi::PmiError> {
            match cmd.name.as_str() {
                "d_start" => {
                    self.send_children(&cmd);
                    self.on_start(&cmd);
                }
                "d_kill_job" => {
                    self.send_children(&cmd);
                    self.on_kill_job(&cmd);
                }
                "d_job_done" => {
                    self.send_children(&cmd);
                    self.on_job_done(&cmd);
                }
                "d_get_result" | "d_ns_result" | "d_spawn_result" | "d_status_result" => {
                    let origin: u32 = cmd.num("origin")?;
                    if origin != self.me {
                        self.send_toward(origin, cmd);
                        return Ok(());
                    }
                    match self.forwarded.remove(&cmd.num("id")?) {
                        Some(Forwarded::Get { conn }) => {
                            let (kvs, key) = (cmd.require("kvs")?, cmd.require("key")?);
                            let value = (cmd.rc() == 0).then(|| cmd.get("value").unwrap_or(""));
                            if let Some(v) = value {
                                self.dir.kvs(kvs).learn(key, v);
                            }
                            self.reply(
                                conn,
                                get_reply(key, value, cmd.get("timed_out") == Some("1")),
                            );
                        }
                        Some(Forwarded::Spawn { conn }) => self.deliver_spawn_result(conn, &cmd),
                        Some(Forwarded::Status { conn }) => {
                            let mut r = cmd.clone();
                            r.name = "job_status_result".into();
                            r.args.retain(|(k, _)| k != "origin" && k != "id");
                            self.reply(conn, r);
                        }
                        Some(Forwarded::Name { conn, op }) => {
                            let r = if cmd.rc() == 0 {
                                Ok(cmd.get("port").unwrap_or("-").to_string())
                            } else {
                                Err(msg_text(cmd.get("msg").unwrap_or("failed")))
                            };
                            self.reply(conn, name_reply(op, &r));
                        }
                        None => {
                            tracing::warn!("daemon {}: answer to unknown request {cmd:?}", self.me)
                        }
                    }
                }
                "d_coll_done" => {
                    self.send_children(&cmd);
                    self.deliver_done(&cmd)?;
                }
                "d_coll_fail" => {
                    self.send_children(&cmd);
                    self.apply_gone(&cmd)?;
                }
                other => tracing::warn!(
                    "daemon {}: unknown message {other} from the parent",
                    self.me
                ),
            }
            Ok(())
        })();
        if let Err(e) = r {
            tracing::warn!(
                "daemon {}: bad message from the parent daemon: {e}",
                self.me
            );
        }
    }
}
