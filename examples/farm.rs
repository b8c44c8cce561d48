//! A task farm that grows one worker at a time: the master spawns N workers one by one (each
//! its own one-process job), gives each a task as soon as it exists and keeps it alive, then
//! stops them all and disconnects from each. It prints how long the spawning and the
//! disconnecting took; the job's wall time less those two is what ending the N+1 processes
//! costs (the "end" of `docs/benchmarks.md`).
//!
//! ```sh
//! cargo build --release --example farm -p ibdyn
//! ibdyn run -n 1 target/release/examples/farm 500              # one node
//! ibdyn run -n 1 --nodes 2 target/release/examples/farm 500    # workers over two nodes
//! ```

use ibdyn::traits::*;
use ibdyn::{InterCommunicator, Universe};
use std::process::Command;
use std::time::Instant;

const TASK: i32 = 1;
const RESULT: i32 = 2;
const STOP: i32 = 3;

fn fail(what: &str, e: impl std::fmt::Display) -> ! {
    eprintln!("farm: {what}: {e}");
    std::process::exit(1)
}

fn worker(parent: InterCommunicator) {
    let (task, _) = parent
        .recv_vec(0, TASK)
        .unwrap_or_else(|e| fail("worker: task", e));
    let n = u64::from_le_bytes(
        task.try_into()
            .unwrap_or_else(|_| fail("worker", "bad task")),
    );
    let answer: u64 = (1..=n).map(|i| i * i).sum();
    parent
        .send(&answer.to_le_bytes(), 0, RESULT)
        .unwrap_or_else(|e| fail("worker: result", e));
    parent
        .recv_vec(0, STOP)
        .unwrap_or_else(|e| fail("worker: stop", e));
    parent
        .disconnect()
        .unwrap_or_else(|e| fail("worker: disconnect", e));
}

fn master(universe: &Universe, n: u64) {
    let me = std::env::current_exe().unwrap_or_else(|e| fail("own program", e));
    let world = universe.world();
    let root = world.process_at_rank(0);
    let started = Instant::now();
    let mut workers = Vec::with_capacity(n as usize);
    for i in 0..n {
        let w = root
            .spawn(&Command::new(&me), 1)
            .unwrap_or_else(|e| fail(&format!("spawn of worker {i}"), e));
        w.send(&(i % 1000).to_le_bytes(), 0, TASK)
            .unwrap_or_else(|e| fail("task", e));
        workers.push(w);
    }
    let spawning = started.elapsed();
    let mut sum = 0u64;
    for (i, w) in workers.iter().enumerate() {
        let (r, _) = w
            .recv_vec(0, RESULT)
            .unwrap_or_else(|e| fail(&format!("result of worker {i}"), e));
        sum = sum.wrapping_add(u64::from_le_bytes(
            r.try_into().unwrap_or_else(|_| fail("result", "bad size")),
        ));
    }
    let expected: u64 = (0..n)
        .map(|i| (1..=i % 1000).map(|k| k * k).sum::<u64>())
        .fold(0, u64::wrapping_add);
    if sum != expected {
        fail("results", format!("sum {sum}, expected {expected}"));
    }
    let stopping = Instant::now();
    for w in &workers {
        w.send(&[], 0, STOP).unwrap_or_else(|e| fail("stop", e));
    }
    for w in &workers {
        w.disconnect().unwrap_or_else(|e| fail("disconnect", e));
    }
    println!(
        "farm: {n} workers, spawning {:.3} s, disconnecting {:.3} s, results ok",
        spawning.as_secs_f64(),
        stopping.elapsed().as_secs_f64()
    );
}

fn main() {
    let universe = ibdyn::initialize().unwrap_or_else(|e| fail("init", e));
    if let Some(parent) = universe.parent() {
        worker(parent);
        return;
    }
    let n = match std::env::args().nth(1).map(|s| s.parse::<u64>()) {
        None => 10,
        Some(Ok(n)) => n,
        Some(Err(_)) => fail("usage", "farm [WORKERS]"),
    };
    master(&universe, n);
}
