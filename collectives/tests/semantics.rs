//! Rank order of non-commutative operations, errors on mismatched arguments, non-blocking
//! collectives, typed helpers, and collectives over a subset team.

mod common;

use common::{data, run, run_with_timeout, MockComm};
use ibdyn_collectives::{
    as_bytes, as_bytes_mut, AlgoConfig, Algorithm, BuiltinOp, CollError, CollOp, Collectives, Op,
    PointToPoint, Team,
};
use std::time::Duration;

/// Affine maps x -> m x + c (mod 2^32), composed in rank order: (a ∘ b)(x) = b(a(x)).
/// Associative, not commutative.
fn compose(a: (u32, u32), b: (u32, u32)) -> (u32, u32) {
    (
        a.0.wrapping_mul(b.0),
        b.0.wrapping_mul(a.1).wrapping_add(b.1),
    )
}

fn affine_op() -> Op {
    Op::user_bytes(8, false, |a, b| {
        for (x, y) in a.chunks_exact(8).zip(b.chunks_exact_mut(8)) {
            let ax = (
                u32::from_le_bytes(x[0..4].try_into().unwrap()),
                u32::from_le_bytes(x[4..8].try_into().unwrap()),
            );
            let bx = (
                u32::from_le_bytes(y[0..4].try_into().unwrap()),
                u32::from_le_bytes(y[4..8].try_into().unwrap()),
            );
            let r = compose(ax, bx);
            y[0..4].copy_from_slice(&r.0.to_le_bytes());
            y[4..8].copy_from_slice(&r.1.to_le_bytes());
        }
    })
    .unwrap()
}

fn maps(r: usize, n: usize) -> Vec<(u32, u32)> {
    (0..n)
        .map(|i| ((r * 2 + i * 6 + 3) as u32, (r * 977 + i * 13 + 1) as u32))
        .collect()
}

fn encode(v: &[(u32, u32)]) -> Vec<u8> {
    v.iter()
        .flat_map(|&(m, c)| m.to_le_bytes().into_iter().chain(c.to_le_bytes()))
        .collect()
}

/// prefix[r] = x0 ∘ ... ∘ xr, encoded.
fn prefixes(p: usize, n: usize) -> Vec<Vec<u8>> {
    let mut acc = maps(0, n);
    let mut out = vec![encode(&acc)];
    for r in 1..p {
        acc = acc
            .iter()
            .zip(maps(r, n))
            .map(|(&a, b)| compose(a, b))
            .collect();
        out.push(encode(&acc));
    }
    out
}

fn forced(op: CollOp, algo: Algorithm) -> AlgoConfig {
    let mut c = AlgoConfig::default();
    c.force(op, algo).unwrap();
    c
}

fn configs(op: CollOp) -> Vec<AlgoConfig> {
    let mut v = vec![AlgoConfig::default()];
    v.extend(
        op.algorithms()
            .iter()
            .filter(|a| !a.reorders(op))
            .map(|&a| forced(op, a)),
    );
    v
}

#[test]
fn non_commutative_keeps_rank_order() {
    let op = affine_op();
    for p in 1..=9 {
        for n in [0, 1, 5, 300] {
            let want = prefixes(p, n);
            for cfg in configs(CollOp::Allreduce) {
                let out = run(p, &cfg, |c| {
                    let mut b = vec![0; 8 * n];
                    c.allreduce(&encode(&maps(c.rank(), n)), &mut b, &op)
                        .map(|_| b)
                });
                assert!(
                    out.into_iter().all(|o| o.unwrap() == want[p - 1]),
                    "allreduce {cfg:?} p {p} n {n}"
                );
            }
            for cfg in configs(CollOp::Reduce) {
                for root in 0..p {
                    let out = run(p, &cfg, |c| {
                        let mut b = vec![0; if c.rank() == root { 8 * n } else { 0 }];
                        c.reduce(&encode(&maps(c.rank(), n)), &mut b, &op, root)
                            .map(|_| b)
                    });
                    assert!(
                        out[root].as_ref().unwrap() == &want[p - 1],
                        "reduce {cfg:?} p {p} n {n} root {root}"
                    );
                }
            }
            for cfg in configs(CollOp::ReduceScatterBlock) {
                let out = run(p, &cfg, |c| {
                    let mut b = vec![0; 8 * n];
                    c.reduce_scatter_block(&encode(&maps(c.rank(), n * p)), &mut b, &op)
                        .map(|_| b)
                });
                let all = prefixes(p, n * p).pop().unwrap();
                for (r, o) in out.into_iter().enumerate() {
                    assert!(
                        o.unwrap() == all[r * 8 * n..(r + 1) * 8 * n],
                        "reduce_scatter_block p {p} n {n}"
                    );
                }
            }
            for which in [CollOp::Scan, CollOp::Exscan] {
                for cfg in configs(which) {
                    let out = run(p, &cfg, |c| {
                        let mut b = vec![0; 8 * n];
                        let x = encode(&maps(c.rank(), n));
                        if which == CollOp::Scan {
                            c.scan(&x, &mut b, &op)
                        } else {
                            c.exscan(&x, &mut b, &op)
                        }
                        .map(|_| b)
                    });
                    for (r, o) in out.into_iter().enumerate() {
                        let o = o.unwrap();
                        if which == CollOp::Scan {
                            assert!(o == want[r], "scan {cfg:?} p {p} n {n} rank {r}");
                        } else if r > 0 {
                            assert!(o == want[r - 1], "exscan {cfg:?} p {p} n {n} rank {r}");
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn reordering_algorithm_refuses_non_commutative_op() {
    let op = affine_op();
    for (which, algo) in [
        (CollOp::Allreduce, Algorithm::Ring),
        (CollOp::Allreduce, Algorithm::Rabenseifner),
        (CollOp::Reduce, Algorithm::Rabenseifner),
    ] {
        let out = run(3, &forced(which, algo), |c| {
            let mut b = vec![0; 16];
            if which == CollOp::Allreduce {
                c.allreduce(&[0; 16], &mut b, &op)
            } else {
                c.reduce(&[0; 16], &mut b, &op, 0)
            }
        });
        for o in out {
            assert!(
                matches!(o, Err(CollError::AlgorithmNotApplicable { .. })),
                "{o:?}"
            );
        }
    }
}

#[test]
fn typed_user_op_and_builtins() {
    // The affine op again, packed in a u64 and written on typed slices.
    let op = Op::user::<u64, _>(false, |a, b| {
        for (x, y) in a.iter().zip(b.iter_mut()) {
            let r = compose(
                (*x as u32, (*x >> 32) as u32),
                (*y as u32, (*y >> 32) as u32),
            );
            *y = r.0 as u64 | (r.1 as u64) << 32;
        }
    });
    for p in [1, 4, 7] {
        let want = prefixes(p, 9).pop().unwrap();
        let out = run(p, &AlgoConfig::default(), |c| {
            let mine: Vec<u64> = maps(c.rank(), 9)
                .iter()
                .map(|&(m, k)| m as u64 | (k as u64) << 32)
                .collect();
            let mut b = vec![0u64; 9];
            c.allreduce(as_bytes(&mine), as_bytes_mut(&mut b), &op)
                .map(|_| b)
        });
        for o in out {
            let bytes: Vec<u8> = o.unwrap().iter().flat_map(|v| v.to_le_bytes()).collect();
            assert_eq!(bytes, want);
        }
        let out = run(p, &AlgoConfig::default(), |c| {
            let r = c.rank();
            let mut mn = [0f32; 3];
            c.allreduce_typed(&[r as f32, -(r as f32), 0.5], &mut mn, BuiltinOp::Min)?;
            let mut x = [0i16; 2];
            c.allreduce_typed(&[1 << r, -1], &mut x, BuiltinOp::BitXor)?;
            let mut l = [0u8; 2];
            c.allreduce_typed(&[(r % 2) as u8, 7], &mut l, BuiltinOp::LogicalAnd)?;
            let mut s = [0i64; 1];
            c.scan_typed(&[r as i64 + 1], &mut s, BuiltinOp::Sum)?;
            Ok::<_, CollError>((mn, x, l, s))
        });
        for (r, o) in out.into_iter().enumerate() {
            let (mn, x, l, s) = o.unwrap();
            assert_eq!(mn, [0.0, -((p - 1) as f32), 0.5]);
            assert_eq!(
                x,
                [((1i32 << p) - 1) as i16, if p % 2 == 1 { -1 } else { 0 }]
            );
            assert_eq!(
                l,
                [0, if p == 1 { 7 } else { 1 }],
                "a single contribution is returned as is"
            );
            assert_eq!(s[0], ((r + 1) * (r + 2) / 2) as i64);
        }
    }
    assert!(Op::builtin(BuiltinOp::BitAnd, ibdyn_collectives::ElemType::F64).is_err());
}

/// Runs a collective where rank `odd` passes a different size; at least one rank must get
/// an error, and none may panic or corrupt memory.
fn expect_error(
    what: &str,
    p: usize,
    cfg: &AlgoConfig,
    f: impl Fn(&Collectives<MockComm>, bool) -> Result<(), CollError> + Sync,
) {
    let odd = p / 2;
    let out = run_with_timeout(p, cfg, Duration::from_secs(20), |c| f(c, c.rank() == odd));
    let errs: Vec<String> = out
        .iter()
        .filter_map(|o| o.as_ref().err().map(|e| e.to_string()))
        .collect();
    assert!(!errs.is_empty(), "{what}: mismatched sizes went unnoticed");
    assert!(
        errs.iter()
            .any(|e| e.contains("size mismatch") || e.contains("truncated")),
        "{what}: {errs:?}"
    );
}

#[test]
fn mismatched_counts_give_errors() {
    let u32sum = Op::builtin(BuiltinOp::Sum, ibdyn_collectives::ElemType::U32).unwrap();
    for p in [2, 5] {
        for &algo in CollOp::Bcast.algorithms() {
            for (root_len, other_len) in [(64, 32), (32, 64)] {
                expect_error("bcast", p, &forced(CollOp::Bcast, algo), |c, _| {
                    let mut b = vec![0; if c.rank() == 0 { root_len } else { other_len }];
                    c.bcast(&mut b, 0)
                });
            }
        }
        for &algo in CollOp::Allreduce.algorithms() {
            expect_error(
                "allreduce",
                p,
                &forced(CollOp::Allreduce, algo),
                |c, odd| {
                    let n = if odd { 4096 } else { 4000 };
                    c.allreduce(&vec![1; n], &mut vec![0; n], &u32sum)
                },
            );
        }
        for &algo in CollOp::Reduce.algorithms() {
            expect_error("reduce", p, &forced(CollOp::Reduce, algo), |c, odd| {
                let n = if odd { 400 } else { 800 };
                c.reduce(&vec![1; n], &mut vec![0; n], &u32sum, 0)
            });
        }
        for &algo in CollOp::Gather.algorithms() {
            expect_error("gather", p, &forced(CollOp::Gather, algo), |c, odd| {
                let b = if odd { 12 } else { 10 };
                c.gather(&vec![1; b], &mut vec![0; 10 * p], 0)
            });
        }
        for &algo in CollOp::Allgather.algorithms() {
            expect_error(
                "allgather",
                p,
                &forced(CollOp::Allgather, algo),
                |c, odd| {
                    let b = if odd { 9 } else { 10 };
                    c.allgather(&vec![1; b], &mut vec![0; b * p])
                },
            );
        }
        for &algo in CollOp::Alltoall.algorithms() {
            expect_error("alltoall", p, &forced(CollOp::Alltoall, algo), |c, odd| {
                let b = if odd { 6 } else { 5 };
                c.alltoall(&vec![1; b * p], &mut vec![0; b * p])
            });
        }
        for &algo in CollOp::ReduceScatterBlock.algorithms() {
            expect_error(
                "reduce_scatter_block",
                p,
                &forced(CollOp::ReduceScatterBlock, algo),
                |c, odd| {
                    let b = if odd { 8 } else { 4 };
                    c.reduce_scatter_block(&vec![1; b * p], &mut vec![0; b], &u32sum)
                },
            );
        }
    }
    // Local argument errors are caught before anything is sent.
    let out = run(2, &AlgoConfig::default(), |c| {
        c.allreduce(&[0; 6], &mut [0; 6], &u32sum)
    });
    assert!(out
        .iter()
        .all(|o| matches!(o, Err(CollError::InvalidArgument { .. }))));
    let out = run(2, &AlgoConfig::default(), |c| c.bcast(&mut [0; 4], 2));
    assert!(out
        .iter()
        .all(|o| matches!(o, Err(CollError::InvalidArgument { .. }))));
}

#[test]
fn nonblocking_collectives_overlap_and_progress_by_test() {
    let sum = Op::builtin(BuiltinOp::Sum, ibdyn_collectives::ElemType::U32).unwrap();
    for (bcast_algo, allreduce_algo) in [
        (Algorithm::Binomial, Algorithm::RecursiveDoubling),
        (Algorithm::ScatterAllgather, Algorithm::Ring),
        (Algorithm::Binomial, Algorithm::Rabenseifner),
        (Algorithm::ScatterAllgather, Algorithm::Binomial),
    ] {
        let mut cfg = forced(CollOp::Bcast, bcast_algo);
        cfg.force(CollOp::Allreduce, allreduce_algo).unwrap();
        cfg.force(CollOp::Barrier, Algorithm::Binomial).unwrap();
        for p in [1, 3, 6, 9] {
            let n = 4 * 1001;
            let out = run(p, &cfg, |c| {
                let me = c.rank();
                let root = p - 1;
                let mut b = if me == root {
                    data(root, n, 1)
                } else {
                    vec![0; n]
                };
                let x = data(me, n, 2);
                let mut y = vec![0; n];
                let mut bar = c.ibarrier()?;
                let mut bc = c.ibcast(&mut b, root)?;
                let mut ar = c.iallreduce(&x, &mut y, &sum)?;
                let (mut d1, mut d2, mut d3) = (false, false, false);
                while !(d1 && d2 && d3) {
                    // Test in the opposite order of starting: each request progresses alone.
                    d3 = d3 || ar.test()?;
                    d2 = d2 || bc.test()?;
                    d1 = d1 || bar.test()?;
                    std::thread::yield_now();
                }
                assert!(ar.test()?, "a completed request stays complete");
                drop((bar, bc, ar));
                Ok::<_, CollError>((b, y))
            });
            let mut want = data(0, n, 2);
            for r in 1..p {
                let x = data(r, n, 2);
                for (w, v) in want.chunks_exact_mut(4).zip(x.chunks_exact(4)) {
                    let s = u32::from_ne_bytes(w[..].try_into().unwrap())
                        .wrapping_add(u32::from_ne_bytes(v.try_into().unwrap()));
                    w.copy_from_slice(&s.to_ne_bytes());
                }
            }
            for o in out {
                let (b, y) = o.unwrap();
                assert!(b == data(p - 1, n, 1), "ibcast {bcast_algo:?} p {p}");
                assert!(y == want, "iallreduce {allreduce_algo:?} p {p}");
            }
        }
    }
}

#[test]
fn collectives_over_a_subset_team() {
    // Ranks 5, 1, 3 of six form a team (in that order); 0, 2, 4 form another, concurrently.
    let out = run(6, &AlgoConfig::default(), |c| {
        let me = c.comm().rank();
        let members = if me % 2 == 1 {
            vec![5, 1, 3]
        } else {
            vec![0, 2, 4]
        };
        let team = Team::subset(me, members).unwrap();
        let mut cfg = AlgoConfig::default();
        cfg.force(CollOp::Allgather, Algorithm::Bruck).unwrap();
        let t = Collectives::on_team(c.comm(), team, cfg);
        let mut g = vec![0u8; 3];
        t.allgather(&[me as u8], &mut g)?;
        let mut s = [0u32; 1];
        t.allreduce_typed(&[me as u32], &mut s, BuiltinOp::Sum)?;
        let mut b = [t.rank() as u8 * 10; 2];
        t.bcast(&mut b, 0)?;
        t.barrier()?;
        Ok::<_, CollError>((t.rank(), g, s[0], b))
    });
    for (me, o) in out.into_iter().enumerate() {
        let (tr, g, s, b) = o.unwrap();
        if me % 2 == 1 {
            assert_eq!(
                (tr, g, s, b),
                (
                    [5, 1, 3].iter().position(|&x| x == me).unwrap(),
                    vec![5, 1, 3],
                    9,
                    [0, 0]
                )
            );
        } else {
            assert_eq!((tr, g, s, b), (me / 2, vec![0, 2, 4], 6, [0, 0]));
        }
    }
    assert!(Team::subset(2, vec![0, 1]).is_err());
    assert!(Team::subset(1, vec![1, 1]).is_err());
}

#[test]
fn every_operation_has_a_nonblocking_form() {
    let sum = Op::builtin(BuiltinOp::Sum, ibdyn_collectives::ElemType::U8).unwrap();
    for p in [1, 4, 7] {
        let out = run(p, &AlgoConfig::default(), |c| {
            let me = c.rank();
            let mine = [me as u8; 3];
            let a2a: Vec<u8> = (0..p).map(|j| (me * 10 + j) as u8).collect();
            let (mut g, mut t, mut r, mut sc) = (
                vec![0; 3 * p],
                vec![0; p],
                vec![0; if me == 0 { 3 } else { 0 }],
                [0u8; 3],
            );
            let rg = c.iallgather(&mine, &mut g)?;
            let rt = c.ialltoall(&a2a, &mut t)?;
            let rr = c.ireduce(&mine, &mut r, &sum, 0)?;
            let rs = c.iscan(&mine, &mut sc, &sum)?;
            // Completed in the reverse order of starting.
            rs.wait()?;
            rr.wait()?;
            rt.wait()?;
            rg.wait()?;
            Ok::<_, CollError>((g, t, r, sc))
        });
        for (me, o) in out.into_iter().enumerate() {
            let (g, t, r, sc) = o.unwrap();
            assert_eq!(g, (0..p).flat_map(|q| [q as u8; 3]).collect::<Vec<_>>());
            assert_eq!(t, (0..p).map(|i| (i * 10 + me) as u8).collect::<Vec<_>>());
            let total = (p * (p - 1) / 2) as u8;
            if me == 0 {
                assert_eq!(r, [total; 3]);
            }
            assert_eq!(sc, [(me * (me + 1) / 2) as u8; 3]);
        }
    }
}
