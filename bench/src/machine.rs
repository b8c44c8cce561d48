//! `ibdyn-bench machine`: what this machine charges for the steps a spawn and a loop of small
//! messages cannot avoid. A virtual machine traps `cpuid` (glibc, libgcc_s and the loader
//! run dozens at every exec), wakes a thread on an idle core through an interrupt the
//! hypervisor relays, and faults fresh pages through two page tables. These rows explain the
//! gaps between ibdyn's figures and their floors on such a machine.

use crate::report::Report;
use nix::sched::{sched_getaffinity, sched_setaffinity, CpuSet};
use nix::sys::memfd::{memfd_create, MemFdCreateFlag};
use nix::unistd::Pid;
use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::time::Instant;

#[derive(clap::Args)]
pub struct Args {
    /// Round trips per wake-up figure.
    #[arg(long, default_value_t = 2000)]
    pub reps: usize,
}

pub fn run(a: Args, json: bool) -> Result<(), String> {
    let mut report = Report::new("machine", json);
    let reps = a.reps.max(10);
    if let Some(us) = cpuid_us(reps) {
        report.floor(&[("step", "cpuid".into())], "median", "us", us);
    }
    let (allowed, cores) = allowed_cores()?;
    let mut pairs = vec![("wake round trip, same core", cores[0], cores[0])];
    if let Some(&other) = cores.get(1) {
        pairs.push(("wake round trip, two cores", cores[0], other));
    }
    for (name, a_core, b_core) in pairs {
        let us = wake_round_trip_us(reps, a_core, b_core);
        sched_setaffinity(Pid::from_raw(0), &allowed)
            .map_err(|e| format!("restoring the CPU set: {e}"))?;
        report.floor(&[("step", name.into())], "median", "us", us?);
    }
    let (first, again) = shm_touch_us(256)?;
    report.floor(
        &[("step", "first touch of a shared page".into())],
        "per page",
        "us",
        first,
    );
    report.floor(
        &[("step", "touch of a mapped shared page".into())],
        "per page",
        "us",
        again,
    );
    let exec = crate::floors_proc::fork_exec_floor(
        std::path::Path::new(crate::floors_proc::TRIVIAL),
        &[],
        1,
        51,
    )
    .map_err(|e| format!("fork+exec floor: {e}"))?;
    report.floor(
        &[("step", "fork+exec+exit /bin/true".into())],
        "median",
        "us",
        exec.as_secs_f64() * 1e6,
    );
    report.finish();
    Ok(())
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

#[cfg(target_arch = "x86_64")]
fn cpuid_us(reps: usize) -> Option<f64> {
    let v = (0..reps)
        .map(|i| {
            let t = Instant::now();
            let r = std::arch::x86_64::__cpuid_count(4, (i & 3) as u32);
            std::hint::black_box(r);
            t.elapsed().as_secs_f64() * 1e6
        })
        .collect();
    Some(median(v))
}

#[cfg(not(target_arch = "x86_64"))]
fn cpuid_us(_reps: usize) -> Option<f64> {
    None
}

/// The cores this process may run on, in order.
fn allowed_cores() -> Result<(CpuSet, Vec<usize>), String> {
    let set = sched_getaffinity(Pid::from_raw(0)).map_err(|e| format!("sched_getaffinity: {e}"))?;
    let cores = (0..CpuSet::count())
        .filter(|&c| set.is_set(c).unwrap_or(false))
        .collect();
    Ok((set, cores))
}

/// Runs the calling thread on `core` alone.
fn pin(core: usize) -> Result<(), String> {
    let mut one = CpuSet::new();
    one.set(core).map_err(|e| format!("core {core}: {e}"))?;
    sched_setaffinity(Pid::from_raw(0), &one).map_err(|e| format!("pin to core {core}: {e}"))
}

/// Median round trip of one byte between two threads that block in `read`, pinned to
/// `a_core` and `b_core`: two wake-ups of a sleeping thread.
fn wake_round_trip_us(reps: usize, a_core: usize, b_core: usize) -> Result<f64, String> {
    let (mut a, mut b) = UnixStream::pair().map_err(|e| format!("socketpair: {e}"))?;
    let echo = std::thread::spawn(move || -> Result<(), String> {
        pin(b_core)?;
        let mut c = [0u8; 1];
        loop {
            if b.read(&mut c).map_err(|e| e.to_string())? == 0 {
                return Ok(());
            }
            b.write_all(&c).map_err(|e| e.to_string())?;
        }
    });
    let io = |e: std::io::Error| format!("wake round trip: {e}");
    pin(a_core)?;
    let mut c = [1u8; 1];
    let mut v = Vec::with_capacity(reps);
    for i in 0..reps + reps / 10 {
        // A pause lets the echo thread go back to sleep, so every trip wakes it.
        std::thread::sleep(std::time::Duration::from_micros(50));
        let t = Instant::now();
        a.write_all(&c).map_err(io)?;
        a.read_exact(&mut c).map_err(io)?;
        if i >= reps / 10 {
            v.push(t.elapsed().as_secs_f64() * 1e6);
        }
    }
    drop(a);
    echo.join()
        .map_err(|_| "the echo thread panicked".to_string())??;
    Ok(median(v))
}

/// Per-page cost of writing one byte to each of `pages` pages of a fresh shared-memory
/// file (fault, allocate, map), then again (mapped).
fn shm_touch_us(pages: usize) -> Result<(f64, f64), String> {
    let page = 4096;
    let file = shared_file()?;
    file.set_len((pages * page) as u64)
        .map_err(|e| format!("memfd size: {e}"))?;
    // SAFETY: the memfd is this function's alone; nothing else maps or resizes it.
    let mut map = unsafe { memmap2::MmapMut::map_mut(&file) }.map_err(|e| format!("mmap: {e}"))?;
    let mut pass = || {
        let t = Instant::now();
        for p in 0..pages {
            map[p * page] = map[p * page].wrapping_add(1);
        }
        t.elapsed().as_secs_f64() * 1e6 / pages as f64
    };
    let first = pass();
    let again = pass();
    Ok((first, again))
}

fn shared_file() -> Result<std::fs::File, String> {
    memfd_create(c"ibdyn-bench-touch", MemFdCreateFlag::MFD_CLOEXEC)
        .map(std::fs::File::from)
        .map_err(|e| format!("memfd_create: {e}"))
}
