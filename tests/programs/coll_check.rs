//! Collective conformance checks under `ibdyn run -n N`: every operation against a reference
//! computed locally, for several sizes. Rank 0 prints `coll_check: all passed` at the end.
//! `IBDYN_COLL_ALGO` forces algorithms; the test suite runs this with each in turn.

use ibdyn::traits::*;
use ibdyn::{IntraCommunicator, SystemOperation, UserOperation};

#[path = "support/mod.rs"]
mod support;
use support::{check, e, R};

fn v(r: i32, i: usize) -> i64 {
    ((r as i64) * 131 + (i as i64) * 7) % 1000 - 300
}

fn bytes(r: i32, n: usize) -> Vec<u8> {
    (0..n).map(|i| (r as usize * 37 + i * 11) as u8).collect()
}

fn run(w: &IntraCommunicator, n: usize) -> R {
    let (rank, size) = (w.rank(), w.size());
    let mine: Vec<i64> = (0..n).map(|i| v(rank, i)).collect();
    let sum: Vec<i64> = (0..n).map(|i| (0..size).map(|r| v(r, i)).sum()).collect();
    let max: Vec<i64> = (0..n)
        .map(|i| (0..size).map(|r| v(r, i)).max().unwrap())
        .collect();

    w.barrier().map_err(e("barrier"))?;

    let root = size - 1;
    let mut b = if rank == root {
        bytes(root, n * 8)
    } else {
        vec![0; n * 8]
    };
    w.process_at_rank(root)
        .broadcast_into(&mut b[..])
        .map_err(e("bcast"))?;
    check(b == bytes(root, n * 8), "bcast", n)?;

    let mut out = vec![0i64; n];
    w.all_reduce_into(&mine, &mut out, SystemOperation::sum())
        .map_err(e("allreduce sum"))?;
    check(out == sum, "allreduce sum", n)?;
    w.all_reduce_into(&mine, &mut out, SystemOperation::max())
        .map_err(e("allreduce max"))?;
    check(out == max, "allreduce max", n)?;
    let mut req_out = vec![0i64; n];
    w.immediate_all_reduce_into(&mine, &mut req_out, SystemOperation::sum())
        .map_err(e("iallreduce"))?
        .wait()
        .map_err(e("iallreduce"))?;
    check(req_out == sum, "iallreduce", n)?;

    // The non-blocking bcast (from rank 0 this time) and barrier; across nodes these are
    // the two-level forms composed into one schedule.
    let mut ib = if rank == 0 {
        bytes(0, n * 8)
    } else {
        vec![0; n * 8]
    };
    w.process_at_rank(0)
        .immediate_broadcast_into(&mut ib[..])
        .map_err(e("ibcast"))?
        .wait()
        .map_err(e("ibcast"))?;
    check(ib == bytes(0, n * 8), "ibcast", n)?;
    w.immediate_barrier()
        .map_err(e("ibarrier"))?
        .wait()
        .map_err(e("ibarrier"))?;

    let p = w.process_at_rank(0);
    if rank == 0 {
        let mut out = vec![0i64; n];
        p.reduce_into_root(&mine, &mut out, SystemOperation::sum())
            .map_err(e("reduce"))?;
        check(out == sum, "reduce", n)?;
    } else {
        p.reduce_into(&mine, SystemOperation::sum())
            .map_err(e("reduce"))?;
    }

    // A non-commutative operation: "keep the left operand" reduces to rank 0's value only
    // if ranks are combined in order.
    let first =
        UserOperation::non_commutative(|inv: &[i64], inout: &mut [i64]| inout.copy_from_slice(inv));
    // A forced reordering algorithm (ring, Rabenseifner) must refuse it instead.
    let reordering = std::env::var(ibdyn::COLL_ALGO_ENV)
        .is_ok_and(|a| a.contains("allreduce:ring") || a.contains("allreduce:rabenseifner"));
    for immediate in [false, true] {
        let got = if immediate {
            w.immediate_all_reduce_into(&mine, &mut out, first.clone())
                .and_then(|r| r.wait())
        } else {
            w.all_reduce_into(&mine, &mut out, first.clone())
        };
        match got {
            Ok(()) if !reordering => check(
                out.iter().enumerate().all(|(i, &x)| x == v(0, i)),
                "non-commutative allreduce",
                n,
            )?,
            Err(err) if reordering && err.to_string().contains("cannot run allreduce") => {}
            other => {
                return Err(format!(
                    "non-commutative allreduce (immediate: {immediate}, reordering forced: \
                     {reordering}) gave {other:?}"
                ))
            }
        }
    }
    w.scan_into(&mine, &mut out, SystemOperation::sum())
        .map_err(e("scan"))?;
    check(
        out.iter()
            .enumerate()
            .all(|(i, &x)| x == (0..=rank).map(|r| v(r, i)).sum::<i64>()),
        "scan",
        n,
    )?;
    if rank > 0 {
        w.exclusive_scan_into(&mine, &mut out, SystemOperation::sum())
            .map_err(e("exscan"))?;
        check(
            out.iter()
                .enumerate()
                .all(|(i, &x)| x == (0..rank).map(|r| v(r, i)).sum::<i64>()),
            "exscan",
            n,
        )?;
    } else {
        w.exclusive_scan_into(&mine, &mut out, SystemOperation::sum())
            .map_err(e("exscan"))?;
    }

    let blk = n.min(1 << 19);
    let mut all = vec![0u8; blk * size as usize];
    w.all_gather_into(&bytes(rank, blk)[..], &mut all[..])
        .map_err(e("allgather"))?;
    check(
        (0..size).all(|r| all[r as usize * blk..][..blk] == bytes(r, blk)[..]),
        "allgather",
        blk,
    )?;

    let send: Vec<u8> = (0..size)
        .flat_map(|to| bytes(rank * 100 + to, blk))
        .collect();
    let mut recv = vec![0u8; blk * size as usize];
    w.all_to_all_into(&send[..], &mut recv[..])
        .map_err(e("alltoall"))?;
    check(
        (0..size)
            .all(|from| recv[from as usize * blk..][..blk] == bytes(from * 100 + rank, blk)[..]),
        "alltoall",
        blk,
    )?;

    if rank == 0 {
        let mut g = vec![0u8; blk * size as usize];
        p.gather_into_root(&bytes(0, blk)[..], &mut g[..])
            .map_err(e("gather"))?;
        check(
            (0..size).all(|r| g[r as usize * blk..][..blk] == bytes(r, blk)[..]),
            "gather",
            blk,
        )?;
        let s: Vec<u8> = (0..size).flat_map(|r| bytes(r + 7, blk)).collect();
        let mut mine = vec![0u8; blk];
        p.scatter_into_root(&s[..], &mut mine[..])
            .map_err(e("scatter"))?;
        check(mine == bytes(7, blk), "scatter", blk)?;
    } else {
        p.gather_into(&bytes(rank, blk)[..]).map_err(e("gather"))?;
        let mut mine = vec![0u8; blk];
        p.scatter_into(&mut mine[..]).map_err(e("scatter"))?;
        check(mine == bytes(rank + 7, blk), "scatter", blk)?;
    }

    let per = n.min(1000);
    let big: Vec<i64> = (0..per * size as usize).map(|i| v(rank, i)).collect();
    let mut part = vec![0i64; per];
    w.reduce_scatter_block_into(&big, &mut part, SystemOperation::sum())
        .map_err(e("reduce_scatter_block"))?;
    check(
        part.iter().enumerate().all(|(i, &x)| {
            x == (0..size)
                .map(|r| v(r, rank as usize * per + i))
                .sum::<i64>()
        }),
        "reduce_scatter_block",
        per,
    )?;

    Ok(())
}

fn main() {
    let u = ibdyn::initialize().unwrap_or_else(|err| {
        eprintln!("coll_check: init: {err}");
        std::process::exit(2)
    });
    let w = u.world();
    // Up to 4 MiB per rank (524 288 i64) for the whole-buffer operations.
    for n in [0usize, 1, 7, 1000, 70_000, 524_288] {
        if let Err(msg) = run(&w, n) {
            eprintln!("coll_check: rank {}: {msg}", w.rank());
            std::process::exit(1);
        }
    }
    if w.rank() == 0 {
        println!("coll_check: all passed on {} ranks", w.size());
    }
    drop(u);
}
