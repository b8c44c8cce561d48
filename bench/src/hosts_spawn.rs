//! `launch --hosts`: spawn latency across hosts. Rank 0 of a one-rank job on the first host
//! spawns P children onto another host (the `host` info key) and disconnects, `reps` times;
//! the median time of the spawn call is printed as `SPAWN_MS <ms>`.

use ibdyn::traits::*;
use ibdyn::SpawnOptions;
use std::process::Command;
use std::time::Instant;

const LINE: &str = "SPAWN_MS ";

fn e(err: ibdyn::CommError) -> String {
    err.to_string()
}

/// The parent job: spawns `n` children onto `host`, `reps` times.
pub fn parent(host: &str, n: u32, reps: u32) -> Result<(), String> {
    let universe = ibdyn::initialize().map_err(e)?;
    let world = universe.world();
    let me = std::env::current_exe().map_err(|x| x.to_string())?;
    let opts = SpawnOptions {
        info: vec![("host".into(), host.into())],
        ..SpawnOptions::default()
    };
    let mut ms = Vec::new();
    for _ in 0..reps.max(1) {
        let mut cmd = Command::new(&me);
        cmd.args(["launch", "--spawn-child"]);
        let t = Instant::now();
        let children = world
            .process_at_rank(0)
            .spawn_with(&cmd, n, &opts)
            .map_err(e)?;
        ms.push(t.elapsed().as_secs_f64() * 1e3);
        children.disconnect().map_err(e)?;
    }
    ms.sort_by(f64::total_cmp);
    println!("{LINE}{}", ms[ms.len() / 2]);
    Ok(())
}

/// A spawned child: leaves at once.
pub fn child() -> Result<(), String> {
    let universe = ibdyn::initialize().map_err(e)?;
    let parent = universe.parent().ok_or("no parent")?;
    parent.disconnect().map_err(e)
}

/// The median a parent job printed.
pub fn parse(stdout: &str) -> Option<f64> {
    stdout
        .lines()
        .find_map(|l| l.strip_prefix(LINE))
        .and_then(|v| v.trim().parse().ok())
}
