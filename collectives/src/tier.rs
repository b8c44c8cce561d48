//! Which tier runs a call: the one function implementing the tier table of `config.rs`.
//! A tier is chosen from the team's shape, the operation, the size the thresholds name, the
//! root and the reduction; the algorithm inside a tier is `AlgoConfig::choose`'s business.

use crate::config::{AlgoConfig, CollOp};
use crate::op::Op;

/// Where a call runs.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum Tier {
    /// One schedule over the whole team (`flat/`).
    Flat,
    /// The node's shared-memory collective buffer (`nodeshm.rs`).
    NodeShm,
    /// Node step, node leaders, node fan-out (`twolevel.rs`, `twolevel/schedules.rs`).
    TwoLevel,
    /// The allgather across nodes by lanes (`twolevel/lanes.rs`).
    Lanes,
}

/// What the choice needs to know of a team.
#[derive(Copy, Clone, Debug)]
pub(crate) enum Shape {
    /// One member, or members on several nodes without a two-level form.
    Flat,
    /// Several members, all on one node.
    Node,
    /// Several nodes, several processes on some node. `contiguous`: each node's ranks form
    /// one block, in node order (rank order survives two levels); `lanes`: in addition the
    /// blocks are of equal size.
    Nodes { contiguous: bool, lanes: bool },
}

/// One collective call, as the choice sees it.
#[derive(Copy, Clone)]
pub(crate) struct Call<'a> {
    op: CollOp,
    blocking: bool,
    /// The size the thresholds name (`Thresholds`: the message, the block or the total).
    bytes: usize,
    /// The root's team rank (0 for unrooted operations).
    root: usize,
    reduction: Option<&'a Op>,
}

impl<'a> Call<'a> {
    pub fn blocking(op: CollOp, bytes: usize) -> Call<'a> {
        Call {
            op,
            blocking: true,
            bytes,
            root: 0,
            reduction: None,
        }
    }

    pub fn nonblocking(op: CollOp, bytes: usize) -> Call<'a> {
        Call {
            blocking: false,
            ..Call::blocking(op, bytes)
        }
    }

    pub fn root(self, root: usize) -> Call<'a> {
        Call { root, ..self }
    }

    pub fn reducing(self, o: &'a Op) -> Call<'a> {
        Call {
            reduction: Some(o),
            ..self
        }
    }
}

/// The tier for `call` on a team of `shape` under `cfg`.
pub(crate) fn select(cfg: &AlgoConfig, shape: Shape, call: Call<'_>) -> Tier {
    let op = call.op;
    match shape {
        Shape::Nodes { contiguous, lanes } if !cfg.is_flat(op) => {
            let commutative = call.reduction.is_none_or(Op::is_commutative);
            let in_order = commutative || contiguous;
            let reorders = |c: CollOp| cfg.forced(c).is_some_and(|a| a.reorders(c));
            match (call.blocking, op) {
                (true, CollOp::Barrier | CollOp::Bcast) => Tier::TwoLevel,
                // A forced reordering algorithm would run a level out of rank order.
                (true, CollOp::Reduce | CollOp::Allreduce)
                    if in_order && (commutative || !(reorders(CollOp::Reduce) || reorders(op))) =>
                {
                    Tier::TwoLevel
                }
                (true, CollOp::Allgather)
                    if call.bytes < cfg.thresholds.allgather_two_level_max =>
                {
                    Tier::TwoLevel
                }
                (true, CollOp::Allgather) if lanes => Tier::Lanes,
                // The non-blocking forms compose their levels from the default algorithms,
                // so a forced algorithm keeps the operation flat (and forced).
                (false, CollOp::Barrier | CollOp::Bcast | CollOp::Allreduce)
                    if in_order && cfg.forced(op).is_none() =>
                {
                    Tier::TwoLevel
                }
                _ => Tier::Flat,
            }
        }
        Shape::Node
            if call.blocking
                && call.root == 0
                && cfg.forced(op).is_none()
                && cfg.shm_max(op).is_some_and(|m| call.bytes <= m) =>
        {
            Tier::NodeShm
        }
        _ => Tier::Flat,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Algorithm;
    use crate::op::{BuiltinOp, ElemType};

    const NODES: Shape = Shape::Nodes {
        contiguous: true,
        lanes: true,
    };
    const SCATTERED: Shape = Shape::Nodes {
        contiguous: false,
        lanes: false,
    };

    fn non_commutative() -> Op {
        Op::user::<u8, _>(false, |_: &[u8], _: &mut [u8]| {})
    }

    #[test]
    fn the_table() {
        let cfg = AlgoConfig::default();
        let sum = Op::builtin(BuiltinOp::Sum, ElemType::U8).unwrap();
        let nc = non_commutative();
        let b = |op| Call::blocking(op, 8);
        let nb = |op| Call::nonblocking(op, 8);
        for op in [
            CollOp::Barrier,
            CollOp::Bcast,
            CollOp::Reduce,
            CollOp::Allreduce,
        ] {
            assert_eq!(select(&cfg, NODES, b(op)), Tier::TwoLevel, "{op:?}");
        }
        assert_eq!(select(&cfg, NODES, b(CollOp::Allgather)), Tier::TwoLevel);
        let big = Call::blocking(CollOp::Allgather, cfg.thresholds.allgather_two_level_max);
        assert_eq!(select(&cfg, NODES, big), Tier::Lanes);
        assert_eq!(select(&cfg, SCATTERED, big), Tier::Flat);
        for op in [
            CollOp::Gather,
            CollOp::Scatter,
            CollOp::Alltoall,
            CollOp::Scan,
        ] {
            assert_eq!(select(&cfg, NODES, b(op)), Tier::Flat, "{op:?}");
        }
        for op in [CollOp::Barrier, CollOp::Bcast, CollOp::Allreduce] {
            assert_eq!(select(&cfg, NODES, nb(op)), Tier::TwoLevel, "{op:?}");
        }
        assert_eq!(select(&cfg, NODES, nb(CollOp::Reduce)), Tier::Flat);
        // Rank order: a non-commutative reduction goes two-level on contiguous nodes only.
        let red = b(CollOp::Allreduce).reducing(&nc);
        assert_eq!(select(&cfg, NODES, red), Tier::TwoLevel);
        assert_eq!(select(&cfg, SCATTERED, red), Tier::Flat);
        let red = b(CollOp::Allreduce).reducing(&sum);
        assert_eq!(select(&cfg, SCATTERED, red), Tier::TwoLevel);
        // One node: blocking, rooted at 0, not forced, up to the threshold.
        for op in [
            CollOp::Barrier,
            CollOp::Bcast,
            CollOp::Reduce,
            CollOp::Allreduce,
            CollOp::Gather,
            CollOp::Allgather,
        ] {
            // A barrier's size is 0 (its threshold too).
            let b = |op| Call::blocking(op, 0);
            assert_eq!(select(&cfg, Shape::Node, b(op)), Tier::NodeShm, "{op:?}");
            assert_eq!(select(&cfg, Shape::Node, nb(op)), Tier::Flat, "{op:?}");
            assert_eq!(select(&cfg, Shape::Node, b(op).root(1)), Tier::Flat);
            assert_eq!(select(&cfg, Shape::Flat, b(op)), Tier::Flat);
        }
        let over = Call::blocking(CollOp::Bcast, cfg.thresholds.shm_bcast_max + 1);
        assert_eq!(select(&cfg, Shape::Node, over), Tier::Flat);
        assert_eq!(select(&cfg, Shape::Node, b(CollOp::Scatter)), Tier::Flat);
    }

    #[test]
    fn settings_keep_operations_off_a_tier() {
        let mut cfg = AlgoConfig::default();
        cfg.set_flat(CollOp::Bcast, true);
        cfg.set_p2p(CollOp::Reduce, true);
        cfg.force(CollOp::Allreduce, Algorithm::Ring).unwrap();
        cfg.force(CollOp::Reduce, Algorithm::Rabenseifner).unwrap();
        let nc = non_commutative();
        assert_eq!(
            select(&cfg, NODES, Call::blocking(CollOp::Bcast, 8)),
            Tier::Flat
        );
        assert_eq!(
            select(&cfg, NODES, Call::nonblocking(CollOp::Bcast, 8)),
            Tier::Flat
        );
        assert_eq!(
            select(&cfg, Shape::Node, Call::blocking(CollOp::Bcast, 8)),
            Tier::NodeShm
        );
        assert_eq!(
            select(&cfg, Shape::Node, Call::blocking(CollOp::Reduce, 8)),
            Tier::Flat
        );
        // A forced algorithm applies to each level of a blocking form ...
        let ar = Call::blocking(CollOp::Allreduce, 8);
        assert_eq!(select(&cfg, NODES, ar), Tier::TwoLevel);
        // ... keeps a non-blocking form flat, and the node buffer off.
        assert_eq!(
            select(&cfg, NODES, Call::nonblocking(CollOp::Allreduce, 8)),
            Tier::Flat
        );
        assert_eq!(select(&cfg, Shape::Node, ar), Tier::Flat);
        // A non-commutative reduction never gets a reordering level.
        assert_eq!(select(&cfg, NODES, ar.reducing(&nc)), Tier::Flat);
        assert_eq!(
            select(
                &cfg,
                NODES,
                Call::blocking(CollOp::Allgather, 8).reducing(&nc)
            ),
            Tier::TwoLevel
        );
    }
}
