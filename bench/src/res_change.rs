//! `ibdyn-bench res-change`: the synthetic benchmark of seed 000 sec. 4.2. A loop-based job
//! adds or removes `--delta` processes every `--every` iterations (growing steps, shrinking
//! steps, or alternating) and reports Table 1's rows per change, in ms:
//!
//! | stat | from | to |
//! |---|---|---|
//! | `total` | rank 0 posts the change | the application has adapted (new communicator, change finalized) |
//! | `initiation` | rank 0 posts the change | the runtime granted it and named the sets |
//! | `app_overhead` | rank 0's time in the dynamic calls (post, tests, query, integrate, finalize) and in building the new communicator | |
//! | `max_session_init` | the slowest added process's `Session::init` | |
//!
//! As in the paper, the application keeps iterating while the added processes start: rank 0
//! tests the change (non-blocking) each iteration and adapts once every added process has
//! reported ready in the delta set's data.

use crate::job::{self, emit};
use crate::report::Report;
use ibdyn::traits::*;
use ibdyn::{
    ChangeState, IntraCommunicator, PsetOp, PsetOpOptions, Session, SessionOptions,
    SystemOperation, PSET_SELF, PSET_WORLD,
};
use std::path::PathBuf;
use std::time::{Duration, Instant};

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Mode {
    /// Growing steps, then (another job) shrinking steps: Table 1's add and sub columns.
    Both,
    Growing,
    Shrinking,
    Alternating,
}

#[derive(clap::Args)]
pub struct Args {
    /// Processes added or removed per change.
    #[arg(long, value_delimiter = ',', default_value = "1,2,4,8")]
    delta: Vec<u32>,
    /// Iterations between changes.
    #[arg(long, default_value_t = 10)]
    every: u64,
    /// Changes per job.
    #[arg(long, default_value_t = 3)]
    steps: u32,
    #[arg(long, value_enum, default_value = "both")]
    mode: Mode,
    /// Processes the job never goes below (its start size when growing).
    #[arg(long, default_value_t = 2)]
    base: u32,
    /// Node daemons.
    #[arg(long, default_value_t = 1)]
    nodes: usize,
    /// Start the jobs with `ibdyn run --prestart K`: grown processes are copies the daemons
    /// started ahead (0: every grow starts its processes).
    #[arg(long, default_value_t = 0)]
    prestart: u32,
    /// Draw the processes over time of the last job to this PNG.
    #[arg(long, value_name = "FILE.png")]
    timeline: Option<PathBuf>,
    /// Inside the job: the one delta and mode of this job.
    #[arg(long, hide = true)]
    job_op: Option<String>,
}

/// The paper's figures (Table 1, 28-core nodes, deltas of 28/56/84 processes), in ms.
fn paper(stat: &str, op: &str) -> &'static str {
    match (stat, op) {
        ("total", "add") => "1670-1692",
        ("total", _) => "88-126",
        ("initiation", _) => "7-18",
        ("app_overhead", _) => "71-181",
        ("max_session_init", _) => "1209-1417",
        _ => "-",
    }
}

/// The change of step `i` of a job in `mode`: +1 grow, -1 shrink.
fn sign(mode: &str, i: u32) -> i32 {
    match mode {
        "growing" => 1,
        "shrinking" => -1,
        _ if i.is_multiple_of(2) => 1,
        _ => -1,
    }
}

pub fn run(a: Args, json: bool) -> Result<(), String> {
    if job::in_job() {
        return rank_main(&a).map_err(|e| format!("res-change rank: {e}"));
    }
    let modes: Vec<&str> = match a.mode {
        Mode::Both => vec!["growing", "shrinking"],
        Mode::Growing => vec!["growing"],
        Mode::Shrinking => vec!["shrinking"],
        Mode::Alternating => vec!["alternating"],
    };
    let mut report = Report::new("res-change", json);
    let mut last_timeline = Vec::new();
    for mode in &modes {
        for &d in &a.delta {
            let start = match *mode {
                "shrinking" => a.base + a.steps * d,
                _ => a.base,
            };
            let args = vec![
                "res-change".to_string(),
                "--job-op".into(),
                mode.to_string(),
                "--delta".into(),
                d.to_string(),
                "--every".into(),
                a.every.to_string(),
                "--steps".into(),
                a.steps.to_string(),
            ];
            let keep = a.prestart.to_string();
            let extra: &[&str] = if a.prestart > 0 {
                &["--prestart", &keep]
            } else {
                &[]
            };
            let rows = job::run_job(start as usize, a.nodes, extra, &[], &args)?;
            let (tl, rows): (Vec<String>, Vec<String>) =
                rows.into_iter().partition(|r| r.contains(" at ms "));
            last_timeline = tl;
            add_means(&mut report, mode, d, &rows)?;
        }
    }
    report.finish();
    if let Some(path) = &a.timeline {
        let points = crate::res_timeline::parse(&last_timeline)?;
        crate::res_timeline::draw(path, &points)?;
        if !json {
            println!("# timeline of the last job -> {}", path.display());
        }
    }
    Ok(())
}

/// Averages each stat over the steps of one job and adds it with the paper's figure beside.
fn add_means(report: &mut Report, mode: &str, d: u32, rows: &[String]) -> Result<(), String> {
    let mut sums: Vec<(String, String, f64, u32)> = Vec::new();
    for row in rows {
        let parts: Vec<&str> = row.split_whitespace().collect();
        let [_, op, stat, _unit, value] = parts[..] else {
            return Err(format!("bad result line: {row}"));
        };
        let op = op.trim_start_matches("op=").to_string();
        let v: f64 = value.parse().map_err(|_| format!("bad value: {row}"))?;
        match sums.iter_mut().find(|s| s.0 == op && s.1 == stat) {
            Some(s) => {
                s.2 += v;
                s.3 += 1;
            }
            None => sums.push((op, stat.to_string(), v, 1)),
        }
    }
    for (op, stat, sum, n) in sums {
        let mean = sum / f64::from(n);
        let paper = paper(&stat, &op);
        let low: f64 = paper
            .split('-')
            .next()
            .and_then(|x| x.parse().ok())
            .unwrap_or(f64::NAN);
        report.add(
            &[
                ("mode", mode.to_string()),
                ("op", op),
                ("delta", d.to_string()),
                ("changes", n.to_string()),
                ("paper_ms", paper.to_string()),
                ("paper_low_over_ours", format!("{:.0}x", low / mean)),
            ],
            &stat,
            "ms",
            mean,
        );
    }
    Ok(())
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn err(e: ibdyn::CommError) -> String {
    e.to_string()
}

fn join(s: &Session, main: &str) -> Result<IntraCommunicator, String> {
    s.group_from_pset(main)
        .and_then(|g| g.create_comm(main))
        .map_err(err)
}

fn rank_main(a: &Args) -> Result<(), String> {
    let mode = a.job_op.clone().ok_or("--job-op missing")?;
    let delta = *a.delta.first().ok_or("--delta missing")?;
    let t_init = Instant::now();
    let s = Session::init(SessionOptions {
        group_timeout: Duration::from_secs(60),
    })
    .map_err(err)?;
    // A prestarted process waited inside `init` for its assignment: not init's time.
    let since = ibdyn::pmi::prestart::assigned_at()
        .filter(|a| *a > t_init)
        .unwrap_or(t_init);
    let init_ms = ms(since.elapsed());
    let added = s
        .recv_res_change(PSET_WORLD)
        .map_err(err)?
        .filter(|c| c.included && c.kind.starts());
    let (mut main, mut comm, mut iter) = match added {
        Some(c) => {
            // Tell rank 0 this process is ready, and how long its init took.
            let me = s.group_from_pset(PSET_WORLD).map_err(err)?;
            let my = me
                .rank_of(s.group_from_pset(PSET_SELF).map_err(err)?.members()[0])
                .unwrap_or(0);
            s.set_pset_data(&c.delta, &[(&format!("ready.{my}"), &init_ms.to_string())])
                .map_err(err)?;
            let (main, _) = s.integrate_res_change(&c.delta, None).map_err(err)?;
            let comm = join(&s, &main)?;
            let mut it = [0u64];
            comm.process_at_rank(0)
                .broadcast_into(&mut it[..])
                .map_err(err)?;
            (main, comm, it[0])
        }
        None => (PSET_WORLD.to_string(), join(&s, PSET_WORLD)?, 0),
    };
    let total_iters = u64::from(a.steps + 1) * a.every;
    let t_start = Instant::now();
    let mut step = 0u32;
    let mut in_flight: Option<InFlight> = None;
    if comm.rank() == 0 && iter == 0 {
        emit(
            &[("procs", comm.size().to_string())],
            "at",
            "ms",
            ms(t_start.elapsed()),
        );
    }
    loop {
        let mut out = [0i64];
        comm.all_reduce_into(&[1i64], &mut out, SystemOperation::sum())
            .map_err(err)?;
        iter += 1;
        // [adapt now, keep iterating]: rank 0 decides; a change in flight is seen through.
        let mut flag = [0u8, 0u8];
        if comm.rank() == 0 {
            if in_flight.is_none() && iter % a.every == 0 && step < a.steps {
                in_flight = Some(InFlight::post(&s, &main, sign(&mode, step), delta)?);
                step += 1;
            }
            if let Some(f) = in_flight.as_mut() {
                flag[0] = u8::from(f.ready(&s)?);
            }
            flag[1] = u8::from(iter < total_iters || in_flight.is_some());
        }
        comm.process_at_rank(0)
            .broadcast_into(&mut flag[..])
            .map_err(err)?;
        if flag[0] == 0 {
            if flag[1] == 0 {
                break;
            }
            continue;
        }
        // Adapt (rank 0 times its part).
        let t_adapt = Instant::now();
        let change = s
            .query_pset_op(PSET_SELF, &main)
            .map_err(err)?
            .filter(|c| c.state == ChangeState::Pending)
            .ok_or("the change is not pending")?;
        let provided = (comm.rank() == 0).then_some(change.new_main.as_str());
        let (new_main, leave) = s
            .integrate_res_change(&change.delta, provided)
            .map_err(err)?;
        let was_root = comm.rank() == 0;
        comm.free();
        if leave {
            return Ok(());
        }
        let old = std::mem::replace(&mut main, new_main);
        comm = join(&s, &main)?;
        let mut it = [iter];
        comm.process_at_rank(0)
            .broadcast_into(&mut it[..])
            .map_err(err)?;
        if was_root {
            s.finalize_pset_op(&old).map_err(err)?;
            let f = in_flight.take().ok_or("no change in flight")?;
            let op = if change.op.starts() { "add" } else { "sub" };
            let p = [("op", op.to_string())];
            emit(&p, "total", "ms", ms(f.posted.elapsed()));
            emit(&p, "initiation", "ms", f.initiation_ms);
            emit(&p, "app_overhead", "ms", f.app_ms + ms(t_adapt.elapsed()));
            if change.op.starts() {
                emit(&p, "max_session_init", "ms", f.max_init_ms);
            }
            emit(
                &[("procs", comm.size().to_string())],
                "at",
                "ms",
                ms(t_start.elapsed()),
            );
        }
    }
    Ok(())
}

/// A change rank 0 posted and tests each iteration.
struct InFlight {
    posted: Instant,
    initiation_ms: f64,
    /// Rank 0's time in the dynamic calls so far.
    app_ms: f64,
    delta: String,
    size: usize,
    started: bool,
    max_init_ms: f64,
}

impl InFlight {
    fn post(s: &Session, main: &str, sign: i32, delta: u32) -> Result<InFlight, String> {
        let op = if sign > 0 {
            PsetOp::Grow
        } else {
            PsetOp::Shrink
        };
        let posted = Instant::now();
        let sets = s
            .ipset_op(op, &[main], &PsetOpOptions::processes(delta))
            .map_err(err)?;
        let initiation_ms = ms(posted.elapsed());
        drop(sets);
        let out = s
            .query_pset_op(PSET_SELF, main)
            .map_err(err)?
            .ok_or("the posted change is not visible")?;
        Ok(InFlight {
            posted,
            initiation_ms,
            app_ms: ms(posted.elapsed()),
            delta: out.delta,
            size: delta as usize,
            started: !op.starts(),
            max_init_ms: 0.0,
        })
    }

    /// Whether the application can adapt now: a shrink at once, a grow once every added
    /// process reported ready.
    fn ready(&mut self, s: &Session) -> Result<bool, String> {
        if self.started {
            return Ok(true);
        }
        let t = Instant::now();
        let keys: Vec<String> = (0..self.size).map(|r| format!("ready.{r}")).collect();
        let keys: Vec<&str> = keys.iter().map(String::as_str).collect();
        let mut req = s
            .iget_pset_data(PSET_SELF, &self.delta, &keys, true)
            .map_err(err)?;
        let done = req.test().map_err(err)?;
        if done {
            let kv = req.wait().map_err(err)?;
            self.max_init_ms = kv
                .iter()
                .filter_map(|(_, v)| v.parse::<f64>().ok())
                .fold(0.0, f64::max);
            self.started = true;
        }
        self.app_ms += ms(t.elapsed());
        Ok(done)
    }
}
