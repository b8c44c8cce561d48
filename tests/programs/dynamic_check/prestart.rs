//! `dynamic_check prestart MARKER`: spawns with the `ibdyn_prestart` info key. The first spawn
//! of a command is a cold start and leaves a copy waiting; the next takes it (a spawn that
//! finds the copy still starting waits for it, so this does not depend on timing); a spawn of
//! more ranks than copies starts the rest; other arguments do not match the copy; a copy
//! killed while it waits is not handed to a spawn. Each child prints one line before
//! initialising: the test counts them (a copy never used prints nothing).

#[path = "templates.rs"]
pub mod templates;

use ibdyn::traits::*;
use ibdyn::SpawnOptions;
use std::process::Command;
use std::time::{Duration, Instant};

/// The child: reports (prestarted, rank, size, pid, forked from a template, the pid of the
/// process it leaves behind when its arguments say `orphan`, else 0) to parent rank 0.
pub fn child(universe: &ibdyn::Universe) -> Result<(), String> {
    let e = |e: ibdyn::CommError| e.to_string();
    let parent = universe.parent().ok_or("no parent")?;
    let world = universe.world();
    let msg: Vec<u8> = [
        ibdyn::pmi::prestart::was_prestarted() as i32,
        world.rank(),
        world.size(),
        std::process::id() as i32,
        ibdyn::pmi::prestart::was_forked() as i32,
        if std::env::args().any(|a| a == "orphan") {
            templates::leave_an_orphan()?
        } else {
            0
        },
    ]
    .iter()
    .flat_map(|v| v.to_le_bytes())
    .collect();
    parent.send(&msg, 0, 3).map_err(e)?;
    parent.disconnect().map_err(e)
}

fn spawn(world: &ibdyn::IntraCommunicator, args: &[&str], n: u32) -> Result<Vec<[i32; 6]>, String> {
    spawn_with_info(world, args, n, one_copy())
}

fn spawn_with_info(
    world: &ibdyn::IntraCommunicator,
    args: &[&str],
    n: u32,
    info: Vec<(String, String)>,
) -> Result<Vec<[i32; 6]>, String> {
    let mut cmd = Command::new(std::env::current_exe().map_err(|x| x.to_string())?);
    cmd.args(args);
    spawn_command(world, &cmd, n, info)
}

/// Spawns `n` processes of `cmd` (children that report as `child` does) and takes their
/// reports.
fn spawn_command(
    world: &ibdyn::IntraCommunicator,
    cmd: &Command,
    n: u32,
    info: Vec<(String, String)>,
) -> Result<Vec<[i32; 6]>, String> {
    let e = |e: ibdyn::CommError| e.to_string();
    let opts = SpawnOptions {
        info,
        ..SpawnOptions::default()
    };
    let kids = world
        .process_at_rank(0)
        .spawn_with(cmd, n, &opts)
        .map_err(e)?;
    let mut got = vec![[0i32; 6]; n as usize];
    for _ in 0..n {
        let mut b = [0u8; 24];
        let st = kids.recv(&mut b, ibdyn::ANY_SOURCE, 3).map_err(e)?;
        let m: [i32; 6] =
            std::array::from_fn(|i| i32::from_le_bytes(b[4 * i..4 * i + 4].try_into().unwrap()));
        if m[1] != st.source || m[2] != n as i32 {
            return Err(format!("child {} reported rank/size {:?}", st.source, m));
        }
        got[st.source as usize] = m;
    }

    kids.disconnect().map_err(e)?;
    Ok(got)
}

/// Waiting copies and templates: processes whose command line holds `marker`, started as
/// copies or templates (a forked copy shows its template's environment), and not among the
/// children that reported (a copy keeps its first environment in /proc after it became a
/// rank).
fn waiting_copies(marker: &str, ranks: &[i32]) -> Vec<i32> {
    waiting(marker, ranks, b"IBDYN_PRESTARTED=")
}

/// True if a copy forked from a template of `marker` waits: it shows its template's
/// environment and opened its shared memory (a template opens none).
fn forked_copy_waits(marker: &str, ranks: &[i32]) -> bool {
    waiting(marker, ranks, b"IBDYN_PRESTARTED=template")
        .iter()
        .any(|&p| std::path::Path::new(&segment_of(p)).exists())
}

/// Live processes of `marker`, not in `ranks`, whose first environment holds `var`.
fn waiting(marker: &str, ranks: &[i32], var: &[u8]) -> Vec<i32> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        if ranks.contains(&pid) || ended(pid) {
            continue;
        }
        let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
        let environ = std::fs::read(entry.path().join("environ")).unwrap_or_default();
        let has = |hay: &[u8], needle: &[u8]| hay.windows(needle.len()).any(|w| w == needle);
        if has(&cmdline, marker.as_bytes()) && has(&environ, var) {
            out.push(pid);
        }
    }
    out
}

/// True once `pid` has ended (a zombie or gone).
fn ended(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(s) => s
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z')),
        Err(_) => true,
    }
}

/// Polls `done` every `every` until it gives Some, for at most 30 s from `start`.
fn wait_for<T>(
    start: Instant,
    every: Duration,
    what: &str,
    mut done: impl FnMut() -> Option<T>,
) -> Result<T, String> {
    loop {
        if let Some(t) = done() {
            return Ok(t);
        }
        if start.elapsed() > Duration::from_secs(30) {
            return Err(format!("{what} within 30 s"));
        }
        std::thread::sleep(every);
    }
}

/// The spawn info that asks for one copy.
fn one_copy() -> Vec<(String, String)> {
    vec![("ibdyn_prestart".into(), "1".into())]
}

/// Spawns `cmd` (whose copies are waiting or being started) until a forked copy waits, then
/// once more: that spawn must take the forked copy. Until its template is ready the copies
/// are exec'd; every spawn takes one. The ranks' pids go to `taken`.
fn until_forked(
    world: &ibdyn::IntraCommunicator,
    cmd: &Command,
    marker: &str,
    taken: &mut Vec<i32>,
) -> Result<(), String> {
    let start = Instant::now();
    while !forked_copy_waits(marker, taken) {
        if start.elapsed() > Duration::from_secs(30) {
            return Err(format!("no forked copy of {cmd:?} waited within 30 s"));
        }
        let got = spawn_command(world, cmd, 1, one_copy())?[0];
        taken.push(got[3]);
        if got[0] != 1 {
            return Err(format!("a spawn of {cmd:?} did not take a copy: {got:?}"));
        }
    }
    let last = spawn_command(world, cmd, 1, one_copy())?[0];
    taken.push(last[3]);
    if last[0] != 1 || last[4] != 1 {
        return Err(format!(
            "a spawn of {cmd:?} did not take the forked copy: {last:?}"
        ));
    }
    Ok(())
}

/// The next spawn of `args` must start its process: no copy is left to take.
fn spawn_is_cold(world: &ibdyn::IntraCommunicator, args: &[&str], why: &str) -> Result<(), String> {
    let after = spawn(world, args, 1)?;
    if after[0][0] != 0 {
        return Err(format!("a spawn got a copy although {why}"));
    }
    Ok(())
}

/// The world of the check: one process.
fn one_process(universe: &ibdyn::Universe) -> Result<ibdyn::IntraCommunicator, String> {
    let world = universe.world();
    if world.size() != 1 {
        return Err("the prestart check runs as one process (-n 1)".into());
    }
    Ok(world)
}

pub fn parent(universe: &ibdyn::Universe, marker: &str) -> Result<(), String> {
    let world = one_process(universe)?;
    let args = ["warmchild", marker];
    let first = spawn(&world, &args, 1)?;
    if first[0][0] != 0 {
        return Err("the first spawn of a command found a copy waiting".into());
    }
    let second = spawn(&world, &args, 1)?;
    if second[0][0] != 1 {
        return Err("the second spawn did not take the prestarted copy".into());
    }
    // Copies are forked from a template of the command once it is ready, unless the
    // environment says not to.
    let mut taken = vec![first[0][3], second[0][3]];
    if std::env::var("IBDYN_PRESTART_FORK").as_deref() == Ok("0") {
        if second[0][4] != 0 {
            return Err("a copy was forked under IBDYN_PRESTART_FORK=0".into());
        }
    } else {
        let mut cmd = Command::new(std::env::current_exe().map_err(|x| x.to_string())?);
        cmd.args(args);
        until_forked(&world, &cmd, marker, &mut taken)?;
    }
    let two = spawn(&world, &args, 2)?;
    if two[0][0] != 1 || two[1][0] != 0 {
        return Err(format!("a spawn of 2 with 1 copy: prestarted {:?}", two));
    }
    let other = spawn(&world, &["warmchild", marker, "other"], 1)?;
    if other[0][0] != 0 {
        return Err("a copy served a spawn with other arguments".into());
    }
    // A copy of the first command waits now (or is being started): kill it.
    let ranks: Vec<i32> = [&two, &other]
        .iter()
        .flat_map(|v| v.iter().map(|m| m[3]))
        .chain(taken)
        .collect();
    let start = Instant::now();
    let copies = copies_with_segments(start, marker, &ranks)?;
    for &pid in &copies {
        // SAFETY: kill only sends a signal.
        unsafe { libc::kill(pid, libc::SIGKILL) };
    }
    wait_for(
        start,
        Duration::from_millis(5),
        "a killed copy did not end",
        || copies.iter().all(|&p| ended(p)).then_some(()),
    )?;
    // Its daemon removes what it opened ahead.
    segments_removed(start, &copies)?;
    spawn_is_cold(&world, &args, "the only one was killed")?;
    // Each child that ran printed one line before its initialisation (a forked copy's came
    // from its template): the ranks taken above, the spawn of 2, the other command and the
    // last cold spawn.
    println!("children that ran: {}", ranks.len() + 1);
    // The copy that spawn leaves waiting: the test checks that its segment is gone once the
    // job (and its daemons) ended.
    let ranks: Vec<i32> = ranks.into_iter().chain(copies).collect();
    for pid in copies_with_segments(Instant::now(), marker, &ranks)? {
        println!("copy segment {}", segment_of(pid));
    }
    Ok(())
}

/// A process's receive queue (named by pid).
fn segment_of(pid: i32) -> String {
    format!("/dev/shm/{}", ibdyn_shm::segment_prefix(pid))
}

/// Waits for copies of `marker` (not in `ranks`) that have opened their shared memory ahead
/// of their assignment (a template opens none).
fn copies_with_segments(start: Instant, marker: &str, ranks: &[i32]) -> Result<Vec<i32>, String> {
    wait_for(
        start,
        Duration::from_millis(5),
        "no copy opened its shared memory ahead",
        || {
            let c: Vec<i32> = waiting_copies(marker, ranks)
                .into_iter()
                .filter(|&p| std::path::Path::new(&segment_of(p)).exists())
                .collect();
            (!c.is_empty()).then_some(c)
        },
    )
}

fn segments_removed(start: Instant, copies: &[i32]) -> Result<(), String> {
    wait_for(
        start,
        Duration::from_millis(5),
        "the shared memory of ended copies was not removed",
        || {
            copies
                .iter()
                .all(|&p| !std::path::Path::new(&segment_of(p)).exists())
                .then_some(())
        },
    )
}

/// `dynamic_check prestart-idle MARKER` under `IBDYN_PRESTART_IDLE=1`: the copy a spawn leaves
/// ends by itself when unused, its daemon forgets it, and the next spawn starts afresh.
pub fn idle(universe: &ibdyn::Universe, marker: &str) -> Result<(), String> {
    let world = one_process(universe)?;
    let args = ["warmchild", marker];
    let first = spawn(&world, &args, 1)?;
    let ranks = [first[0][3]];
    let start = Instant::now();
    let copies = copies_with_segments(start, marker, &ranks)?;
    // Reaped by the daemon, not only ended: gone from /proc.
    let gone = |p: &i32| !std::path::Path::new(&format!("/proc/{p}")).exists();
    wait_for(
        start,
        Duration::from_millis(20),
        "the unused copies did not end",
        || copies.iter().all(gone).then_some(()),
    )?;
    segments_removed(start, &copies)?;
    spawn_is_cold(&world, &args, "the copy had ended")
}

/// `dynamic_check prestart-env MARKER` under `IBDYN_PRESTART=1`: spawns without the info key
/// ask for a copy all the same (the second takes it); the info key still wins (`0`: no copy
/// is kept for that command, so its second spawn starts cold).
pub fn by_env(universe: &ibdyn::Universe, marker: &str) -> Result<(), String> {
    let world = one_process(universe)?;
    let args = ["warmchild", marker];
    for want in [[0, 1], [0, 0]] {
        let info = if want[1] == 0 {
            vec![("ibdyn_prestart".into(), "0".into())]
        } else {
            Vec::new()
        };
        let args = if want[1] == 0 {
            vec!["warmchild", marker, "zero"]
        } else {
            args.to_vec()
        };
        for expect in want {
            let got = spawn_with_info(&world, &args, 1, info.clone())?;
            if got[0][0] != expect {
                return Err(format!(
                    "spawn of {args:?} with info {info:?}: prestarted {} (expected {expect})",
                    got[0][0]
                ));
            }
        }
    }
    Ok(())
}
