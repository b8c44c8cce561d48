//! Recursive doubling: in step k a rank swaps everything it has with the rank whose virtual
//! rank differs in bit k. Non-powers of two fold in first (see `Fold`), and the result is
//! handed back to the ranks that sat out at the end.

use super::Fold;
use crate::schedule::{Region, Schedule};

/// Allreduce of `acc` (this rank's contribution on entry, the result on exit). Order
/// preserving: each step joins two adjacent ranges of virtual (hence real) ranks.
pub(crate) fn allreduce(s: &mut Schedule, me: usize, p: usize, acc: Region) {
    let f = Fold::new(p);
    let tmp = s.scratch(acc.len);
    if f.folded(me) {
        if me.is_multiple_of(2) {
            s.round().send(me + 1, acc);
        } else {
            s.round().recv(me - 1, tmp).reduce(tmp, acc, true);
        }
    }
    if let Some(v) = f.vrank(me) {
        let mut m = 1;
        while m < f.pof2 {
            let pv = v ^ m;
            let peer = f.real(pv);
            s.round()
                .send(peer, acc)
                .recv(peer, tmp)
                .reduce(tmp, acc, pv < v);
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

/// Allgather of `block`-byte blocks in `buf` (rank order; this rank's block already in place).
pub(crate) fn allgather(s: &mut Schedule, me: usize, p: usize, block: usize, buf: Region) {
    let f = Fold::new(p);
    let blocks = |lo: usize, hi: usize| buf.sub(lo * block, (hi - lo) * block);
    if f.folded(me) {
        if me.is_multiple_of(2) {
            s.round().send(me + 1, blocks(me, me + 1));
        } else {
            s.round().recv(me - 1, blocks(me - 1, me));
        }
    }
    if let Some(v) = f.vrank(me) {
        let mut m = 1;
        while m < f.pof2 {
            let lo = v & !(m - 1);
            let plo = lo ^ m;
            let peer = f.real(v ^ m);
            s.round()
                .send(peer, blocks(f.first(lo), f.first(lo + m)))
                .recv(peer, blocks(f.first(plo), f.first(plo + m)));
            m <<= 1;
        }
    }
    if f.folded(me) {
        if me % 2 == 1 {
            s.round().send(me - 1, buf);
        } else {
            s.round().recv(me + 1, buf);
        }
    }
}
