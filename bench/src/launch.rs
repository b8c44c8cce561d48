//! `ibdyn-bench launch`: wall time of `ibdyn run -n N` of a program that only initialises
//! and finalises PMI, against the floor of fork+exec of that program N times without PMI.

use crate::floors_proc;
use crate::report::Report;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

#[derive(clap::Args)]
pub struct Args {
    /// Process counts.
    #[arg(long, value_delimiter = ',', default_values_t = [2u32, 4, 8, 16, 32, 64])]
    n: Vec<u32>,
    /// Daemon counts.
    #[arg(long, value_delimiter = ',', default_values_t = [1u32, 4])]
    nodes: Vec<u32>,
    /// Launches per point (the median is reported).
    #[arg(long, default_value_t = 5)]
    reps: u32,
    /// The `ibdyn` binary (default: next to this one).
    #[arg(long)]
    ibdyn: Option<PathBuf>,
    /// Internal: initialise and finalise PMI, nothing else.
    #[arg(long, hide = true)]
    worker: bool,
}

fn launch_once(ibdyn: &Path, me: &Path, n: u32, nodes: u32) -> Result<Duration, String> {
    let t = Instant::now();
    let st = Command::new(ibdyn)
        .args(["run", "-n", &n.to_string(), "--nodes", &nodes.to_string()])
        .arg(me)
        .args(["launch", "--worker"])
        .stdin(Stdio::null())
        .status()
        .map_err(|e| format!("{}: {e}", ibdyn.display()))?;
    if !st.success() {
        return Err(format!("ibdyn run -n {n} --nodes {nodes} failed: {st}"));
    }
    Ok(t.elapsed())
}

pub fn run(args: Args, json: bool) -> Result<(), String> {
    if args.worker {
        let mut c = ibdyn::pmi::PmiClient::init().map_err(|e| e.to_string())?;
        return c.finalize().map_err(|e| e.to_string());
    }
    let ibdyn = crate::pmi::ibdyn_path(&args.ibdyn)?;
    let me = std::env::current_exe().map_err(|e| e.to_string())?;
    let mut report = Report::new("launch", json);
    for &n in &args.n {
        let p = |op: &str, k: &str| {
            vec![
                ("op", op.to_string()),
                ("n", n.to_string()),
                ("nodes", k.to_string()),
            ]
        };
        let floor =
            floors_proc::fork_exec_floor(Path::new(floors_proc::TRIVIAL), &[], n, args.reps)
                .map_err(|e| format!("fork+exec floor: {e}"))?;
        report.floor(
            &p("fork+exec N x /bin/true", "-"),
            "median",
            "ms",
            floor.as_secs_f64() * 1e3,
        );
        // The same worker binary without a launcher: it runs as a PMI singleton.
        let bare = floors_proc::fork_exec_floor(&me, &["launch", "--worker"], n, args.reps)
            .map_err(|e| format!("fork+exec of the worker: {e}"))?;
        report.floor(
            &p("fork+exec N x worker (singleton)", "-"),
            "median",
            "ms",
            bare.as_secs_f64() * 1e3,
        );
        for &k in &args.nodes {
            let mut v = (0..args.reps.max(1))
                .map(|_| launch_once(&ibdyn, &me, n, k))
                .collect::<Result<Vec<_>, _>>()?;
            v.sort();
            report.add(
                &p("ibdyn run (init+finalize)", &k.to_string()),
                "median",
                "ms",
                v[v.len() / 2].as_secs_f64() * 1e3,
            );
        }
    }
    report.finish();
    Ok(())
}
