//! `ibdyn-bench init`: start-up cost and connections held, with on-demand wire-up (the
//! default: cards fetched and connections made on first contact) against eager all-to-all
//! wire-up (`IBDYN_WIREUP=all`), the comparison of the start-up papers. Each rank then talks
//! to its two ring neighbours only.

use crate::job::{self, emit};
use crate::report::Report;
use ibdyn::traits::*;
use ibdyn::SystemOperation;
use std::collections::HashMap;
use std::time::Instant;

#[derive(clap::Args)]
pub struct Args {
    /// Process counts to measure.
    #[arg(long, value_delimiter = ',', default_value = "8,16,32,64,128,256")]
    n: Vec<usize>,
    /// Node daemons (ranks placed round-robin, so neighbours sit on different nodes).
    #[arg(long, default_value_t = 4)]
    nodes: usize,
}

/// Parses rank 0's `ROW <stat> <unit> <value>` lines (no parameters) into (stat, unit, value).
fn parse_rows(rows: &[String]) -> Result<Vec<(String, String, f64)>, String> {
    rows.iter()
        .map(|row| {
            let p: Vec<&str> = row.split_whitespace().collect();
            match p.as_slice() {
                ["ROW", stat, unit, v] => v
                    .parse()
                    .map(|v| (stat.to_string(), unit.to_string(), v))
                    .map_err(|_| format!("bad value in: {row}")),
                _ => Err(format!("bad result line: {row}")),
            }
        })
        .collect()
}

pub fn run(a: Args, json: bool) -> Result<(), String> {
    if job::in_job() {
        return rank_main();
    }
    let mut report = Report::new("init", json);
    // Previous measurement of each (wire-up, statistic), for the growth rows.
    let mut prev = HashMap::new();
    for &n in &a.n {
        let nodes = a.nodes.min(n).max(1);
        for mode in ["on-demand", "all"] {
            let envs: &[(&str, &str)] = if mode == "all" {
                &[("IBDYN_WIREUP", "all")]
            } else {
                &[]
            };
            let t = Instant::now();
            let rows = job::run_job(n, nodes, &["--map-by", "node"], envs, &["init".into()])?;
            let wall = t.elapsed().as_secs_f64() * 1e3;
            let p = [
                ("n", n.to_string()),
                ("nodes", nodes.to_string()),
                ("wireup", mode.to_string()),
            ];
            let mut measured = parse_rows(&rows)?;
            measured.push(("job wall time".into(), "ms".into(), wall));
            for (stat, unit, v) in measured {
                let key = format!("{mode}/{stat}");
                job::add_with_growth(&mut report, &mut prev, &key, &p, (&stat, &unit), n, v);
            }
        }
        let floor = crate::floors_proc::fork_exec_floor(
            std::path::Path::new("/bin/true"),
            &[],
            n as u32,
            3,
        )
        .map_err(|e| format!("fork+exec floor: {e}"))?;
        report.floor(
            &[
                ("n", n.to_string()),
                ("nodes", "-".into()),
                ("wireup", "-".into()),
            ],
            "fork+exec /bin/true x n",
            "ms",
            floor.as_secs_f64() * 1e3,
        );
    }
    report.finish();
    Ok(())
}

fn rank_main() -> Result<(), String> {
    let t0 = Instant::now();
    let u = ibdyn::initialize().map_err(|e| e.to_string())?;
    let init_us = t0.elapsed().as_secs_f64() * 1e6;
    let w = u.world();
    let (r, n) = (w.rank(), w.size());
    let e = |e: ibdyn::CommError| e.to_string();
    let t1 = Instant::now();
    let mut got = [0u8; 8];
    w.sendrecv(&[1u8; 8], (r + 1) % n, 0, &mut got, (r + n - 1) % n, 0)
        .map_err(e)?;
    w.sendrecv(&[1u8; 8], (r + n - 1) % n, 1, &mut got, (r + 1) % n, 1)
        .map_err(e)?;
    let first_us = t1.elapsed().as_secs_f64() * 1e6;
    // Count before anyone starts the reduction below (it talks to other peers): meet through
    // the process manager, which makes no fabric connection.
    u.with_pmi(|p| p.barrier()).map_err(|e| e.to_string())?;
    let conns = u.connection_count() as f64;
    u.with_pmi(|p| p.barrier()).map_err(|e| e.to_string())?;
    let mut out = [0.0f64; 3];
    w.all_reduce_into(
        &[init_us, first_us, conns],
        &mut out,
        SystemOperation::max(),
    )
    .map_err(e)?;
    let mut sum = [0.0f64];
    w.all_reduce_into(&[conns], &mut sum, SystemOperation::sum())
        .map_err(e)?;
    if r == 0 {
        emit(&[], "init_max", "us", out[0]);
        emit(&[], "first_ring_exchange_max", "us", out[1]);
        emit(&[], "connections_max", "count", out[2]);
        emit(&[], "connections_mean", "count", sum[0] / n as f64);
    }
    u.finalize().map_err(|e| e.to_string())
}
