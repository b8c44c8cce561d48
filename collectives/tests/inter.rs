//! Intercommunicator collectives on the mock communicator: every operation (blocking and
//! non-blocking), groups of 1+3, 2+2, 3+5 (and 8+8 for the alltoall through the leaders),
//! roots MPI_ROOT / MPI_PROC_NULL / remote, with the groups' local steps flat, on one
//! node's buffer, or two-level, against a reference computed locally. Results cross between
//! the groups. Each case runs several times, so the buffers (made on the third eligible
//! call) serve the later ones.

mod common;

use common::{data, fold_of, op, run_inter, InterLayout, MockComm};
use ibdyn_collectives::{AlgoConfig, CollError, InterCollectives, InterRole};

const GROUPS: [(usize, usize); 3] = [(1, 3), (2, 2), (3, 5)];
const LAYOUTS: [InterLayout; 3] = [
    InterLayout::Flat,
    InterLayout::OneNode,
    InterLayout::TwoNodesEach,
];
/// Bytes (multiples of 8) around the node buffer's thresholds (64 KiB gather).
const SIZES: [usize; 4] = [0, 8, 1000, 72_000];
const ROUNDS: usize = 3;

/// The sizes of the two groups and this process's place.
#[derive(Copy, Clone)]
struct Side {
    g: usize,
    lr: usize,
    sizes: [usize; 2],
}

impl Side {
    fn of(c: &InterCollectives<MockComm>, g: usize) -> Side {
        let mut sizes = [c.size(); 2];
        sizes[1 - g] = c.remote_size();
        Side {
            g,
            lr: c.rank(),
            sizes,
        }
    }
    /// A name for rank `lr` of group `g` (the data's seed).
    fn id(g: usize, lr: usize) -> usize {
        g * 100 + lr
    }
    fn me(&self) -> usize {
        Side::id(self.g, self.lr)
    }
    fn other(&self) -> usize {
        1 - self.g
    }
    /// The other group's ranks' names, in rank order.
    fn theirs(&self) -> impl DoubleEndedIterator<Item = usize> {
        let o = self.other();
        (0..self.sizes[o]).map(move |r| Side::id(o, r))
    }
    /// This process's part in an operation rooted at rank `root` of group `root_g`.
    fn role(&self, root_g: usize, root: usize) -> InterRole {
        if self.g != root_g {
            InterRole::Remote(root)
        } else if self.lr == root {
            InterRole::Root
        } else {
            InterRole::ProcNull
        }
    }
}

fn check(ok: bool, what: &str, n: usize) -> Result<(), String> {
    if ok {
        Ok(())
    } else {
        Err(format!("{what}: wrong result for {n} bytes"))
    }
}

fn e(what: &'static str, n: usize) -> impl Fn(CollError) -> String {
    move |err| format!("{what} ({n} bytes): {err}")
}

/// The roots: each group's first and last rank.
fn roots(s: &Side) -> Vec<(usize, usize)> {
    let mut v = Vec::new();
    for g in 0..2 {
        for r in [0, s.sizes[g] - 1] {
            if !v.contains(&(g, r)) {
                v.push((g, r));
            }
        }
    }
    v
}

fn rooted(c: &InterCollectives<MockComm>, s: &Side, n: usize) -> Result<(), String> {
    for (root_g, root) in roots(s) {
        let role = s.role(root_g, root);
        let root_id = Side::id(root_g, root);
        // bcast, blocking and not: a PROC_NULL buffer is left alone.
        for blocking in [true, false] {
            let mut b = match role {
                InterRole::Root => data(s.me(), n, 1),
                _ => vec![7; n],
            };
            if blocking {
                c.bcast(&mut b, role).map_err(e("bcast", n))?;
            } else {
                c.ibcast(&mut b, role)
                    .and_then(|r| r.wait())
                    .map_err(e("ibcast", n))?;
            }
            let want = match role {
                InterRole::Remote(_) => data(root_id, n, 1),
                InterRole::Root => data(s.me(), n, 1),
                InterRole::ProcNull => vec![7; n],
            };
            check(b == want, "bcast", n)?;
        }
        // reduce, in the other group's rank order, blocking and not.
        for (commutative, blocking) in [(true, true), (false, true), (true, false), (false, false)]
        {
            let mut out = vec![0; if role == InterRole::Root { n } else { 0 }];
            let (mine, o) = (data(s.me(), n, 2), op(commutative));
            if blocking {
                c.reduce(&mine, &mut out, &o, role)
                    .map_err(e("reduce", n))?;
            } else {
                c.ireduce(&mine, &mut out, &o, role)
                    .and_then(|r| r.wait())
                    .map_err(e("ireduce", n))?;
            }
            if role == InterRole::Root && n > 0 {
                check(out == fold_of(s.theirs(), n, 2, commutative), "reduce", n)?;
            }
        }
        // gather: the root gets every remote block (the other group's size) in rank order.
        let b = n + 8 * s.g;
        let remote_b = n + 8 * s.other();
        for blocking in [true, false] {
            let mut all = vec![
                0;
                if role == InterRole::Root {
                    remote_b * s.sizes[s.other()]
                } else {
                    0
                }
            ];
            let mine = data(s.me(), b, 3);
            if blocking {
                c.gather(&mine, &mut all, role).map_err(e("gather", n))?;
            } else {
                c.igather(&mine, &mut all, role)
                    .and_then(|r| r.wait())
                    .map_err(e("igather", n))?;
            }
            if role == InterRole::Root {
                let want: Vec<u8> = s.theirs().flat_map(|r| data(r, remote_b, 3)).collect();
                check(all == want, "gather", n)?;
            }
            // scatter: block i of the root's buffer to remote rank i.
            let (send, mut recv) = match role {
                InterRole::Root => (
                    s.theirs().flat_map(|r| data(r + 7, remote_b, 4)).collect(),
                    vec![],
                ),
                _ => (vec![], vec![0; b]),
            };
            if blocking {
                c.scatter(&send, &mut recv, role).map_err(e("scatter", n))?;
            } else {
                c.iscatter(&send, &mut recv, role)
                    .and_then(|r| r.wait())
                    .map_err(e("iscatter", n))?;
            }
            if let InterRole::Remote(_) = role {
                check(recv == data(s.me() + 7, b, 4), "scatter", n)?;
            }
        }
    }
    Ok(())
}

fn unrooted(c: &InterCollectives<MockComm>, s: &Side, n: usize) -> Result<(), String> {
    let (p, q) = (s.sizes[s.g], s.sizes[s.other()]);
    c.barrier().map_err(e("barrier", n))?;
    c.ibarrier()
        .and_then(|r| r.wait())
        .map_err(e("ibarrier", n))?;
    for commutative in [true, false] {
        let want = if n > 0 {
            fold_of(s.theirs(), n, 5, commutative)
        } else {
            vec![]
        };
        let mut out = vec![0; n];
        c.allreduce(&data(s.me(), n, 5), &mut out, &op(commutative))
            .map_err(e("allreduce", n))?;
        check(out == want, "allreduce", n)?;
        let mut out = vec![0; n];
        c.iallreduce(&data(s.me(), n, 5), &mut out, &op(commutative))
            .and_then(|r| r.wait())
            .map_err(e("iallreduce", n))?;
        check(out == want, "iallreduce", n)?;
    }
    // allgather: the groups' blocks differ in size.
    let (b, remote_b) = (n + 8 * s.g, n + 8 * s.other());
    let block = |from: usize, to: usize, len: usize| data(from * 1000 + to, len, 7);
    for blocking in [true, false] {
        let mut all = vec![0; q * remote_b];
        let mine = data(s.me(), b, 6);
        if blocking {
            c.allgather(&mine, &mut all).map_err(e("allgather", n))?;
        } else {
            c.iallgather(&mine, &mut all)
                .and_then(|r| r.wait())
                .map_err(e("iallgather", n))?;
        }
        let want: Vec<u8> = s.theirs().flat_map(|r| data(r, remote_b, 6)).collect();
        check(all == want, "allgather", n)?;
        // alltoall: block j to remote rank j; block i from remote rank i (its block [me]).
        let send: Vec<u8> = (0..q).flat_map(|j| block(s.me(), j, b)).collect();
        let mut recv = vec![0; q * remote_b];
        if blocking {
            c.alltoall(&send, &mut recv).map_err(e("alltoall", n))?;
        } else {
            c.ialltoall(&send, &mut recv)
                .and_then(|r| r.wait())
                .map_err(e("ialltoall", n))?;
        }
        let want: Vec<u8> = s.theirs().flat_map(|r| block(r, s.lr, remote_b)).collect();
        check(recv == want, "alltoall", n)?;
    }
    // iexchange: a block of its own length to and from every remote rank, some empty.
    let len = |a: usize, b: usize| {
        if (a + b).is_multiple_of(3) {
            0
        } else {
            n + a + b
        }
    };
    let (mut sends, mut send) = (Vec::new(), Vec::new());
    for j in 0..q {
        sends.push((j, send.len(), len(s.lr, j)));
        send.extend(block(s.me(), j + 500, len(s.lr, j)));
    }
    let (mut recvs, mut at) = (Vec::new(), 0);
    for r in 0..q {
        recvs.push((r, at, len(r, s.lr)));
        at += len(r, s.lr);
    }
    let mut recv = vec![0; at];
    c.iexchange(&send, &sends, &mut recv, &recvs)
        .and_then(|r| r.wait())
        .map_err(e("iexchange", n))?;
    let want: Vec<u8> = s
        .theirs()
        .enumerate()
        .flat_map(|(i, r)| block(r, s.lr + 500, len(i, s.lr)))
        .collect();
    check(recv == want, "iexchange", n)?;
    // reduce_scatter(_block): both groups reduce the same total (p q n bytes); the result
    // of the other group's buffers is cut among this group's ranks.
    let total = p * q * n;
    for commutative in [true, false] {
        let esz = if commutative { 4 } else { 8 };
        let reduced = reduce_scatter_block_right(c, s, total, commutative, n)?;
        // Uneven counts: rank i gets i + 1 shares of the total's elements (in order).
        let elems = total / esz;
        let shares = p * (p + 1) / 2;
        let mut counts: Vec<usize> = (0..p).map(|i| elems * (i + 1) / shares).collect();
        counts[p - 1] += elems - counts.iter().sum::<usize>();
        let at = counts[..s.lr].iter().sum::<usize>() * esz;
        for blocking in [true, false] {
            let mut out = vec![0; counts[s.lr] * esz];
            let (mine, o) = (data(s.me(), total, 8), op(commutative));
            if blocking {
                c.reduce_scatter(&mine, &mut out, &counts, &o)
                    .map_err(e("reduce_scatter", n))?;
            } else {
                c.ireduce_scatter(&mine, &mut out, &counts, &o)
                    .and_then(|r| r.wait())
                    .map_err(e("ireduce_scatter", n))?;
            }
            check(out == reduced[at..at + out.len()], "reduce_scatter", n)?;
        }
    }
    Ok(())
}

/// reduce_scatter_block of `total` bytes (both groups reduce the same total): this rank's
/// share of the other group's reduction, checked; returns that whole reduction.
fn reduce_scatter_block_right(
    c: &InterCollectives<MockComm>,
    s: &Side,
    total: usize,
    commutative: bool,
    n: usize,
) -> Result<Vec<u8>, String> {
    let p = s.sizes[s.g];
    let reduced = if total > 0 {
        fold_of(s.theirs(), total, 8, commutative)
    } else {
        vec![]
    };
    let at = s.lr * total / p;
    for blocking in [true, false] {
        let mut out = vec![0; total / p];
        let (mine, o) = (data(s.me(), total, 8), op(commutative));
        if blocking {
            c.reduce_scatter_block(&mine, &mut out, &o)
                .map_err(e("reduce_scatter_block", n))?;
        } else {
            c.ireduce_scatter_block(&mine, &mut out, &o)
                .and_then(|r| r.wait())
                .map_err(e("ireduce_scatter_block", n))?;
        }
        check(
            out == reduced[at..at + total / p],
            "reduce_scatter_block",
            n,
        )?;
    }
    Ok(reduced)
}

fn every_op(c: &InterCollectives<MockComm>, g: usize) -> Result<(), String> {
    let s = Side::of(c, g);
    for _ in 0..ROUNDS {
        for n in SIZES {
            rooted(c, &s, n)?;
            unrooted(c, &s, n)?;
        }
    }
    Ok(())
}

fn on(p: usize, q: usize, layout: InterLayout, cfg: &AlgoConfig) {
    for (i, out) in run_inter(p, q, layout, cfg, every_op)
        .into_iter()
        .enumerate()
    {
        if let Err(why) = out {
            panic!("{p}+{q} {layout:?}, rank {i} of the two groups: {why}");
        }
    }
}

#[test]
fn every_operation_on_every_layout() {
    for (p, q) in GROUPS {
        for layout in LAYOUTS {
            on(p, q, layout, &AlgoConfig::default());
        }
    }
}

#[test]
fn off_the_buffers() {
    let mut cfg = AlgoConfig::default();
    for op in ibdyn_collectives::CollOp::ALL {
        cfg.set_p2p(op, true);
    }
    for (p, q) in GROUPS {
        on(p, q, InterLayout::OneNode, &cfg);
    }
}

#[test]
fn alltoall_through_the_leaders() {
    // 64 pairs and a small matrix: gathered at the leaders, swapped, scattered.
    let out = run_inter(
        8,
        8,
        InterLayout::OneNode,
        &AlgoConfig::default(),
        |c, g| {
            let s = Side::of(c, g);
            for n in [0, 8, 504] {
                let block = |from: usize, to: usize| data(from * 1000 + to, n, 9);
                let send: Vec<u8> = (0..8).flat_map(|j| block(s.me(), j)).collect();
                let mut recv = vec![0; 8 * n];
                c.alltoall(&send, &mut recv).map_err(e("alltoall", n))?;
                let want: Vec<u8> = s.theirs().flat_map(|r| block(r, s.lr)).collect();
                check(recv == want, "alltoall", n)?;
            }
            Ok::<_, String>(())
        },
    );
    for (i, o) in out.into_iter().enumerate() {
        if let Err(why) = o {
            panic!("8+8, rank {i}: {why}");
        }
    }
}

#[test]
fn large_blocks_go_straight_and_stay_right() {
    // Allgather: one group's block below 256 KiB, the other's above (both decide by the
    // larger). reduce_scatter_block: 3 * 96 KiB and more, folded where it lands, in rank
    // order for a non-commutative operation.
    for (p, q) in [(1, 3), (2, 2)] {
        let out = run_inter(
            p,
            q,
            InterLayout::OneNode,
            &AlgoConfig::default(),
            |c, g| {
                let s = Side::of(c, g);
                let (p, q) = (s.sizes[s.g], s.sizes[s.other()]);
                let size = |g: usize| if g == 0 { 8_000 } else { 300_000 };
                let (b, remote_b) = (size(s.g), size(s.other()));
                let mut all = vec![0; q * remote_b];
                c.allgather(&data(s.me(), b, 3), &mut all)
                    .map_err(e("allgather", b))?;
                let want: Vec<u8> = s.theirs().flat_map(|r| data(r, remote_b, 3)).collect();
                check(all == want, "allgather", b)?;
                let total = p * q * 96 * 1024;
                reduce_scatter_block_right(c, &s, total, false, total).map(drop)
            },
        );
        for (i, o) in out.into_iter().enumerate() {
            if let Err(why) = o {
                panic!("{p}+{q}, rank {i}: {why}");
            }
        }
    }
}

#[test]
fn bad_arguments_are_refused_on_the_calling_rank() {
    let out = run_inter(2, 3, InterLayout::Flat, &AlgoConfig::default(), |c, _| {
        let bad_root = c.bcast(&mut [0; 8], InterRole::Remote(c.remote_size()));
        let bad_len = c.allreduce(&[0; 8], &mut [0; 4], &op(true));
        (bad_root.is_err(), bad_len.is_err())
    });
    assert!(out.iter().all(|&(a, b)| a && b), "{out:?}");
}

/// Small rooted calls go flat (one message per process of the other group) and pipeline:
/// many back to back, bcast and reduce interleaved, with every result right.
#[test]
fn small_rooted_calls_back_to_back_stay_right() {
    let cfg = AlgoConfig::default();
    for (p, q) in [(1, 3), (2, 2)] {
        for layout in LAYOUTS {
            let errs = run_inter(p, q, layout, &cfg, |c, g| -> Result<(), String> {
                let s = Side::of(c, g);
                for call in 0..80 {
                    let n = if call % 2 == 0 { 8 } else { 1000 };
                    let role = s.role(0, 0);
                    let mut b = if role == InterRole::Root {
                        data(call, n, 1)
                    } else {
                        vec![0; n]
                    };
                    c.bcast(&mut b, role).map_err(e("bcast", n))?;
                    if g == 1 {
                        check(b == data(call, n, 1), "bcast", n)?;
                    }
                    let mine = data(s.me(), n, 2 + call);
                    let mut out = vec![0; n];
                    let o = op(false);
                    c.reduce(&mine, &mut out, &o, s.role(0, 0))
                        .map_err(e("reduce", n))?;
                    if role == InterRole::Root {
                        let want = fold_of(s.theirs(), n, 2 + call, false);
                        check(out == want, "reduce", n)?;
                    }
                }
                Ok(())
            });
            for r in errs {
                r.unwrap_or_else(|m| panic!("{p}+{q}: {m}"));
            }
        }
    }
}

/// A root whose receivers never take its calls stops after two windows of them (flow
/// control), with an error once the wait for their acknowledgement gives up; as do the
/// senders of a reduce whose root never comes.
#[test]
fn a_fast_root_cannot_run_ahead_unboundedly() {
    use common::run_inter_timeout;
    use std::time::Duration;
    let cfg = AlgoConfig::default();
    let window = 2 * 16;
    for reduce in [false, true] {
        // Takers stay alive (their ends open) until the senders are done.
        let all_done = std::sync::Barrier::new(4);
        let done = run_inter_timeout(
            1,
            3,
            InterLayout::Flat,
            &cfg,
            Duration::from_millis(300),
            |c, g| {
                let sender = (g == 0) != reduce;
                if !sender {
                    all_done.wait(); // never takes anything
                    return None;
                }
                let role = Side::of(c, g).role(0, 0);
                let mut calls = 0;
                for _ in 0..10 * window {
                    let mut b = [7u8; 8];
                    let r = if reduce {
                        c.reduce(&[1u8; 8], &mut [], &op(true), role)
                    } else {
                        c.bcast(&mut b, role)
                    };
                    if r.is_err() {
                        break;
                    }
                    calls += 1;
                }
                all_done.wait();
                Some(calls)
            },
        );
        let senders: Vec<usize> = done.into_iter().flatten().collect();
        assert!(!senders.is_empty());
        for calls in senders {
            assert_eq!(
                calls, window,
                "reduce {reduce}: sender ran {calls} calls ahead"
            );
        }
    }
}
