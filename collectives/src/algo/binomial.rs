//! Binomial trees over ranks relative to a root: bcast, scatter, gather, reduce.
//! Relative rank `r`'s subtree is `r .. min(r + lowbit(r), p)` (the root's is everything).

use crate::schedule::{Region, Schedule};

fn rel(me: usize, root: usize, p: usize) -> usize {
    (me + p - root) % p
}

fn real(rel: usize, root: usize, p: usize) -> usize {
    (rel + root) % p
}

/// The lowest set bit of relative rank `r` (the span of its subtree); the root spans all.
fn span(r: usize, p: usize) -> usize {
    if r == 0 {
        p.next_power_of_two()
    } else {
        1 << r.trailing_zeros()
    }
}

/// Size of relative rank `r`'s subtree.
pub(crate) fn subtree(r: usize, p: usize) -> usize {
    span(r, p).min(p - r)
}

pub(crate) fn bcast(s: &mut Schedule, me: usize, p: usize, root: usize, buf: Region) {
    let r = rel(me, root, p);
    let m = span(r, p);
    if r != 0 {
        s.round().recv(real(r - m, root, p), buf);
    }
    let round = s.round();
    let mut c = m >> 1;
    while c > 0 {
        if r + c < p {
            round.send(real(r + c, root, p), buf);
        }
        c >>= 1;
    }
}

/// Scatter of relative-rank blocks: `range(lo, hi)` is where this rank holds (or will hold)
/// the blocks of relative ranks `lo .. hi` of its subtree.
pub(crate) fn scatter_tree(
    s: &mut Schedule,
    me: usize,
    p: usize,
    root: usize,
    range: &dyn Fn(usize, usize) -> Region,
) {
    let r = rel(me, root, p);
    let m = span(r, p);
    if r != 0 {
        s.round()
            .recv(real(r - m, root, p), range(r, r + subtree(r, p)));
    }
    let round = s.round();
    let mut c = m >> 1;
    while c > 0 {
        if r + c < p {
            round.send(
                real(r + c, root, p),
                range(r + c, r + c + subtree(r + c, p)),
            );
        }
        c >>= 1;
    }
}

/// Gather of relative-rank blocks into `range` (see `scatter_tree`), towards the root.
pub(crate) fn gather_tree(
    s: &mut Schedule,
    me: usize,
    p: usize,
    root: usize,
    range: &dyn Fn(usize, usize) -> Region,
) {
    let r = rel(me, root, p);
    let m = span(r, p);
    let round = s.round();
    let mut c = 1;
    while c < m {
        if r + c < p {
            round.recv(
                real(r + c, root, p),
                range(r + c, r + c + subtree(r + c, p)),
            );
        }
        c <<= 1;
    }
    if r != 0 {
        s.round()
            .send(real(r - m, root, p), range(r, r + subtree(r, p)));
    }
}

/// Scatter of `block` bytes per rank from the root's `src` (rank order) into `dst`.
pub(crate) fn scatter(
    s: &mut Schedule,
    me: usize,
    p: usize,
    root: usize,
    block: usize,
    src: Region,
    dst: Region,
) {
    let r = rel(me, root, p);
    // This rank's blocks in relative order, starting with its own.
    let hold = if r == 0 && root == 0 {
        src
    } else if r == 0 {
        let t = s.scratch(p * block);
        s.local()
            .copy(
                src.sub(root * block, (p - root) * block),
                t.sub(0, (p - root) * block),
            )
            .copy(
                src.sub(0, root * block),
                t.sub((p - root) * block, root * block),
            );
        t
    } else {
        s.scratch(subtree(r, p) * block)
    };
    scatter_tree(s, me, p, root, &|lo, hi| {
        hold.sub((lo - r) * block, (hi - lo) * block)
    });
    s.local().copy(hold.sub(0, block), dst);
}

/// Gather of `block` bytes per rank (`src`) into the root's `dst` (rank order).
pub(crate) fn gather(
    s: &mut Schedule,
    me: usize,
    p: usize,
    root: usize,
    block: usize,
    src: Region,
    dst: Region,
) {
    let r = rel(me, root, p);
    let hold = if r == 0 && root == 0 {
        dst
    } else {
        s.scratch(subtree(r, p) * block)
    };
    s.local().copy(src, hold.sub(0, block));
    gather_tree(s, me, p, root, &|lo, hi| {
        hold.sub((lo - r) * block, (hi - lo) * block)
    });
    if r == 0 && root != 0 {
        s.local()
            .copy(
                hold.sub(0, (p - root) * block),
                dst.sub(root * block, (p - root) * block),
            )
            .copy(
                hold.sub((p - root) * block, root * block),
                dst.sub(0, root * block),
            );
    }
}

/// Reduction of every rank's `input` (n bytes) into the root's `out`. With a
/// non-commutative op the tree is rooted at rank 0, so each combination joins two adjacent
/// rank ranges in order, and the result then moves to the root.
pub(crate) fn reduce(
    s: &mut Schedule,
    me: usize,
    p: usize,
    root: usize,
    commutative: bool,
    input: Region,
    out: Region,
) {
    let n = input.len;
    let troot = if commutative { root } else { 0 };
    let r = rel(me, troot, p);
    let acc = if me == root && me == troot {
        out
    } else {
        s.scratch(n)
    };
    s.local().copy(input, acc);
    let tmp = s.scratch(n);
    let mut m = 1;
    while m < p {
        if r & m != 0 {
            s.round().send(real(r - m, troot, p), acc);
            break;
        }
        if r + m < p {
            // acc covers lower ranks than the child's contribution: acc = acc ∘ tmp.
            s.round()
                .recv(real(r + m, troot, p), tmp)
                .reduce(tmp, acc, false);
        }
        m <<= 1;
    }
    if troot != root {
        if me == troot {
            s.round().send(root, acc);
        } else if me == root {
            s.round().recv(troot, out);
        }
    }
}
