//! Dead peers: the requests that depend on a process fail when it is found gone.

use super::Protocol;
use crate::error::CommError;
use crate::gpid::Gpid;
use crate::net_route::NetRoute;
use crate::reqs::ReqState;
use crate::route::{Link, Routes};
use std::time::Duration;

/// Of the liveness checks (at least one a second in a long wait), those that also ask the
/// process manager about peers whose connection would report their exit.
const ASK_CONNECTED_EVERY: u64 = 16;

impl Protocol {
    /// Checks the processes that pending requests depend on; fails the requests of dead ones.
    pub fn check_liveness(&mut self, r: &mut Routes<'_>) {
        let mut deps: Vec<Gpid> = Vec::new();
        for (_, st) in self.reqs.iter_mut() {
            let g = match st {
                ReqState::RecvPosted(recv) => recv.peer,
                ReqState::RecvPulling { from, .. } | ReqState::RecvFrags { from, .. } => {
                    Some(*from)
                }
                ReqState::SendRndv(s) | ReqState::SendStream { send: s, .. } => Some(s.to),
                ReqState::SendHeld { to, .. } => Some(*to),
                ReqState::Done(_) => None,
            };
            if let Some(g) = g {
                if !deps.contains(&g) {
                    deps.push(g);
                }
            }
        }
        // Exits of other nodes' processes, as the process manager knows them, per job.
        let mut exits: Vec<(u32, Option<ibdyn_pmi::JobStatus>)> = Vec::new();
        self.liveness_rounds += 1;
        let ask_about_connected = self.liveness_rounds.is_multiple_of(ASK_CONNECTED_EVERY);
        for g in deps {
            // A peer we only receive from has no route yet: open it to learn its process.
            if self.peers.get_mut(g).is_none() {
                let card = match self.card_of(g) {
                    Ok(c) => c,
                    Err(e) => {
                        self.fail_peer(r, g, &format!("cannot reach it: {e}"));
                        continue;
                    }
                };
                let pid = card.pid;
                self.learn_card(card);
                if let Err(e) = self.peer(g) {
                    // A same-node sender that exited took its segment with it, but what it
                    // sent last may still wait in our queue: that is read first.
                    if !r.shm.holds_packet_of(pid) {
                        self.fail_peer(r, g, &format!("cannot reach it: {e}"));
                    }
                    continue;
                }
            }
            let (dead, local) = match self.peers.get_mut(g) {
                Some(p) => (
                    p.gone(r.shm).then(|| p.dead.clone().unwrap_or_default()),
                    matches!(p.link, Link::Shm(_)),
                ),
                None => (None, true),
            };
            // A process on another node that exits before it ever reached us breaks no
            // connection: only the process manager can tell. One connected over sockets
            // breaks it when it ends; the process manager is asked about it rarely (a host
            // that fails sends no FIN), since a thousand waiting processes asking every
            // second kept the daemons and the cores busy.
            let dead = dead.or_else(|| {
                if local || (!ask_about_connected && r.net.reports_exit_of(g)) {
                    return None;
                }
                let i = match exits.iter().position(|(j, _)| *j == g.job) {
                    Some(i) => i,
                    None => {
                        exits.push((g.job, self.pmi.job_status(g.job).ok()));
                        exits.len() - 1
                    }
                };
                let exit = exits[i]
                    .1
                    .as_ref()?
                    .exited
                    .iter()
                    .find(|e| e.rank == g.rank)?;
                Some(format!("the process {}", exit.how()))
            });
            if let Some(why) = dead {
                self.fail_peer(r, g, &why);
            }
        }
    }

    pub(super) fn fail_peer(&mut self, r: &mut Routes<'_>, g: Gpid, why: &str) {
        let desc = match self.peers.get_mut(g) {
            Some(p) => {
                if p.dead.is_none() {
                    p.dead = Some(why.to_string());
                    self.deaths += 1;
                }
                if let Link::Shm(l) = &mut p.link {
                    r.shm.drop_backlog(l);
                }
                p.describe()
            }
            None => g.to_string(),
        };
        tracing::debug!("peer {desc} failed: {why}");
        let mut failed = Vec::new();
        for (id, st) in self.reqs.iter_mut() {
            let hit = match st {
                ReqState::RecvPosted(recv) => recv.peer == Some(g),
                ReqState::RecvPulling { from, .. } | ReqState::RecvFrags { from, .. } => *from == g,
                ReqState::SendRndv(s) | ReqState::SendStream { send: s, .. } => s.to == g,
                ReqState::SendHeld { to, .. } => *to == g,
                ReqState::Done(_) => false,
            };
            if hit {
                failed.push(id);
            }
        }
        for id in failed {
            let err = CommError::PeerDead {
                peer: desc.clone(),
                detail: why.to_string(),
            };
            match self.reqs.get_mut(id) {
                Some(ReqState::SendRndv(_) | ReqState::SendStream { .. }) => {
                    self.finish_send(r, id, Err(err));
                    continue;
                }
                Some(ReqState::SendHeld { .. }) => self.held -= 1,
                _ => {
                    self.matcher.unpost(id);
                }
            }
            self.set(id, ReqState::Done(Err(err)));
        }
    }

    /// A process of another node has not answered this one's connect request for `waited`.
    /// It may be computing outside MPI, so the wait goes on while the process manager says
    /// it runs; once it says the process ended, or cannot say, the peer is given up.
    pub(crate) fn connect_slow(&mut self, net: &mut NetRoute, g: Gpid, waited: Duration) {
        let ended = match self.pmi.job_status(g.job) {
            Ok(st) => st
                .exited
                .iter()
                .find(|e| e.rank == g.rank)
                .map(|e| format!("the process manager says it {}", e.how())),
            Err(e) => Some(format!(
                "the process manager cannot say whether it runs: {e}"
            )),
        };
        match ended {
            Some(why) => net.abandon(
                g,
                format!(
                    "it did not answer the connect request for {:.1} s, and {why}",
                    waited.as_secs_f64()
                ),
            ),
            None => tracing::debug!(
                "peer {g} has not answered the connect request for {waited:?}; it runs \
                 (computing outside MPI?), so the wait goes on"
            ),
        }
    }
}
