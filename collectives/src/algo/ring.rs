//! Ring: p - 1 steps, each passing one block to the right neighbour and taking one from
//! the left. Bandwidth-optimal for large messages.

use crate::schedule::{Region, Schedule};

/// Allgather over ring positions `me` of `p` (`peer` maps a position to a team rank):
/// position i starts with `blk(i)` and ends with every block.
pub(crate) fn allgather(
    s: &mut Schedule,
    me: usize,
    p: usize,
    peer: &dyn Fn(usize) -> usize,
    blk: &dyn Fn(usize) -> Region,
) {
    let (right, left) = (peer((me + 1) % p), peer((me + p - 1) % p));
    for k in 0..p.saturating_sub(1) {
        s.round()
            .send(right, blk((me + p - k) % p))
            .recv(left, blk((me + 2 * p - k - 1) % p));
    }
}

/// Reduce-scatter of `acc` cut at byte offsets `off` (p + 1 entries): on exit block `me` of
/// `acc` holds the reduction of everyone's block `me`. Combines out of rank order.
pub(crate) fn reduce_scatter(s: &mut Schedule, me: usize, p: usize, acc: Region, off: &[usize]) {
    let blk = |i: usize| acc.sub(off[i], off[i + 1] - off[i]);
    let widest = (0..p).map(|i| off[i + 1] - off[i]).max().unwrap_or(0);
    let tmp = s.scratch(widest);
    let (right, left) = ((me + 1) % p, (me + p - 1) % p);
    for k in 0..p.saturating_sub(1) {
        let sb = (me + 2 * p - k - 1) % p;
        let rb = (me + 2 * p - k - 2) % p;
        let t = tmp.sub(0, blk(rb).len);
        s.round()
            .send(right, blk(sb))
            .recv(left, t)
            .reduce(t, blk(rb), true);
    }
}

/// Allreduce: ring reduce-scatter, then ring allgather, over blocks at `off`.
pub(crate) fn allreduce(s: &mut Schedule, me: usize, p: usize, acc: Region, off: &[usize]) {
    reduce_scatter(s, me, p, acc, off);
    allgather(s, me, p, &|i| i, &|i| acc.sub(off[i], off[i + 1] - off[i]));
}
