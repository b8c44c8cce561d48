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
    if a.nodes == 1 {
        let ns = crate::floors::flag_pingpong_one_way_ns(100_000);
        report.floor(
            &[("nodes", "1".into()), ("size", "8".into())],
            "shm flag ping-pong",
            "us",
            ns / 1000.0,
        );
    } else {
        for s in [8usize, 4096] {
            let p = [("nodes", a.nodes.to_string()), ("size", s.to_string())];
            report.floor(
                &p,
                "udp ping-pong",
                "us",
                crate::floors_net::udp_pingpong_one_way_us(s, 20000),
            );
            report.floor(
                &p,
                "tcp ping-pong",
                "us",
                crate::floors_net::tcp_pingpong_one_way_us(s, 20000),
            );
        }
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
        let batches = 10;
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
        batch_us.sort_by(|x, y| x.total_cmp(y));
        if rank == 0 {
            let p = [("size", size.to_string())];
            emit(
                &p,
                "mean",
                "us",
                total * 1e6 / (2.0 * (per * batches) as f64),
            );
            // The same statistic as the floor: the 10th percentile of batch means.
            emit(&p, "p10", "us", batch_us[batch_us.len() / 10]);
        }
    }
    u.finalize().map_err(|e| e.to_string())
}
