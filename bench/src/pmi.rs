//! `ibdyn-bench pmi`: put+fence+get-all, allgather, iallgather+wait, and the overlap of
//! ifence / iallgather with computation, for N processes on K node daemons, against the
//! floor of fork+exec of a trivial program N times. The measuring processes are this same
//! binary started by `ibdyn run` with `--worker`.

use crate::floors_proc;
use crate::job::add_with_growth;
use crate::report::Report;
use ibdyn::pmi::{PmiClient, PmiRequest};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

#[derive(clap::Args)]
pub struct Args {
    /// Process counts (the scale table: `--n 8,16,32,64,128,256 --nodes 4 --no-overlap`).
    #[arg(long, value_delimiter = ',', default_values_t = [2u32, 4, 8, 16, 32, 64])]
    n: Vec<u32>,
    /// Daemon counts.
    #[arg(long, value_delimiter = ',', default_values_t = [1u32, 4])]
    nodes: Vec<u32>,
    /// Iterations per measurement (default: 400 / N, at least 8).
    #[arg(long)]
    iters: Option<u32>,
    /// The `ibdyn` binary (default: next to this one).
    #[arg(long)]
    ibdyn: Option<PathBuf>,
    /// Skip the overlap measurements (the scale table needs only the operation times).
    #[arg(long)]
    no_overlap: bool,
    /// Internal: run as one measuring process of the job.
    #[arg(long, hide = true)]
    worker: bool,
}

pub(crate) fn ibdyn_path(given: &Option<PathBuf>) -> Result<PathBuf, String> {
    if let Some(p) = given {
        return Ok(p.clone());
    }
    let me = std::env::current_exe().map_err(|e| format!("current_exe: {e}"))?;
    let p = me.with_file_name("ibdyn");
    if !p.exists() {
        return Err(format!(
            "{} not found: build it (cargo build --release -p ibdyn-launcher) or pass --ibdyn",
            p.display()
        ));
    }
    Ok(p)
}

const VALUE_LEN: usize = 32;

fn busy(d: Duration) {
    let t = Instant::now();
    while t.elapsed() < d {
        std::hint::spin_loop();
    }
}

/// Times `iters` runs of `f` after a barrier; mean seconds per run.
fn timed(
    c: &mut PmiClient,
    iters: u32,
    mut f: impl FnMut(&mut PmiClient, u32) -> Result<(), String>,
) -> Result<f64, String> {
    f(c, u32::MAX)?; // warm-up
    c.barrier().map_err(|e| e.to_string())?;
    let t = Instant::now();
    for i in 0..iters {
        f(c, i)?;
    }
    Ok(t.elapsed().as_secs_f64() / iters as f64)
}

/// How the process computes while a non-blocking operation is in flight.
#[derive(Clone, Copy)]
enum Work {
    /// Busy loop: competes with the daemon for the CPU (the paper's worst case).
    Spin,
    /// Sleep: leaves the CPU to the daemon.
    Sleep,
}

/// Overlap as the OSU non-blocking benchmarks define it: compute for as long as the pure
/// operation takes, then `100 * (1 - (t_total - t_compute) / t_pure)`, with t_compute measured.
fn overlap(
    c: &mut PmiClient,
    iters: u32,
    pure: f64,
    work: Work,
    start: &dyn Fn(&mut PmiClient) -> Result<PmiRequest, String>,
) -> Result<f64, String> {
    let compute = Duration::from_secs_f64(pure);
    c.barrier().map_err(|e| e.to_string())?;
    let mut t_compute = 0.0;
    let t = Instant::now();
    for _ in 0..iters {
        let req = start(c)?;
        let w = Instant::now();
        match work {
            Work::Spin => busy(compute),
            Work::Sleep => std::thread::sleep(compute),
        }
        t_compute += w.elapsed().as_secs_f64();
        c.wait(req).map_err(|e| e.to_string())?;
    }
    let total = t.elapsed().as_secs_f64();
    let exposed = (total - t_compute) / iters as f64;
    Ok((100.0 * (1.0 - exposed / pure)).clamp(0.0, 100.0))
}

fn worker(iters: u32, with_overlap: bool) -> Result<(), String> {
    let mut c = PmiClient::init().map_err(|e| e.to_string())?;
    let (r, n) = (c.rank(), c.size());
    let value = vec![b'v'; VALUE_LEN / 2];
    let put_fence_get = timed(&mut c, iters, |c, i| {
        c.put_bytes(&format!("b{i}-{r}"), &value)
            .map_err(|e| e.to_string())?;
        c.fence().map_err(|e| e.to_string())?;
        for p in 0..n {
            c.get(&format!("b{i}-{p}")).map_err(|e| e.to_string())?;
        }
        Ok(())
    })?;
    let allgather = timed(&mut c, iters, |c, _| {
        c.allgather(&[7u8; VALUE_LEN])
            .map(|_| ())
            .map_err(|e| e.to_string())
    })?;
    let iallgather = timed(&mut c, iters, |c, _| {
        let q = c.iallgather(&[7u8; VALUE_LEN]).map_err(|e| e.to_string())?;
        c.wait(q).map(|_| ()).map_err(|e| e.to_string())
    })?;
    let ifence = timed(&mut c, iters, |c, _| {
        let q = c.ifence().map_err(|e| e.to_string())?;
        c.wait(q).map(|_| ()).map_err(|e| e.to_string())
    })?;
    let start_ifence = |c: &mut PmiClient| c.ifence().map_err(|e| e.to_string());
    let start_iag = |c: &mut PmiClient| c.iallgather(&[7u8; VALUE_LEN]).map_err(|e| e.to_string());
    let (mut ov_ifence_spin, mut ov_iag_spin) = (f64::NAN, f64::NAN);
    let (mut ov_ifence_sleep, mut ov_iag_sleep) = (f64::NAN, f64::NAN);
    if with_overlap {
        ov_ifence_spin = overlap(&mut c, iters, ifence, Work::Spin, &start_ifence)?;
        ov_iag_spin = overlap(&mut c, iters, iallgather, Work::Spin, &start_iag)?;
        ov_ifence_sleep = overlap(&mut c, iters, ifence, Work::Sleep, &start_ifence)?;
        ov_iag_sleep = overlap(&mut c, iters, iallgather, Work::Sleep, &start_iag)?;
    }
    // Mean over the ranks, gathered with the thing under test.
    let mine = [
        put_fence_get,
        allgather,
        iallgather,
        ifence,
        ov_ifence_spin,
        ov_iag_spin,
        ov_ifence_sleep,
        ov_iag_sleep,
    ];
    let bytes: Vec<u8> = mine.iter().flat_map(|v| v.to_le_bytes()).collect();
    let all = c.allgather(&bytes).map_err(|e| e.to_string())?;
    if r == 0 {
        let mut mean = [0f64; 8];
        for b in &all {
            for (k, m) in mean.iter_mut().enumerate() {
                let x: [u8; 8] = b[k * 8..k * 8 + 8]
                    .try_into()
                    .map_err(|_| "short result".to_string())?;
                *m += f64::from_le_bytes(x) / n as f64;
            }
        }
        let text: Vec<String> = mean.iter().map(|m| m.to_string()).collect();
        println!("RESULT {}", text.join(" "));
    }
    c.finalize().map_err(|e| e.to_string())
}

fn run_job(
    ibdyn: &Path,
    n: u32,
    nodes: u32,
    iters: u32,
    overlap: bool,
) -> Result<(Vec<f64>, f64), String> {
    let me = std::env::current_exe().map_err(|e| e.to_string())?;
    let t = Instant::now();
    let out = Command::new(ibdyn)
        .args(["run", "-n", &n.to_string(), "--nodes", &nodes.to_string()])
        .arg(me)
        .args(["pmi", "--worker", "--iters", &iters.to_string()])
        .args(if overlap {
            &[][..]
        } else {
            &["--no-overlap"][..]
        })
        .output()
        .map_err(|e| format!("{}: {e}", ibdyn.display()))?;
    let wall = t.elapsed().as_secs_f64();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let line = stdout
        .lines()
        .find(|l| l.starts_with("RESULT "))
        .ok_or_else(|| {
            format!(
                "job n={n} nodes={nodes} gave no result: {}",
                String::from_utf8_lossy(&out.stderr)
            )
        })?;
    let m: Vec<f64> = line[7..]
        .split(' ')
        .map(|v| v.parse::<f64>().map_err(|e| e.to_string()))
        .collect::<Result<_, _>>()?;
    if m.len() != 8 {
        return Err(format!("result line has {} values: {line}", m.len()));
    }
    Ok((m, wall))
}

pub fn run(args: Args, json: bool) -> Result<(), String> {
    if args.worker {
        return worker(args.iters.unwrap_or(10), !args.no_overlap);
    }
    let ibdyn = ibdyn_path(&args.ibdyn)?;
    let mut report = Report::new("pmi", json);
    // Previous measurement of each (operation, daemons), for the growth rows.
    let mut prev = std::collections::HashMap::new();
    for &n in &args.n {
        let floor = floors_proc::fork_exec_floor(Path::new(floors_proc::TRIVIAL), &[], n, 5)
            .map_err(|e| format!("fork+exec floor: {e}"))?;
        let p = |op: &str, k: &str| {
            vec![
                ("op", op.to_string()),
                ("n", n.to_string()),
                ("nodes", k.to_string()),
            ]
        };
        report.floor(
            &p("fork+exec N x /bin/true", "-"),
            "median",
            "us",
            floor.as_secs_f64() * 1e6,
        );
        for &k in &args.nodes {
            let iters = args.iters.unwrap_or((400 / n).max(8));
            let (m, wall) = run_job(&ibdyn, n, k, iters, !args.no_overlap)?;
            let ks = k.to_string();
            let n = n as usize;
            for (op, v) in [
                ("put+fence+get-all", m[0]),
                ("allgather", m[1]),
                ("iallgather+wait", m[2]),
                ("ifence+wait", m[3]),
            ] {
                let key = format!("{op}/{k}");
                let stat = ("mean", "us");
                add_with_growth(&mut report, &mut prev, &key, &p(op, &ks), stat, n, v * 1e6);
            }
            let key = format!("wall/{k}");
            let stat = ("job wall time", "ms");
            add_with_growth(
                &mut report,
                &mut prev,
                &key,
                &p("job", &ks),
                stat,
                n,
                wall * 1e3,
            );
            if !args.no_overlap {
                report.add(&p("overlap ifence (spin)", &ks), "mean", "%", m[4]);
                report.add(&p("overlap iallgather (spin)", &ks), "mean", "%", m[5]);
                report.add(&p("overlap ifence (sleep)", &ks), "mean", "%", m[6]);
                report.add(&p("overlap iallgather (sleep)", &ks), "mean", "%", m[7]);
            }
        }
    }
    report.finish();
    Ok(())
}
