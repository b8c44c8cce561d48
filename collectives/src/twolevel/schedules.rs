//! The non-blocking two-level forms: the phases of the blocking ones (node step, leaders'
//! step, node fan-out) built as one schedule over the whole communicator, so the request
//! progresses like any other and no phase blocks inside the call that starts it. Each phase
//! is an ordinary algorithm built in its team's index space, then mapped to communicator
//! ranks and appended. The node steps go through point-to-point messages (the node's
//! shared-memory buffer serves one blocking operation at a time).

use super::Levels;
use crate::algo::{binomial, dissemination, recursive_doubling};
use crate::p2p::PointToPoint;
use crate::schedule::{Region, Schedule};

/// `build(schedule, my index, team size)` for the team `ranks` (communicator ranks, `me` among
/// them), with its peers mapped back to communicator ranks.
fn on_team(
    ranks: &[usize],
    me: usize,
    build: impl FnOnce(&mut Schedule, usize, usize),
) -> Schedule {
    let mut s = Schedule::new();
    if let Some(i) = ranks.iter().position(|&r| r == me) {
        build(&mut s, i, ranks.len());
        s.map_peers(|j| ranks[j]);
    }
    s
}

impl<C: PointToPoint> Levels<C> {
    fn node_ranks(&self, me: usize) -> &[usize] {
        &self.members[self.node_of[me]]
    }

    fn leader_ranks(&self) -> Vec<usize> {
        self.members.iter().map(|m| m[0]).collect()
    }

    /// Gather to each node's leader, the leaders' barrier (the last to arrive leaves last),
    /// and the release inside each node.
    pub(crate) fn barrier_schedule(&self, me: usize) -> Schedule {
        let node = self.node_ranks(me);
        let mut s = on_team(node, me, |s, i, k| {
            binomial::gather_tree(s, i, k, 0, &|_, _| Region::empty())
        });
        s.append(on_team(&self.leader_ranks(), me, |s, i, k| {
            dissemination::barrier_last_out(s, i, k)
        }));
        s.append(on_team(node, me, |s, i, k| {
            binomial::bcast(s, i, k, 0, Region::empty())
        }));
        s
    }

    /// The root hands `n` bytes to its node's leader, the leaders pass them down a binomial
    /// tree, and each leader down its node's tree. The buffer is the receive buffer.
    pub(crate) fn bcast_schedule(&self, me: usize, root: usize, n: usize) -> Schedule {
        let buf = Region::recv(0, n);
        let lead = self.leader_of(root);
        let mut s = Schedule::new();
        if root != lead {
            if me == root {
                s.round().send(lead, buf);
            } else if me == lead {
                s.round().recv(root, buf);
            }
        }
        let from = self.node_of[root];
        s.append(on_team(&self.leader_ranks(), me, |s, i, k| {
            binomial::bcast(s, i, k, from, buf)
        }));
        s.append(on_team(self.node_ranks(me), me, |s, i, k| {
            binomial::bcast(s, i, k, 0, buf)
        }));
        s
    }

    /// Reduce inside each node to its leader, allreduce among the leaders (recursive
    /// doubling), fan-out inside each node. Rank order holds when nodes hold contiguous
    /// blocks of ranks (`keeps_order`): each step joins adjacent ranges.
    pub(crate) fn allreduce_schedule(&self, me: usize, n: usize, commutative: bool) -> Schedule {
        let acc = Region::recv(0, n);
        let node = self.node_ranks(me);
        let mut s = on_team(node, me, |s, i, k| {
            let out = if i == 0 { acc } else { Region::recv(0, 0) };
            binomial::reduce(s, i, k, 0, commutative, Region::send(0, n), out)
        });
        s.append(on_team(&self.leader_ranks(), me, |s, i, k| {
            recursive_doubling::allreduce(s, i, k, acc)
        }));
        s.append(on_team(node, me, |s, i, k| {
            binomial::bcast(s, i, k, 0, acc)
        }));
        s
    }
}
