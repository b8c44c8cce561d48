//! Rabenseifner's algorithm: reduce-scatter by recursive halving (each step a rank keeps
//! half of its range and swaps the other half with its partner), followed by recursive
//! doubling allgather (allreduce) or a gather to the root (reduce). Combines out of rank
//! order, so commutative operations only.

use super::Fold;
use crate::schedule::{Region, Schedule};

/// Halving over `acc` cut at byte offsets `off` (p + 1 entries, one block per real rank).
/// On exit, virtual rank v's blocks `first(v) .. first(v + 1)` of `acc` hold the reduction;
/// returns this rank's virtual rank (None if it sat out).
fn halving(s: &mut Schedule, me: usize, acc: Region, off: &[usize], f: &Fold) -> Option<usize> {
    let tmp = s.scratch(acc.len);
    let span = |lo: usize, hi: usize| (off[f.first(lo)], off[f.first(hi)] - off[f.first(lo)]);
    if f.folded(me) {
        if me.is_multiple_of(2) {
            s.round().send(me + 1, acc);
        } else {
            s.round().recv(me - 1, tmp).reduce(tmp, acc, true);
        }
    }
    let v = f.vrank(me)?;
    let mut m = f.pof2 / 2;
    while m > 0 {
        let lo = v & !(2 * m - 1);
        let (keep, give) = if v & m == 0 {
            (lo, lo + m)
        } else {
            (lo + m, lo)
        };
        let peer = f.real(v ^ m);
        let (ko, kl) = span(keep, keep + m);
        let (go, gl) = span(give, give + m);
        s.round()
            .send(peer, acc.sub(go, gl))
            .recv(peer, tmp.sub(ko, kl))
            .reduce(tmp.sub(ko, kl), acc.sub(ko, kl), (v ^ m) < v);
        m >>= 1;
    }
    Some(v)
}

/// Allreduce of `acc` in place; blocks cut at `off`.
pub(crate) fn allreduce(s: &mut Schedule, me: usize, p: usize, acc: Region, off: &[usize]) {
    let f = Fold::new(p);
    let span =
        |lo: usize, hi: usize| acc.sub(off[f.first(lo)], off[f.first(hi)] - off[f.first(lo)]);
    if let Some(v) = halving(s, me, acc, off, &f) {
        let mut m = 1;
        while m < f.pof2 {
            let lo = v & !(m - 1);
            let plo = lo ^ m;
            s.round()
                .send(f.real(v ^ m), span(lo, lo + m))
                .recv(f.real(v ^ m), span(plo, plo + m));
            m <<= 1;
        }
    }
    if f.folded(me) {
        if me % 2 == 1 {
            s.round().send(me - 1, acc);
        } else {
            s.round().recv(me + 1, acc);
        }
    }
}

/// Reduce-scatter: rank i ends with block i (at `off`) of the reduction in `out`. `acc`
/// holds this rank's whole contribution and is used as working space.
pub(crate) fn reduce_scatter(
    s: &mut Schedule,
    me: usize,
    p: usize,
    acc: Region,
    off: &[usize],
    out: Region,
) {
    let f = Fold::new(p);
    let blk = |i: usize| acc.sub(off[i], off[i + 1] - off[i]);
    if halving(s, me, acc, off, &f).is_some() {
        let round = s.round();
        if f.folded(me) {
            round.send(me - 1, blk(me - 1));
        }
        round.copy(blk(me), out);
    } else {
        s.round().recv(me + 1, out);
    }
}

/// Reduce to `root`'s `out`: halving, then every virtual rank sends its part to the root.
pub(crate) fn reduce(
    s: &mut Schedule,
    me: usize,
    p: usize,
    root: usize,
    acc: Region,
    off: &[usize],
    out: Region,
) {
    let f = Fold::new(p);
    let span = |r: Region, v: usize| r.sub(off[f.first(v)], off[f.first(v + 1)] - off[f.first(v)]);
    let mine = halving(s, me, acc, off, &f);
    let round = s.round();
    if me == root {
        for v in 0..f.pof2 {
            if Some(v) == mine {
                round.copy(span(acc, v), span(out, v));
            } else {
                round.recv(f.real(v), span(out, v));
            }
        }
    } else if let Some(v) = mine {
        round.send(root, span(acc, v));
    }
}
