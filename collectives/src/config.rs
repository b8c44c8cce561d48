//! Which algorithm runs each operation: chosen by message size and process count, or forced
//! (by `IBDYN_COLL_ALGO=<op>:<algo>[,<op>:<algo>...]` or programmatically).
//!
//! Automatic choice (n = message bytes, b = block bytes, N = total bytes, p = processes):
//!
//! | operation | choice |
//! |---|---|
//! | barrier | dissemination |
//! | bcast | binomial if n < 12 KiB or p < 8, else scatter + ring allgather |
//! | reduce | Rabenseifner if commutative and n >= 32 KiB, else binomial |
//! | allreduce | recursive doubling if n < 8 KiB or not commutative; Rabenseifner < 1 MiB; ring |
//! | gather, scatter | binomial if b < 32 KiB, else linear |
//! | gatherv, scatterv | linear |
//! | allgather | ring if N >= 80 KiB; else recursive doubling (p a power of two) or Bruck |
//! | allgatherv | ring |
//! | alltoall | Bruck if b <= 256 B and p >= 8; linear if b <= 32 KiB; pairwise |
//! | alltoallv | linear if the largest block <= 32 KiB, else pairwise |
//! | reduce_scatter(_block) | binomial reduce + scatter if not commutative; halving < 512 KiB; ring |
//! | scan, exscan | recursive doubling |
//!
//! Tiers: where a call runs, before the algorithm is chosen (`tier::select`):
//!
//! | team | operation | tier |
//! |---|---|---|
//! | several nodes, several processes on some node | barrier, bcast | two-level (`twolevel.rs`) |
//! | | reduce, allreduce | two-level if rank order survives: a commutative op, or nodes holding contiguous blocks of ranks with no reordering algorithm forced for reduce or the operation |
//! | | allgather | two-level through the node leaders below `allgather_two_level_max` in total; above, by lanes (`twolevel/lanes.rs`) when the nodes hold equal contiguous blocks of ranks |
//! | | ibarrier, ibcast, iallreduce | one two-level schedule (`twolevel/schedules.rs`) unless an algorithm is forced for the operation; iallreduce if rank order survives |
//! | several processes, all on one node | barrier, bcast, reduce, allreduce, gather, allgather (blocking, rooted at the team's rank 0) | the node's shared-memory collective buffer (`nodeshm.rs`) up to the `shm_*` thresholds, unless an algorithm is forced |
//! | any | anything else | flat (`flat/`) |
//!
//! `<op>:flat` keeps an operation off the two-level rows and `<op>:p2p` off the node buffer;
//! a forced algorithm applies to each level of the blocking two-level forms. The node steps
//! of the two-level forms take the one-node row on their node's team. The same thresholds
//! and settings govern intercommunicator bcast and reduce through a buffer spanning the root
//! and the other group (`inter/rooted_shm.rs`, when they all share one node).

use crate::error::{CollError, Result};
use std::collections::HashMap;

/// The environment variable that forces algorithms.
pub const ALGO_ENV: &str = "IBDYN_COLL_ALGO";

/// The setting that keeps an operation flat across nodes: `IBDYN_COLL_ALGO=allreduce:flat`.
pub const FLAT: &str = "flat";

/// The setting that keeps an operation on one node off the shared-memory collective buffer
/// (point-to-point messages instead): `IBDYN_COLL_ALGO=bcast:p2p`.
pub const P2P: &str = "p2p";

#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum CollOp {
    Barrier,
    Bcast,
    Reduce,
    Allreduce,
    Gather,
    Gatherv,
    Scatter,
    Scatterv,
    Allgather,
    Allgatherv,
    Alltoall,
    Alltoallv,
    ReduceScatter,
    ReduceScatterBlock,
    Scan,
    Exscan,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Algorithm {
    /// Direct exchange with every peer (root to all, or everyone posts all transfers).
    Linear,
    /// Binomial tree (for allreduce / reduce_scatter: binomial reduce, then bcast / scatter).
    Binomial,
    /// Dissemination (barrier).
    Dissemination,
    /// Recursive doubling (allreduce, allgather; dissemination-style prefix for scans).
    RecursiveDoubling,
    Ring,
    /// Reduce-scatter by recursive halving, then allgather by recursive doubling (allreduce),
    /// gather to the root (reduce), or nothing more (reduce_scatter).
    Rabenseifner,
    /// Binomial scatter, then ring allgather (large bcast, van de Geijn).
    ScatterAllgather,
    Pairwise,
    Bruck,
}

impl CollOp {
    pub const ALL: [CollOp; 16] = [
        CollOp::Barrier,
        CollOp::Bcast,
        CollOp::Reduce,
        CollOp::Allreduce,
        CollOp::Gather,
        CollOp::Gatherv,
        CollOp::Scatter,
        CollOp::Scatterv,
        CollOp::Allgather,
        CollOp::Allgatherv,
        CollOp::Alltoall,
        CollOp::Alltoallv,
        CollOp::ReduceScatter,
        CollOp::ReduceScatterBlock,
        CollOp::Scan,
        CollOp::Exscan,
    ];

    pub fn name(self) -> &'static str {
        match self {
            CollOp::Barrier => "barrier",
            CollOp::Bcast => "bcast",
            CollOp::Reduce => "reduce",
            CollOp::Allreduce => "allreduce",
            CollOp::Gather => "gather",
            CollOp::Gatherv => "gatherv",
            CollOp::Scatter => "scatter",
            CollOp::Scatterv => "scatterv",
            CollOp::Allgather => "allgather",
            CollOp::Allgatherv => "allgatherv",
            CollOp::Alltoall => "alltoall",
            CollOp::Alltoallv => "alltoallv",
            CollOp::ReduceScatter => "reduce_scatter",
            CollOp::ReduceScatterBlock => "reduce_scatter_block",
            CollOp::Scan => "scan",
            CollOp::Exscan => "exscan",
        }
    }

    /// The algorithms that implement this operation.
    pub fn algorithms(self) -> &'static [Algorithm] {
        use Algorithm::*;
        match self {
            CollOp::Barrier => &[Dissemination, Binomial],
            CollOp::Bcast => &[Binomial, ScatterAllgather],
            CollOp::Reduce => &[Binomial, Rabenseifner],
            CollOp::Allreduce => &[RecursiveDoubling, Ring, Rabenseifner, Binomial],
            CollOp::Gather | CollOp::Scatter => &[Binomial, Linear],
            CollOp::Gatherv | CollOp::Scatterv => &[Linear],
            CollOp::Allgather => &[RecursiveDoubling, Ring, Bruck],
            CollOp::Allgatherv => &[Ring],
            CollOp::Alltoall => &[Bruck, Pairwise, Linear],
            CollOp::Alltoallv => &[Pairwise, Linear],
            CollOp::ReduceScatter | CollOp::ReduceScatterBlock => &[Rabenseifner, Ring, Binomial],
            CollOp::Scan | CollOp::Exscan => &[RecursiveDoubling, Linear],
        }
    }
}

impl Algorithm {
    pub fn name(self) -> &'static str {
        match self {
            Algorithm::Linear => "linear",
            Algorithm::Binomial => "binomial",
            Algorithm::Dissemination => "dissemination",
            Algorithm::RecursiveDoubling => "recursive_doubling",
            Algorithm::Ring => "ring",
            Algorithm::Rabenseifner => "rabenseifner",
            Algorithm::ScatterAllgather => "scatter_allgather",
            Algorithm::Pairwise => "pairwise",
            Algorithm::Bruck => "bruck",
        }
    }

    /// Whether it combines contributions out of rank order (so needs a commutative op).
    pub fn reorders(self, op: CollOp) -> bool {
        matches!(
            (op, self),
            (
                CollOp::Allreduce
                    | CollOp::Reduce
                    | CollOp::ReduceScatter
                    | CollOp::ReduceScatterBlock,
                Algorithm::Ring | Algorithm::Rabenseifner
            )
        )
    }

    const ALL: [Algorithm; 9] = [
        Algorithm::Linear,
        Algorithm::Binomial,
        Algorithm::Dissemination,
        Algorithm::RecursiveDoubling,
        Algorithm::Ring,
        Algorithm::Rabenseifner,
        Algorithm::ScatterAllgather,
        Algorithm::Pairwise,
        Algorithm::Bruck,
    ];
}

/// Size thresholds (bytes) of the automatic choice.
#[derive(Clone, Debug)]
pub struct Thresholds {
    /// bcast: binomial below this many bytes (or below `bcast_min_procs` processes).
    pub bcast_long: usize,
    pub bcast_min_procs: usize,
    /// reduce: Rabenseifner from this many bytes (commutative ops).
    pub reduce_long: usize,
    /// allreduce: recursive doubling below, Rabenseifner up to `allreduce_ring`, ring above.
    pub allreduce_short: usize,
    pub allreduce_ring: usize,
    /// gather/scatter: linear from this block size (binomial forwards blocks log p times).
    pub gather_linear_block: usize,
    /// allgather (total bytes): recursive doubling / Bruck below, ring above.
    pub allgather_long: usize,
    /// alltoall: Bruck for blocks up to this size with at least `alltoall_bruck_procs`
    /// processes; linear up to `alltoall_medium`; pairwise above.
    pub alltoall_short: usize,
    pub alltoall_bruck_procs: usize,
    pub alltoall_medium: usize,
    /// reduce_scatter (total bytes): recursive halving below, ring above.
    pub reduce_scatter_long: usize,
    /// allgather across nodes (total bytes): through the node leaders below; above, by lanes
    /// when the nodes hold equal contiguous blocks of ranks, else flat.
    pub allgather_two_level_max: usize,
    /// Teams on one node: the shared-memory collective buffer up to this many bytes
    /// (bcast, reduce, allreduce: the message; gather: the block; allgather: the total);
    /// point-to-point above. Measured on 4 processes / 2 cores (`ibdyn-bench coll` and
    /// `intercomm-coll`, `<op>:p2p` against the default in the same session): the buffer
    /// wins at every size for reduce (1 MiB: 1.2 ms against 2.6 ms) and below these sizes
    /// for the others (8 B allreduce 8 us against 19 us); above them the single-copy
    /// point-to-point trees win (1 MiB bcast 0.33 ms against 0.75 ms: every member copies
    /// out of one leader's copy, on shared cores), and the gathers copy twice through it.
    pub shm_bcast_max: usize,
    pub shm_reduce_max: usize,
    pub shm_allreduce_max: usize,
    pub shm_gather_max: usize,
    pub shm_allgather_max: usize,
}

impl Default for Thresholds {
    fn default() -> Self {
        Thresholds {
            bcast_long: 12 * 1024,
            bcast_min_procs: 8,
            reduce_long: 32 * 1024,
            allreduce_short: 8 * 1024,
            allreduce_ring: 1024 * 1024,
            gather_linear_block: 32 * 1024,
            allgather_long: 80 * 1024,
            alltoall_short: 256,
            alltoall_bruck_procs: 8,
            alltoall_medium: 32 * 1024,
            reduce_scatter_long: 512 * 1024,
            allgather_two_level_max: 4 * 1024 * 1024,
            shm_bcast_max: 256 * 1024,
            shm_reduce_max: usize::MAX,
            shm_allreduce_max: 256 * 1024,
            shm_gather_max: 64 * 1024,
            shm_allgather_max: 256 * 1024,
        }
    }
}

/// The algorithm settings of one communicator.
#[derive(Clone, Debug, Default)]
pub struct AlgoConfig {
    forced: HashMap<CollOp, Algorithm>,
    /// Operations kept flat on a communicator spanning several nodes (`<op>:flat`).
    flat: std::collections::HashSet<CollOp>,
    /// Operations kept off the node shared-memory buffer (`<op>:p2p`).
    p2p: std::collections::HashSet<CollOp>,
    pub thresholds: Thresholds,
}

impl AlgoConfig {
    /// Default thresholds plus whatever `IBDYN_COLL_ALGO` forces.
    pub fn from_env() -> Result<AlgoConfig> {
        match std::env::var(ALGO_ENV) {
            Ok(s) => {
                let cfg = AlgoConfig::parse(&s)?;
                tracing::debug!(setting = %s, "collective algorithms forced by {ALGO_ENV}");
                Ok(cfg)
            }
            Err(std::env::VarError::NotPresent) => Ok(AlgoConfig::default()),
            Err(e) => Err(CollError::BadSetting {
                setting: ALGO_ENV.into(),
                why: e.to_string(),
            }),
        }
    }

    /// Parses `<op>:<algo>[,<op>:<algo>...]` (blanks ignored; empty means nothing forced).
    pub fn parse(s: &str) -> Result<AlgoConfig> {
        let mut cfg = AlgoConfig::default();
        for item in s.split(',').map(str::trim).filter(|i| !i.is_empty()) {
            let bad = |why: String| CollError::BadSetting {
                setting: item.to_string(),
                why,
            };
            let (op, algo) = item
                .split_once(':')
                .ok_or_else(|| bad("expected <op>:<algorithm>".into()))?;
            let op = parse_op(op.trim()).ok_or_else(|| {
                bad(format!(
                    "unknown operation {:?}; known: {}",
                    op.trim(),
                    names(CollOp::ALL.iter().map(|o| o.name()))
                ))
            })?;
            if algo.trim() == FLAT {
                cfg.flat.insert(op);
                continue;
            }
            if algo.trim() == P2P {
                cfg.p2p.insert(op);
                continue;
            }
            let algo = Algorithm::ALL
                .iter()
                .copied()
                .find(|a| a.name() == algo.trim())
                .ok_or_else(|| {
                    bad(format!(
                        "unknown algorithm {:?}; {} has: {}",
                        algo.trim(),
                        op.name(),
                        algo_names(op)
                    ))
                })?;
            cfg.force(op, algo).map_err(|e| bad(e.to_string()))?;
        }
        Ok(cfg)
    }

    /// Forces `algo` for `op` (it must be one of `op.algorithms()`).
    pub fn force(&mut self, op: CollOp, algo: Algorithm) -> Result<()> {
        if !op.algorithms().contains(&algo) {
            return Err(CollError::BadSetting {
                setting: format!("{}:{}", op.name(), algo.name()),
                why: format!(
                    "{} is not an algorithm of {}; it has: {}",
                    algo.name(),
                    op.name(),
                    algo_names(op)
                ),
            });
        }
        self.forced.insert(op, algo);
        Ok(())
    }

    /// Keeps `op` flat (`true`) or lets it take its two-level form across nodes (`false`).
    pub fn set_flat(&mut self, op: CollOp, flat: bool) {
        if flat {
            self.flat.insert(op);
        } else {
            self.flat.remove(&op);
        }
    }

    /// Keeps `op` off the node shared-memory buffer (`true`) or lets it use it (`false`).
    pub fn set_p2p(&mut self, op: CollOp, p2p: bool) {
        if p2p {
            self.p2p.insert(op);
        } else {
            self.p2p.remove(&op);
        }
    }

    /// The largest size (as `Thresholds` names it) for which `op` goes through the node
    /// shared-memory buffer; None when it has no such form or is kept off it.
    pub fn shm_max(&self, op: CollOp) -> Option<usize> {
        if self.p2p.contains(&op) {
            return None;
        }
        let t = &self.thresholds;
        match op {
            CollOp::Barrier => Some(0),
            CollOp::Bcast => Some(t.shm_bcast_max),
            CollOp::Reduce => Some(t.shm_reduce_max),
            CollOp::Allreduce => Some(t.shm_allreduce_max),
            CollOp::Gather => Some(t.shm_gather_max),
            CollOp::Allgather => Some(t.shm_allgather_max),
            _ => None,
        }
    }

    /// Whether `op` is kept flat on communicators spanning several nodes.
    pub fn is_flat(&self, op: CollOp) -> bool {
        self.flat.contains(&op)
    }

    /// Returns `op` to the automatic choice.
    pub fn unforce(&mut self, op: CollOp) {
        self.forced.remove(&op);
    }

    pub fn forced(&self, op: CollOp) -> Option<Algorithm> {
        self.forced.get(&op).copied()
    }

    /// The algorithm for `op` on `bytes` (the size named per op below) over `p` processes.
    /// `commutative` is the reduction's (true when there is none).
    pub fn choose(
        &self,
        op: CollOp,
        bytes: usize,
        p: usize,
        commutative: bool,
    ) -> Result<Algorithm> {
        if let Some(a) = self.forced(op) {
            if !commutative && a.reorders(op) {
                return Err(CollError::AlgorithmNotApplicable {
                    op: op.name(),
                    algo: a.name(),
                    why: "it combines out of rank order and the operation is not commutative",
                });
            }
            return Ok(a);
        }
        let a = self.auto(op, bytes, p, commutative);
        tracing::trace!(
            op = op.name(),
            bytes,
            p,
            algo = a.name(),
            "collective algorithm"
        );
        Ok(a)
    }

    /// The automatic choice; `bytes` is the message (bcast, reduce, allreduce, scans), the
    /// block (gather, scatter, alltoall) or the total (allgather, reduce_scatter).
    pub fn auto(&self, op: CollOp, bytes: usize, p: usize, commutative: bool) -> Algorithm {
        use Algorithm::*;
        let t = &self.thresholds;
        match op {
            CollOp::Barrier => Dissemination,
            CollOp::Bcast if bytes < t.bcast_long || p < t.bcast_min_procs => Binomial,
            CollOp::Bcast => ScatterAllgather,
            CollOp::Reduce if commutative && bytes >= t.reduce_long && p > 1 => Rabenseifner,
            CollOp::Reduce => Binomial,
            CollOp::Allreduce if !commutative || bytes < t.allreduce_short => RecursiveDoubling,
            CollOp::Allreduce if bytes < t.allreduce_ring => Rabenseifner,
            CollOp::Allreduce => Ring,
            CollOp::Gather | CollOp::Scatter if bytes >= t.gather_linear_block => Linear,
            CollOp::Gather | CollOp::Scatter => Binomial,
            CollOp::Gatherv | CollOp::Scatterv => Linear,
            CollOp::Allgather if bytes >= t.allgather_long => Ring,
            CollOp::Allgather if p.is_power_of_two() => RecursiveDoubling,
            CollOp::Allgather => Bruck,
            CollOp::Allgatherv => Ring,
            CollOp::Alltoall if bytes <= t.alltoall_short && p >= t.alltoall_bruck_procs => Bruck,
            CollOp::Alltoall | CollOp::Alltoallv if bytes <= t.alltoall_medium => Linear,
            CollOp::Alltoall | CollOp::Alltoallv => Pairwise,
            CollOp::ReduceScatter | CollOp::ReduceScatterBlock if !commutative => Binomial,
            CollOp::ReduceScatter | CollOp::ReduceScatterBlock if bytes < t.reduce_scatter_long => {
                Rabenseifner
            }
            CollOp::ReduceScatter | CollOp::ReduceScatterBlock => Ring,
            CollOp::Scan | CollOp::Exscan => RecursiveDoubling,
        }
    }
}

fn parse_op(s: &str) -> Option<CollOp> {
    CollOp::ALL.iter().copied().find(|o| o.name() == s)
}

fn names<'a>(it: impl Iterator<Item = &'a str>) -> String {
    it.collect::<Vec<_>>().join(", ")
}

fn algo_names(op: CollOp) -> String {
    names(op.algorithms().iter().map(|a| a.name()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_rejects() {
        let c = AlgoConfig::parse(" allreduce:ring , bcast:binomial").unwrap();
        assert_eq!(c.forced(CollOp::Allreduce), Some(Algorithm::Ring));
        assert_eq!(c.forced(CollOp::Bcast), Some(Algorithm::Binomial));
        assert!(AlgoConfig::parse("")
            .unwrap()
            .forced(CollOp::Bcast)
            .is_none());
        for bad in [
            "allreduce",
            "allreduc:ring",
            "allreduce:rings",
            "bcast:bruck",
            "bcast:flatt",
        ] {
            let e = AlgoConfig::parse(bad).unwrap_err().to_string();
            assert!(e.contains(bad.split(',').next().unwrap()), "{e}");
        }
        let c = AlgoConfig::parse("bcast:flat,bcast:binomial").unwrap();
        assert!(c.is_flat(CollOp::Bcast) && !c.is_flat(CollOp::Reduce));
        assert_eq!(c.forced(CollOp::Bcast), Some(Algorithm::Binomial));
        let e = AlgoConfig::parse("bcast:bruck").unwrap_err().to_string();
        assert!(e.contains("binomial, scatter_allgather"), "{e}");
    }

    #[test]
    fn non_commutative_never_gets_a_reordering_algorithm() {
        let c = AlgoConfig::default();
        for op in CollOp::ALL {
            for bytes in [0, 100, 10_000, 100_000, 10_000_000] {
                for p in 1..20 {
                    assert!(
                        !c.auto(op, bytes, p, false).reorders(op),
                        "{op:?} {bytes} {p}"
                    );
                }
            }
        }
        let mut c = AlgoConfig::default();
        c.force(CollOp::Allreduce, Algorithm::Ring).unwrap();
        assert!(c.choose(CollOp::Allreduce, 8, 4, false).is_err());
    }
}
