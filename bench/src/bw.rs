//! `ibdyn-bench bw`: OSU-style bandwidth, a window of 64 non-blocking sends then one ack.

use crate::job::{self, add_rows, emit, iters_for, sizes};
use crate::report::Report;
use ibdyn::traits::*;
use std::time::Instant;

const WINDOW: usize = 64;

#[derive(clap::Args)]
pub struct Args {
    /// Node daemons: 1 = shared memory, 2 = the inter-node path.
    #[arg(long, default_value_t = 1)]
    nodes: usize,
    /// Largest message size in bytes.
    #[arg(long, default_value_t = 4 << 20)]
    max_size: usize,
    /// Windows for small messages.
    #[arg(long, default_value_t = 200)]
    iters: usize,
}

pub fn run(a: Args, json: bool) -> Result<(), String> {
    if job::in_job() {
        return rank_main(&a);
    }
    let mut report = Report::new("bw", json);
    let args = vec![
        "bw".into(),
        "--max-size".into(),
        a.max_size.to_string(),
        "--iters".into(),
        a.iters.to_string(),
    ];
    let rows = job::run_job(2, a.nodes, &["--map-by", "node"], &[], &args)?;
    add_rows(&mut report, &[("nodes", a.nodes.to_string())], &rows)?;
    let mb = 4 << 20;
    let p = [("nodes", a.nodes.to_string()), ("size", mb.to_string())];
    if a.nodes == 1 {
        report.floor(
            &p,
            "memcpy",
            "MB/s",
            crate::floors::memcpy_gbps(mb) * 1000.0,
        );
        report.floor(
            &p,
            "process_vm_readv",
            "MB/s",
            crate::floors::cma_read_gbps(mb) * 1000.0,
        );
    } else {
        report.floor(
            &p,
            "tcp stream",
            "MB/s",
            crate::floors_net::tcp_bandwidth_mbps(1 << 20, 400),
        );
    }
    report.finish();
    Ok(())
}

fn rank_main(a: &Args) -> Result<(), String> {
    let u = ibdyn::initialize().map_err(|e| e.to_string())?;
    let w = u.world();
    let rank = w.rank();
    let e = |e: ibdyn::CommError| e.to_string();
    for size in sizes(1, a.max_size) {
        let iters = iters_for(size, a.iters).max(10);
        // As in OSU's osu_bw: every send of the window reads one buffer and every receive of
        // the window lands in one buffer, both touched before timing so no page faults are
        // measured.
        let sbuf = vec![1u8; size];
        let mut rbuf = vec![0u8; size];
        rbuf.fill(2);
        let mut ack = [0u8; 4];
        let warm = 2;
        let mut t0 = Instant::now();
        for i in 0..warm + iters {
            if i == warm {
                t0 = Instant::now();
            }
            if rank == 0 {
                let reqs = (0..WINDOW)
                    .map(|_| w.isend(&sbuf, 1, 2))
                    .collect::<Result<Vec<_>, _>>()
                    .map_err(e)?;
                ibdyn::wait_all(reqs).map_err(e)?;
                w.recv(&mut ack, 1, 3).map_err(e)?;
            } else {
                let base = rbuf.as_mut_ptr();
                let reqs = (0..WINDOW)
                    .map(|_| {
                        // SAFETY: `rbuf` outlives the requests (they end in wait_all below) and
                        // nothing reads it meanwhile; the runtime only writes through the
                        // pointer. The window's receives overwrite one buffer, as in OSU's C
                        // code; safe Rust has no way to lend one buffer to 64 receives.
                        let b = unsafe { std::slice::from_raw_parts_mut(base, size) };
                        w.irecv(b, 0, 2)
                    })
                    .collect::<Result<Vec<_>, _>>()
                    .map_err(e)?;
                ibdyn::wait_all(reqs).map_err(e)?;
                w.send(&ack, 0, 3).map_err(e)?;
            }
        }
        let secs = t0.elapsed().as_secs_f64();
        if rank == 0 {
            let mbps = (size * WINDOW * iters) as f64 / secs / 1e6;
            emit(&[("size", size.to_string())], "bandwidth", "MB/s", mbps);
        }
    }
    u.finalize().map_err(|e| e.to_string())
}
