//! Checks of the varcount and non-blocking collectives under `ibdyn run -n N`: each against a
//! reference computed locally, with uneven block sizes (zeros included) and gaps between
//! blocks; two non-blocking collectives outstanding and completed in reverse order; and
//! refused counts, which must come back as errors (on every rank where the case says so)
//! instead of a hang. Rank 0 prints `coll_varcount_check: all passed on N ranks` at the end.

use ibdyn::traits::*;
use ibdyn::{IntraCommunicator, Partition, PartitionMut, SystemOperation};

#[path = "support/mod.rs"]
mod support;
use support::{check, e, R};

/// Element k of what rank `r` contributes (tag `t` tells the operations apart).
fn v(t: i64, r: i32, k: usize) -> i64 {
    t * 1_000_000 + (r as i64) * 1000 + (k as i64 % 997)
}

/// Rank i's block size: uneven, zero for every third rank.
fn cnt(i: i32, n: usize) -> usize {
    if i % 3 == 1 {
        0
    } else {
        (i as usize + 1) * n
    }
}

/// Elements rank `from` sends rank `to` in the alltoallv: uneven, some zero.
fn pair(from: i32, to: i32, n: usize) -> usize {
    ((from as usize + 2 * to as usize + n) % 3) * n
}

/// Displacements of `counts` with a one-element gap before every block.
fn gapped(counts: &[usize]) -> (Vec<usize>, usize) {
    let mut at = 0;
    let displs = counts
        .iter()
        .map(|&c| {
            at += 1;
            let d = at;
            at += c;
            d
        })
        .collect();
    (displs, at + 1)
}

const GAP: i64 = -7;

/// Block i of a gapped buffer holds `want(i)` and every gap still holds GAP.
fn blocks_ok(
    buf: &[i64],
    counts: &[usize],
    displs: &[usize],
    want: impl Fn(usize) -> Vec<i64>,
) -> bool {
    let mut covered = vec![false; buf.len()];
    for i in 0..counts.len() {
        if buf[displs[i]..][..counts[i]] != want(i)[..] {
            return false;
        }
        covered[displs[i]..][..counts[i]]
            .iter_mut()
            .for_each(|c| *c = true);
    }
    buf.iter().zip(&covered).all(|(&x, &c)| c || x == GAP)
}

fn varcount(w: &IntraCommunicator, n: usize) -> R {
    let (rank, size) = (w.rank(), w.size());
    let counts: Vec<usize> = (0..size).map(|i| cnt(i, n)).collect();
    let (displs, len) = gapped(&counts);
    let mine = |t: i64| {
        (0..cnt(rank, n))
            .map(|k| v(t, rank, k))
            .collect::<Vec<i64>>()
    };
    let want = |t: i64| {
        move |i: usize| {
            (0..cnt(i as i32, n))
                .map(|k| v(t, i as i32, k))
                .collect::<Vec<i64>>()
        }
    };

    // gatherv, blocking then immediate, with the root at the last rank then at rank 0.
    for (t, root, immediate) in [(1, size - 1, false), (2, 0, true)] {
        let p = w.process_at_rank(root);
        let send = mine(t);
        if rank == root {
            let mut buf = vec![GAP; len];
            let mut part = PartitionMut::new(&mut buf[..], counts.clone(), displs.clone());
            if immediate {
                p.immediate_gather_varcount_into_root(&send[..], &mut part)
                    .and_then(|r| r.wait())
            } else {
                p.gather_varcount_into_root(&send[..], &mut part)
            }
            .map_err(e("gatherv"))?;
            check(blocks_ok(&buf, &counts, &displs, want(t)), "gatherv", n)?;
        } else if immediate {
            p.immediate_gather_varcount_into(&send[..])
                .and_then(|r| r.wait())
                .map_err(e("gatherv"))?;
        } else {
            p.gather_varcount_into(&send[..]).map_err(e("gatherv"))?;
        }
    }

    // scatterv: the root's gapped buffer holds block i for rank i.
    for (t, root, immediate) in [(3, 0, false), (4, size / 2, true)] {
        let p = w.process_at_rank(root);
        let mut got = vec![0i64; cnt(rank, n)];
        if rank == root {
            let mut src = vec![GAP; len];
            for i in 0..size as usize {
                src[displs[i]..][..counts[i]].copy_from_slice(&want(t)(i));
            }
            let part = Partition::new(&src[..], counts.clone(), displs.clone());
            if immediate {
                p.immediate_scatter_varcount_into_root(&part, &mut got[..])
                    .and_then(|r| r.wait())
            } else {
                p.scatter_varcount_into_root(&part, &mut got[..])
            }
            .map_err(e("scatterv"))?;
        } else if immediate {
            p.immediate_scatter_varcount_into(&mut got[..])
                .and_then(|r| r.wait())
                .map_err(e("scatterv"))?;
        } else {
            p.scatter_varcount_into(&mut got[..])
                .map_err(e("scatterv"))?;
        }
        check(got == mine(t), "scatterv", n)?;
    }

    // allgatherv.
    for (t, immediate) in [(5, false), (6, true)] {
        let mut buf = vec![GAP; len];
        let send = mine(t);
        let mut part = PartitionMut::new(&mut buf[..], counts.clone(), displs.clone());
        if immediate {
            w.immediate_all_gather_varcount_into(&send[..], &mut part)
                .and_then(|r| r.wait())
        } else {
            w.all_gather_varcount_into(&send[..], &mut part)
        }
        .map_err(e("allgatherv"))?;
        check(blocks_ok(&buf, &counts, &displs, want(t)), "allgatherv", n)?;
    }

    // alltoallv: packed send blocks, gapped receive blocks.
    let elem = |from: i32, to: i32, k: usize| v(7, from, k) * 10 + to as i64;
    let scounts: Vec<usize> = (0..size).map(|to| pair(rank, to, n)).collect();
    let rcounts: Vec<usize> = (0..size).map(|from| pair(from, rank, n)).collect();
    let send: Vec<i64> = (0..size)
        .flat_map(|to| (0..pair(rank, to, n)).map(move |k| elem(rank, to, k)))
        .collect();
    let (rdispls, rlen) = gapped(&rcounts);
    for immediate in [false, true] {
        let mut buf = vec![GAP; rlen];
        let spart = Partition::packed(&send[..], scounts.clone());
        let mut rpart = PartitionMut::new(&mut buf[..], rcounts.clone(), rdispls.clone());
        if immediate {
            w.immediate_all_to_all_varcount_into(&spart, &mut rpart)
                .and_then(|r| r.wait())
        } else {
            w.all_to_all_varcount_into(&spart, &mut rpart)
        }
        .map_err(e("alltoallv"))?;
        let from = |i: usize| (0..rcounts[i]).map(|k| elem(i as i32, rank, k)).collect();
        check(blocks_ok(&buf, &rcounts, &rdispls, from), "alltoallv", n)?;
    }

    // reduce_scatter with per-rank counts.
    let total: usize = counts.iter().sum();
    let first: usize = counts[..rank as usize].iter().sum();
    let send: Vec<i64> = (0..total).map(|k| v(8, rank, k)).collect();
    let reference: Vec<i64> = (first..first + counts[rank as usize])
        .map(|k| (0..size).map(|r| v(8, r, k)).sum())
        .collect();
    for immediate in [false, true] {
        let mut got = vec![0i64; counts[rank as usize]];
        if immediate {
            w.immediate_reduce_scatter_into(&send, &mut got, &counts, SystemOperation::sum())
                .and_then(|r| r.wait())
        } else {
            w.reduce_scatter_into(&send, &mut got, &counts, SystemOperation::sum())
        }
        .map_err(e("reduce_scatter"))?;
        check(got == reference, "reduce_scatter", n)?;
    }

    // Two varcount collectives outstanding, waited for in the reverse order.
    let mut got = vec![0i64; counts[rank as usize]];
    let mut buf = vec![GAP; len];
    let gsend = mine(13);
    let mut part = PartitionMut::new(&mut buf[..], counts.clone(), displs.clone());
    let a = w
        .immediate_reduce_scatter_into(&send, &mut got, &counts, SystemOperation::sum())
        .map_err(e("ireduce_scatter"))?;
    let b = w
        .immediate_all_gather_varcount_into(&gsend[..], &mut part)
        .map_err(e("iallgatherv"))?;
    b.wait().map_err(e("iallgatherv"))?;
    a.wait().map_err(e("ireduce_scatter"))?;
    check(got == reference, "overlapped reduce_scatter", n)?;
    check(
        blocks_ok(&buf, &counts, &displs, want(13)),
        "overlapped allgatherv",
        n,
    )?;
    Ok(())
}

/// The non-blocking forms of the fixed-size collectives, two at a time, waited for in the
/// reverse of the order they were started.
fn immediate(w: &IntraCommunicator, n: usize) -> R {
    let (rank, size) = (w.rank(), w.size());
    let p = size as usize;
    let mine: Vec<i64> = (0..n).map(|k| v(9, rank, k)).collect();
    let sum = |k: usize, upto: i32| (0..upto).map(|r| v(9, r, k)).sum::<i64>();

    // allgather + scan.
    let mut all = vec![0i64; n * p];
    let mut scan = vec![0i64; n];
    let mut a = w
        .immediate_all_gather_into(&mine[..], &mut all[..])
        .map_err(e("iallgather"))?;
    let b = w
        .immediate_scan_into(&mine, &mut scan, SystemOperation::sum())
        .map_err(e("iscan"))?;
    a.test().map_err(e("iallgather test"))?;
    b.wait().map_err(e("iscan"))?;
    a.wait().map_err(e("iallgather"))?;
    check(
        (0..p).all(|r| {
            all[r * n..][..n]
                .iter()
                .enumerate()
                .all(|(k, &x)| x == v(9, r as i32, k))
        }),
        "iallgather",
        n,
    )?;
    check(
        scan.iter().enumerate().all(|(k, &x)| x == sum(k, rank + 1)),
        "iscan",
        n,
    )?;

    // alltoall + exscan.
    let send: Vec<i64> = (0..p * n).map(|k| v(10, rank, k)).collect();
    let mut recv = vec![0i64; p * n];
    let mut ex = vec![GAP; n];
    let a = w
        .immediate_all_to_all_into(&send[..], &mut recv[..])
        .map_err(e("ialltoall"))?;
    let b = w
        .immediate_exclusive_scan_into(&mine, &mut ex, SystemOperation::sum())
        .map_err(e("iexscan"))?;
    b.wait().map_err(e("iexscan"))?;
    a.wait().map_err(e("ialltoall"))?;
    check(
        (0..p).all(|from| {
            (0..n).all(|k| recv[from * n + k] == v(10, from as i32, rank as usize * n + k))
        }),
        "ialltoall",
        n,
    )?;
    if rank > 0 {
        check(
            ex.iter().enumerate().all(|(k, &x)| x == sum(k, rank)),
            "iexscan",
            n,
        )?;
    }

    // reduce (root 0) + reduce_scatter_block.
    let big: Vec<i64> = (0..p * n).map(|k| v(11, rank, k)).collect();
    let mut part = vec![0i64; n];
    let mut red = vec![0i64; n];
    let root = w.process_at_rank(0);
    let a = if rank == 0 {
        root.immediate_reduce_into_root(&mine, &mut red, SystemOperation::sum())
    } else {
        root.immediate_reduce_into(&mine, SystemOperation::sum())
    }
    .map_err(e("ireduce"))?;
    let b = w
        .immediate_reduce_scatter_block_into(&big, &mut part, SystemOperation::sum())
        .map_err(e("ireduce_scatter_block"))?;
    b.wait().map_err(e("ireduce_scatter_block"))?;
    a.wait().map_err(e("ireduce"))?;
    if rank == 0 {
        check(
            red.iter().enumerate().all(|(k, &x)| x == sum(k, size)),
            "ireduce",
            n,
        )?;
    }
    check(
        part.iter().enumerate().all(|(k, &x)| {
            x == (0..size)
                .map(|r| v(11, r, rank as usize * n + k))
                .sum::<i64>()
        }),
        "ireduce_scatter_block",
        n,
    )?;

    // gather (root last) + scatter (root 0).
    let last = w.process_at_rank(size - 1);
    let mut g = vec![0i64; if rank == size - 1 { n * p } else { 0 }];
    let s: Vec<i64> = (0..p * n).map(|k| v(12, 0, k)).collect();
    let mut got = vec![0i64; n];
    let a = if rank == size - 1 {
        last.immediate_gather_into_root(&mine[..], &mut g[..])
    } else {
        last.immediate_gather_into(&mine[..])
    }
    .map_err(e("igather"))?;
    let b = if rank == 0 {
        root.immediate_scatter_into_root(&s[..], &mut got[..])
    } else {
        root.immediate_scatter_into(&mut got[..])
    }
    .map_err(e("iscatter"))?;
    b.wait().map_err(e("iscatter"))?;
    a.wait().map_err(e("igather"))?;
    check(got[..] == s[rank as usize * n..][..n], "iscatter", n)?;
    if rank == size - 1 {
        check(
            (0..p).all(|r| (0..n).all(|k| g[r * n + k] == v(9, r as i32, k))),
            "igather",
            n,
        )?;
    }
    Ok(())
}

/// Counts that cannot be right must come back as errors, then the communicator still works.
fn refused(w: &IntraCommunicator) -> R {
    let (rank, size) = (w.rank(), w.size());
    let p = size as usize;
    let expect_err = |what: &str, r: ibdyn::Result<()>| match r {
        Err(_) => Ok(()),
        Ok(()) => Err(format!("{what}: accepted counts that cannot be right")),
    };

    // Every rank passes one count too many: refused on every rank before anything moves.
    let send = vec![1i64; p];
    let mut buf = vec![0i64; p + 1];
    let mut part = PartitionMut::new(&mut buf[..], vec![1; p + 1], (0..=p).collect::<Vec<_>>());
    expect_err(
        "allgatherv with p+1 counts",
        w.all_gather_varcount_into(&send[..1], &mut part),
    )?;
    let mut one = vec![0i64; 1];
    expect_err(
        "reduce_scatter with counts not summing to the send length",
        w.reduce_scatter_into(&send, &mut one, &vec![2; p], SystemOperation::sum()),
    )?;

    // The root's partition runs past its buffer: the root refuses it, and every other rank
    // (each expecting 3 elements) gets a size mismatch instead of waiting.
    let root = w.process_at_rank(0);
    let mut got = [0i64; 3];
    let r = if rank == 0 {
        let src = vec![5i64; 3 * p - 1];
        let part = Partition::packed(&src[..], vec![3; p]);
        let r = root.scatter_varcount_into_root(&part, &mut got[..]);
        if let Err(err) = &r {
            if !err.to_string().contains("outside") {
                return Err(format!("scatterv at the root: unexpected error {err}"));
            }
        }
        r
    } else {
        root.scatter_varcount_into(&mut got[..])
    };
    expect_err("scatterv past the root's buffer", r)?;

    // Every rank sends each peer twice what the peer expects (p > 1), or expects of itself
    // other than it sends (p = 1): an error on every rank.
    let scounts: Vec<usize> = (0..p)
        .map(|j| if j == rank as usize && p > 1 { 1 } else { 2 })
        .collect();
    let rcounts = vec![1usize; p];
    let send = vec![3i64; scounts.iter().sum()];
    let mut buf = vec![0i64; p];
    let spart = Partition::packed(&send[..], scounts);
    let mut rpart = PartitionMut::packed(&mut buf[..], rcounts);
    expect_err(
        "alltoallv with mismatched counts",
        w.all_to_all_varcount_into(&spart, &mut rpart),
    )?;

    // Overlapping receive blocks at the root of a gatherv (p > 1): refused there; the
    // senders' small blocks are refused as truncated, which releases them.
    let mut buf = [0i64; 2];
    let r = if rank == 0 {
        let mut part = PartitionMut::new(&mut buf[..], vec![1; p], vec![0; p]);
        root.gather_varcount_into_root(&[4i64][..], &mut part)
    } else {
        root.gather_varcount_into(&[4i64][..])
    };
    if rank == 0 && p > 1 {
        expect_err("gatherv with overlapping blocks", r)?;
    }

    // The same with blocks above the eager limit (their senders wait for the receiver), and
    // with one rank only refusing its alltoallv layout: the others see a size mismatch.
    let big = 3000;
    let send = vec![6i64; big];
    let mut buf = vec![0i64; big * p];
    let r = if rank == 0 {
        let mut part = PartitionMut::new(&mut buf[..], vec![big; p], vec![0; p]);
        root.gather_varcount_into_root(&send[..], &mut part)
    } else {
        root.gather_varcount_into(&send[..])
    };
    if rank == 0 && p > 1 {
        expect_err("gatherv of large blocks with overlapping blocks", r)?;
    }
    let send = vec![7i64; big * p];
    let spart = Partition::packed(&send[..], vec![big; p]);
    let claimed = if rank == size - 1 { big + 1 } else { big };
    let mut rpart = PartitionMut::packed(&mut buf[..], vec![claimed; p]);
    expect_err(
        "alltoallv of large blocks refused by the last rank",
        w.all_to_all_varcount_into(&spart, &mut rpart),
    )?;
    let mut rpart = PartitionMut::packed(&mut buf[..], vec![big; p]);
    w.all_to_all_varcount_into(&spart, &mut rpart)
        .map_err(e("alltoallv after a refused one"))?;
    check(
        buf.iter().all(|&x| x == 7),
        "alltoallv after a refused one",
        big,
    )?;

    // Counts that differ across ranks (MPI forbids it) in multi-round schedules: the last
    // rank thinks block 0 of an allgatherv is one element longer, rank 0 cuts a
    // reduce_scatter differently. Whoever notices gets an error; nobody is left waiting.
    if p > 1 {
        let mut counts = vec![big; p];
        if rank == size - 1 {
            counts[0] += 1;
        }
        let send = vec![8i64; big];
        let mut buf = vec![0i64; big * p + 1];
        let r =
            w.all_gather_varcount_into(&send[..], &mut PartitionMut::packed(&mut buf[..], counts));
        if rank == size - 1 {
            expect_err("allgatherv with a longer block 0 on the last rank", r)?;
        }
        let mut counts = vec![big; p];
        if rank == 0 {
            counts[0] += 1;
            counts[p - 1] -= 1;
        }
        let send = vec![1i64; big * p];
        let mut out = vec![0i64; counts[rank as usize]];
        let _ = w.reduce_scatter_into(&send, &mut out, &counts, SystemOperation::sum());
    }

    // Still usable afterwards.
    w.barrier().map_err(e("barrier after refused counts"))?;
    let mut all = vec![0i32; p];
    let mut part = PartitionMut::packed(&mut all[..], vec![1; p]);
    w.all_gather_varcount_into(&rank, &mut part)
        .map_err(e("allgatherv after refused counts"))?;
    check(
        all == (0..size).collect::<Vec<_>>(),
        "allgatherv after refused counts",
        1,
    )
}

fn main() {
    let u = ibdyn::initialize().unwrap_or_else(|err| {
        eprintln!("coll_varcount_check: init: {err}");
        std::process::exit(2)
    });
    let w = u.world();
    let mut result = Ok(());
    for n in [0usize, 1, 5, 3000] {
        result = result
            .and_then(|()| varcount(&w, n))
            .and_then(|()| immediate(&w, n));
    }
    if let Err(msg) = result.and_then(|()| refused(&w)) {
        eprintln!("coll_varcount_check: rank {}: {msg}", w.rank());
        std::process::exit(1);
    }
    if w.rank() == 0 {
        println!("coll_varcount_check: all passed on {} ranks", w.size());
    }
    drop(u);
}
