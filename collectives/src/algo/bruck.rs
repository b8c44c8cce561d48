//! Bruck's algorithms for small blocks: ceil(log2 p) steps regardless of p, each moving
//! the blocks whose index has bit k set (alltoall) or doubling the gathered run (allgather).

use crate::schedule::{Region, Schedule};

/// Alltoall of `block`-byte blocks from `src` to `dst` (both in rank order).
pub(crate) fn alltoall(
    s: &mut Schedule,
    me: usize,
    p: usize,
    block: usize,
    src: Region,
    dst: Region,
) {
    let b = |r: Region, i: usize| r.sub(i * block, block);
    // t[i] = the block this rank sends to rank me + i.
    let t = s.scratch(p * block);
    let round = s.local();
    for i in 0..p {
        round.copy(b(src, (me + i) % p), b(t, i));
    }
    let most = p / 2 + 1;
    let (pack, unpack) = (s.scratch(most * block), s.scratch(most * block));
    let mut k = 1;
    while k < p {
        let idx: Vec<usize> = (0..p).filter(|i| i & k != 0).collect();
        let n = idx.len() * block;
        let round = s.local();
        for (j, &i) in idx.iter().enumerate() {
            round.copy(b(t, i), b(pack, j));
        }
        let round = s.round();
        round
            .send((me + k) % p, pack.sub(0, n))
            .recv((me + p - k) % p, unpack.sub(0, n));
        for (j, &i) in idx.iter().enumerate() {
            round.copy(b(unpack, j), b(t, i));
        }
        k <<= 1;
    }
    // Now t[i] is the block rank me - i sent to this rank.
    let round = s.local();
    for i in 0..p {
        round.copy(b(t, i), b(dst, (me + p - i) % p));
    }
}

/// Allgather of `block`-byte blocks: `src` is this rank's, `dst` gets all in rank order.
pub(crate) fn allgather(
    s: &mut Schedule,
    me: usize,
    p: usize,
    block: usize,
    src: Region,
    dst: Region,
) {
    // t[i] = the block of rank me + i.
    let t = s.scratch(p * block);
    s.local().copy(src, t.sub(0, block));
    let mut k = 1;
    while k < p {
        let n = k.min(p - k);
        s.round()
            .send((me + p - k) % p, t.sub(0, n * block))
            .recv((me + k) % p, t.sub(k * block, n * block));
        k <<= 1;
    }
    let head = p - me;
    s.local()
        .copy(t.sub(0, head * block), dst.sub(me * block, head * block))
        .copy(t.sub(head * block, me * block), dst.sub(0, me * block));
}
