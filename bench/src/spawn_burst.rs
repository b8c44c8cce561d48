//! `spawn-burst`: spawns that come in bursts, as from a master that takes on several workers
//! at once and then computes. A burst is B spawns back to back whose children stay until the
//! burst ends; then every child is told to leave, and the master pauses. Per position in the
//! burst, the spawn's latency; per burst, its wall time against the floor of B x children
//! fork+exec+exit of /bin/true started back to back and reaped at the end. With
//! `--prestart K` the table shows where a burst runs past the K copies started ahead, and
//! whether the pause has refilled them by the next burst.

use crate::dynamic::child_cmd;
use crate::floors_proc::{fork_exec_floor, fork_exec_n, TRIVIAL};
use crate::job::{self, emit};
use crate::report::Report;
use ibdyn::traits::*;
use ibdyn::{InterCommunicator, SpawnOptions};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// What the children do: wait for the parent's word to leave, then disconnect.
const CHILD_MODE: &str = "spawn-rate";

#[derive(clap::Args, Clone)]
pub struct Args {
    /// Spawns per burst, back to back.
    #[arg(long, default_value_t = 16)]
    burst: usize,
    /// Bursts measured.
    #[arg(long, default_value_t = 10)]
    bursts: usize,
    /// Milliseconds between bursts (after the last child of a burst has left).
    #[arg(long, default_value_t = 200.0)]
    pause: f64,
    /// Children per spawn.
    #[arg(long, default_value_t = 1)]
    children: usize,
    /// Ask the daemon to keep this many copies of the child started ahead (spawn info key
    /// `ibdyn_prestart`); one unmeasured spawn comes first so that they exist.
    #[arg(long, default_value_t = 0)]
    prestart: usize,
    /// Node daemons.
    #[arg(long, default_value_t = 1)]
    nodes: usize,
    /// Submit to a running `ibdyn dvm` instead of starting daemons per job.
    #[arg(long)]
    dvm: bool,
    /// The program to spawn instead of the `ibdyn-bench-child` beside this binary.
    #[arg(long)]
    child: Option<PathBuf>,
}

fn e(err: ibdyn::CommError) -> String {
    err.to_string()
}

pub fn run(a: Args, json: bool) -> Result<(), String> {
    if a.burst == 0 || a.bursts == 0 || a.children == 0 {
        return Err("--burst, --bursts and --children must be at least 1".into());
    }
    if !(a.pause.is_finite() && a.pause >= 0.0) {
        return Err(format!("--pause {}: give milliseconds, 0 or more", a.pause));
    }
    if job::in_job() {
        return rank_main(&a);
    }
    let child = child_cmd(CHILD_MODE, a.child.as_deref())?;
    let inner = vec![
        "spawn-burst".to_string(),
        "--burst".into(),
        a.burst.to_string(),
        "--bursts".into(),
        a.bursts.to_string(),
        "--pause".into(),
        a.pause.to_string(),
        "--children".into(),
        a.children.to_string(),
        "--prestart".into(),
        a.prestart.to_string(),
        "--child".into(),
        child.get_program().to_string_lossy().into_owned(),
    ];
    let extra: &[&str] = if a.dvm { &["--dvm"] } else { &[] };
    let rows = job::run_job(1, a.nodes, extra, &[], &inner)?;
    let lead = [
        ("nodes", a.nodes.to_string()),
        ("children", a.children.to_string()),
        ("prestart", a.prestart.to_string()),
    ];
    let mut report = Report::new("spawn-burst", json);
    job::add_rows(&mut report, &lead, &rows)?;
    let measured = |stat: &str, pos: &str| {
        report
            .rows()
            .iter()
            .find(|r| r.stat == stat && r.params.iter().any(|(k, v)| k == "pos" && v == pos))
            .map(|r| r.value)
            .ok_or_else(|| format!("the job printed no {stat} for position {pos}"))
    };
    let first = measured("mean", "1")?;
    let later = (2..=a.burst)
        .map(|p| measured("mean", &p.to_string()))
        .collect::<Result<Vec<_>, _>>()?;
    let wall = measured("wall_mean", "burst")?;
    let (floor_first, floor_later) = paused_floors(a.pause, a.children)?;
    let floor_burst = burst_floor(a.burst * a.children)?;
    let with = |pos: &str| {
        let mut p = lead.to_vec();
        p.push(("pos", pos.to_string()));
        p
    };
    // Each figure with its floor and the ratio to it.
    let against =
        |report: &mut Report, pos: &str, stat: &str, value: f64, what: &str, floor: f64| {
            let params = with(pos);
            report.floor(
                &params,
                &format!("fork+exec+exit /bin/true x {what}"),
                "ms",
                floor,
            );
            report.add(&params, &format!("{stat}/floor"), "x", value / floor);
        };
    against(
        &mut report,
        "1",
        "mean",
        first,
        "children, after the pause",
        floor_first,
    );
    if !later.is_empty() {
        let rest = format!("2-{}", a.burst);
        report.add(&with(&rest), "mean", "ms", mean(&later));
        against(
            &mut report,
            &rest,
            "mean",
            mean(&later),
            "children, next",
            floor_later,
        );
    }
    against(
        &mut report,
        "burst",
        "wall_mean",
        wall,
        "burst x children",
        floor_burst,
    );
    report.finish();
    Ok(())
}

/// The floors of a spawn's position, ms (medians of 7): `children` /bin/true started at
/// once and reaped, first after a pause of `pause_ms` (the machine's idle cores wake slowly
/// and its caches have cooled), then again right after.
fn paused_floors(pause_ms: f64, children: usize) -> Result<(f64, f64), String> {
    let (mut first, mut next) = (Vec::new(), Vec::new());
    let exec = || {
        fork_exec_n(Path::new(TRIVIAL), &[], children as u32)
            .map(|d| d.as_secs_f64() * 1e3)
            .map_err(|e| format!("fork+exec floor: {e}"))
    };
    for _ in 0..7 {
        std::thread::sleep(Duration::from_secs_f64(pause_ms / 1e3));
        first.push(exec()?);
        next.push(exec()?);
    }
    Ok((median(first), median(next)))
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// `n` /bin/true started back to back and reaped at the end (median of 5), ms.
fn burst_floor(n: usize) -> Result<f64, String> {
    fork_exec_floor(Path::new(TRIVIAL), &[], n as u32, 5)
        .map(|d| d.as_secs_f64() * 1e3)
        .map_err(|e| format!("fork+exec floor of {n}: {e}"))
}

fn rank_main(a: &Args) -> Result<(), String> {
    let u = ibdyn::initialize().map_err(e)?;
    let world = u.world();
    let root = world.process_at_rank(0);
    let cmd = child_cmd(CHILD_MODE, a.child.as_deref())?;
    let mut o = SpawnOptions::default();
    if a.prestart > 0 {
        o.info
            .push(("ibdyn_prestart".into(), a.prestart.to_string()));
        let warm = root.spawn_with(&cmd, a.children as u32, &o).map_err(e)?;
        dismiss(vec![warm])?;
    }
    let n = a.children as u32;
    // per_pos[i]: the latency of the i-th spawn of every burst, ms.
    let mut per_pos = vec![Vec::with_capacity(a.bursts); a.burst];
    let mut walls: Vec<f64> = Vec::with_capacity(a.bursts);
    for _ in 0..a.bursts {
        std::thread::sleep(Duration::from_secs_f64(a.pause / 1e3));
        let mut kids = Vec::with_capacity(a.burst);
        let start = Instant::now();
        for lat in per_pos.iter_mut() {
            let t0 = Instant::now();
            kids.push(root.spawn_with(&cmd, n, &o).map_err(e)?);
            lat.push(t0.elapsed().as_secs_f64() * 1e3);
        }
        walls.push(start.elapsed().as_secs_f64() * 1e3);
        dismiss(kids)?;
    }
    for (i, lat) in per_pos.iter().enumerate() {
        let p = [("pos", (i + 1).to_string())];
        emit(&p, "mean", "ms", mean(lat));
        if i == 0 {
            emit(&p, "max", "ms", lat.iter().copied().fold(0.0, f64::max));
        }
    }
    let p = [("pos", "burst".to_string())];
    emit(&p, "wall_mean", "ms", mean(&walls));
    emit(&p, "wall_median", "ms", median(walls));
    u.finalize().map_err(e)
}

/// Tells every child of `kids` to leave and disconnects from each.
fn dismiss(kids: Vec<InterCommunicator>) -> Result<(), String> {
    for ic in &kids {
        for r in 0..ic.remote_size() {
            ic.send(&[], r, 9).map_err(e)?;
        }
    }
    for ic in kids {
        ic.disconnect().map_err(e)?;
    }
    Ok(())
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len().max(1) as f64
}
