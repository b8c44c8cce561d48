//! Which CPUs a bound rank gets (`ibdyn run --bind-to core|hwthread|socket`, `--cpus-per-rank
//! N`): the units (cores, hardware threads or sockets) of the CPUs this daemon may run on (its
//! affinity: a Slurm step's or a cpuset's share of the node); the rank with local index i
//! takes N units from unit i x N on, wrapping around past the last.

use crate::placement::{Bind, Binding};
use std::sync::OnceLock;

/// CPUs that go together: one socket's or one core's hardware threads, or one hardware thread.
type Unit = Vec<usize>;

/// The units of this daemon's CPUs: by socket, by core, and by hardware thread.
struct Units {
    sockets: Vec<Unit>,
    cores: Vec<Unit>,
    threads: Vec<Unit>,
}

/// The CPUs of a rank with local index `local` under `binding`, among the units none of whose
/// CPUs are `busy` (bound to ranks of other jobs of this daemon, under a DVM), or among all
/// when none is free; None: not bound.
pub(crate) fn cpus_for(binding: Binding, local: u32, busy: &[usize]) -> Option<Vec<usize>> {
    static UNITS: OnceLock<Units> = OnceLock::new();
    let units = UNITS.get_or_init(|| {
        let cpus = allowed_cpus();
        Units {
            sockets: group(&cpus, |c| core_of(c).map(|(package, _)| (package, 0))),
            cores: group(&cpus, core_of),
            threads: cpus.iter().map(|&c| vec![c]).collect(),
        }
    });
    let units = match binding.unit {
        Bind::None => return None,
        Bind::Socket => &units.sockets,
        Bind::Core => &units.cores,
        Bind::Hwthread => &units.threads,
    };
    let free: Vec<Unit> = units
        .iter()
        .filter(|u| u.iter().all(|c| !busy.contains(c)))
        .cloned()
        .collect();
    pick(
        if free.is_empty() { units } else { &free },
        local,
        binding.width,
    )
}

/// `width` units from unit `local` x `width` on, wrapping around; every unit at most once.
fn pick(units: &[Unit], local: u32, width: u32) -> Option<Unit> {
    if units.is_empty() {
        return None;
    }
    let n = units.len();
    let width = (width as usize).min(n);
    let first = (local as usize * width) % n;
    let mut cpus: Unit = (0..width)
        .flat_map(|k| units[(first + k) % n].iter().copied())
        .collect();
    cpus.sort_unstable();
    Some(cpus)
}

/// The CPUs this process may run on.
fn allowed_cpus() -> Vec<usize> {
    // SAFETY: a zeroed cpu_set_t is a valid empty set, filled by the call for this process.
    let set = unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
            return Vec::new();
        }
        set
    };
    (0..libc::CPU_SETSIZE as usize)
        // SAFETY: `cpu` is below CPU_SETSIZE, within the set.
        .filter(|&cpu| unsafe { libc::CPU_ISSET(cpu, &set) })
        .collect()
}

/// The (package, core) of a CPU, from sysfs.
fn core_of(cpu: usize) -> Option<(u32, u32)> {
    let read = |what: &str| -> Option<u32> {
        std::fs::read_to_string(format!("/sys/devices/system/cpu/cpu{cpu}/topology/{what}"))
            .ok()?
            .trim()
            .parse()
            .ok()
    };
    Some((read("physical_package_id")?, read("core_id")?))
}

/// `cpus` grouped by `key` (a core's or a socket's), groups in the order of their first CPU; a
/// CPU whose key is not known is a group of its own.
fn group(cpus: &[usize], core_of: impl Fn(usize) -> Option<(u32, u32)>) -> Vec<Unit> {
    let mut cores: Vec<(Option<(u32, u32)>, Unit)> = Vec::new();
    for &cpu in cpus {
        let key = core_of(cpu);
        match cores.iter_mut().find(|(k, _)| key.is_some() && *k == key) {
            Some((_, members)) => members.push(cpu),
            None => cores.push((key, vec![cpu])),
        }
    }
    cores.into_iter().map(|(_, m)| m).collect()
}

/// The line `--report-bindings` puts on a rank's stderr before its own output: the CPUs it is
/// bound to, or those it may use unbound (its daemon's).
pub(crate) fn report_line(rank: u32, node: u32, pid: i32, cpus: Option<&[usize]>) -> String {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default();
    let host = host.trim();
    let who = format!("ibdyn: rank {rank} (host {host}, node {node}, pid {pid})");
    match cpus {
        Some(c) => format!("{who} bound to CPUs {}\n", cpu_list(c)),
        None => format!("{who} not bound: CPUs {}\n", cpu_list(&allowed_cpus())),
    }
}

/// CPUs as Linux lists them: `0-3,8`.
fn cpu_list(cpus: &[usize]) -> String {
    let mut sorted = cpus.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    let mut runs: Vec<(usize, usize)> = Vec::new();
    for c in sorted {
        match runs.last_mut() {
            Some((_, end)) if *end + 1 == c => *end = c,
            _ => runs.push((c, c)),
        }
    }
    runs.iter()
        .map(|&(a, b)| {
            if a == b {
                a.to_string()
            } else {
                format!("{a}-{b}")
            }
        })
        .collect::<Vec<_>>()
        .join(",")
}

/// `cpus` as a kernel CPU set (CPUs beyond CPU_SETSIZE are left out).
pub(crate) fn cpu_set(cpus: &[usize]) -> libc::cpu_set_t {
    // SAFETY: a zeroed cpu_set_t is a valid empty set; each CPU set is below CPU_SETSIZE.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        for &cpu in cpus.iter().filter(|&&c| c < libc::CPU_SETSIZE as usize) {
            libc::CPU_SET(cpu, &mut set);
        }
        set
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hardware_threads_of_one_core_go_together_in_order_of_first_cpu() {
        // Two packages of two cores with two threads each, numbered as Linux often does
        // (the second threads after all the first ones).
        let topo = |cpu: usize| Some(((cpu % 4 / 2) as u32, (cpu % 2) as u32));
        let cores = group(&[0, 1, 2, 3, 4, 5, 6, 7], topo);
        assert_eq!(cores, [vec![0, 4], vec![1, 5], vec![2, 6], vec![3, 7]]);
        let sockets = group(&[0, 1, 2, 3, 4, 5, 6, 7], |c| topo(c).map(|(p, _)| (p, 0)));
        assert_eq!(sockets, [vec![0, 1, 4, 5], vec![2, 3, 6, 7]]);
        // Unknown topology: one core per CPU.
        assert_eq!(group(&[3, 5], |_| None), [vec![3], vec![5]]);
    }

    #[test]
    fn ranks_take_units_in_local_order_and_wrap_around() {
        let units = vec![vec![0, 4], vec![1, 5]];
        assert_eq!(pick(&units, 0, 1), Some(vec![0, 4]));
        assert_eq!(pick(&units, 1, 1), Some(vec![1, 5]));
        assert_eq!(pick(&units, 2, 1), Some(vec![0, 4]));
        assert_eq!(pick(&[], 0, 1), None);
        // Several units a rank (--cpus-per-rank): consecutive, wrapping, none twice.
        let units: Vec<Unit> = (0..6).map(|c| vec![c]).collect();
        assert_eq!(pick(&units, 0, 4), Some(vec![0, 1, 2, 3]));
        assert_eq!(pick(&units, 1, 4), Some(vec![0, 1, 4, 5]));
        assert_eq!(pick(&units, 0, 9), Some(vec![0, 1, 2, 3, 4, 5]));
        let bind = |unit, width| Binding { unit, width };
        assert_eq!(cpus_for(bind(Bind::None, 1), 0, &[]), None);
        let mine = allowed_cpus();
        assert!(!mine.is_empty());
        assert_eq!(
            cpus_for(bind(Bind::Hwthread, 1), 0, &[]),
            Some(vec![mine[0]])
        );
        assert_eq!(
            cpus_for(bind(Bind::Hwthread, 64), 0, &[]),
            Some(mine.clone())
        );
        // Units another job's ranks hold are skipped while any is free.
        if let [first, second, ..] = mine[..] {
            assert_eq!(
                cpus_for(bind(Bind::Hwthread, 1), 0, &[first]),
                Some(vec![second])
            );
        }
        assert_eq!(
            cpus_for(bind(Bind::Hwthread, 1), 0, &mine),
            Some(vec![mine[0]]),
            "none free: all units again"
        );
    }

    #[test]
    fn cpus_are_listed_as_linux_lists_them() {
        assert_eq!(cpu_list(&[8, 0, 1, 2, 3, 5]), "0-3,5,8");
        assert_eq!(cpu_list(&[4]), "4");
        let line = report_line(2, 1, 77, Some(&[0, 4]));
        assert!(line.starts_with("ibdyn: rank 2 (host "), "{line}");
        assert!(
            line.ends_with(", node 1, pid 77) bound to CPUs 0,4\n"),
            "{line}"
        );
        assert!(report_line(0, 0, 1, None).contains(") not bound: CPUs "));
    }

    #[test]
    fn a_cpu_set_holds_the_cpus_given() {
        let set = cpu_set(&[0, 3, usize::MAX]);
        // SAFETY: indexes below CPU_SETSIZE.
        let on: Vec<usize> = (0..8)
            .filter(|&c| unsafe { libc::CPU_ISSET(c, &set) })
            .collect();
        assert_eq!(on, [0, 3]);
    }
}
