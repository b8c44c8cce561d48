//! `ibdyn-bench intercomm-coll --method loop`: the peers' method (the C program
//! `abi/bench/intercoll_loop.c` runs it on any MPI). A job of P ranks spawns C copies of
//! this benchmark; over the spawn's intercommunicator each cell (operation x size) runs a
//! warm-up of 5, one barrier, then the operation N times back to back; the figure is the
//! mean per process, its maximum over every process of both groups. Root of the rooted
//! operations: parent rank 0.

use crate::intercomm_coll::{one, Bufs};
use crate::job::{self, emit};
use ibdyn::traits::*;
use ibdyn::{InterCommunicator, IntraCommunicator, SystemOperation};
use std::time::Instant;

/// The operations of the loop method, in the peers' order.
pub const LOOP_OPS: &[&str] = &[
    "bcast",
    "reduce",
    "allreduce",
    "reduce_scatter",
    "allgather",
    "alltoall",
    "barrier",
];

/// The message sizes of the loop method.
pub const LOOP_SIZES: &[usize] = &[8, 1024, 65536, 1 << 20];

/// Back-to-back repetitions for a size, as the C program counts them.
pub fn reps(size: usize, base: usize) -> usize {
    match size {
        s if s > 65536 => (base / 50).max(10),
        s if s > 1024 => (base / 10).max(10),
        _ => base,
    }
}

/// What a rank of the loop job is told: the operations, the children per spawn, the
/// largest size and the base repetitions.
pub struct LoopPlan<'a> {
    pub ops: Vec<&'a str>,
    pub children: usize,
    pub max_size: usize,
    pub iters: usize,
}

fn e(err: ibdyn::CommError) -> String {
    err.to_string()
}

/// A rank of the loop job: a parent (of the `ibdyn run` job) spawns the children with
/// this process's own arguments; a child finds its parent.
pub fn rank_main(plan: &LoopPlan) -> Result<(), String> {
    let u = ibdyn::initialize().map_err(e)?;
    let (ic, parent) = job::spawn_self_or_parent(&u, plan.children)?;
    let all = ic.merge(!parent).map_err(e)?;
    let r = measure(plan, &ic, &all, parent);
    all.free();
    ic.disconnect().map_err(e)?;
    r?;
    u.finalize().map_err(e)
}

fn measure(
    plan: &LoopPlan,
    ic: &InterCommunicator,
    all: &IntraCommunicator,
    parent: bool,
) -> Result<(), String> {
    let (mine, theirs) = (ic.size() as usize, ic.remote_size() as usize);
    let (p, c) = if parent {
        (mine, theirs)
    } else {
        (theirs, mine)
    };
    let cap = plan.max_size.max(8) * (p * c).max(p + c) / 8 + 8;
    // Both written now, as the C program does: no cell pays for their first touch.
    let mut b = Bufs {
        send: vec![1u64; cap],
        recv: vec![2u64; cap],
    };
    for op in &plan.ops {
        for &size in LOOP_SIZES.iter().filter(|&&s| s <= plan.max_size) {
            let n = reps(size, plan.iters);
            for _ in 0..5 {
                one(ic, parent, op, size, &mut b).map_err(e)?;
            }
            ic.barrier().map_err(e)?;
            let t = Instant::now();
            for _ in 0..n {
                one(ic, parent, op, size, &mut b).map_err(e)?;
            }
            let us = [t.elapsed().as_secs_f64() * 1e6 / n as f64];
            let mut max = [0.0f64];
            all.all_reduce_into(&us, &mut max, SystemOperation::max())
                .map_err(e)?;
            if all.rank() == 0 {
                let size = if *op == "barrier" { 0 } else { size };
                let params = [("op", op.to_string()), ("size", size.to_string())];
                emit(&params, "max", "us", max[0]);
            }
            if *op == "barrier" {
                break;
            }
        }
    }
    Ok(())
}

/// The outer process: one job of P ranks per group pair (P+C), rows as (op, size, us).
pub fn run_pairs(
    pairs: &[(usize, usize)],
    nodes: usize,
    args: impl Fn(usize) -> Vec<String>,
) -> Result<Vec<(String, Vec<String>)>, String> {
    let mut out = Vec::new();
    for &(p, c) in pairs {
        let rows = job::run_job(p, nodes, &[], &[], &args(c))?;
        out.push((format!("{p}+{c}"), rows));
    }
    Ok(out)
}
