//! The tiers (node shared-memory buffer, two-level, flat) give the flat results: every
//! operation with such a form, blocking and non-blocking, on worlds laid out over mock
//! nodes, against a reference computed locally. Each case runs several times, so the node
//! buffers (made on a team's third eligible call) serve the later ones.

mod common;

use common::{affine, data, fold_of, op, run_on_nodes};
use ibdyn_collectives::{AlgoConfig, Algorithm, CollError, CollOp, Collectives};

/// Sizes (bytes, multiples of 8) around the buffer's thresholds (64 KiB gather, 256 KiB bcast).
const SIZES: [usize; 4] = [0, 8, 4000, 300_000];
const ROUNDS: usize = 2;

fn layouts() -> Vec<Vec<u32>> {
    vec![
        vec![0; 2],
        vec![0; 4],
        vec![0, 0, 1, 1, 1],
        vec![0, 0, 0, 1, 1, 1],
        vec![0, 1, 0, 1, 0, 1],
        vec![0, 1, 2, 2],
    ]
}

/// Every rank's `data(r, n, salt)` reduced in rank order.
fn fold(p: usize, n: usize, salt: usize, commutative: bool) -> Vec<u8> {
    fold_of(0..p, n, salt, commutative)
}

fn check(ok: bool, what: &str, n: usize, root: usize) -> Result<(), String> {
    if ok {
        Ok(())
    } else {
        Err(format!("{what}: wrong result for {n} bytes, root {root}"))
    }
}

fn e(what: &'static str) -> impl Fn(CollError) -> String {
    move |err| format!("{what}: {err}")
}

/// Runs every tiered operation on `c` and checks it; errors name the case.
fn every_op(c: &Collectives<common::MockComm>, commutative_only: bool) -> Result<(), String> {
    let (me, p) = (c.rank(), c.size());
    for _ in 0..ROUNDS {
        for n in SIZES {
            c.barrier().map_err(e("barrier"))?;
            c.ibarrier().and_then(|r| r.wait()).map_err(e("ibarrier"))?;
            for root in [0, p - 1] {
                let want = data(root, n, 1);
                let mut b = if me == root { want.clone() } else { vec![0; n] };
                c.bcast(&mut b, root).map_err(e("bcast"))?;
                check(b == want, "bcast", n, root)?;
                let mut b = if me == root { want.clone() } else { vec![0; n] };
                c.ibcast(&mut b, root)
                    .and_then(|r| r.wait())
                    .map_err(e("ibcast"))?;
                check(b == want, "ibcast", n, root)?;
                for commutative in [true, false] {
                    if !commutative && commutative_only {
                        continue;
                    }
                    let mut out = vec![0; if me == root { n } else { 0 }];
                    c.reduce(&data(me, n, 2), &mut out, &op(commutative), root)
                        .map_err(e("reduce"))?;
                    if me == root {
                        check(out == fold(p, n, 2, commutative), "reduce", n, root)?;
                    }
                }
                let mut all = vec![0; if me == root { p * n } else { 0 }];
                c.gather(&data(me, n, 3), &mut all, root)
                    .map_err(e("gather"))?;
                if me == root {
                    let want: Vec<u8> = (0..p).flat_map(|r| data(r, n, 3)).collect();
                    check(all == want, "gather", n, root)?;
                }
            }
            for commutative in [true, false] {
                if !commutative && commutative_only {
                    continue;
                }
                let want = fold(p, n, 4, commutative);
                let mut out = vec![0; n];
                c.allreduce(&data(me, n, 4), &mut out, &op(commutative))
                    .map_err(e("allreduce"))?;
                check(out == want, "allreduce", n, 0)?;
                let mut out = vec![0; n];
                c.iallreduce(&data(me, n, 4), &mut out, &op(commutative))
                    .and_then(|r| r.wait())
                    .map_err(e("iallreduce"))?;
                check(out == want, "iallreduce", n, 0)?;
            }
            let mut all = vec![0; p * n];
            c.allgather(&data(me, n, 5), &mut all)
                .map_err(e("allgather"))?;
            let want: Vec<u8> = (0..p).flat_map(|r| data(r, n, 5)).collect();
            check(all == want, "allgather", n, 0)?;
        }
    }
    Ok(())
}

fn on_every_layout(cfg: &AlgoConfig, commutative_only: bool, name: &str) {
    for ids in layouts() {
        for (r, out) in run_on_nodes(&ids, cfg, |c| every_op(c, commutative_only))
            .into_iter()
            .enumerate()
        {
            if let Err(why) = out {
                panic!("{name}, nodes {ids:?}, rank {r}: {why}");
            }
        }
    }
}

#[test]
fn default_choice() {
    on_every_layout(&AlgoConfig::default(), false, "default");
}

#[test]
fn allgather_by_lanes() {
    let mut cfg = AlgoConfig::default();
    cfg.thresholds.allgather_two_level_max = 0;
    on_every_layout(&cfg, false, "lanes");
}

#[test]
fn kept_flat_and_off_the_buffer() {
    let mut cfg = AlgoConfig::default();
    for op in CollOp::ALL {
        cfg.set_flat(op, true);
        cfg.set_p2p(op, true);
    }
    on_every_layout(&cfg, false, "flat, p2p");
}

#[test]
fn forced_algorithms() {
    let mut cfg = AlgoConfig::default();
    cfg.force(CollOp::Bcast, Algorithm::ScatterAllgather)
        .unwrap();
    cfg.force(CollOp::Reduce, Algorithm::Rabenseifner).unwrap();
    cfg.force(CollOp::Allreduce, Algorithm::Ring).unwrap();
    cfg.force(CollOp::Barrier, Algorithm::Binomial).unwrap();
    cfg.force(CollOp::Gather, Algorithm::Linear).unwrap();
    on_every_layout(&cfg, true, "forced");
}

#[test]
fn non_commutative_with_a_reordering_reduce_forced() {
    // The blocking allreduce cannot go two-level (its node step would reorder); the
    // non-blocking one does where the nodes hold contiguous blocks.
    let mut cfg = AlgoConfig::default();
    cfg.force(CollOp::Reduce, Algorithm::Rabenseifner).unwrap();
    for ids in layouts() {
        let out = run_on_nodes(&ids, &cfg, |c| {
            let (me, p) = (c.rank(), c.size());
            let want = fold(p, 800, 6, false);
            let mut out = vec![0; 800];
            c.allreduce(&data(me, 800, 6), &mut out, &affine())?;
            let mut out2 = vec![0; 800];
            c.iallreduce(&data(me, 800, 6), &mut out2, &affine())?
                .wait()?;
            Ok::<_, CollError>(out == want && out2 == want)
        });
        for (r, o) in out.into_iter().enumerate() {
            assert!(o.expect("allreduce runs"), "nodes {ids:?} rank {r}");
        }
    }
}
