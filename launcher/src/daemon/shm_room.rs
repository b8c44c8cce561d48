//! Room in /dev/shm for the ranks' receive queues. A rank maps its queue without reserving
//! the pages (most are never touched, and reserving them would zero them all at start-up), so
//! a /dev/shm smaller than the queues may take (a container's default 64 MiB) shows only when
//! a page cannot be had: the rank dies of SIGBUS. The daemon says so once ahead, when the
//! ranks it runs could outgrow /dev/shm, and names the likely cause when a rank dies of it.

use ibdyn_shm::{dev_shm_room as room, mib};

/// What a user can do about it.
const REMEDY: &str = "give /dev/shm more room (`docker run --shm-size=1g`, or remount it \
                      larger), place fewer ranks per node, or make the queues smaller \
                      (IBDYN_SHM_CELLS=16)";

#[derive(Default)]
pub(crate) struct ShmRoom {
    warned: bool,
    explained: bool,
}

impl ShmRoom {
    /// A warning, the first time the queues of `ranks()` ranks could need more than /dev/shm
    /// has (counted only until then).
    pub(crate) fn check(&mut self, ranks: impl FnOnce() -> usize) -> Option<String> {
        if self.warned {
            return None;
        }
        let ranks = ranks();
        let need = ranks as u64 * ibdyn_shm::ShmConfig::default().queue_bytes() as u64;
        let (free, size) = room()?;
        if need <= free {
            return None;
        }
        self.warned = true;
        Some(format!(
            "the receive queues of {ranks} rank(s) here may take {} of /dev/shm, which has {} \
             free of {}: a rank that finds it full dies of SIGBUS. To avoid it, {REMEDY}",
            mib(need),
            mib(free),
            mib(size)
        ))
    }

    /// Why a rank may have died of SIGBUS, the first time one does.
    pub(crate) fn explain_sigbus(&mut self) -> Option<String> {
        if self.explained {
            return None;
        }
        self.explained = true;
        let (free, size) = room()?;
        Some(format!(
            "SIGBUS in an MPI process is most often a full /dev/shm ({} free of {} now): \
             {REMEDY}",
            mib(free),
            mib(size)
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn warns_once_when_the_queues_could_outgrow_dev_shm() {
        let mut r = ShmRoom::default();
        assert_eq!(
            r.check(|| 1),
            None,
            "one queue fits in any /dev/shm this runs on"
        );
        let w = r.check(|| 1 << 30).expect("a billion queues do not fit");
        assert!(
            w.contains("IBDYN_SHM_CELLS") && w.contains("free of"),
            "{w}"
        );
        assert_eq!(r.check(|| 1 << 30), None, "said once");
        assert!(r.explain_sigbus().unwrap().contains("/dev/shm"));
        assert_eq!(r.explain_sigbus(), None);
    }
}
