//! Dynamic-process checks under `ibdyn run -n P dynamic_check [ud|rc] [N]`: the parents spawn N
//! children of this program, exchange messages over the intercommunicator, merge it, run a
//! collective on the merged communicator, and disconnect. Rank 0 prints
//! `dynamic_check: all passed`. `dynamic_check missing` checks that spawning a missing program
//! is an error naming it, and that the parents' communicator still works afterwards.

use ibdyn::traits::*;
use ibdyn::{SpawnOptions, SystemOperation, Wireup};
use std::process::Command;

#[path = "dynamic_check/prestart.rs"]
mod prestart;

fn child(universe: &ibdyn::Universe) -> Result<(), String> {
    let parent = universe.parent().ok_or("no parent")?;
    let world = universe.world();
    let e = |e: ibdyn::CommError| e.to_string();
    // Every child greets every parent.
    for p in 0..parent.remote_size() {
        parent.send(&world.rank().to_le_bytes(), p, 1).map_err(e)?;
    }
    let merged = parent.merge(true).map_err(e)?;
    let mut sum = [0i64];
    merged
        .all_reduce_into(&[merged.rank() as i64], &mut sum, SystemOperation::sum())
        .map_err(e)?;
    let n = merged.size() as i64;
    if sum[0] != n * (n - 1) / 2 {
        return Err(format!(
            "allreduce on the merged communicator gave {}",
            sum[0]
        ));
    }
    parent.disconnect().map_err(e)
}

fn parent(universe: &ibdyn::Universe, wireup: Wireup, n: u32) -> Result<(), String> {
    let world = universe.world();
    let e = |e: ibdyn::CommError| e.to_string();
    let me = std::env::current_exe().map_err(|x| x.to_string())?;
    let mut cmd = Command::new(me);
    cmd.arg("child");
    let opts = SpawnOptions {
        wireup,
        ..SpawnOptions::default()
    };
    let children = world
        .process_at_rank(0)
        .spawn_with(&cmd, n, &opts)
        .map_err(e)?;
    if !children.is_inter() || children.remote_size() != n as i32 || children.size() != world.size()
    {
        return Err("the spawn intercommunicator has the wrong shape".into());
    }
    let mut seen = vec![false; n as usize];
    for _ in 0..n {
        let mut b = [0u8; 4];
        let st = children.recv(&mut b, ibdyn::ANY_SOURCE, 1).map_err(e)?;
        if i32::from_le_bytes(b) != st.source {
            return Err("a child sent the wrong rank".into());
        }
        seen[st.source as usize] = true;
    }
    if !seen.iter().all(|&s| s) {
        return Err("not every child greeted".into());
    }
    let merged = children.merge(false).map_err(e)?;
    if merged.size() != world.size() + n as i32 || merged.rank() != world.rank() {
        return Err(format!(
            "merged: rank {} of {}; parents must come first",
            merged.rank(),
            merged.size()
        ));
    }
    let mut sum = [0i64];
    merged
        .all_reduce_into(&[merged.rank() as i64], &mut sum, SystemOperation::sum())
        .map_err(e)?;
    let m = merged.size() as i64;
    if sum[0] != m * (m - 1) / 2 {
        return Err(format!(
            "allreduce on the merged communicator gave {}",
            sum[0]
        ));
    }
    children.disconnect().map_err(e)
}

fn missing(universe: &ibdyn::Universe) -> Result<(), String> {
    let world = universe.world();
    let cmd = Command::new("/nonexistent/ibdyn-no-such-program");
    match world.process_at_rank(0).spawn(&cmd, 2) {
        Err(ibdyn::CommError::SpawnFailed { failures }) => {
            if world.rank() == 0 {
                for f in &failures {
                    println!(
                        "dynamic_check: child {} failed: {} (code {})",
                        f.rank, f.message, f.code
                    );
                }
            }
        }
        Err(ibdyn::CommError::RootFailed { error, .. }) => {
            println!("dynamic_check: root failed: {error}")
        }
        other => {
            return Err(format!(
                "spawning a missing program gave {:?}",
                other.map(|_| ())
            ))
        }
    }
    // The parents' communicator still works.
    let mut sum = [0i64];
    world
        .all_reduce_into(&[1i64], &mut sum, SystemOperation::sum())
        .map_err(|e| e.to_string())?;
    if sum[0] != world.size() as i64 {
        return Err("the parents' communicator is broken after a failed spawn".into());
    }
    Ok(())
}

/// Children that exit before connecting back (`/bin/false`): the spawn fails within its bound.
fn early_death(universe: &ibdyn::Universe) -> Result<(), String> {
    let world = universe.world();
    match world
        .process_at_rank(0)
        .spawn(&Command::new("/bin/false"), 2)
    {
        Err(err) => {
            if world.rank() == 0 {
                println!("dynamic_check: spawn failed as expected: {err}");
            }
            Ok(())
        }
        Ok(_) => Err("a spawn whose children never connect back succeeded".into()),
    }
}

/// The spawned job's root exits as soon as it has greeted the parents: its siblings on other
/// nodes, if still waiting for it to pass the parents on, must fail within a bound (the process
/// manager knows it is gone), not wait forever; one that got them in time has its parents.
fn root_leaves(universe: &ibdyn::Universe) -> Result<(), String> {
    let world = universe.world();
    let mut cmd = Command::new(std::env::current_exe().map_err(|e| e.to_string())?);
    cmd.arg("rootgone");
    world
        .process_at_rank(0)
        .spawn(&cmd, 3)
        .map_err(|e| format!("spawn: {e}"))?;
    Ok(())
}

/// Run with `IBDYN_TEST_FAIL_ATTACH=0`: the spawned root fails its start-up after greeting
/// the parents. Its siblings, waiting for the root to pass the parents on, must fail their
/// start-up too (the root is gone), not wait forever; the spawn itself may succeed or fail,
/// but returns.
fn failed_start(universe: &ibdyn::Universe) -> Result<(), String> {
    let world = universe.world();
    let mut cmd = Command::new(std::env::current_exe().map_err(|e| e.to_string())?);
    cmd.arg("unreachable");
    let outcome = match world.process_at_rank(0).spawn(&cmd, 3) {
        Ok(_) => "succeeded".to_string(),
        Err(e) => format!("failed: {e}"),
    };
    println!("dynamic_check: the spawn of a job whose root fails its start-up {outcome}");
    Ok(())
}

/// Child 1 of 3 dies after the spawn; receiving from it fails naming it, and the other
/// children still work.
fn later_death(universe: &ibdyn::Universe) -> Result<(), String> {
    let world = universe.world();
    let e = |e: ibdyn::CommError| e.to_string();
    let me = std::env::current_exe().map_err(|x| x.to_string())?;
    let mut cmd = Command::new(me);
    cmd.arg("mortal");
    let kids = world.process_at_rank(0).spawn(&cmd, 3).map_err(e)?;
    if world.rank() != 0 {
        return Ok(());
    }
    let mut b = [0u8; 4];
    match kids.recv(&mut b, 1, 5) {
        Err(err) => {
            println!("dynamic_check: receive from the dead child failed as expected: {err}")
        }
        Ok(_) => return Err("a receive from a dead child succeeded".into()),
    }
    for r in [0, 2] {
        kids.send(&[1], r, 6).map_err(e)?;
        kids.recv(&mut b, r, 7).map_err(e)?;
    }
    println!("dynamic_check: the other children still work");
    Ok(())
}

/// The children end without disconnecting; then every parent's disconnect fails with the
/// other side dead, none waits for ever, and the parents carry on together.
fn disconnect_dead(universe: &ibdyn::Universe) -> Result<(), String> {
    let world = universe.world();
    let e = |e: ibdyn::CommError| e.to_string();
    let me = std::env::current_exe().map_err(|x| x.to_string())?;
    let mut cmd = Command::new(me);
    cmd.arg("vanish");
    let kids = world.process_at_rank(0).spawn(&cmd, 2).map_err(e)?;
    if world.rank() == 0 {
        let mut b = [0u8; 4];
        if kids.recv(&mut b, 0, 5).is_ok() {
            return Err("a receive from a child that ended succeeded".into());
        }
    }
    world.barrier().map_err(e)?;
    match kids.disconnect() {
        Err(err) => println!(
            "dynamic_check: rank {} disconnect from the ended job failed: {err}",
            world.rank()
        ),
        Ok(()) => return Err("a disconnect from an ended job succeeded".into()),
    }
    world.barrier().map_err(e)
}

/// The children's job aborts (its rank 1 calls the process manager's abort): that job ends,
/// the parents get an error on their intercommunicator and carry on.
fn abort_job(universe: &ibdyn::Universe) -> Result<(), String> {
    let world = universe.world();
    let e = |e: ibdyn::CommError| e.to_string();
    let me = std::env::current_exe().map_err(|x| x.to_string())?;
    let mut cmd = Command::new(me);
    cmd.arg("aborter");
    let kids = world.process_at_rank(0).spawn(&cmd, 2).map_err(e)?;
    let mut b = [0u8; 4];
    // Child 0 never sends: only the end of its job ends this receive.
    match kids.recv(&mut b, 0, 5) {
        Err(err) => println!("dynamic_check: the aborted job's rank 0 is gone: {err}"),
        Ok(_) => return Err("a receive from an aborted job succeeded".into()),
    }
    world.barrier().map_err(e)?;
    println!("dynamic_check: the parents carry on");
    Ok(())
}

/// Resources this process holds: open descriptors, threads, and ibdyn's /dev/shm entries
/// named by this process or by one that has ended (left behind). Entries of live processes
/// are not counted: they may be another test's job running at the same time.
fn resources() -> (usize, usize, usize) {
    let count = |d: &str| std::fs::read_dir(d).map(|r| r.count()).unwrap_or(0);
    let me = std::process::id().to_string();
    let counted = |name: &str| {
        let Some(rest) = name.strip_prefix("ibdyn-") else {
            return false;
        };
        let pid = rest.split('-').next().unwrap_or("");
        !pid.is_empty()
            && pid.bytes().all(|b| b.is_ascii_digit())
            && (pid == me || !std::path::Path::new("/proc").join(pid).exists())
    };
    let shm = std::fs::read_dir("/dev/shm")
        .map(|r| {
            r.filter_map(|e| e.ok())
                .filter(|e| counted(&e.file_name().to_string_lossy()))
                .count()
        })
        .unwrap_or(0);
    (count("/proc/self/fd"), count("/proc/self/task"), shm)
}

/// Many spawn/disconnect cycles of one child: nothing may grow.
fn cycles(universe: &ibdyn::Universe, n: usize) -> Result<(), String> {
    let world = universe.world();
    let e = |e: ibdyn::CommError| e.to_string();
    let me = std::env::current_exe().map_err(|x| x.to_string())?;
    let mut cmd = Command::new(me);
    cmd.arg("leaf");
    let mut before = (0, 0, 0);
    for i in 0..n {
        if i == 5 {
            before = resources();
        }
        let c = world.process_at_rank(0).spawn(&cmd, 1).map_err(e)?;
        c.disconnect().map_err(e)?;
    }
    // Children that left may take a moment to be reaped and cleaned up.
    let mut after = resources();
    for _ in 0..100 {
        if after.0 <= before.0 && after.1 <= before.1 && after.2 <= before.2 {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
        after = resources();
    }
    println!(
        "dynamic_check: {n} cycles: fds {} -> {}, threads {} -> {}, shm entries {} -> {}",
        before.0, after.0, before.1, after.1, before.2, after.2
    );
    if after.0 > before.0 || after.1 > before.1 || after.2 > before.2 {
        return Err("resources grew over the spawn cycles".into());
    }
    Ok(())
}

fn main() {
    if std::env::args().nth(1).as_deref() == Some("warmchild") {
        // Before initialising: a prestarted copy prints this when it is started, and the
        // line must reach the output once, as its rank's, only if the copy is used.
        println!("dynamic_check: warmchild before init");
    }
    if std::env::args().any(|a| a == "threads") {
        // A program with a thread of its own before initialising: not forked.
        std::thread::spawn(|| loop {
            std::thread::park();
        });
    }
    let universe = ibdyn::initialize().unwrap_or_else(|e| {
        eprintln!("dynamic_check: init: {e}");
        std::process::exit(2)
    });
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mode = args.first().map(String::as_str).unwrap_or("ud");
    let result = match mode {
        "child" => child(&universe),
        "earlydeath" => early_death(&universe),
        "laterdeath" => later_death(&universe),
        "disconnectdead" => disconnect_dead(&universe),
        "vanish" => std::process::exit(0),
        "rootleaves" => root_leaves(&universe),
        "failedstart" => failed_start(&universe),
        "unreachable" => Err("a child whose root failed its start-up started".into()),
        // The spawned job's root leaves at once, before its siblings have their parent.
        "rootgone" if universe.world().rank() == 0 => std::process::exit(0),
        // A sibling that answered the root's connection while it waited in the process
        // manager may have got its parents before the root left: then it has them, and leaves.
        "rootgone" => match universe.parent() {
            Some(_) => {
                eprintln!(
                    "dynamic_check (rootgone): rank {} got its parents before the root left",
                    universe.world().rank()
                );
                std::process::exit(0)
            }
            None => Err("initialize returned without the parents although the root left".into()),
        },
        "mortal" => (|| -> Result<(), String> {
            let parent = universe.parent().ok_or("no parent")?;
            if universe.world().rank() == 1 {
                std::process::abort();
            }
            let mut b = [0u8; 1];
            parent.recv(&mut b, 0, 6).map_err(|e| e.to_string())?;
            parent.send(&[0u8; 4], 0, 7).map_err(|e| e.to_string())?;
            // The parents never disconnect from a job with a dead member; just leave.
            std::process::exit(0);
        })(),
        "abortjob" => abort_job(&universe),
        "aborter" => {
            if universe.world().rank() == 1 {
                universe.with_pmi(|p| p.abort(5, "the child gives up"));
            }
            // Until the job is torn down.
            let parent = universe.parent().ok_or("no parent");
            let mut b = [0u8; 1];
            parent
                .and_then(|p| {
                    p.recv(&mut b, 0, 6)
                        .map(|_| ())
                        .map_err(|_| "receive failed")
                })
                .map_err(str::to_string)
        }
        "leaf" => universe
            .parent()
            .ok_or_else(|| "no parent".to_string())
            .and_then(|p| p.disconnect().map_err(|e| e.to_string())),
        "cycles" => cycles(
            &universe,
            args.get(1).and_then(|s| s.parse().ok()).unwrap_or(500),
        ),
        "missing" => missing(&universe),
        "warmchild" => prestart::child(&universe),
        "prestart" => prestart::parent(&universe, args.get(1).map_or("", String::as_str)),
        "prestart-idle" => prestart::idle(&universe, args.get(1).map_or("", String::as_str)),
        "prestart-env" => prestart::by_env(&universe, args.get(1).map_or("", String::as_str)),
        "prestart-refused" => {
            prestart::templates::refused(&universe, args.get(1).map_or("", String::as_str))
        }
        "prestart-template" => {
            prestart::templates::template_killed(&universe, args.get(1).map_or("", String::as_str))
        }
        "prestart-many" => {
            prestart::templates::many(&universe, args.get(1).map_or("", String::as_str))
        }
        "prestart-orphan" => {
            prestart::templates::orphan(&universe, args.get(1).map_or("", String::as_str))
        }
        w => {
            let n = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(3);
            Wireup::parse(w)
                .map_err(|e| e.to_string())
                .and_then(|w| parent(&universe, w, n))
        }
    };
    if let Err(msg) = result {
        eprintln!(
            "dynamic_check ({mode}): rank {}: {msg}",
            universe.world().rank()
        );
        std::process::exit(1);
    }
    if universe.world().rank() == 0
        && !matches!(mode, "child" | "leaf" | "mortal" | "aborter" | "warmchild")
    {
        println!("dynamic_check: all passed");
    }
}
