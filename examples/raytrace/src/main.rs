use ibdyn::traits::*;
use std::process::ExitCode;
use std::time::Instant;

use clap::Parser;
use ibdyn_raytrace::cli::{Args, Mode};
use ibdyn_raytrace::cluster::{master, worker, MasterReport, Workers};
use ibdyn_raytrace::elastic;
use ibdyn_raytrace::{render_local_report, Error, Result};

fn main() -> ExitCode {
    let args = Args::parse();
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("raytrace: error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run(args: &Args) -> Result<()> {
    let mode = args.mode()?;
    let source = args.scene_source()?;
    let scene = source.build()?;
    match mode {
        Mode::Local { threads } => {
            let s = scene.settings;
            let start = Instant::now();
            let quiet = args.quiet;
            let progress = move |done: usize, total: usize| {
                // About twenty progress lines per image.
                if !quiet && (done * 20 / total != (done - 1) * 20 / total || done == total) {
                    eprintln!(
                        "tiles {done}/{total} ({:.0}%)",
                        100.0 * done as f64 / total as f64
                    );
                }
            };
            let report = render_local_report(&scene, args.tile, threads, None, &progress)?;
            let secs = start.elapsed().as_secs_f64();
            report.image.write_png(&args.output)?;
            println!(
                "rendered {}x{} at {} spp (depth {}) in {secs:.2} s with {threads} thread(s), tiles of {} -> {}",
                s.width,
                s.height,
                s.spp,
                s.max_depth,
                args.tile,
                args.output.display()
            );
            if threads > 1 {
                let counts: Vec<String> = report
                    .per_worker
                    .iter()
                    .map(|(w, n)| format!("{w}:{n}"))
                    .collect();
                println!("tiles per thread: {}", counts.join(" "));
            }
            Ok(())
        }
        Mode::Master {
            workers,
            grow,
            shrink,
        } => {
            let universe = ibdyn::initialize()?;
            if universe.world().size() != 1 {
                return Err(Error::Usage(
                    "the master starts alone: ibdyn run -n 1 raytrace --workers N".into(),
                ));
            }
            let mut extra = vec![Vec::new(); 64];
            if let Some((w, k)) = args.crash_worker {
                extra.resize(extra.len().max(w + 1), Vec::new());
                extra[w] = vec!["--crash-after".into(), k.to_string()];
            }
            let how = Workers::Spawn {
                count: workers,
                grow,
                shrink,
                extra_args: extra,
                prestart: args.prestart,
            };
            let report = master(Some(&universe), &source, args.tile, how, args.quiet)?;
            finish(args, &scene, report)
        }
        Mode::Static => {
            let universe = ibdyn::initialize()?;
            let world = universe.world();
            if world.rank() == 0 {
                let report = master(
                    Some(&universe),
                    &source,
                    args.tile,
                    Workers::Static,
                    args.quiet,
                )?;
                finish(args, &scene, report)
            } else {
                worker(&world, 0, None)?;
                Ok(())
            }
        }
        Mode::Elastic { await_at } => match elastic::start(await_at)? {
            elastic::Role::Master(el, first) => {
                let how = Workers::Elastic(el, first);
                let report = master(None, &source, args.tile, how, args.quiet)?;
                finish(args, &scene, report)
            }
            elastic::Role::Worker(_session, comm) => {
                worker(&comm, 0, None)?;
                Ok(())
            }
        },
        Mode::Worker => {
            let universe = ibdyn::initialize()?;
            let parent = universe.parent().ok_or_else(|| {
                Error::Usage("--worker is for processes spawned by a raytrace master".into())
            })?;
            worker(&parent, 0, args.crash_after)?;
            Ok(())
        }
    }
}

fn finish(args: &Args, scene: &ibdyn_raytrace::Scene, r: MasterReport) -> Result<()> {
    let s = scene.settings;
    r.image.write_png(&args.output)?;
    println!(
        "rendered {}x{} at {} spp in {:.2} s with {} worker(s) ({} spawned, {} released, {} lost), tiles of {} -> {}",
        s.width,
        s.height,
        s.spp,
        r.seconds,
        r.per_worker.len(),
        r.spawned,
        r.released,
        r.lost.len(),
        args.tile,
        args.output.display()
    );
    let counts: Vec<String> = r
        .per_worker
        .iter()
        .map(|(w, n)| format!("{w}:{n}"))
        .collect();
    println!("tiles per worker: {}", counts.join(" "));
    if !r.lost.is_empty() {
        let lost: Vec<String> = r.lost.iter().map(|w| w.to_string()).collect();
        println!(
            "workers lost (their tiles were rendered by others): {}",
            lost.join(" ")
        );
    }
    Ok(())
}
