//! `ibdyn-bench latency`: OSU-style ping-pong between two ranks, one-way latency per size.

use crate::job::{self, add_rows, emit, iters_for, sizes};
use crate::report::Report;
use ibdyn::traits::*;
use std::time::Instant;

#[derive(clap::Args)]
pub struct Args {
    /// Node daemons: 1 = shared memory, 2 = the inter-node path.
    #[arg(long, default_value_t = 1)]
    nodes: usize,
    /// Largest message size in bytes.
    #[arg(long, default_value_t = 4 << 20)]
    max_size: usize,
    /// Iterations for small messages.
    #[arg(long, default_value_t = 10000)]
    iters: usize,
}

/// Batches per size: ibdyn and the floor are reduced with the same statistics over the
/// same number of batch means (median: the typical batch; p10: a quiet one).
const BATCHES: usize = 20;

/// The 10th percentile and the median of batch means (NaN if there are none).
fn p10_median(mut v: Vec<f64>) -> (f64, f64) {
    v.sort_by(f64::total_cmp);
    let at = |q: usize| v.get(v.len() * q / 100).copied().unwrap_or(f64::NAN);
    (at(10), at(50))
}

pub fn run(a: Args, json: bool) -> Result<(), String> {
    if job::in_job() {
        return rank_main(&a);
    }
    let mut report = Report::new("latency", json);
    let args = vec![
        "latency".into(),
        "--max-size".into(),
        a.max_size.to_string(),
        "--iters".into(),
        a.iters.to_string(),
    ];
    let rows = job::run_job(2, a.nodes, &["--map-by", "node"], &[], &args)?;
    add_rows(&mut report, &[("nodes", a.nodes.to_string())], &rows)?;
    // ibdyn's 8 B figures, for the ratios.
    let ours = |stat: &str| {
        report
            .rows()
            .iter()
            .find(|r| {
                !r.floor && r.stat == stat && r.params.iter().any(|(k, v)| k == "size" && v == "8")
            })
            .map(|r| r.value)
            .unwrap_or(f64::NAN)
    };
    let (mean8, p10_8, median8) = (ours("mean"), ours("p10"), ours("median"));
    let p = [("nodes", a.nodes.to_string()), ("size", "8".into())];
    if a.nodes == 1 {
        let batches = crate::floors::flag_pingpong_batches_ns(a.iters.max(BATCHES), BATCHES);
        let (f10, f50) = p10_median(batches.iter().map(|ns| ns / 1000.0).collect());
        report.floor(&p, "shm flag ping-pong p10", "us", f10);
        report.floor(&p, "shm flag ping-pong median", "us", f50);
        report.add(&p, "p10 / floor p10", "ratio", p10_8 / f10);
        report.add(&p, "median / floor median", "ratio", median8 / f50);
    } else {
        let iters = a.iters.max(1000) * 2;
        let udp = crate::floors_net::udp_pingpong_one_way_us(8, iters);
        let tcp = crate::floors_net::tcp_pingpong_one_way_us(8, iters);
        let batches = crate::floors_net::tcp_polling_pingpong_batches_us(8, iters, BATCHES);
        let tcp_poll = batches.iter().sum::<f64>() / batches.len() as f64;
        let (f10, f50) = p10_median(batches);
        report.floor(&p, "udp ping-pong mean", "us", udp);
        report.floor(&p, "tcp ping-pong mean", "us", tcp);
        report.floor(&p, "tcp polling ping-pong mean", "us", tcp_poll);
        report.floor(&p, "tcp polling ping-pong p10", "us", f10);
        report.floor(&p, "tcp polling ping-pong median", "us", f50);
        report.add(&p, "mean / tcp mean", "ratio", mean8 / tcp);
        report.add(&p, "mean / tcp polling mean", "ratio", mean8 / tcp_poll);
        report.add(&p, "p10 / tcp polling p10", "ratio", p10_8 / f10);
        report.add(&p, "median / tcp polling median", "ratio", median8 / f50);
        let p4k = [("nodes", a.nodes.to_string()), ("size", "4096".into())];
        let tcp4k = crate::floors_net::tcp_polling_pingpong_one_way_us(4096, iters);
        report.floor(&p4k, "tcp polling ping-pong mean", "us", tcp4k);
    }
    report.finish();
    Ok(())
}

fn rank_main(a: &Args) -> Result<(), String> {
    let u = ibdyn::initialize().map_err(|e| e.to_string())?;
    let w = u.world();
    let rank = w.rank();
    let peer = 1 - rank;
    let mut all = vec![0usize];
    all.extend(sizes(1, a.max_size));
    for size in all {
        let sbuf = vec![1u8; size];
        let mut rbuf = vec![0u8; size];
        let iters = iters_for(size, a.iters);
        let warm = (iters / 10).max(5);
        let batches = BATCHES;
        let per = (iters / batches).max(1);
        let mut batch_us = Vec::with_capacity(batches);
        let mut total = 0.0;
        for b in 0..=batches {
            let t0 = Instant::now();
            let n = if b == 0 { warm } else { per };
            for _ in 0..n {
                if rank == 0 {
                    w.send(&sbuf, peer, 1).map_err(|e| e.to_string())?;
                    w.recv(&mut rbuf, peer, 1).map_err(|e| e.to_string())?;
                } else {
                    w.recv(&mut rbuf, peer, 1).map_err(|e| e.to_string())?;
                    w.send(&sbuf, peer, 1).map_err(|e| e.to_string())?;
                }
            }
            if b > 0 {
                let secs = t0.elapsed().as_secs_f64();
                total += secs;
                batch_us.push(secs * 1e6 / (2.0 * n as f64));
            }
        }
        let (p10, median) = p10_median(batch_us);
        if rank == 0 {
            let p = [("size", size.to_string())];
            emit(
                &p,
                "mean",
                "us",
                total * 1e6 / (2.0 * (per * batches) as f64),
            );
            // The statistics of the floor: percentiles of the batch means.
            emit(&p, "p10", "us", p10);
            emit(&p, "median", "us", median);
        }
    }
    u.finalize().map_err(|e| e.to_string())
}
