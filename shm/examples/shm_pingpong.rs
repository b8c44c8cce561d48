//! Measures the eager queue between two forked processes: 8-byte one-way latency against a
//! bare shared-memory flag ping-pong, and streaming throughput per packet size and geometry.
//! `cargo run --release -p ibdyn-shm --example shm_pingpong [iters]`

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use ibdyn_shm::{RecvQueue, SendQueue, ShmConfig};

fn main() {
    let iters: usize = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(200_000);
    let mode = std::env::args().nth(2).unwrap_or_default();
    println!("one-way latency, ns: p10 of batches (quiet machine) and median");
    let row = |what: &str, (p10, med): (f64, f64)| {
        println!("{what:<36} {p10:>9.1} {med:>11.1}");
        p10
    };
    row("shared-word ping-pong", flag_pingpong(iters, 0));
    let flag = row("bare flag ping-pong (floor)", flag_pingpong(iters, 64));
    let q = row(
        "queue ping-pong, 8 B, default cfg",
        queue_pingpong(iters, &ShmConfig::DEFAULT),
    );
    println!("{:<36} {:>9.2}x", "queue / floor", q / flag);
    for (payload, cells) in [(64, 64), (16 << 10, 2), (16 << 10, 1024)] {
        let cfg = ShmConfig {
            cell_payload: payload,
            cells,
        };
        row(
            &format!("queue ping-pong, 8 B, {payload} x {cells}"),
            queue_pingpong(iters, &cfg),
        );
    }
    let local = local_cost(iters);
    println!("{:<36} {local:>9.1}", "send+recv in one process, 8 B");
    if mode == "lat" {
        return;
    }
    println!("\nstreaming throughput, best of 3 (receiver copies each packet out)");
    println!(
        "{:>8} {:>6} {:>9} {:>10}",
        "cell", "cells", "packet", "GB/s"
    );
    for (payload, cells) in [
        (4 << 10, 64),
        (8 << 10, 64),
        (16 << 10, 64),
        (32 << 10, 32),
        (64 << 10, 16),
        (16 << 10, 16),
        (16 << 10, 256),
    ] {
        let cfg = ShmConfig {
            cell_payload: payload,
            cells,
        };
        for packet in [64, 1024, payload] {
            let total = (packet << 18).min(256 << 20);
            let gbps = (0..3)
                .map(|_| stream(&cfg, packet, total))
                .fold(0.0, f64::max);
            println!("{payload:>8} {cells:>6} {packet:>9} {gbps:>10.2}");
        }
    }
}

fn local_cost(iters: usize) -> f64 {
    let rx = RecvQueue::create_with_suffix("local", &ShmConfig::DEFAULT).expect("create");
    let tx = SendQueue::open(rx.name()).expect("open");
    let mut msg = [0u8; 8];
    let start = Instant::now();
    for i in 0..iters as u64 {
        send_spin(&tx, &[&i.to_le_bytes()]);
        recv_spin(&rx, |b| msg.copy_from_slice(b));
    }
    start.elapsed().as_nanos() as f64 / iters as f64
}

const BATCH: u64 = 5000;

/// 10th percentile and median of per-batch one-way times: the former is the figure for an
/// unloaded machine (other programs share these cores; same statistic as the bench floors),
/// the median shows the noise.
fn summary(mut v: Vec<f64>) -> (f64, f64) {
    v.sort_by(f64::total_cmp);
    let at = |i: usize| v.get(i).copied().unwrap_or(f64::NAN);
    (at(v.len() / 10), at(v.len() / 2))
}

/// Spin, then yield, then block: the caller's back-off while a queue is empty.
fn recv_spin<R>(q: &RecvQueue, mut f: impl FnMut(&[u8]) -> R) -> R {
    let mut idle = 0u32;
    loop {
        if let Some(r) = q.try_recv(&mut f) {
            return r;
        }
        idle += 1;
        if idle < 2000 {
            std::hint::spin_loop();
        } else if idle < 4000 {
            std::thread::yield_now();
        } else {
            q.wait(Duration::from_millis(10));
        }
    }
}

fn send_spin(q: &SendQueue, parts: &[&[u8]]) {
    let mut full = 0u32;
    while !q.try_send(parts).expect("packet fits") {
        full += 1;
        if full < 2000 {
            std::hint::spin_loop();
        } else {
            std::thread::yield_now();
        }
    }
}

fn fork_or_die() -> i32 {
    // SAFETY: the child runs only this program's own single-threaded code and exits.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0, "fork failed");
    pid
}

fn reap(pid: i32) {
    let mut st = 0;
    // SAFETY: waiting for our own child.
    unsafe { libc::waitpid(pid, &mut st, 0) };
}

/// `gap` 0: both poll one word; 64: each polls its own line and writes the other's.
fn flag_pingpong(iters: usize, gap: usize) -> (f64, f64) {
    // SAFETY: a fresh anonymous shared page (memmap2's anonymous maps are private).
    let page = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            4096,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    assert!(page != libc::MAP_FAILED, "mmap failed");
    // SAFETY: page-aligned, never unmapped (leaked for the life of this short program).
    let (parent_in, child_in) = unsafe {
        (
            &*(page as *const AtomicU64),
            &*((page as *const u8).add(gap) as *const AtomicU64),
        )
    };
    let wait_for = |word: &AtomicU64, v: u64| {
        let mut n = 0u32;
        while word.load(Ordering::Acquire) != v {
            n += 1;
            if n < 2000 {
                std::hint::spin_loop()
            } else {
                std::thread::yield_now()
            }
        }
    };
    let child = fork_or_die();
    if child == 0 {
        for i in 0..iters as u64 {
            wait_for(child_in, 2 * i + 1);
            parent_in.store(2 * i + 2, Ordering::Release);
        }
        // SAFETY: ends the child.
        unsafe { libc::_exit(0) };
    }
    let mut batches = Vec::new();
    let mut start = Instant::now();
    for i in 0..iters as u64 {
        child_in.store(2 * i + 1, Ordering::Release);
        wait_for(parent_in, 2 * i + 2);
        if (i + 1) % BATCH == 0 {
            batches.push(start.elapsed().as_nanos() as f64 / (2 * BATCH) as f64);
            start = Instant::now();
        }
    }
    reap(child);
    summary(batches)
}

/// Wires two processes: each owns a RecvQueue, the child announces its segment name.
fn pair(cfg: &ShmConfig) -> (i32, RecvQueue, SendQueue) {
    let mine = RecvQueue::create(cfg).expect("create queue");
    let parent_name = mine.name().to_string();
    let child = fork_or_die();
    if child == 0 {
        drop(mine); // the parent's; Drop does not unlink in a child
        let own = RecvQueue::create(cfg).expect("child queue");
        let to_parent = SendQueue::open(&parent_name).expect("open parent");
        send_spin(&to_parent, &[own.name().as_bytes()]);
        return (0, own, to_parent);
    }
    let name = recv_spin(&mine, |b| String::from_utf8_lossy(b).into_owned());
    let to_child = SendQueue::open(&name).expect("open child");
    (child, mine, to_child)
}

fn queue_pingpong(iters: usize, cfg: &ShmConfig) -> (f64, f64) {
    let (child, rx, tx) = pair(cfg);
    let mut msg = [0u8; 8];
    if child == 0 {
        for _ in 0..iters + 1000 {
            recv_spin(&rx, |b| msg.copy_from_slice(b));
            send_spin(&tx, &[&msg]);
        }
        drop(rx);
        // SAFETY: ends the child.
        unsafe { libc::_exit(0) };
    }
    let mut batches = Vec::new();
    let mut start = Instant::now();
    for i in 0..(iters + 1000) as u64 {
        send_spin(&tx, &[&i.to_le_bytes()]);
        recv_spin(&rx, |b| msg.copy_from_slice(b));
        if i == 999 {
            start = Instant::now();
        } else if i > 999 && (i - 999) % BATCH == 0 {
            batches.push(start.elapsed().as_nanos() as f64 / (2 * BATCH) as f64);
            start = Instant::now();
        }
    }
    reap(child);
    summary(batches)
}

fn stream(cfg: &ShmConfig, packet: usize, total: usize) -> f64 {
    let (child, rx, tx) = pair(cfg);
    let count = total / packet;
    if child == 0 {
        let data = vec![7u8; packet];
        for _ in 0..count {
            send_spin(&tx, &[&data]);
        }
        recv_spin(&rx, |_| ());
        drop(rx);
        // SAFETY: ends the child.
        unsafe { libc::_exit(0) };
    }
    let mut sink = vec![0u8; packet];
    let start = Instant::now();
    for _ in 0..count {
        recv_spin(&rx, |b| sink[..b.len()].copy_from_slice(b));
    }
    let secs = start.elapsed().as_secs_f64();
    send_spin(&tx, &[b"done"]);
    reap(child);
    (count * packet) as f64 / secs / 1e9
}
