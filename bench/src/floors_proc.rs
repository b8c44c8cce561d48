//! Process limits: fork+exec+exit of a trivial program.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// A program that does nothing, for the floor.
pub const TRIVIAL: &str = "/bin/true";

/// Wall time to start `n` processes of `program` (fork+exec, all started before any is
/// waited for, as a launcher does) and reap them all.
pub fn fork_exec_n(program: &Path, args: &[&str], n: u32) -> std::io::Result<Duration> {
    let t = Instant::now();
    let mut children = Vec::with_capacity(n as usize);
    for _ in 0..n {
        children.push(
            Command::new(program)
                .args(args)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .spawn()?,
        );
    }
    for mut c in children {
        c.wait()?;
    }
    Ok(t.elapsed())
}

/// Median of `reps` runs of `fork_exec_n`.
pub fn fork_exec_floor(
    program: &Path,
    args: &[&str],
    n: u32,
    reps: u32,
) -> std::io::Result<Duration> {
    let mut v = (0..reps.max(1))
        .map(|_| fork_exec_n(program, args, n))
        .collect::<std::io::Result<Vec<_>>>()?;
    v.sort();
    Ok(v[v.len() / 2])
}
