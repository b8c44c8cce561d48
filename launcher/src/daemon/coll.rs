//! Fence and allgather as a tree: each daemon counts the arrivals of its subtree and sends one
//! message up; the root completes the collective and sends the result down. A rank that leaves
//! makes every collective it has not joined fail, everywhere, naming it.

use super::{ConnId, Daemon};
use ibdyn_pmi::state::{order_values, CollKind, Collective};
use ibdyn_pmi::wire::{hex_decode, hex_encode, msg_text, msg_token, Command};
use ibdyn_pmi::PmiError;

/// A collective call as a rank made it: blocking (`reqid` None) or non-blocking.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Coll {
    pub(crate) kind: CollKind,
    pub(crate) reqid: Option<u64>,
}

pub(crate) struct CollWaiter {
    conn: ConnId,
    call: Coll,
}

fn coll_reply(call: Coll, result: Result<&str, &str>) -> Command {
    let mut c = match (call.kind, call.reqid) {
        (CollKind::Fence, None) => Command::new("barrier_out"),
        (CollKind::Fence, Some(id)) => Command::new("ibdyn_ifence_result").arg("reqid", id),
        (CollKind::Allgather, None) => Command::new("ibdyn_allgather_result"),
        (CollKind::Allgather, Some(id)) => Command::new("ibdyn_iallgather_result").arg("reqid", id),
    };
    match result {
        Ok(values) => {
            c = c.arg("rc", 0);
            if call.kind == CollKind::Allgather {
                c = c.arg("values", values);
            }
        }
        Err(msg) => c = c.arg("rc", -1).arg("msg", msg_token(msg)),
    }
    c
}

fn parse_pairs(text: &str) -> Result<Vec<(String, String)>, PmiError> {
    text.split(',')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (a, b) = p.split_once(':').ok_or_else(|| PmiError::Malformed {
                line: p.into(),
                why: "no ':'".into(),
            })?;
            Ok((a.to_string(), b.to_string()))
        })
        .collect()
}

impl Daemon {
    pub(crate) fn enter_coll(
        &mut self,
        conn: ConnId,
        call: Coll,
        value: Option<String>,
    ) -> Result<(), String> {
        let (job, rank) = self.rank_of(conn)?;
        let j = self
            .jobs
            .get_mut(&job)
            .ok_or_else(|| format!("job {job} unknown"))?;
        let rs = j
            .ranks
            .get_mut(&rank)
            .ok_or_else(|| format!("rank {rank} unknown"))?;
        if rs.finalized {
            return Err(format!("rank {rank} has finalized"));
        }
        let seq = rs.next_seq;
        rs.next_seq += 1;
        let vals: Vec<(u32, String)> = value.map(|v| vec![(rank, v)]).unwrap_or_default();
        match j.colls.arrive(seq, call.kind, 1, vals) {
            Ok(done) => {
                j.coll_waiters
                    .entry(seq)
                    .or_default()
                    .push(CollWaiter { conn, call });
                if let Some(c) = done {
                    self.coll_complete(job, seq, c);
                }
            }
            Err(e) => self.reply(conn, coll_reply(call, Err(&e.to_string()))),
        }
        Ok(())
    }

    fn coll_complete(&mut self, job: u32, seq: u64, c: Collective) {
        if !self.is_root() {
            let vals: Vec<String> = c.values.iter().map(|(r, v)| format!("{r}:{v}")).collect();
            self.send_up(
                &Command::new("d_coll")
                    .arg("job", job)
                    .arg("seq", seq)
                    .arg("kind", c.kind.name())
                    .arg("count", c.arrived)
                    .arg("vals", vals.join(",")),
            );
            return;
        }
        let Some((kvs, size)) = self
            .jobs
            .get(&job)
            .map(|j| (j.spec.kvsname.clone(), j.spec.size))
        else {
            return;
        };
        let mut done = Command::new("d_coll_done")
            .arg("job", job)
            .arg("seq", seq)
            .arg("kind", c.kind.name());
        match c.kind {
            CollKind::Fence => {
                let data: Vec<String> = self
                    .dir
                    .kvs(&kvs)
                    .take_unfenced()
                    .iter()
                    .map(|(k, v)| {
                        format!("{}:{}", hex_encode(k.as_bytes()), hex_encode(v.as_bytes()))
                    })
                    .collect();
                done = done.arg("kvs", kvs).arg("data", data.join(","));
            }
            CollKind::Allgather => match order_values(size, &c.values) {
                Ok(vals) => done = done.arg("rc", 0).arg("values", vals.join(",")),
                Err(e) => done = done.arg("rc", -1).arg("msg", msg_token(&e)),
            },
        }
        self.send_children(&done);
        if let Err(e) = self.deliver_done(&done) {
            tracing::warn!("daemon {}: {e}", self.me);
        }
    }

    /// Arrivals of a child's subtree.
    pub(crate) fn on_coll_up(&mut self, cmd: &Command) -> Result<(), PmiError> {
        let job: u32 = cmd.num("job")?;
        let seq: u64 = cmd.num("seq")?;
        let kind = CollKind::parse(cmd.require("kind")?).ok_or_else(|| PmiError::Malformed {
            line: cmd.to_line(),
            why: "unknown kind".into(),
        })?;
        let vals: Vec<(u32, String)> = parse_pairs(cmd.get("vals").unwrap_or(""))?
            .into_iter()
            .map(|(r, v)| r.parse::<u32>().map(|r| (r, v)))
            .collect::<Result<_, _>>()
            .map_err(|_| PmiError::Malformed {
                line: cmd.to_line(),
                why: "bad rank in vals".into(),
            })?;
        let Some(j) = self.jobs.get_mut(&job) else {
            tracing::debug!(
                "daemon {}: collective of unknown job {job} dropped",
                self.me
            );
            return Ok(());
        };
        match j.colls.arrive(seq, kind, cmd.num("count")?, vals) {
            Ok(Some(c)) => self.coll_complete(job, seq, c),
            Ok(None) => {}
            // The waiters of this collective were already failed by the d_coll_fail broadcast.
            Err(e) => tracing::debug!(
                "daemon {}: arrival for collective #{seq} dropped: {e}",
                self.me
            ),
        }
        Ok(())
    }

    /// The root's result of a collective: reply to the local ranks that called it.
    pub(crate) fn deliver_done(&mut self, cmd: &Command) -> Result<(), PmiError> {
        let job: u32 = cmd.num("job")?;
        let seq: u64 = cmd.num("seq")?;
        if cmd.get("kind") == Some("fence") {
            let kvs = cmd.require("kvs")?.to_string();
            for (k, v) in parse_pairs(cmd.get("data").unwrap_or(""))? {
                let (k, v) = (hex_decode(&k)?, hex_decode(&v)?);
                self.dir
                    .kvs(&kvs)
                    .learn(&String::from_utf8_lossy(&k), &String::from_utf8_lossy(&v));
            }
        }
        let result = if cmd.rc() == 0 {
            Ok(cmd.get("values").unwrap_or(""))
        } else {
            Err(cmd.get("msg").unwrap_or("failed"))
        };
        let waiters = self
            .jobs
            .get_mut(&job)
            .and_then(|j| j.coll_waiters.remove(&seq))
            .unwrap_or_default();
        for w in waiters {
            self.reply(w.conn, coll_reply(w.call, result));
        }
        Ok(())
    }

    /// A rank will join no more collectives (it finalized, disconnected or exited).
    pub(crate) fn rank_gone(&mut self, job: u32, rank: u32, why: &str) {
        let Some(rs) = self.rank_mut(job, rank) else {
            return;
        };
        if rs.gone {
            return;
        }
        rs.gone = true;
        let from = rs.next_seq;
        tracing::debug!(
            "daemon {}: job {job} rank {rank} {why} (joins no collective from #{from})",
            self.me
        );
        let fail = Command::new("d_coll_fail")
            .arg("job", job)
            .arg("rank", rank)
            .arg("from_seq", from)
            .arg("why", msg_token(why));
        if let Err(e) = self.apply_gone(&fail) {
            tracing::warn!("daemon {}: {e}", self.me);
        }
        if self.is_root() {
            self.send_children(&fail);
        } else {
            let mut up = fail;
            up.name = "d_gone".into();
            self.send_up(&up);
        }
    }

    pub(crate) fn on_gone_up(&mut self, mut cmd: Command) {
        cmd.name = "d_coll_fail".into();
        if let Err(e) = self.apply_gone(&cmd) {
            tracing::warn!("daemon {}: {e}", self.me);
        }
        if self.is_root() {
            self.send_children(&cmd);
        } else {
            cmd.name = "d_gone".into();
            self.send_up(&cmd);
        }
    }

    /// Fails every collective `rank` has not joined, at this daemon.
    pub(crate) fn apply_gone(&mut self, cmd: &Command) -> Result<(), PmiError> {
        let job: u32 = cmd.num("job")?;
        let rank: u32 = cmd.num("rank")?;
        let from: u64 = cmd.num("from_seq")?;
        let why = msg_text(cmd.get("why").unwrap_or("left"));
        let Some(j) = self.jobs.get_mut(&job) else {
            return Ok(());
        };
        j.colls.rank_gone(rank, from, &why);
        let failing: Vec<u64> = j
            .coll_waiters
            .keys()
            .copied()
            .filter(|&s| s >= from)
            .collect();
        let mut replies = Vec::new();
        for seq in failing {
            for w in j.coll_waiters.remove(&seq).unwrap_or_default() {
                let msg = format!(
                    "rank {rank} {why} before joining {} #{seq}",
                    w.call.kind.name()
                );
                replies.push((w.conn, coll_reply(w.call, Err(&msg))));
            }
        }
        for (conn, r) in replies {
            self.reply(conn, r);
        }
        Ok(())
    }
}
