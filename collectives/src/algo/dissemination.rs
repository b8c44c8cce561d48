//! Dissemination barrier: in round k every rank signals rank + 2^k and hears from
//! rank - 2^k; after ceil(log2 p) rounds each rank has heard, transitively, from all.
//!
//! `barrier_last_out` adds one round (signal rank + 1, hear from rank - 1) after the last.
//! The rank that arrived last finds its messages waiting and would otherwise leave at once,
//! a message time ahead of the others, then wait for them in whatever follows (the root of
//! a reduce, or the receiver of a bcast that left before its sender). The extra round holds
//! it until its predecessor has left, so the ranks that waited longest leave first.

use crate::schedule::{Region, Schedule};

pub(crate) fn barrier(s: &mut Schedule, me: usize, p: usize) {
    let mut d = 1;
    while d < p {
        s.round()
            .send((me + d) % p, Region::empty())
            .recv((me + p - d) % p, Region::empty());
        d <<= 1;
    }
}

pub(crate) fn barrier_last_out(s: &mut Schedule, me: usize, p: usize) {
    barrier(s, me, p);
    if p > 1 {
        s.round()
            .send((me + 1) % p, Region::empty())
            .recv((me + p - 1) % p, Region::empty());
    }
}
