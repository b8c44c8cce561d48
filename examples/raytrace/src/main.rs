use std::process::ExitCode;
use std::time::Instant;

use clap::Parser;
use ibdyn_raytrace::cli::{Args, Mode};
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
        Mode::Master { .. } => Err(Error::NeedsSpawn {
            mode: "--workers".into(),
        }),
        Mode::Static => Err(Error::NeedsSpawn {
            mode: "--static".into(),
        }),
    }
}
