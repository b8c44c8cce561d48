//! `ibdyn-bench merge --method loop`: the peers' merge benchmark (the C program
//! `abi/bench/merge_loop.c` runs it on any MPI). A job of P ranks spawns C copies of this
//! benchmark; both groups run a warm-up of 5 merge + free, one barrier on the
//! intercommunicator, then N pairs of merge + free back to back; the figure is the mean per
//! process, its maximum over every process of both groups.

use crate::job::{self, emit};
use crate::report::Report;
use ibdyn::traits::*;
use ibdyn::SystemOperation;
use std::time::Instant;

/// Merge + free pairs per cell for `reps` of the `merge` arguments (default 20: 1000, as
/// the C program; a one-off stall of a millisecond must not weigh on the mean).
fn pairs_for(reps: usize) -> usize {
    (reps * 50).max(50)
}

fn e(err: ibdyn::CommError) -> String {
    err.to_string()
}

/// The outer process (one job per parents x children cell) or a rank of the job.
pub fn run(
    parents: &[usize],
    children: &[usize],
    reps: usize,
    nodes: usize,
    json: bool,
) -> Result<(), String> {
    if job::in_job() {
        return rank_main(children.first().copied().unwrap_or(1), reps);
    }
    let mut report = Report::new("merge", json);
    for &p in parents {
        for &c in children {
            let args: Vec<String> = [
                "merge".to_string(),
                "--method".into(),
                "loop".into(),
                "--children".into(),
                c.to_string(),
                "--reps".into(),
                reps.to_string(),
            ]
            .to_vec();
            let rows = job::run_job(p, nodes, &[], &[], &args)?;
            let lead = [
                ("method", "loop".to_string()),
                ("groups", format!("{p}+{c}")),
                ("nodes", nodes.to_string()),
                ("pairs", pairs_for(reps).to_string()),
            ];
            job::add_rows(&mut report, &lead, &rows)?;
        }
    }
    report.finish();
    Ok(())
}

fn rank_main(children: usize, reps: usize) -> Result<(), String> {
    let u = ibdyn::initialize().map_err(e)?;
    let (ic, parent) = job::spawn_self_or_parent(&u, children)?;
    for _ in 0..5 {
        ic.merge(!parent).map_err(e)?.free();
    }
    ic.barrier().map_err(e)?;
    let n = pairs_for(reps);
    let t = Instant::now();
    for _ in 0..n {
        ic.merge(!parent).map_err(e)?.free();
    }
    let us = [t.elapsed().as_secs_f64() * 1e6 / n as f64];
    let all = ic.merge(!parent).map_err(e)?;
    let mut max = [0.0f64];
    all.all_reduce_into(&us, &mut max, SystemOperation::max())
        .map_err(e)?;
    if all.rank() == 0 {
        emit(&[], "max", "us", max[0]);
    }
    all.free();
    ic.disconnect().map_err(e)?;
    u.finalize().map_err(e)
}
