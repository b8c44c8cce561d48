//! `ibdyn-bench machine`: what this machine charges for the steps a spawn and a loop of small
//! messages cannot avoid. A virtual machine traps `cpuid` (glibc, libgcc_s and the loader
//! run dozens at every exec), wakes a thread on an idle core through an interrupt the
//! hypervisor relays, and faults fresh pages through two page tables. These rows explain the
//! gaps between ibdyn's figures and their floors on such a machine.

use crate::report::Report;
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
    let cores = ibdyn_shm::usable_cores();
    let mut pairs = vec![("wake round trip, same core", 0usize, 0usize)];
    if cores > 1 {
        pairs.push(("wake round trip, two cores", 0, 1));
    }
    for (name, a_core, b_core) in pairs {
        let us = wake_round_trip_us(reps, a_core, b_core)?;
        report.floor(&[("step", name.into())], "median", "us", us);
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

fn pin(core: usize) {
    // SAFETY: a zeroed cpu_set_t is a valid empty set; CPU_SET stays inside it for a core
    // number below CPU_SETSIZE (usable cores are far fewer), and sched_setaffinity(0, ..)
    // changes only the calling thread.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(core % libc::CPU_SETSIZE as usize, &mut set);
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
    }
}

/// Median round trip of one byte between two threads that block in `read`, pinned to
/// `a_core` and `b_core`: two wake-ups of a sleeping thread.
fn wake_round_trip_us(reps: usize, a_core: usize, b_core: usize) -> Result<f64, String> {
    let (mut a, mut b) = UnixStream::pair().map_err(|e| format!("socketpair: {e}"))?;
    let echo = std::thread::spawn(move || -> std::io::Result<()> {
        pin(b_core);
        let mut c = [0u8; 1];
        loop {
            if b.read(&mut c)? == 0 {
                return Ok(());
            }
            b.write_all(&c)?;
        }
    });
    let io = |e: std::io::Error| format!("wake round trip: {e}");
    pin(a_core);
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
        .map_err(|_| "the echo thread panicked".to_string())?
        .map_err(io)?;
    pin_all();
    Ok(median(v))
}

/// Undoes `pin` for the calling thread.
fn pin_all() {
    // SAFETY: as in `pin`; every usable core is set.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        for c in 0..ibdyn_shm::usable_cores().min(libc::CPU_SETSIZE as usize) {
            libc::CPU_SET(c, &mut set);
        }
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
    }
}

/// Per-page cost of writing one byte to each of `pages` pages of a fresh shared-memory
/// file (fault, allocate, map), then again (mapped).
fn shm_touch_us(pages: usize) -> Result<(f64, f64), String> {
    let page = 4096;
    let file = memfd("ibdyn-bench-touch").map_err(|e| format!("memfd_create: {e}"))?;
    file.set_len((pages * page) as u64)
        .map_err(|e| format!("memfd size: {e}"))?;
    let mut map = unsafe_map(&file)?;
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

fn memfd(name: &str) -> std::io::Result<std::fs::File> {
    use std::os::fd::FromRawFd;
    let c = std::ffi::CString::new(name).map_err(std::io::Error::other)?;
    // SAFETY: `c` is a valid NUL-terminated string; the result is checked before use.
    let fd = unsafe { libc::memfd_create(c.as_ptr(), libc::MFD_CLOEXEC) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: `fd` is a fresh descriptor that nothing else owns.
    Ok(unsafe { std::fs::File::from_raw_fd(fd) })
}

fn unsafe_map(file: &std::fs::File) -> Result<memmap2::MmapMut, String> {
    // SAFETY: the memfd is private to this process and outlives nothing that maps it.
    unsafe { memmap2::MmapMut::map_mut(file) }.map_err(|e| format!("mmap: {e}"))
}
