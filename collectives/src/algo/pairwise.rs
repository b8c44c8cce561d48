//! Pairwise exchange alltoall(v): in step k rank r sends to r + k and receives from r - k,
//! one pair of transfers in flight at a time (large blocks).

use crate::schedule::{Region, Schedule};

pub(crate) fn alltoall(
    s: &mut Schedule,
    me: usize,
    p: usize,
    sblocks: &[Region],
    rblocks: &[Region],
) {
    s.local().copy(sblocks[me], rblocks[me]);
    for k in 1..p {
        let (to, from) = ((me + k) % p, (me + p - k) % p);
        s.round().send(to, sblocks[to]).recv(from, rblocks[from]);
    }
}
