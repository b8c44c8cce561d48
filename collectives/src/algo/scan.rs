//! Prefix reductions. Recursive doubling (dissemination form): in step k rank r passes the
//! reduction of its 2^k ranks ending at r to rank r + 2^k, so ranges stay adjacent and in
//! order. Linear: a chain from rank 0 up.

use crate::schedule::{Region, Schedule};

/// Inclusive scan: `out` holds this rank's contribution on entry, its prefix on exit.
pub(crate) fn scan_doubling(s: &mut Schedule, me: usize, p: usize, out: Region) {
    let tmp = s.scratch(out.len);
    let mut d = 1;
    while d < p {
        let round = s.round();
        if me + d < p {
            round.send(me + d, out);
        }
        if me >= d {
            round.recv(me - d, tmp).reduce(tmp, out, true);
        }
        d <<= 1;
    }
}

/// Exclusive scan of `input` into `out` (rank 0's `out` is left as it is).
pub(crate) fn exscan_doubling(s: &mut Schedule, me: usize, p: usize, input: Region, out: Region) {
    let part = s.scratch(input.len);
    let tmp = s.scratch(input.len);
    s.local().copy(input, part);
    let mut d = 1;
    while d < p {
        let round = s.round();
        if me + d < p {
            round.send(me + d, part);
        }
        if me >= d {
            round.recv(me - d, tmp);
            if d == 1 {
                round.copy(tmp, out);
            } else {
                round.reduce(tmp, out, true);
            }
            round.reduce(tmp, part, true);
        }
        d <<= 1;
    }
}

pub(crate) fn scan_linear(s: &mut Schedule, me: usize, p: usize, out: Region) {
    if me > 0 {
        let tmp = s.scratch(out.len);
        s.round().recv(me - 1, tmp).reduce(tmp, out, true);
    }
    if me + 1 < p {
        s.round().send(me + 1, out);
    }
}

pub(crate) fn exscan_linear(s: &mut Schedule, me: usize, p: usize, input: Region, out: Region) {
    if me == 0 {
        if p > 1 {
            s.round().send(1, input);
        }
        return;
    }
    s.round().recv(me - 1, out);
    if me + 1 < p {
        let part = s.scratch(input.len);
        s.local().copy(input, part).reduce(out, part, true);
        s.round().send(me + 1, part);
    }
}
