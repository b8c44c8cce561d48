//! How many CPUs this process may run on: waits spin less, and a barrier's last arriver
//! steps aside, when a node's processes outnumber them.

use std::sync::OnceLock;

/// CPUs in this process's affinity mask (read once). `std::thread::available_parallelism`
/// also reads the cgroup files, which costs a spawned process a noticeable share of its
/// start-up.
pub fn usable_cores() -> usize {
    static CORES: OnceLock<usize> = OnceLock::new();
    *CORES.get_or_init(|| {
        // SAFETY: `set` is a plain bit mask the kernel fills; the size passed is its own.
        unsafe {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) == 0 {
                (libc::CPU_COUNT(&set) as usize).max(1)
            } else {
                1
            }
        }
    })
}
