//! Barrier and bcast.

use super::Flat;
use crate::algo::{binomial, dissemination, ring};
use crate::config::{Algorithm, CollOp};
use crate::error::Result;
use crate::exec::CollRequest;
use crate::p2p::PointToPoint;
use crate::schedule::{Region, Schedule};

impl<C: PointToPoint> Flat<C> {
    /// `last_out`: the process that arrived last leaves last (the node leaders' barrier
    /// inside a two-level one, see `dissemination::barrier_last_out`).
    pub(crate) fn ibarrier(&self, tag: i32, last_out: bool) -> Result<CollRequest<'_, C>> {
        let (me, p) = (self.rank(), self.size());
        let mut s = Schedule::new();
        match self.config.choose(CollOp::Barrier, 0, p, true)? {
            Algorithm::Binomial => {
                binomial::gather_tree(&mut s, me, p, 0, &|_, _| Region::empty());
                binomial::bcast(&mut s, me, p, 0, Region::empty());
            }
            _ if last_out => dissemination::barrier_last_out(&mut s, me, p),
            _ => dissemination::barrier(&mut s, me, p),
        }
        self.start(tag, s, None, &[], &mut [])
    }

    pub(crate) fn ibcast<'b>(
        &'b self,
        tag: i32,
        buf: &'b mut [u8],
        root: usize,
    ) -> Result<CollRequest<'b, C>> {
        self.check_root(CollOp::Bcast, root)?;
        let (me, p, n) = (self.rank(), self.size(), buf.len());
        let mut s = Schedule::new();
        let all = Region::recv(0, n);
        match self.config.choose(CollOp::Bcast, n, p, true)? {
            Algorithm::ScatterAllgather => {
                // Chunk j (of relative rank j) is bytes [j c, (j + 1) c) clipped to n.
                let c = n.div_ceil(p);
                let range = |lo: usize, hi: usize| {
                    let (a, b) = ((lo * c).min(n), (hi * c).min(n));
                    Region::recv(a, b - a)
                };
                binomial::scatter_tree(&mut s, me, p, root, &range);
                let rel = (me + p - root) % p;
                ring::allgather(&mut s, rel, p, &|r| (r + root) % p, &|j| range(j, j + 1));
            }
            _ => binomial::bcast(&mut s, me, p, root, all),
        }
        self.start(tag, s, None, &[], buf)
    }
}
