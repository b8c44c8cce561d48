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

/// Wall time to start `n` processes of `program` spread over `cores` threads (thread `i`
/// starts every `cores`-th one, all threads released at once) until every one is reaped:
/// `n` execs run on the machine's cores with no single forking thread in the way.
pub fn fork_exec_spread(program: &Path, n: u32, cores: usize) -> std::io::Result<Duration> {
    let threads = cores.clamp(1, n.max(1) as usize);
    if threads == 1 {
        return fork_exec_n(program, &[], n);
    }
    let go = std::sync::Barrier::new(threads);
    let spans = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|i| {
                let go = &go;
                s.spawn(move || {
                    let mine = (i as u32..n).step_by(threads).count() as u32;
                    go.wait();
                    let t0 = Instant::now();
                    fork_exec_n(program, &[], mine).map(|d| (t0, t0 + d))
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(std::io::Error::other("floor thread panicked")))
            })
            .collect::<std::io::Result<Vec<_>>>()
    })?;
    let start = spans.iter().map(|s| s.0).min().unwrap_or_else(Instant::now);
    let end = spans.iter().map(|s| s.1).max().unwrap_or(start);
    Ok(end - start)
}

/// Median of `reps` runs of `fork_exec_spread` over the machine's cores.
pub fn fork_exec_spread_floor(program: &Path, n: u32, reps: u32) -> std::io::Result<Duration> {
    let cores = std::thread::available_parallelism().map_or(1, |c| c.get());
    let mut v = (0..reps.max(1))
        .map(|_| fork_exec_spread(program, n, cores))
        .collect::<std::io::Result<Vec<_>>>()?;
    v.sort();
    Ok(v[v.len() / 2])
}
