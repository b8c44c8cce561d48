//! The dynamic-process benchmarks of the paper (sec. 6): spawn latency, spawn rate, merge
//! latency, and inter- against intra-communicator ping-pong. Each prints the floor:
//! fork+exec+exit of a trivial program.

use crate::job::{self, emit};
use crate::report::Report;
use ibdyn::traits::*;
use ibdyn::{InterCommunicator, IntraCommunicator, SpawnOptions, SystemOperation, Wireup};
use std::process::Command;
use std::time::{Duration, Instant};

#[derive(clap::Args, Clone)]
pub struct Args {
    /// Parent communicator sizes (spawn-latency) or pair sizes (merge).
    #[arg(long, value_delimiter = ',', default_value = "1,2,4")]
    parents: Vec<usize>,
    /// Children per spawn.
    #[arg(long, value_delimiter = ',', default_value = "1,2,4,8")]
    children: Vec<usize>,
    /// Repetitions per point.
    #[arg(long, default_value_t = 20)]
    reps: usize,
    /// Node daemons.
    #[arg(long, default_value_t = 1)]
    nodes: usize,
    /// Submit to a running `ibdyn dvm` instead of starting daemons per job.
    #[arg(long)]
    dvm: bool,
    /// Wire-up between the roots: ud (one datagram each way) or rc (a connection).
    #[arg(long, default_value = "ud")]
    wireup: String,
    /// spawn-latency: draw the table (ibdyn per parent count against the floor) to this PNG.
    #[arg(long)]
    plot: Option<std::path::PathBuf>,
    /// spawn-latency, spawn-rate: the program to spawn instead of the `ibdyn-bench-child`
    /// beside this binary (e.g. a static-pie build of it).
    #[arg(long)]
    child: Option<std::path::PathBuf>,
    /// merge only: sync (a message from the parent root before each merge) or loop (the
    /// peers' method: spawned copies of this benchmark, warm-up of 5, one barrier, then
    /// 50 x reps merge + free back to back; max over processes of the mean).
    #[arg(long, default_value = "sync")]
    method: String,
    /// spawn-latency, spawn-rate: ask the daemon to keep this many copies of the child
    /// started ahead (spawn info key `ibdyn_prestart`); one unmeasured spawn per point first
    /// so that the copies exist. 0: every spawn starts its processes (the default).
    #[arg(long, default_value_t = 0)]
    prestart: usize,
    /// spawn-latency: wait this many milliseconds between spawns, outside the measurement
    /// (a program that spawns now and then rather than back to back).
    #[arg(long, default_value_t = 0.0)]
    gap: f64,
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Which {
    SpawnLatency,
    SpawnRate,
    Merge,
    IntercommLatency,
}

impl Which {
    fn name(self) -> &'static str {
        match self {
            Which::SpawnLatency => "spawn-latency",
            Which::SpawnRate => "spawn-rate",
            Which::Merge => "merge",
            Which::IntercommLatency => "intercomm-latency",
        }
    }
}

fn e(err: ibdyn::CommError) -> String {
    err.to_string()
}

pub fn run(which: Which, a: Args, json: bool) -> Result<(), String> {
    match (which, a.method.as_str()) {
        (Which::Merge, "loop") => {
            return crate::merge_loop::run(&a.parents, &a.children, a.reps, a.nodes, json)
        }
        (_, "sync") => {}
        (_, m) => return Err(format!("--method {m:?}: merge takes sync or loop")),
    }
    if job::in_job() {
        return rank_main(which, &a);
    }
    let mut report = Report::new(which.name(), json);
    let mut extra: Vec<&str> = Vec::new();
    if a.dvm {
        extra.push("--dvm");
    }
    let child = child_cmd(which.name(), a.child.as_deref())?;
    let mut inner = vec![
        which.name().to_string(),
        "--reps".into(),
        a.reps.to_string(),
        "--wireup".into(),
        a.wireup.clone(),
        "--nodes".into(),
        a.nodes.to_string(),
    ];
    inner.push("--prestart".into());
    inner.push(a.prestart.to_string());
    inner.push("--gap".into());
    inner.push(a.gap.to_string());
    inner.push("--child".into());
    inner.push(child.get_program().to_string_lossy().into_owned());
    inner.push("--children".into());
    inner.push(
        a.children
            .iter()
            .map(|c| c.to_string())
            .collect::<Vec<_>>()
            .join(","),
    );
    let lead = |p: usize| {
        [
            ("parents", p.to_string()),
            ("nodes", a.nodes.to_string()),
            ("dvm", a.dvm.to_string()),
            ("wireup", a.wireup.clone()),
            ("prestart", a.prestart.to_string()),
            ("gap_ms", a.gap.to_string()),
        ]
    };
    let sizes: Vec<usize> = match which {
        Which::SpawnLatency | Which::Merge => a.parents.clone(),
        Which::SpawnRate => vec![1],
        Which::IntercommLatency => vec![2],
    };
    let mut jobs = Vec::new();
    for p in sizes {
        let rows = job::run_job(p, a.nodes, &extra, &[], &inner)?;
        jobs.push((lead(p).to_vec(), rows));
    }
    match which {
        Which::SpawnLatency => {
            let mut plot = crate::spawn_report::latency(&mut report, &jobs, &a.children)?;
            if a.prestart > 0 {
                for l in &mut plot.lines {
                    l.label.push_str(&format!(", prestart={}", a.prestart));
                }
            }
            if let Some(path) = &a.plot {
                crate::spawn_plot::draw(path, &plot)?;
            }
        }
        Which::SpawnRate => {
            for (lead, rows) in &jobs {
                crate::spawn_report::rate(&mut report, lead, rows, &a.children)?;
            }
        }
        Which::Merge | Which::IntercommLatency => {
            for (lead, rows) in &jobs {
                job::add_rows(&mut report, lead, rows)?;
            }
            let floor =
                crate::floors_proc::fork_exec_floor(std::path::Path::new("/bin/true"), &[], 1, 21)
                    .map_err(|e| format!("fork+exec floor: {e}"))?;
            report.floor(
                &lead(0),
                "fork+exec+exit /bin/true",
                "ms",
                floor.as_secs_f64() * 1e3,
            );
        }
    }
    report.finish();
    Ok(())
}

/// The spawned program: a small binary installed beside this one (as a user's MPI program
/// would be), so that the figures measure the runtime, not the start-up of a benchmark
/// driver with every benchmark and an argument parser in it.
pub(crate) fn child_cmd(mode: &str, given: Option<&std::path::Path>) -> Result<Command, String> {
    let child = match given {
        Some(p) => std::path::absolute(p).map_err(|e| format!("{}: {e}", p.display()))?,
        None => {
            let me = std::env::current_exe().map_err(|e| e.to_string())?;
            me.with_file_name("ibdyn-bench-child")
        }
    };
    if !child.exists() {
        return Err(match given {
            Some(_) => format!("--child {}: no such file", child.display()),
            None => format!(
                "{} is missing (build it with `cargo build --release -p ibdyn-bench`)",
                child.display()
            ),
        });
    }
    let mut c = Command::new(child);
    c.arg(mode);
    Ok(c)
}

fn opts(a: &Args) -> Result<SpawnOptions, String> {
    let mut info = Vec::new();
    if a.prestart > 0 {
        info.push(("ibdyn_prestart".to_string(), a.prestart.to_string()));
    }
    Ok(SpawnOptions {
        wireup: Wireup::parse(&a.wireup).map_err(e)?,
        info,
        ..SpawnOptions::default()
    })
}

/// With `--prestart`: one spawn of `n` outside the measurement, after which the daemon has
/// copies waiting.
fn prestart_warmup(
    root: &ibdyn::Process<'_, IntraCommunicator>,
    which: Which,
    a: &Args,
    o: &SpawnOptions,
    n: u32,
) -> Result<(), String> {
    if a.prestart == 0 {
        return Ok(());
    }
    let ic = root
        .spawn_with(&child_cmd(which.name(), a.child.as_deref())?, n, o)
        .map_err(e)?;
    if which == Which::SpawnRate {
        for r in 0..ic.remote_size() {
            ic.send(&[], r, 9).map_err(e)?;
        }
    }
    ic.disconnect().map_err(e)
}

/// spawn-rate's second figure: disconnecting from every spawned intercommunicator at once.
pub const TEARDOWN: &str = "disconnect_all";

struct Stats(Vec<f64>);

impl Stats {
    fn emit(&self, params: &[(&str, String)], unit: &str) {
        let v = &self.0;
        if v.is_empty() {
            return;
        }
        let mean = v.iter().sum::<f64>() / v.len() as f64;
        let mut sorted = v.clone();
        sorted.sort_by(f64::total_cmp);
        emit(params, "mean", unit, mean);
        // The median too: on a shared host a few slow repetitions move the mean.
        emit(params, "median", unit, sorted[sorted.len() / 2]);
        emit(params, "min", unit, sorted[0]);
        emit(params, "max", unit, sorted[sorted.len() - 1]);
    }
}

fn rank_main(which: Which, a: &Args) -> Result<(), String> {
    let u = ibdyn::initialize().map_err(e)?;
    let w = u.world();
    let root = w.process_at_rank(0);
    let o = opts(a)?;
    match which {
        Which::SpawnLatency => {
            for &n in &a.children {
                prestart_warmup(&root, which, a, &o, n as u32)?;
                let mut t = Vec::new();
                for _ in 0..a.reps {
                    w.barrier().map_err(e)?;
                    let t0 = Instant::now();
                    let ic = root
                        .spawn_with(&child_cmd(which.name(), a.child.as_deref())?, n as u32, &o)
                        .map_err(e)?;
                    t.push(t0.elapsed().as_secs_f64() * 1e3);
                    ic.disconnect().map_err(e)?;
                    if a.gap > 0.0 {
                        std::thread::sleep(Duration::from_secs_f64(a.gap / 1e3));
                    }
                }
                if w.rank() == 0 {
                    Stats(t).emit(&[("children", n.to_string())], "ms");
                }
            }
        }
        Which::SpawnRate => {
            for &n in &a.children {
                prestart_warmup(&root, which, a, &o, n as u32)?;
                let mut kids: Vec<InterCommunicator> = Vec::new();
                let t0 = Instant::now();
                while kids.len() < a.reps * 5 && t0.elapsed() < Duration::from_secs(20) {
                    kids.push(
                        root.spawn_with(
                            &child_cmd(which.name(), a.child.as_deref())?,
                            n as u32,
                            &o,
                        )
                        .map_err(e)?,
                    );
                }
                let rate = kids.len() as f64 / t0.elapsed().as_secs_f64();
                // Then every child is told to leave and disconnected from, all at once, as
                // a master ends its workers: how long until the last is gone.
                let t1 = Instant::now();
                for ic in &kids {
                    for r in 0..ic.remote_size() {
                        ic.send(&[], r, 9).map_err(e)?;
                    }
                }
                for ic in kids {
                    ic.disconnect().map_err(e)?;
                }
                let teardown = t1.elapsed().as_secs_f64() * 1e3;
                emit(
                    &[("children", n.to_string())],
                    "spawns_per_second",
                    "1/s",
                    rate,
                );
                emit(&[("children", n.to_string())], TEARDOWN, "ms", teardown);
            }
        }
        Which::Merge => {
            let n = w.size() as u32;
            let ic = root
                .spawn_with(&child_cmd(which.name(), a.child.as_deref())?, n, &o)
                .map_err(e)?;
            let mut t = Vec::new();
            for _ in 0..a.reps {
                if w.rank() == 0 {
                    for r in 0..ic.remote_size() {
                        ic.send(&[], r, 7).map_err(e)?;
                    }
                }
                let t0 = Instant::now();
                let merged = ic.merge(false).map_err(e)?;
                let mine = [t0.elapsed().as_secs_f64() * 1e6];
                let mut max = [0.0f64];
                merged
                    .all_reduce_into(&mine, &mut max, SystemOperation::max())
                    .map_err(e)?;
                t.push(max[0]);
                merged.free();
            }
            if w.rank() == 0 {
                Stats(t).emit(&[("children", n.to_string())], "us");
            }
            if w.rank() == 0 {
                for r in 0..ic.remote_size() {
                    ic.send(&[], r, 9).map_err(e)?;
                }
            }
            ic.disconnect().map_err(e)?;
        }
        Which::IntercommLatency => {
            // Parent ranks 0 and 1 ping-pong (intra), then parent 0 and the child (inter), in
            // alternating batches, so both see the same machine state; whoever is not in the
            // current batch waits in a receive for its next one.
            let mut child_opts = o.clone();
            let host = if a.nodes > 1 { "1" } else { "0" };
            child_opts.info.push(("host".into(), host.into()));
            let ic = root
                .spawn_with(
                    &child_cmd(which.name(), a.child.as_deref())?,
                    1,
                    &child_opts,
                )
                .map_err(e)?;
            for size in [8usize, 1024, 65536, 1 << 20] {
                let per = if size <= 1024 { 500 } else { 50 };
                let (intra, inter) = interleaved_pingpong(&w, &ic, size, per, 20)?;
                if w.rank() == 0 {
                    let p = [("size", size.to_string())];
                    for (kind, batches) in [("intra", &intra), ("inter", &inter)] {
                        let mean = batches.iter().sum::<f64>() / batches.len() as f64;
                        emit(&p, &format!("{kind}_mean"), "us", mean);
                        emit(
                            &p,
                            &format!("{kind}_p10"),
                            "us",
                            batches[batches.len() / 10],
                        );
                    }
                }
            }
            if w.rank() == 0 {
                ic.send(&[], 0, 9).map_err(e)?;
            }
            ic.disconnect().map_err(e)?;
        }
    }
    u.finalize().map_err(e)
}

/// One-way latency (us) of `batches` alternating batches of `per` round trips: parent ranks 0-1
/// (intra, skipped with one parent) and parent 0 - child (inter), each list sorted. Parent
/// ranks above 1 take no part.
fn interleaved_pingpong(
    w: &IntraCommunicator,
    ic: &InterCommunicator,
    size: usize,
    per: usize,
    batches: usize,
) -> Result<(Vec<f64>, Vec<f64>), String> {
    let s = vec![1u8; size];
    let mut r = vec![0u8; size];
    let (mut intra, mut inter) = (Vec::new(), Vec::new());
    let me = w.rank();
    // One warm-up batch of each kind first, not recorded.
    for b in 0..=batches {
        if w.size() > 1 && me <= 1 {
            let t0 = Instant::now();
            for _ in 0..per {
                if me == 0 {
                    w.send(&s, 1, 1).map_err(e)?;
                    w.recv(&mut r, 1, 1).map_err(e)?;
                } else {
                    w.recv(&mut r, 0, 1).map_err(e)?;
                    w.send(&s, 0, 1).map_err(e)?;
                }
            }
            if b > 0 {
                intra.push(t0.elapsed().as_secs_f64() * 1e6 / (2.0 * per as f64));
            }
        }
        if me == 0 {
            let t0 = Instant::now();
            for _ in 0..per {
                ic.send(&s, 0, 1).map_err(e)?;
                ic.recv(&mut r, 0, 1).map_err(e)?;
            }
            if b > 0 {
                inter.push(t0.elapsed().as_secs_f64() * 1e6 / (2.0 * per as f64));
            }
        }
    }
    for v in [&mut intra, &mut inter] {
        v.sort_by(|x, y| x.total_cmp(y));
    }
    if intra.is_empty() {
        intra.push(f64::NAN);
    }
    Ok((intra, inter))
}
