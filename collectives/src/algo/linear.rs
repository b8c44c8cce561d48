//! Direct exchanges: the root talks to every rank (gather(v), scatter(v)), or every rank
//! posts all its transfers at once (alltoall(v)). `blocks[i]` is rank i's region.

use crate::schedule::{Region, Schedule};

pub(crate) fn gather(
    s: &mut Schedule,
    me: usize,
    p: usize,
    root: usize,
    src: Region,
    blocks: &[Region],
) {
    if me == root {
        let round = s.round();
        for (i, &b) in blocks.iter().enumerate().take(p) {
            if i != root {
                round.recv(i, b);
            }
        }
        round.copy(src, blocks[root]);
    } else {
        s.round().send(root, src);
    }
}

pub(crate) fn scatter(
    s: &mut Schedule,
    me: usize,
    p: usize,
    root: usize,
    blocks: &[Region],
    dst: Region,
) {
    if me == root {
        let round = s.round();
        for (i, &b) in blocks.iter().enumerate().take(p) {
            if i != root {
                round.send(i, b);
            }
        }
        round.copy(blocks[root], dst);
    } else {
        s.round().recv(root, dst);
    }
}

pub(crate) fn alltoall(
    s: &mut Schedule,
    me: usize,
    p: usize,
    sblocks: &[Region],
    rblocks: &[Region],
) {
    let round = s.round();
    for k in 1..p {
        round.recv((me + p - k) % p, rblocks[(me + p - k) % p]);
    }
    for k in 1..p {
        round.send((me + k) % p, sblocks[(me + k) % p]);
    }
    round.copy(sblocks[me], rblocks[me]);
}
