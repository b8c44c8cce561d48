//! Copies forked from a template of the command (the default for prestarted copies, once the
//! template is ready): a program that runs threads before its initialisation, or that a
//! wrapper script runs, is not forked (its copies are exec'd); a killed template is replaced;
//! the daemon, which adopts forked copies, reaps the orphans that ranks leave behind.

use super::{
    copies_with_segments, ended, one_copy, one_process, segment_of, spawn, spawn_command,
    until_forked, wait_for, waiting,
};
use std::process::Command;
use std::time::{Duration, Instant};

/// In a child: starts a process that ends once this one has ended (and been reaped), and
/// returns its pid.
pub fn leave_an_orphan() -> Result<i32, String> {
    let me = std::process::id();
    let script = format!("while kill -0 {me} 2>/dev/null; do sleep 0.01; done");
    let child = Command::new("sh")
        .args(["-c", &script])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .map_err(|e| format!("sh: {e}"))?;
    Ok(child.id() as i32)
}

/// This program with `args`.
fn this_with(args: &[&str]) -> Result<Command, String> {
    let mut cmd = Command::new(std::env::current_exe().map_err(|e| e.to_string())?);
    cmd.args(args);
    Ok(cmd)
}

/// Spawns `cmd` twice: the first starts its process, the second takes a copy (exec'd: its
/// template is not ready yet, or does not serve). Returns the ranks' pids.
fn first_two(world: &ibdyn::IntraCommunicator, cmd: &Command) -> Result<Vec<i32>, String> {
    let first = spawn_command(world, cmd, 1, one_copy())?[0];
    let second = spawn_command(world, cmd, 1, one_copy())?[0];
    if first[0] != 0 || second[0] != 1 {
        return Err(format!(
            "spawns of {cmd:?}: first {first:?}, second {second:?} (expected cold, then a copy)"
        ));
    }
    Ok(vec![first[3], second[3]])
}

/// Templates of `marker` (the started process, not forked copies: those opened their shared
/// memory).
fn templates_of(marker: &str, ranks: &[i32]) -> Vec<i32> {
    waiting(marker, ranks, b"IBDYN_PRESTARTED=template")
        .into_iter()
        .filter(|&p| !std::path::Path::new(&segment_of(p)).exists())
        .collect()
}

/// `dynamic_check prestart-refused MARKER`: a child that starts a thread before it
/// initialises, and one that a shell script runs (the shell stays its parent), are not
/// forked: their templates refuse and end, and every copy is exec'd. The plain child's
/// copies are forked.
pub fn refused(universe: &ibdyn::Universe, marker: &str) -> Result<(), String> {
    let world = one_process(universe)?;
    let me = std::env::current_exe().map_err(|e| e.to_string())?;
    let threads = format!("{marker}-threads");
    let wrapped = format!("{marker}-wrapped");
    let mut shell = Command::new("sh");
    shell.args([
        "-c",
        &format!("'{}' warmchild {wrapped}; exit $?", me.display()),
    ]);
    for (m, cmd) in [
        (&threads, this_with(&["warmchild", &threads, "threads"])?),
        (&wrapped, shell),
    ] {
        let mut taken = first_two(&world, &cmd)?;
        // The template was started before the copy the second spawn took; it refuses when it
        // reaches its initialisation, and the daemon makes no forked copy of it.
        let start = Instant::now();
        loop {
            let got = spawn_command(&world, &cmd, 1, one_copy())?[0];
            taken.push(got[3]);
            if got[0] != 1 || got[4] != 0 {
                return Err(format!(
                    "a spawn of {cmd:?}: {got:?} (expected an exec'd copy)"
                ));
            }
            if templates_of(m, &taken).is_empty() {
                break;
            }
            if start.elapsed() > Duration::from_secs(30) {
                return Err(format!("the template of {cmd:?} did not end within 30 s"));
            }
        }
    }
    let plain = this_with(&["warmchild", marker])?;
    let mut taken = first_two(&world, &plain)?;
    until_forked(&world, &plain, marker, &mut taken)
}

/// The one template of `marker` once the copies have settled.
fn the_template(marker: &str, ranks: &[i32]) -> Result<i32, String> {
    wait_for(
        Instant::now(),
        Duration::from_millis(5),
        "no single template",
        || {
            let t = templates_of(marker, ranks);
            (t.len() == 1).then(|| t[0])
        },
    )
}

/// `dynamic_check prestart-template MARKER`: a killed template is replaced by a new one when
/// the next copy is needed, and the copies are forked again once it is ready.
pub fn template_killed(universe: &ibdyn::Universe, marker: &str) -> Result<(), String> {
    let world = one_process(universe)?;
    let cmd = this_with(&["warmchild", marker])?;
    let mut taken = first_two(&world, &cmd)?;
    until_forked(&world, &cmd, marker, &mut taken)?;
    copies_with_segments(Instant::now(), marker, &taken)?;
    let old = the_template(marker, &taken)?;
    // SAFETY: kill only sends a signal.
    unsafe { libc::kill(old, libc::SIGKILL) };
    wait_for(
        Instant::now(),
        Duration::from_millis(5),
        "the killed template did not end",
        || ended(old).then_some(()),
    )?;
    // This spawn takes the copy the old template forked; its replacement needs a new one.
    let got = spawn(&world, &["warmchild", marker], 1)?[0];
    taken.push(got[3]);
    if got[0] != 1 {
        return Err(format!("the spawn after the template was killed: {got:?}"));
    }
    until_forked(&world, &cmd, marker, &mut taken)?;
    copies_with_segments(Instant::now(), marker, &taken)?;
    let new = the_template(marker, &taken)?;
    if new == old {
        return Err("the killed template is still counted".into());
    }
    Ok(())
}

/// `dynamic_check prestart-orphan MARKER`: a child leaves a process behind; once that process
/// ends, the daemon (its adoptive parent, being a subreaper since it forks copies) reaps it
/// when it next reaps a rank.
pub fn orphan(universe: &ibdyn::Universe, marker: &str) -> Result<(), String> {
    let world = one_process(universe)?;
    let cmd = this_with(&["warmchild", marker])?;
    let mut taken = first_two(&world, &cmd)?;
    until_forked(&world, &cmd, marker, &mut taken)?;
    let made = spawn(&world, &["warmchild", marker, "orphan"], 1)?;
    let orphan = made[0][5];
    let start = Instant::now();
    wait_for(
        start,
        Duration::from_millis(5),
        "the orphan did not end",
        || ended(orphan).then_some(()),
    )?;
    spawn(&world, &["warmchild", marker], 1)?;
    let gone = || !std::path::Path::new(&format!("/proc/{orphan}")).exists();
    wait_for(
        start,
        Duration::from_millis(5),
        "the daemon did not reap an ended orphan",
        || gone().then_some(()),
    )
}

/// `dynamic_check prestart-many MARKER`: spawns of ten different commands (other arguments)
/// each start a template; a daemon keeps eight at most and ends the ones used least recently.
pub fn many(universe: &ibdyn::Universe, marker: &str) -> Result<(), String> {
    let world = one_process(universe)?;
    let args: Vec<String> = (0..10).map(|i| format!("k{i}")).collect();
    for a in &args {
        spawn(&world, &["warmchild", marker, a], 1)?;
    }
    // The copies are made in order: once the last command's copy is taken, every template
    // has been started.
    let last = spawn(&world, &["warmchild", marker, "k9"], 1)?[0];
    if last[0] != 1 {
        return Err(format!(
            "the last command's second spawn took no copy: {last:?}"
        ));
    }
    wait_for(
        Instant::now(),
        Duration::from_millis(5),
        "not eight templates",
        || (templates_of(marker, &[last[3]]).len() == 8).then_some(()),
    )
}
