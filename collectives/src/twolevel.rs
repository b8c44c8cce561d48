//! Two-level (node-aware) forms: a step among the processes of each node, the inter-node
//! algorithm among the node leaders (each node's lowest rank), and a fan-out inside each
//! node. Each level is an ordinary flat collective on a team; the phases take the tags
//! `T | 1`, `T | 2`, ... of the one tag `T` the operation draws, so a two-level call never
//! matches the traffic of another collective in flight. The node steps run on the node
//! team's shared-memory collective buffer (`nodeshm.rs`) where it wins, else through the
//! point-to-point queues.

use crate::coll::{bad, Collectives};
use crate::config::CollOp;
use crate::error::{CollError, Result};
use crate::op::Op;
use crate::p2p::{PointToPoint, Team};
use crate::scratch::Scratch;

mod lanes;
mod schedules;

/// The node-aware teams of a communicator that spans several nodes.
pub(crate) struct Levels<C: PointToPoint> {
    /// This process's node (team ranks 0.. = the node's ranks ascending; 0 is the leader).
    node: Collectives<C>,
    /// The node leaders in node order (only on leaders).
    leaders: Option<Collectives<C>>,
    node_of: Vec<usize>,
    members: Vec<Vec<usize>>,
    /// Every node's ranks form one block, in node order (so rank order survives two levels).
    contiguous: bool,
    /// The ranks with this one's place in every node (`lanes.rs`), when the nodes hold
    /// contiguous blocks of equal size.
    lane: Option<Collectives<C>>,
}

impl<C: PointToPoint + Clone> Collectives<C> {
    /// Adds two-level forms when `node_ids` (one per rank) shows several nodes with several
    /// processes on some node. Only for collectives over a whole communicator.
    pub fn with_nodes(mut self, node_ids: &[u32]) -> Result<Self> {
        let p = self.size();
        if node_ids.len() != p || self.team().comm_rank(p - 1) != p - 1 {
            return Err(CollError::arg(
                "two-level",
                format!("{} node ids for {p} ranks", node_ids.len()),
            ));
        }
        let mut members: Vec<Vec<usize>> = Vec::new();
        let mut ids: Vec<u32> = Vec::new();
        let mut node_of = Vec::with_capacity(p);
        for (r, id) in node_ids.iter().enumerate() {
            let k = match ids.iter().position(|x| x == id) {
                Some(k) => k,
                None => {
                    ids.push(*id);
                    members.push(Vec::new());
                    ids.len() - 1
                }
            };
            members[k].push(r);
            node_of.push(k);
        }
        if members.len() == 1 {
            self.set_node_local();
        }
        if members.len() < 2 || members.len() == p {
            return Ok(self);
        }
        let contiguous = node_of.windows(2).all(|w| w[0] <= w[1]);
        let me = self.rank();
        let cfg = self.config().clone();
        let mine = &members[node_of[me]];
        let mut node = Collectives::on_team(
            self.comm().clone(),
            Team::subset(me, mine.clone())?,
            cfg.clone(),
        );
        node.set_node_local();
        let leaders = if mine[0] == me {
            let l: Vec<usize> = members.iter().map(|m| m[0]).collect();
            Some(Collectives::on_team(
                self.comm().clone(),
                Team::subset(me, l)?,
                cfg,
            ))
        } else {
            None
        };
        let per_node = mine.len();
        let lane = if contiguous && members.iter().all(|m| m.len() == per_node) {
            let at = me - mine[0];
            let l: Vec<usize> = members.iter().map(|m| m[at]).collect();
            Some(Collectives::on_team(
                self.comm().clone(),
                Team::subset(me, l)?,
                self.config().clone(),
            ))
        } else {
            None
        };
        tracing::debug!(
            nodes = members.len(),
            p,
            contiguous,
            "two-level collectives"
        );
        self.set_levels(Levels {
            node,
            leaders,
            node_of,
            members,
            contiguous,
            lane,
        });
        Ok(self)
    }
}

/// Runs `f` on `sub` with the phase tag `tag`.
fn phase<C: PointToPoint, R>(
    sub: &Collectives<C>,
    tag: i32,
    f: impl FnOnce(&Collectives<C>) -> Result<R>,
) -> Result<R> {
    sub.set_tag_override(Some(tag));
    let r = f(sub);
    sub.set_tag_override(None);
    r
}

impl<C: PointToPoint> Levels<C> {
    /// Whether the two-level form keeps rank order for `op` (or `op` does not care).
    pub(crate) fn keeps_order(&self, op: &Op) -> bool {
        op.is_commutative() || self.contiguous
    }

    fn leader_of(&self, r: usize) -> usize {
        self.members[self.node_of[r]][0]
    }

    /// Point-to-point move of `data` from `from` to `to` (communicator ranks), checked.
    fn hop(
        &self,
        top: &Collectives<C>,
        tag: i32,
        from: usize,
        to: usize,
        send: &[u8],
        recv: &mut [u8],
    ) -> Result<()> {
        let me = top.rank();
        if me == from {
            crate::patience::wait(top.comm().isend(send, to, tag)?)?;
        } else if me == to {
            let want = recv.len();
            let got = crate::patience::wait(top.comm().irecv(recv, from, tag)?)?;
            if got != want {
                return Err(CollError::SizeMismatch {
                    peer: from,
                    expected: want,
                    got,
                });
            }
        }
        Ok(())
    }

    pub(crate) fn barrier(&self, top: &Collectives<C>) -> Result<()> {
        let t = top.next_tag();
        phase(&self.node, t | 1, |c| c.gather(&[], &mut [], 0))?;
        if let Some(l) = &self.leaders {
            phase(l, t | 2, |c| c.leaders_barrier())?;
        }
        phase(&self.node, t | 3, |c| c.bcast(&mut [], 0))
    }

    pub(crate) fn bcast(&self, top: &Collectives<C>, buf: &mut [u8], root: usize) -> Result<()> {
        let t = top.next_tag();
        let lead = self.leader_of(root);
        if lead != root {
            let data = if top.rank() == root {
                buf.to_vec()
            } else {
                Vec::new()
            };
            self.hop(top, t | 1, root, lead, &data, buf)?;
        }
        if let Some(l) = &self.leaders {
            phase(l, t | 2, |c| c.bcast(buf, self.node_of[root]))?;
        }
        phase(&self.node, t | 3, |c| c.bcast(buf, 0))
    }

    pub(crate) fn reduce(
        &self,
        top: &Collectives<C>,
        send: &[u8],
        recv: &mut [u8],
        op: &Op,
        root: usize,
    ) -> Result<()> {
        let t = top.next_tag();
        let n = send.len();
        top.check_op(CollOp::Reduce, op, n)?;
        let me = top.rank();
        if me == root && recv.len() != n {
            return Err(bad(
                CollOp::Reduce,
                format!("root's receive buffer is {} bytes, send is {n}", recv.len()),
            ));
        }
        let lead = self.leader_of(root);
        let mut part = Scratch::zeroed(if self.leaders.is_some() { n } else { 0 });
        phase(&self.node, t | 1, |c| c.reduce(send, &mut part, op, 0))?;
        let mut total = Scratch::zeroed(if me == lead && me != root { n } else { 0 });
        if let Some(l) = &self.leaders {
            let out: &mut [u8] = if me == root { &mut *recv } else { &mut total };
            phase(l, t | 2, |c| c.reduce(&part, out, op, self.node_of[root]))?;
        }
        if lead != root {
            self.hop(top, t | 4, lead, root, &total, recv)?;
        }
        Ok(())
    }

    pub(crate) fn allreduce(
        &self,
        top: &Collectives<C>,
        send: &[u8],
        recv: &mut [u8],
        op: &Op,
    ) -> Result<()> {
        let t = top.next_tag();
        let n = send.len();
        top.check_op(CollOp::Allreduce, op, n)?;
        if recv.len() != n {
            return Err(bad(
                CollOp::Allreduce,
                format!("receive buffer is {} bytes, send is {n}", recv.len()),
            ));
        }
        if let Some(l) = &self.leaders {
            let mut part = Scratch::zeroed(n);
            phase(&self.node, t | 1, |c| c.reduce(send, &mut part, op, 0))?;
            phase(l, t | 2, |c| c.allreduce(&part, recv, op))?;
        } else {
            phase(&self.node, t | 1, |c| c.reduce(send, &mut [], op, 0))?;
        }
        phase(&self.node, t | 3, |c| c.bcast(recv, 0))
    }

    /// Through the node leaders up to `allgather_two_level_max` bytes in total, by lanes
    /// above (`lanes.rs`); None where neither applies (the caller runs it flat).
    pub(crate) fn allgather(
        &self,
        top: &Collectives<C>,
        send: &[u8],
        recv: &mut [u8],
    ) -> Option<Result<()>> {
        let (p, b) = (top.size(), send.len());
        let by_leaders = p * b < top.config().thresholds.allgather_two_level_max;
        let lane = self.lane.as_ref().filter(|_| !by_leaders);
        if !by_leaders && lane.is_none() {
            return None;
        }
        let t = top.next_tag();
        if recv.len() != p * b {
            return Some(Err(bad(
                CollOp::Allgather,
                format!("receive buffer is {} bytes, not {p} x {b}", recv.len()),
            )));
        }
        Some(match lane {
            Some(lane) => self.allgather_by_lanes(lane, t, send, recv),
            None => self.allgather_by_leaders(t, send, recv),
        })
    }

    fn allgather_by_leaders(&self, t: i32, send: &[u8], recv: &mut [u8]) -> Result<()> {
        let (p, b) = (self.node_of.len(), send.len());
        let here = self.node.size();
        if let Some(l) = &self.leaders {
            let mut mine = Scratch::zeroed(here * b);
            phase(&self.node, t | 1, |c| c.gather(send, &mut mine, 0))?;
            let counts: Vec<usize> = self.members.iter().map(|m| m.len() * b).collect();
            let displs: Vec<usize> = counts
                .iter()
                .scan(0, |acc, c| {
                    let d = *acc;
                    *acc += c;
                    Some(d)
                })
                .collect();
            if self.contiguous {
                phase(l, t | 2, |c| c.allgatherv(&mine, recv, &counts, &displs))?;
            } else {
                let mut all = Scratch::zeroed(p * b);
                phase(l, t | 2, |c| {
                    c.allgatherv(&mine, &mut all, &counts, &displs)
                })?;
                for (k, m) in self.members.iter().enumerate() {
                    for (j, &r) in m.iter().enumerate() {
                        let at = displs[k] + j * b;
                        recv[r * b..(r + 1) * b].copy_from_slice(&all[at..at + b]);
                    }
                }
            }
        } else {
            phase(&self.node, t | 1, |c| c.gather(send, &mut [], 0))?;
        }
        phase(&self.node, t | 3, |c| c.bcast(recv, 0))
    }
}
