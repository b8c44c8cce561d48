//! Fence and allgather as a tree: each daemon counts the arrivals of its subtree and sends one
//! message up; the root completes the collective and sends the result down. A rank that leaves
//! makes every collective it has not joined fail, everywhere, naming it.

use super::{ConnId, Daemon};
use crate::protocol::{Down, Gone, Up};
use ibdyn_pmi::state::{order_values, CollKind, Collective};
use ibdyn_pmi::wire::{msg_token, Command};

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

impl Daemon {
    pub(crate) fn enter_coll(
        &mut self,
        conn: ConnId,
        call: Coll,
        value: Option<String>,
    ) -> crate::Result<()> {
        let (job, rank) = self.rank_of(conn)?;
        let refuse = |why: String| crate::LaunchError::Request(why);
        let j = self
            .jobs
            .get_mut(&job)
            .ok_or_else(|| refuse(format!("job {job} unknown")))?;
        let rs = j
            .ranks
            .get_mut(&rank)
            .ok_or_else(|| refuse(format!("rank {rank} unknown")))?;
        if rs.finalized {
            return Err(refuse(format!("rank {rank} has finalized")));
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
            self.send_up(&Up::Coll {
                job,
                seq,
                kind: c.kind,
                count: c.arrived,
                vals: c.values,
            });
            return;
        }
        let Some((kvs, size)) = self
            .jobs
            .get(&job)
            .map(|j| (j.spec.kvsname.clone(), j.spec.size))
        else {
            return;
        };
        let (fenced, result) = match c.kind {
            CollKind::Fence => {
                let data: Vec<(String, String)> = self.dir.kvs(&kvs).take_unfenced();
                (Some((kvs, data)), Ok(String::new()))
            }
            CollKind::Allgather => (
                None,
                order_values(size, &c.values).map(|vals| vals.join(",")),
            ),
        };
        let done = Down::CollDone {
            job,
            seq,
            kind: c.kind,
            fenced,
            result,
        };
        self.send_children(&done);
        if let Down::CollDone { fenced, result, .. } = &done {
            let result = result.as_ref().map(String::as_str).map_err(String::as_str);
            self.deliver_done(job, seq, c.kind, fenced.as_ref(), result);
        }
    }

    /// Arrivals of a child's subtree.
    pub(crate) fn on_coll_up(
        &mut self,
        job: u32,
        seq: u64,
        kind: CollKind,
        count: u32,
        vals: Vec<(u32, String)>,
    ) {
        let Some(j) = self.jobs.get_mut(&job) else {
            tracing::debug!(
                "daemon {}: collective of unknown job {job} dropped",
                self.me
            );
            return;
        };
        match j.colls.arrive(seq, kind, count, vals) {
            Ok(Some(c)) => self.coll_complete(job, seq, c),
            Ok(None) => {}
            // The waiters of this collective were already failed by the CollFail broadcast.
            Err(e) => tracing::debug!(
                "daemon {}: arrival for collective #{seq} dropped: {e}",
                self.me
            ),
        }
    }

    /// The root's result of a collective: reply to the local ranks that called it.
    pub(crate) fn deliver_done(
        &mut self,
        job: u32,
        seq: u64,
        kind: CollKind,
        fenced: Option<&(String, Vec<(String, String)>)>,
        result: Result<&str, &str>,
    ) {
        if let (CollKind::Fence, Some((kvs, data))) = (kind, fenced) {
            let store = self.dir.kvs(kvs);
            for (k, v) in data {
                store.learn(k, v);
            }
        }
        let waiters = self
            .jobs
            .get_mut(&job)
            .and_then(|j| j.coll_waiters.remove(&seq))
            .unwrap_or_default();
        for w in waiters {
            self.reply(w.conn, coll_reply(w.call, result));
        }
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
        let gone = Gone {
            job,
            rank,
            from_seq: from,
            why: why.to_string(),
        };
        self.apply_gone(&gone);
        if self.is_root() {
            self.send_children(&Down::CollFail(gone));
        } else {
            self.send_up(&Up::Gone(gone));
        }
    }

    pub(crate) fn on_gone_up(&mut self, gone: Gone) {
        self.apply_gone(&gone);
        if self.is_root() {
            self.send_children(&Down::CollFail(gone));
        } else {
            self.send_up(&Up::Gone(gone));
        }
    }

    /// Fails every collective the rank has not joined, at this daemon.
    pub(crate) fn apply_gone(&mut self, g: &Gone) {
        // Names live at the root; elsewhere there are none to withdraw.
        for name in self.dir.names.withdraw_owned_by(g.job, g.rank) {
            tracing::debug!(
                "daemon {}: {name:?} withdrawn: its publisher, job {} rank {}, {}",
                self.me,
                g.job,
                g.rank,
                g.why
            );
        }
        let Some(j) = self.jobs.get_mut(&g.job) else {
            return;
        };
        let (rank, from, why) = (g.rank, g.from_seq, &g.why);
        j.colls.rank_gone(rank, from, why);
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
    }
}
