//! Intra-node limits: bare shared-memory flag ping-pong, memcpy and process_vm_readv bandwidth.
//! Each figure is from a quiet batch (10th percentile): a limit, as the machine gives it when nothing else runs
//! (other programs share these cores, and on this VM a two-line ping-pong is bimodal, about
//! 0.2 us in quiet batches and 1 us or more in loaded ones; compare against the same
//! statistic). NaN means the measurement could not run (fork, mmap or CMA failed, or the
//! peer stalled); the reason goes to stderr.
#![allow(dead_code)]

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// A wait on the other process gives up after this long without progress.
const STALL: Duration = Duration::from_secs(10);

/// One-way latency of a flag ping-pong between two forked processes, each polling its own
/// cache line and writing the other's: the floor for any design in which every receiver owns
/// its inbox. Spins, then yields, so it also completes when both share one core.
pub fn flag_pingpong_one_way_ns(iters: usize) -> f64 {
    fastest(pingpong(iters, 64, 20))
}

/// The flag ping-pong's one-way latency of each of `batches` batches (ns, in time order;
/// empty if it could not run), for statistics of the caller's choosing.
pub fn flag_pingpong_batches_ns(iters: usize, batches: usize) -> Vec<f64> {
    pingpong(iters, 64, batches)
}

/// The same with both processes polling and writing one shared word. Faster on some CPUs (the
/// line migrates in exclusive state), but no message queue can work that way; shown for scale.
pub fn shared_word_pingpong_one_way_ns(iters: usize) -> f64 {
    fastest(pingpong(iters, 0, 20))
}

/// GB/s of `memcpy` of `bytes` from a warm private buffer into a warm shared mapping (the copy
/// an eager send makes).
pub fn memcpy_gbps(bytes: usize) -> f64 {
    let Some(dst) = SharedPages::new(bytes.max(1)) else {
        return f64::NAN;
    };
    let src = vec![0x5au8; bytes];
    // SAFETY: `dst` maps at least `bytes` writable bytes for this function's duration.
    let dst = unsafe { std::slice::from_raw_parts_mut(dst.ptr, bytes) };
    dst.fill(0); // fault the pages in
    let reps = (256usize << 20).div_ceil(bytes.max(1)).clamp(8, 100_000);
    let mut times = Vec::new();
    for _ in 0..9 {
        let start = Instant::now();
        for _ in 0..reps {
            dst.copy_from_slice(std::hint::black_box(&src));
            std::hint::black_box(&mut *dst);
        }
        times.push(start.elapsed().as_secs_f64() / reps as f64);
    }
    bytes as f64 / fastest(times) / 1e9
}

/// GB/s of one `process_vm_readv` of `bytes` from a forked peer into a warm, pre-faulted buffer.
pub fn cma_read_gbps(bytes: usize) -> f64 {
    let Some(flags) = SharedPages::new(4096) else {
        return f64::NAN;
    };
    let (ready, done) = (flags.word(0), flags.word(64));
    let mut remote = vec![0u8; bytes];
    let addr = remote.as_mut_ptr() as usize;
    let child = fork(|| {
        remote.fill(0xa5); // the child's own pages, not the parent's copy-on-write ones
        ready.store(1, Ordering::Release);
        wait_until(done, 1, None)
    });
    let Some(child) = child else {
        return f64::NAN;
    };
    let mut local = vec![0u8; bytes];
    local.fill(1); // pre-fault
    let mut result = f64::NAN;
    if wait_until(ready, 1, None) {
        let mut times = Vec::new();
        for _ in 0..21 {
            let start = Instant::now();
            if let Err(e) = ibdyn_shm::cma::read(child, addr, &mut local) {
                eprintln!("cma_read_gbps: {e}");
                times.clear();
                break;
            }
            times.push(start.elapsed().as_secs_f64());
        }
        if !times.is_empty() && local.iter().all(|&b| b == 0xa5) {
            result = bytes as f64 / fastest(times) / 1e9;
        }
    } else {
        eprintln!("cma_read_gbps: peer {child} did not start");
    }
    done.store(1, Ordering::Release);
    reap(child);
    result
}

/// `gap` 0: one shared word; otherwise two words `gap` bytes apart, one inbox per process.
/// Returns the one-way time of each batch (ns).
fn pingpong(iters: usize, gap: usize, batches: usize) -> Vec<f64> {
    let Some(page) = SharedPages::new(4096) else {
        return Vec::new();
    };
    let (parent_in, child_in) = (page.word(0), page.word(gap));
    let iters = iters.max(1) as u64;
    let warmup = (iters / 10).max(100);
    let child = fork(|| {
        for i in 0..warmup + iters {
            if !wait_until(child_in, 2 * i + 1, Some(STALL)) {
                return false;
            }
            parent_in.store(2 * i + 2, Ordering::Release);
        }
        true
    });
    let Some(child) = child else {
        return Vec::new();
    };
    let batch = (iters / batches.max(1) as u64).max(1);
    let mut left = batch;
    let mut times = Vec::new();
    let mut start = Instant::now();
    for i in 0..warmup + iters {
        if i == warmup {
            start = Instant::now();
        }
        child_in.store(2 * i + 1, Ordering::Release);
        if !wait_until(parent_in, 2 * i + 2, Some(STALL)) {
            eprintln!("flag ping-pong: peer {child} stalled");
            reap(child);
            return Vec::new();
        }
        if i >= warmup {
            left -= 1;
            if left == 0 {
                times.push(start.elapsed().as_nanos() as f64 / (2 * batch) as f64);
                left = batch;
                start = Instant::now();
            }
        }
    }
    reap(child);
    times
}

/// Spins, then yields, then sleeps until `word == value`; false after `stall` without it.
fn wait_until(word: &AtomicU64, value: u64, stall: Option<Duration>) -> bool {
    let stall = stall.unwrap_or(STALL);
    let mut n = 0u32;
    let mut since: Option<Instant> = None;
    while word.load(Ordering::Acquire) != value {
        n = n.saturating_add(1);
        if n < 2_000 {
            std::hint::spin_loop();
        } else if n < 100_000 {
            std::thread::yield_now();
        } else {
            let t = *since.get_or_insert_with(Instant::now);
            if t.elapsed() > stall {
                return false;
            }
            std::thread::sleep(Duration::from_micros(50));
        }
    }
    true
}

/// The 10th-percentile time of `v`: a quiet batch, but not a lone outlier (NaN if empty).
fn fastest(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 10).copied().unwrap_or(f64::NAN)
}

/// An anonymous MAP_SHARED mapping (memmap2's anonymous maps are private, useless across fork).
struct SharedPages {
    ptr: *mut u8,
    len: usize,
}

impl SharedPages {
    fn new(len: usize) -> Option<SharedPages> {
        // SAFETY: a fresh anonymous mapping; no existing memory is affected.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            eprintln!(
                "floors: mmap of {len} bytes: {}",
                std::io::Error::last_os_error()
            );
            return None;
        }
        Some(SharedPages {
            ptr: p as *mut u8,
            len,
        })
    }

    /// The u64 at byte `off` (a multiple of 8 inside the mapping).
    fn word(&self, off: usize) -> &AtomicU64 {
        assert!(off & 7 == 0 && off + 8 <= self.len);
        // SAFETY: page-aligned mapping, aligned in-bounds offset; lives as long as &self.
        unsafe { &*(self.ptr.add(off) as *const AtomicU64) }
    }
}

impl Drop for SharedPages {
    fn drop(&mut self) {
        // SAFETY: unmaps exactly what `new` mapped; no references outlive self.
        unsafe { libc::munmap(self.ptr as *mut libc::c_void, self.len) };
    }
}

/// Forks a child running `body` (exit 0 if it returns true); `None` if fork fails.
fn fork(body: impl FnOnce() -> bool) -> Option<i32> {
    // SAFETY: the child runs only `body` (atomics, fills, a syscall or two) and `_exit`s.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        eprintln!("floors: fork: {}", std::io::Error::last_os_error());
        return None;
    }
    if pid == 0 {
        let ok = body();
        // SAFETY: ends the child without unwinding into the parent's code.
        unsafe { libc::_exit(if ok { 0 } else { 1 }) };
    }
    Some(pid)
}

/// Reaps `pid`, killing it if it has not exited within `STALL`.
fn reap(pid: i32) {
    let start = Instant::now();
    let mut status = 0;
    // SAFETY: waitpid/kill on our own child.
    unsafe {
        while libc::waitpid(pid, &mut status, libc::WNOHANG) == 0 {
            if start.elapsed() > STALL {
                libc::kill(pid, libc::SIGKILL);
                libc::waitpid(pid, &mut status, 0);
                return;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each floor runs between real processes and yields a positive figure (its size is not
    /// checked: `cargo test --release -p ibdyn-bench floors -- --nocapture` prints them).
    #[test]
    fn floors_measure_between_processes() {
        let flag = flag_pingpong_one_way_ns(20_000);
        let word = shared_word_pingpong_one_way_ns(20_000);
        let copy = memcpy_gbps(4 << 20);
        println!(
            "flag ping-pong {flag:.1} ns, shared word {word:.1} ns, memcpy 4 MiB {copy:.2} GB/s"
        );
        assert!(flag > 0.0 && word > 0.0 && copy > 0.0);
        match ibdyn_shm::cma::probe() {
            ibdyn_shm::cma::CmaStatus::Permitted => {
                let cma = cma_read_gbps(4 << 20);
                let small = cma_read_gbps(256 << 10);
                println!("process_vm_readv 4 MiB {cma:.2} GB/s, 256 KiB {small:.2} GB/s");
                assert!(cma > 0.0);
            }
            refused => println!("CMA floor skipped: {refused}"),
        }
    }
}
