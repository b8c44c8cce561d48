//! Dissemination barrier: in round k every rank signals rank + 2^k and hears from
//! rank - 2^k; after ceil(log2 p) rounds each rank has heard, transitively, from all.

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
