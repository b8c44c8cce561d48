//! `ibdyn-bench coll --op OP`: OSU-style collective latency on an intracommunicator, 8 B to
//! 1 MiB: mean over iterations, and min/avg/max over ranks. Rooted operations are preceded by
//! an (uncounted) barrier to remove skew, as the paper does. With `--nodes` > 1, operations
//! that have two-level (node-aware) forms run twice in the same run: `form=two_level` (the
//! automatic choice) and `form=flat` (`IBDYN_COLL_ALGO=<op>:flat`).

use crate::job::{self, add_rows, sizes};
use crate::report::Report;
use ibdyn::traits::*;
use ibdyn::{IntraCommunicator, SystemOperation};
use std::time::Instant;

#[derive(clap::Args)]
pub struct Args {
    /// barrier, bcast, reduce, allreduce, allgather, alltoall, gather, scatter, reduce_scatter,
    /// scan; ibarrier, ibcast, iallreduce (started and waited for at once)
    #[arg(long, default_value = "allreduce")]
    op: String,
    /// Processes.
    #[arg(short = 'n', long, default_value_t = 4)]
    np: usize,
    /// Node daemons.
    #[arg(long, default_value_t = 1)]
    nodes: usize,
    /// Largest message size in bytes (per rank block for allgather/alltoall/gather/scatter).
    #[arg(long, default_value_t = 1 << 20)]
    max_size: usize,
    /// Iterations for small messages.
    #[arg(long, default_value_t = 1000)]
    iters: usize,
}

/// The operations with two-level forms.
const TWO_LEVEL: &[&str] = &[
    "barrier",
    "bcast",
    "reduce",
    "allreduce",
    "allgather",
    "ibarrier",
    "ibcast",
    "iallreduce",
];

const OPS: &[&str] = &[
    "barrier",
    "bcast",
    "reduce",
    "allreduce",
    "allgather",
    "alltoall",
    "gather",
    "scatter",
    "reduce_scatter",
    "scan",
    "ibarrier",
    "ibcast",
    "iallreduce",
];

pub fn run(a: Args, json: bool) -> Result<(), String> {
    if !OPS.contains(&a.op.as_str()) {
        return Err(format!(
            "unknown --op {:?}; one of {}",
            a.op,
            OPS.join(", ")
        ));
    }
    if job::in_job() {
        return rank_main(&a);
    }
    let mut report = Report::new("coll", json);
    let args = vec![
        "coll".into(),
        "--op".into(),
        a.op.clone(),
        "--max-size".into(),
        a.max_size.to_string(),
        "--iters".into(),
        a.iters.to_string(),
    ];
    let lead = |form: &str| {
        [
            ("op", a.op.clone()),
            ("np", a.np.to_string()),
            ("nodes", a.nodes.to_string()),
            ("form", form.to_string()),
        ]
    };
    let two_level = a.nodes > 1 && TWO_LEVEL.contains(&a.op.as_str());
    let rows = job::run_job(a.np, a.nodes, &[], &[], &args)?;
    add_rows(
        &mut report,
        &lead(if two_level { "two_level" } else { "auto" }),
        &rows,
    )?;
    if two_level {
        let user = std::env::var(ibdyn::COLL_ALGO_ENV).unwrap_or_default();
        let flat = format!(
            "{user}{}{}:flat",
            if user.is_empty() { "" } else { "," },
            a.op.strip_prefix('i')
                .filter(|o| OPS.contains(o))
                .unwrap_or(&a.op)
        );
        let rows = job::run_job(a.np, a.nodes, &[], &[(ibdyn::COLL_ALGO_ENV, &flat)], &args)?;
        add_rows(&mut report, &lead("flat"), &rows)?;
    }
    report.finish();
    Ok(())
}

fn one(
    w: &IntraCommunicator,
    op: &str,
    size: usize,
    sbuf: &[u8],
    rbuf: &mut [u8],
    big: &mut [u8],
) -> ibdyn::Result<()> {
    let n = w.size() as usize;
    let root = w.process_at_rank(0);
    let elems = (size / 8).max(1);
    let sv: &[i64] = bytemuck_i64(sbuf, elems);
    match op {
        "barrier" => w.barrier(),
        "ibarrier" => w.immediate_barrier()?.wait(),
        "ibcast" => root.immediate_broadcast_into(&mut rbuf[..size])?.wait(),
        "iallreduce" => w
            .immediate_all_reduce_into(sv, as_i64_mut(rbuf, elems), SystemOperation::sum())?
            .wait(),
        "bcast" => root.broadcast_into(&mut rbuf[..size]),
        "allreduce" => w.all_reduce_into(sv, as_i64_mut(rbuf, elems), SystemOperation::sum()),
        "reduce" if w.rank() == 0 => {
            root.reduce_into_root(sv, as_i64_mut(rbuf, elems), SystemOperation::sum())
        }
        "reduce" => root.reduce_into(sv, SystemOperation::sum()),
        "scan" => w.scan_into(sv, as_i64_mut(rbuf, elems), SystemOperation::sum()),
        "allgather" => w.all_gather_into(&sbuf[..size], &mut big[..size * n]),
        "alltoall" => {
            let send = big[..size * n].to_vec();
            w.all_to_all_into(&send[..], &mut big[..size * n])
        }
        "gather" if w.rank() == 0 => root.gather_into_root(&sbuf[..size], &mut big[..size * n]),
        "gather" => root.gather_into(&sbuf[..size]),
        "scatter" if w.rank() == 0 => {
            root.scatter_into_root(&big[..size * n].to_vec()[..], &mut rbuf[..size])
        }
        "scatter" => root.scatter_into(&mut rbuf[..size]),
        "reduce_scatter" => {
            let per = elems;
            let send: Vec<i64> = vec![1; per * n];
            w.reduce_scatter_block_into(&send, as_i64_mut(rbuf, per), SystemOperation::sum())
        }
        _ => Ok(()),
    }
}

fn bytemuck_i64(b: &[u8], elems: usize) -> &[i64] {
    assert!(b.len() >= elems * 8 && (b.as_ptr() as usize).is_multiple_of(8));
    // SAFETY: aligned (checked), long enough (checked), i64 accepts any bit pattern.
    unsafe { std::slice::from_raw_parts(b.as_ptr().cast(), elems) }
}

fn as_i64_mut(b: &mut [u8], elems: usize) -> &mut [i64] {
    assert!(b.len() >= elems * 8 && (b.as_ptr() as usize).is_multiple_of(8));
    // SAFETY: as above, for a unique borrow.
    unsafe { std::slice::from_raw_parts_mut(b.as_mut_ptr().cast(), elems) }
}

fn rank_main(a: &Args) -> Result<(), String> {
    let u = ibdyn::initialize().map_err(|e| e.to_string())?;
    let w = u.world();
    let n = w.size() as usize;
    let rooted = matches!(
        a.op.as_str(),
        "bcast" | "ibcast" | "reduce" | "gather" | "scatter"
    );
    let list = if a.op.ends_with("barrier") {
        vec![0]
    } else {
        sizes(8, a.max_size)
    };
    let cap = a.max_size.max(8) + 8;
    let mut sbuf = vec![0u64; cap / 8 + 1];
    let mut rbuf = vec![0u64; cap / 8 + 1];
    let mut big = vec![0u64; (cap * n) / 8 + 1];
    let bytes = |v: &mut Vec<u64>| -> &mut [u8] {
        // SAFETY: a u64 buffer viewed as bytes; any bytes are fine for u64.
        unsafe { std::slice::from_raw_parts_mut(v.as_mut_ptr().cast::<u8>(), v.len() * 8) }
    };
    let e = |e: ibdyn::CommError| e.to_string();
    for size in list {
        let iters = job::iters_for(size.max(1) * n.min(8), a.iters).max(10);
        let s = bytes(&mut sbuf).to_vec();
        let (rb, bg) = (bytes(&mut rbuf), bytes(&mut big));
        // Warm-up iterations as the timed ones (OSU does the same).
        for _ in 0..iters.min(20) {
            if rooted {
                w.barrier().map_err(e)?;
            }
            one(&w, &a.op, size, &s, rb, bg).map_err(e)?;
        }
        let mut total = 0.0;
        for _ in 0..iters {
            if rooted {
                w.barrier().map_err(e)?;
            }
            let t = Instant::now();
            one(&w, &a.op, size, &s, rb, bg).map_err(e)?;
            total += t.elapsed().as_secs_f64();
        }
        job::emit_over_ranks(
            &w,
            &[("size", size.to_string())],
            total * 1e6 / iters as f64,
        )
        .map_err(e)?;
    }
    u.finalize().map_err(|e| e.to_string())
}
