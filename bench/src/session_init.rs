//! `ibdyn-bench session-init`: the cost of the Sessions start-up steps in every rank, against
//! `ibdyn::initialize()`: `Session::init` (cold: the process's first init; re-init: after a
//! finalize; warm: with a universe already running), `group_from_pset(mpi://WORLD)`,
//! `create_comm` over it. Avg/min/max over the ranks, in us.

use crate::job::{self, emit_over_ranks};
use crate::report::Report;
use ibdyn::traits::*;
use ibdyn::{IntraCommunicator, Session, SessionOptions, PSET_WORLD};
use std::time::Instant;

#[derive(clap::Args)]
pub struct Args {
    /// Process counts to measure.
    #[arg(long, value_delimiter = ',', default_value = "2,4,8")]
    n: Vec<usize>,
    /// Node daemons.
    #[arg(long, default_value_t = 2)]
    nodes: usize,
    /// Inside the job: `sessions` (cold, re-init) or `universe` (initialize, then warm).
    #[arg(long, hide = true)]
    job_case: Option<String>,
}

pub fn run(a: Args, json: bool) -> Result<(), String> {
    if job::in_job() {
        return rank_main(a.job_case.as_deref().unwrap_or("sessions"))
            .map_err(|e| format!("session-init rank: {e}"));
    }
    let mut report = Report::new("session-init", json);
    for &n in &a.n {
        let nodes = a.nodes.min(n).max(1);
        for case in ["sessions", "universe"] {
            let args = vec!["session-init".to_string(), "--job-case".into(), case.into()];
            let rows = job::run_job(n, nodes, &[], &[], &args)?;
            job::add_rows(
                &mut report,
                &[("n", n.to_string()), ("nodes", nodes.to_string())],
                &rows,
            )?;
        }
    }
    report.finish();
    Ok(())
}

fn us(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e6
}

/// One session's start-up: init, the group of WORLD, a communicator over it; then finalize.
/// Reports each step over the ranks of the communicator, tagged `when`.
fn one_session(when: &str, tag: &str) -> Result<(), String> {
    let e = |e: ibdyn::CommError| e.to_string();
    let t = Instant::now();
    let mut s = Session::init(SessionOptions::default()).map_err(e)?;
    let init = us(t);
    let t = Instant::now();
    let g = s.group_from_pset(PSET_WORLD).map_err(e)?;
    let group = us(t);
    let t = Instant::now();
    let c: IntraCommunicator = g.create_comm(tag).map_err(e)?;
    let comm = us(t);
    c.barrier().map_err(e)?;
    let step = |what: &str| [("when", when.to_string()), ("step", what.to_string())];
    emit_over_ranks(&c, &step("Session::init"), init).map_err(e)?;
    emit_over_ranks(&c, &step("group_from_pset"), group).map_err(e)?;
    emit_over_ranks(&c, &step("create_comm"), comm).map_err(e)?;
    c.free();
    s.finalize().map_err(e)?;
    Ok(())
}

fn rank_main(case: &str) -> Result<(), String> {
    let e = |e: ibdyn::CommError| e.to_string();
    match case {
        "universe" => {
            let t = Instant::now();
            let u = ibdyn::initialize().map_err(e)?;
            let init = us(t);
            let w = u.world();
            emit_over_ranks(
                &w,
                &[
                    ("when", "universe".to_string()),
                    ("step", "ibdyn::initialize".to_string()),
                ],
                init,
            )
            .map_err(e)?;
            w.barrier().map_err(e)?;
            one_session("warm", "bench-warm")?;
            w.barrier().map_err(e)?;
            Ok(())
        }
        _ => {
            one_session("cold", "bench-cold")?;
            one_session("re-init", "bench-reinit")
        }
    }
}
