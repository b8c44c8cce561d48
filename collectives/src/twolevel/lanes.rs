//! Large two-level allgather by lanes (the multi-leader form): when every node holds a
//! contiguous block of `m` ranks, the ranks with local index `i` on all nodes form lane `i`.
//! Each lane first gathers its blocks across the nodes (every lane at once, each block
//! crossing the network once, straight into its place in `recv`), then the ranks of a node
//! swap what their lanes brought (pairwise, single-copy where the transport allows). Against
//! the leader form this saves the gather into the leader and the second copy of the node
//! fan-out, and no one process carries every byte between the nodes. Used from the total
//! where the leader form stops (`allgather_two_level_max`, see `tier.rs`); below
//! it the leader form's node steps through the shared-memory buffer cost less than the
//! extra messages.

use super::Levels;
use crate::error::Result;
use crate::flat::Flat;
use crate::p2p::PointToPoint;
use crate::schedule::{Region, Schedule};

impl<C: PointToPoint> Levels<C> {
    /// `recv` (p blocks of `send.len()`) gets every rank's `send`. The nodes hold contiguous,
    /// equal blocks of ranks (the condition for `lane`).
    pub(super) fn allgather_by_lanes(
        &self,
        lane: &Flat<C>,
        t: i32,
        send: &[u8],
        recv: &mut [u8],
    ) -> Result<()> {
        let b = send.len();
        let m = self.members[0].len();
        let me = self.node.rank();
        // Node k's rank with local index i sits at block k m + i.
        let at = |k: usize, i: usize| (k * m + i) * b;
        let nodes = self.members.len();
        let counts = vec![b; nodes];
        let displs: Vec<usize> = (0..nodes).map(|k| at(k, me)).collect();
        lane.iallgatherv(t | 4, send, recv, &counts, &displs)?
            .wait()?;
        let mut s = Schedule::new();
        for step in 1..m {
            let (to, from) = ((me + step) % m, (me + m - step) % m);
            let round = s.round();
            for k in 0..nodes {
                round
                    .send(to, Region::recv(at(k, me), b))
                    .recv(from, Region::recv(at(k, from), b));
            }
        }
        self.node.start(t | 5, s, None, &[], recv)?.wait()
    }
}
