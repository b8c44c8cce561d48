//! The two-level (node-aware) tier: a step among the processes of each node, the inter-node
//! algorithm among the node leaders (each node's lowest rank), and a fan-out inside each
//! node. Each level is an ordinary flat collective on a team; the phases take the tags
//! `T | 1`, `T | 2`, ... of the one tag `T` the operation draws, so a two-level call never
//! matches the traffic of another collective in flight. The node steps run on the node
//! team's shared-memory collective buffer (`nodeshm.rs`) where the tier table says so,
//! else through the point-to-point queues.

use crate::config::CollOp;
use crate::error::{CollError, Result};
use crate::flat::{bad, Flat};
use crate::nodeshm::NodeShm;
use crate::op::Op;
use crate::p2p::{PointToPoint, Team};
use crate::scratch::Scratch;
use crate::tier::{select, Call, Shape, Tier};

mod lanes;
mod schedules;

/// The node-aware teams of a communicator that spans several nodes.
pub(crate) struct Levels<C: PointToPoint> {
    /// This process's node (team ranks 0.. = the node's ranks ascending; 0 is the leader).
    node: Flat<C>,
    /// The node's collective buffer, when the node holds several of the processes.
    node_shm: Option<NodeShm>,
    /// The node leaders in node order (only on leaders).
    leaders: Option<Flat<C>>,
    node_of: Vec<usize>,
    members: Vec<Vec<usize>>,
    /// Every node's ranks form one block, in node order (so rank order survives two levels).
    contiguous: bool,
    /// The ranks with this one's place in every node (`lanes.rs`), when the nodes hold
    /// contiguous blocks of equal size.
    lane: Option<Flat<C>>,
}

/// The ranks of each node (in order of first appearance) and each rank's node, from the
/// node id of every rank.
pub(crate) fn group_by_node(node_ids: &[u32]) -> (Vec<Vec<usize>>, Vec<usize>) {
    let mut members: Vec<Vec<usize>> = Vec::new();
    let mut ids: Vec<u32> = Vec::new();
    let mut node_of = Vec::with_capacity(node_ids.len());
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
    (members, node_of)
}

impl<C: PointToPoint + Clone> Levels<C> {
    /// The teams of `top` (a whole communicator) laid out as `group_by_node` found: several
    /// nodes, several processes on some node.
    pub fn new(top: &Flat<C>, members: Vec<Vec<usize>>, node_of: Vec<usize>) -> Result<Self> {
        let contiguous = node_of.windows(2).all(|w| w[0] <= w[1]);
        let me = top.rank();
        let cfg = top.config();
        let mine = &members[node_of[me]];
        let team = |ranks: Vec<usize>| -> Result<Flat<C>> {
            Ok(Flat::new(
                top.comm().clone(),
                Team::subset(me, ranks)?,
                cfg.clone(),
            ))
        };
        let node = team(mine.clone())?;
        let node_shm = (mine.len() > 1).then(NodeShm::new);
        let leaders = if mine[0] == me {
            Some(team(members.iter().map(|m| m[0]).collect())?)
        } else {
            None
        };
        let per_node = mine.len();
        let lane = if contiguous && members.iter().all(|m| m.len() == per_node) {
            let at = me - mine[0];
            Some(team(members.iter().map(|m| m[at]).collect())?)
        } else {
            None
        };
        tracing::debug!(
            nodes = members.len(),
            p = node_of.len(),
            contiguous,
            "two-level collectives"
        );
        Ok(Levels {
            node,
            node_shm,
            leaders,
            node_of,
            members,
            contiguous,
            lane,
        })
    }
}

impl<C: PointToPoint> Levels<C> {
    pub fn shape(&self) -> Shape {
        Shape::Nodes {
            contiguous: self.contiguous,
            lanes: self.lane.is_some(),
        }
    }

    fn leader_of(&self, r: usize) -> usize {
        self.members[self.node_of[r]][0]
    }

    /// The node buffer, when the tier table sends this node step there.
    fn node_buffer(&self, call: Call<'_>) -> Option<&NodeShm> {
        let shm = self.node_shm.as_ref()?;
        (select(self.node.config(), Shape::Node, call) == Tier::NodeShm).then_some(shm)
    }

    fn node_gather(&self, tag: i32, send: &[u8], recv: &mut [u8]) -> Result<()> {
        match self.node_buffer(Call::blocking(CollOp::Gather, send.len())) {
            Some(shm) => shm.gather(&self.node, tag, send, recv),
            None => self.node.igather(tag, send, recv, 0)?.wait(),
        }
    }

    fn node_bcast(&self, tag: i32, buf: &mut [u8]) -> Result<()> {
        match self.node_buffer(Call::blocking(CollOp::Bcast, buf.len())) {
            Some(shm) => shm.bcast(&self.node, tag, buf),
            None => self.node.ibcast(tag, buf, 0)?.wait(),
        }
    }

    fn node_reduce(&self, tag: i32, send: &[u8], recv: &mut [u8], op: &Op) -> Result<()> {
        let call = Call::blocking(CollOp::Reduce, send.len()).reducing(op);
        match self.node_buffer(call) {
            Some(shm) => shm.reduce(&self.node, tag, send, recv, op),
            None => self.node.ireduce(tag, send, recv, op, 0)?.wait(),
        }
    }

    /// Point-to-point move of `data` from `from` to `to` (communicator ranks), checked.
    fn hop(
        &self,
        top: &Flat<C>,
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

    pub fn barrier(&self, t: i32) -> Result<()> {
        self.node_gather(t | 1, &[], &mut [])?;
        if let Some(l) = &self.leaders {
            l.ibarrier(t | 2, true)?.wait()?;
        }
        self.node_bcast(t | 3, &mut [])
    }

    pub fn bcast(&self, top: &Flat<C>, t: i32, buf: &mut [u8], root: usize) -> Result<()> {
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
            l.ibcast(t | 2, buf, self.node_of[root])?.wait()?;
        }
        self.node_bcast(t | 3, buf)
    }

    pub fn reduce(
        &self,
        top: &Flat<C>,
        t: i32,
        send: &[u8],
        recv: &mut [u8],
        op: &Op,
        root: usize,
    ) -> Result<()> {
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
        self.node_reduce(t | 1, send, &mut part, op)?;
        let mut total = Scratch::zeroed(if me == lead && me != root { n } else { 0 });
        if let Some(l) = &self.leaders {
            let out: &mut [u8] = if me == root { &mut *recv } else { &mut total };
            l.ireduce(t | 2, &part, out, op, self.node_of[root])?
                .wait()?;
        }
        if lead != root {
            self.hop(top, t | 4, lead, root, &total, recv)?;
        }
        Ok(())
    }

    pub fn allreduce(
        &self,
        top: &Flat<C>,
        t: i32,
        send: &[u8],
        recv: &mut [u8],
        op: &Op,
    ) -> Result<()> {
        top.allreduce_args(op, send, recv)?;
        if let Some(l) = &self.leaders {
            let mut part = Scratch::zeroed(send.len());
            self.node_reduce(t | 1, send, &mut part, op)?;
            l.iallreduce(t | 2, &part, recv, op)?.wait()?;
        } else {
            self.node_reduce(t | 1, send, &mut [], op)?;
        }
        self.node_bcast(t | 3, recv)
    }

    /// Through the node leaders, or by lanes (`lanes.rs`, which the tier table picks from
    /// `allgather_two_level_max` in total up).
    pub fn allgather(
        &self,
        top: &Flat<C>,
        t: i32,
        send: &[u8],
        recv: &mut [u8],
        by_lanes: bool,
    ) -> Result<()> {
        top.allgather_args(send, recv)?;
        match self.lane.as_ref().filter(|_| by_lanes) {
            Some(lane) => self.allgather_by_lanes(lane, t, send, recv),
            None => self.allgather_by_leaders(t, send, recv),
        }
    }

    fn allgather_by_leaders(&self, t: i32, send: &[u8], recv: &mut [u8]) -> Result<()> {
        let (p, b) = (self.node_of.len(), send.len());
        let here = self.node.size();
        if let Some(l) = &self.leaders {
            let mut mine = Scratch::zeroed(here * b);
            self.node_gather(t | 1, send, &mut mine)?;
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
                l.iallgatherv(t | 2, &mine, recv, &counts, &displs)?
                    .wait()?;
            } else {
                let mut all = Scratch::zeroed(p * b);
                l.iallgatherv(t | 2, &mine, &mut all, &counts, &displs)?
                    .wait()?;
                for (k, m) in self.members.iter().enumerate() {
                    for (j, &r) in m.iter().enumerate() {
                        let at = displs[k] + j * b;
                        recv[r * b..(r + 1) * b].copy_from_slice(&all[at..at + b]);
                    }
                }
            }
        } else {
            self.node_gather(t | 1, send, &mut [])?;
        }
        self.node_bcast(t | 3, recv)
    }
}
