//! The PMI-1 commands (and ibdyn's extensions) a daemon serves to its local ranks.

use super::coll::Coll;
use super::kvs::NameOp;
use super::{ConnId, Daemon};
use crate::error::{LaunchError, Result};
use crate::link::Outbox;
use crate::protocol::Report;
use ibdyn_pmi::state::CollKind;
use ibdyn_pmi::wire::{self, msg_text, msg_token, Command, Frame, SpawnRequest};

pub(crate) struct Client {
    out: Outbox,
    /// (job, rank) once `init` named them.
    pub(crate) who: Option<(u32, u32)>,
    /// (job, rank) of the rank this connection was made for (its `PMI_FD`), if any: its
    /// `init` need not name them.
    pub(crate) attached: Option<(u32, u32)>,
    spawn: SpawnRequest,
}

impl Client {
    pub(crate) fn new(out: Outbox) -> Client {
        Client {
            out,
            who: None,
            attached: None,
            spawn: SpawnRequest::default(),
        }
    }
}

impl Daemon {
    pub(crate) fn reply(&self, conn: ConnId, cmd: Command) {
        if let Some(c) = self.clients.get(&conn) {
            let _ = c.out.send(cmd.to_line());
        }
    }

    fn error_reply(&self, conn: ConnId, msg: &str) {
        tracing::debug!("daemon {}: PMI error to client {conn}: {msg}", self.me);
        self.reply(
            conn,
            Command::new("error")
                .arg("rc", -1)
                .arg("msg", msg_token(msg)),
        );
    }

    /// (job, rank) of a client.
    pub(crate) fn rank_of(&self, conn: ConnId) -> Result<(u32, u32)> {
        self.clients
            .get(&conn)
            .and_then(|c| c.who)
            .ok_or_else(|| LaunchError::Request("send cmd=init with ibdyn_rank= first".into()))
    }

    fn job_of(&self, conn: ConnId) -> Result<&super::ranks::Job> {
        let (job, _) = self.rank_of(conn)?;
        self.jobs
            .get(&job)
            .ok_or_else(|| LaunchError::Request(format!("job {job} is not known here")))
    }

    pub(crate) fn on_client_frame(&mut self, conn: ConnId, frame: Frame) {
        match frame {
            Frame::Bad(why) => self.error_reply(conn, &why),
            Frame::Spawn(block) => self.on_spawn_block(conn, &block),
            Frame::Line(cmd) => {
                if let Err(msg) = self.on_client_cmd(conn, &cmd) {
                    self.error_reply(conn, &format!("{}: {msg}", cmd.name));
                }
            }
        }
    }

    pub(crate) fn on_client_closed(&mut self, conn: ConnId) {
        let Some(client) = self.clients.remove(&conn) else {
            return;
        };
        if let Some((job, rank)) = client.who {
            let Some(rs) = self.rank_mut(job, rank) else {
                return;
            };
            let finalized = rs.finalized;
            if rs.adopted {
                // The singleton that asked for this daemon is gone.
                rs.exit = Some((Some(0), None));
                rs.eofs = 2;
                let now = std::time::Instant::now();
                rs.reaped_at = Some(now);
                self.output_grace
                    .push((now + super::ranks::EOF_GRACE, job, rank));
            }
            if !finalized {
                self.rank_gone(job, rank, "disconnected from PMI without finalize");
            }
            self.report_exit(job, rank, false);
        }
    }

    fn on_client_cmd(&mut self, conn: ConnId, cmd: &Command) -> Result<()> {
        let arg = |k: &str| cmd.require(k);
        let kvs = || match cmd.get("kvsname") {
            Some(k) => Ok(k.to_string()),
            None => self.job_of(conn).map(|j| j.spec.kvsname.clone()),
        };
        match cmd.name.as_str() {
            // A client that connected to PMI_PORT names itself by its PMI_ID (once).
            "initack" => {
                let id: u32 = cmd.num("pmiid")?;
                let (job, rank) = self.pmi_ids.remove(&id).ok_or_else(|| {
                    LaunchError::Request(format!("pmiid={id} names no rank of this daemon"))
                })?;
                let size = self.jobs.get(&job).map_or(0, |j| j.spec.size);
                if let Some(c) = self.clients.get_mut(&conn) {
                    c.attached = Some((job, rank));
                }
                self.reply(conn, Command::new("initack"));
                self.reply(conn, Command::new("set").arg("size", size));
                self.reply(conn, Command::new("set").arg("rank", rank));
                self.reply(conn, Command::new("set").arg("debug", 0));
            }
            "init" => {
                let attached = self.clients.get(&conn).and_then(|c| c.attached);
                let (job, rank) = match (attached, cmd.get("ibdyn_rank")) {
                    (Some(who), None) => who,
                    (_, _) => {
                        let rank: u32 = cmd.num("ibdyn_rank")?;
                        let job: u32 =
                            match cmd.get("ibdyn_jobid") {
                                Some(_) => cmd.num("ibdyn_jobid")?,
                                None => attached.map(|(j, _)| j).or(self.initial_job).ok_or_else(
                                    || LaunchError::Request("init names no ibdyn_jobid".into()),
                                )?,
                            };
                        if attached.is_some_and(|a| a != (job, rank)) {
                            return Err(LaunchError::Request(format!(
                                "init as job {job} rank {rank} on the PMI_FD of another rank"
                            )));
                        }
                        (job, rank)
                    }
                };
                let rs = self.rank_mut(job, rank).ok_or_else(|| {
                    LaunchError::Request(format!("job {job} rank {rank} does not run on this node"))
                })?;
                if rs.conn.is_some() {
                    return Err(LaunchError::Request(format!(
                        "job {job} rank {rank} is already initialised"
                    )));
                }
                rs.conn = Some(conn);
                if let Some(c) = self.clients.get_mut(&conn) {
                    c.who = Some((job, rank));
                }
                self.reply(
                    conn,
                    Command::new("response_to_init")
                        .arg("pmi_version", 1)
                        .arg("pmi_subversion", 1)
                        .arg("rc", 0),
                );
            }
            "get_maxes" => self.reply(
                conn,
                Command::new("maxes")
                    .arg("kvsname_max", 256)
                    .arg("keylen_max", 64)
                    .arg("vallen_max", 1024),
            ),
            "get_appnum" => {
                let (_, rank) = self.rank_of(conn)?;
                let j = self.job_of(conn)?;
                let appnum = j.spec.app_of(rank).map_or(0, |a| a.appnum);
                self.reply(conn, Command::new("appnum").arg("appnum", appnum))
            }
            "get_my_kvsname" => {
                let k = self.job_of(conn)?.spec.kvsname.clone();
                self.reply(conn, Command::new("my_kvsname").arg("kvsname", k))
            }
            "get_universe_size" => {
                let size = self.job_of(conn)?.spec.size;
                self.reply(conn, Command::new("universe_size").arg("size", size))
            }
            "ibdyn_job_status" => {
                let job: u32 = cmd.num("jobid")?;
                self.request_status(conn, job);
            }
            "put" => {
                let (key, value) = (arg("key")?, cmd.get("value").unwrap_or(""));
                wire::check_key("key", key)?;
                self.kvs_put(&kvs()?, key, value);
                self.reply(
                    conn,
                    Command::new("put_result")
                        .arg("rc", 0)
                        .arg("msg", "success"),
                );
            }
            "get" => self.kvs_get(conn, &kvs()?, arg("key")?, 0),
            "ibdyn_get_wait" => {
                let ms: u64 = cmd.num("timeout_ms")?;
                self.kvs_get(conn, &kvs()?, arg("key")?, ms.max(1));
            }
            "barrier_in" => self.enter_coll(
                conn,
                Coll {
                    kind: CollKind::Fence,
                    reqid: None,
                },
                None,
            )?,
            "ibdyn_ifence" => {
                let reqid = cmd.num("reqid")?;
                self.enter_coll(
                    conn,
                    Coll {
                        kind: CollKind::Fence,
                        reqid: Some(reqid),
                    },
                    None,
                )?
            }
            "ibdyn_allgather" | "ibdyn_iallgather" => {
                let reqid = match cmd.name.as_str() {
                    "ibdyn_iallgather" => Some(cmd.num("reqid")?),
                    _ => None,
                };
                let value = cmd.get("value").unwrap_or("");
                wire::hex_decode(value)?;
                self.enter_coll(
                    conn,
                    Coll {
                        kind: CollKind::Allgather,
                        reqid,
                    },
                    Some(value.to_string()),
                )?
            }
            "publish_name" => self.name_op(conn, NameOp::Publish, arg("service")?, arg("port")?),
            "lookup_name" => self.name_op(conn, NameOp::Lookup, arg("service")?, ""),
            "unpublish_name" => self.name_op(conn, NameOp::Unpublish, arg("service")?, ""),
            ibdyn_pmi::pset_ops::REQUEST => self.pset_request(conn, cmd)?,
            "abort" => {
                let (job, rank) = self.rank_of(conn)?;
                let code: i32 = cmd
                    .get("exitcode")
                    .and_then(|c| c.parse().ok())
                    .unwrap_or(1);
                self.to_launcher(Report::Abort {
                    job,
                    rank,
                    code,
                    msg: msg_text(cmd.get("msg").unwrap_or("none")),
                });
            }
            "finalize" => {
                let (job, rank) = self.rank_of(conn)?;
                if let Some(rs) = self.rank_mut(job, rank) {
                    rs.finalized = true;
                }
                self.reply(conn, Command::new("finalize_ack"));
                self.rank_gone(job, rank, "finalized");
            }
            other => return Err(LaunchError::Request(format!("unknown command {other:?}"))),
        }
        Ok(())
    }

    fn on_spawn_block(&mut self, conn: ConnId, block: &Command) {
        let parsed = wire::parse_spawn_block(block);
        let Some(client) = self.clients.get_mut(&conn) else {
            return;
        };
        // The blocks come in order, and the request stays within the bound on processes.
        let parsed = parsed.and_then(|b| {
            let sofar = client.spawn.commands.len() as u32 + 1;
            let procs: u64 = client
                .spawn
                .commands
                .iter()
                .map(|c| u64::from(c.nprocs))
                .sum::<u64>()
                + u64::from(b.command.nprocs);
            if b.sofar != sofar {
                Err(ibdyn_pmi::PmiError::Invalid {
                    what: "spawnssofar".into(),
                    value: b.sofar.to_string(),
                    why: format!("is not the expected {sofar}"),
                })
            } else if procs > u64::from(wire::MAX_SPAWN_PROCS) {
                Err(ibdyn_pmi::PmiError::Invalid {
                    what: "number of processes of a spawn".into(),
                    value: procs.to_string(),
                    why: format!("is more than {}", wire::MAX_SPAWN_PROCS),
                })
            } else {
                Ok(b)
            }
        });
        let b = match parsed {
            Ok(p) => p,
            Err(e) => {
                client.spawn = SpawnRequest::default();
                self.reply(
                    conn,
                    Command::new("spawn_result")
                        .arg("rc", -1)
                        .arg("msg", msg_token(&e.to_string())),
                );
                return;
            }
        };
        client.spawn.commands.push(b.command);
        client.spawn.preput = b.preput;
        if b.sofar < b.total {
            return;
        }
        let req = std::mem::take(&mut client.spawn);
        if self.rank_of(conn).is_err() {
            self.reply(
                conn,
                Command::new("spawn_result")
                    .arg("rc", -1)
                    .arg("msg", "send_cmd=init_first"),
            );
            return;
        }
        self.request_spawn(conn, req);
    }
}
