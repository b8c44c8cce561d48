//! Every operation x every algorithm (forced) x sizes 0 B .. 1 MiB x 1..9 ranks, against a
//! reference computed locally.

mod common;

use common::{data, run};
use ibdyn_collectives::{
    as_bytes, as_bytes_mut, AlgoConfig, Algorithm, BuiltinOp, CollOp, ElemType, Element, Op,
};

const MAX_P: usize = 9;
/// Bytes per rank (or per block); the last one makes totals around 1 MiB.
const SIZES: [usize; 5] = [0, 1, 7, 1000, 12_292];
const LARGE: usize = 1 << 20;

fn forced(op: CollOp, algo: Algorithm) -> AlgoConfig {
    let mut c = AlgoConfig::default();
    c.force(op, algo).unwrap();
    c
}

/// Every (algorithm, ranks) pair for `op`, with large sizes on a few rank counts only.
fn each(op: CollOp, mut f: impl FnMut(&AlgoConfig, usize, usize)) {
    for &algo in op.algorithms() {
        let cfg = forced(op, algo);
        for p in 1..=MAX_P {
            for n in SIZES {
                f(&cfg, p, n);
            }
            if [2, 5, 8].contains(&p) {
                f(&cfg, p, LARGE);
            }
        }
    }
}

/// `b = a ∘ b` on typed copies of two byte buffers (memcpy in and out).
fn typed_fold<T: Element>(a: &[u8], b: &mut [u8], f: fn(T, T) -> T) {
    let n = a.len() / std::mem::size_of::<T>();
    let (mut ta, mut tb) = (vec![T::default(); n], vec![T::default(); n]);
    as_bytes_mut(&mut ta).copy_from_slice(a);
    as_bytes_mut(&mut tb).copy_from_slice(b);
    for (x, y) in ta.iter().zip(tb.iter_mut()) {
        *y = f(*x, *y);
    }
    b.copy_from_slice(as_bytes(&tb));
}

/// A reduction for `n` bytes and a reference fold of `a` into `b`.
type Fold = fn(&[u8], &mut [u8]);

fn reduction(n: usize) -> (Op, Fold) {
    if n.is_multiple_of(8) && !n.is_multiple_of(16) {
        (
            Op::builtin(BuiltinOp::Max, ElemType::I64).unwrap(),
            |a, b| typed_fold::<i64>(a, b, |x, y| x.max(y)),
        )
    } else if n.is_multiple_of(4) {
        (
            Op::builtin(BuiltinOp::Sum, ElemType::U32).unwrap(),
            |a, b| typed_fold::<u32>(a, b, |x, y| x.wrapping_add(y)),
        )
    } else {
        (
            Op::builtin(BuiltinOp::BitXor, ElemType::U8).unwrap(),
            |a, b| typed_fold::<u8>(a, b, |x, y| x ^ y),
        )
    }
}

fn reduce_ref(p: usize, n: usize, salt: usize, f: Fold) -> Vec<Vec<u8>> {
    // Prefixes: out[r] = x0 ∘ ... ∘ xr.
    let mut out = Vec::with_capacity(p);
    let mut acc = data(0, n, salt);
    out.push(acc.clone());
    for r in 1..p {
        let mut x = data(r, n, salt);
        f(&acc, &mut x);
        acc = x;
        out.push(acc.clone());
    }
    out
}

fn ctx(cfg: &AlgoConfig, op: CollOp, p: usize, n: usize) -> String {
    format!(
        "{} via {:?}, {p} ranks, {n} bytes",
        op.name(),
        cfg.forced(op)
    )
}

#[test]
fn barrier() {
    for &algo in CollOp::Barrier.algorithms() {
        for p in 1..=MAX_P {
            let r = run(p, &forced(CollOp::Barrier, algo), |c| {
                c.barrier()?;
                c.barrier()
            });
            assert!(r.iter().all(|x| x.is_ok()), "{algo:?} {p}: {r:?}");
        }
    }
}

#[test]
fn bcast() {
    each(CollOp::Bcast, |cfg, p, n| {
        for root in [0, p / 2, p - 1] {
            let out = run(p, cfg, |c| {
                let mut b = if c.rank() == root {
                    data(root, n, 1)
                } else {
                    vec![0; n]
                };
                c.bcast(&mut b, root).map(|_| b)
            });
            for (r, o) in out.into_iter().enumerate() {
                assert!(
                    o.unwrap() == data(root, n, 1),
                    "{} root {root} rank {r}",
                    ctx(cfg, CollOp::Bcast, p, n)
                );
            }
        }
    });
}

#[test]
fn reduce() {
    each(CollOp::Reduce, |cfg, p, n| {
        let (op, f) = reduction(n);
        let want = reduce_ref(p, n, 2, f).pop().unwrap();
        for root in [0, p - 1, p / 3] {
            let out = run(p, cfg, |c| {
                let mut b = if c.rank() == root { vec![0; n] } else { vec![] };
                c.reduce(&data(c.rank(), n, 2), &mut b, &op, root)
                    .map(|_| b)
            });
            assert!(
                out[root].as_ref().unwrap() == &want,
                "{} root {root}",
                ctx(cfg, CollOp::Reduce, p, n)
            );
            assert!(out.iter().all(|o| o.is_ok()));
        }
    });
}

#[test]
fn allreduce() {
    each(CollOp::Allreduce, |cfg, p, n| {
        let (op, f) = reduction(n);
        let want = reduce_ref(p, n, 3, f).pop().unwrap();
        let out = run(p, cfg, |c| {
            let mut b = vec![0; n];
            c.allreduce(&data(c.rank(), n, 3), &mut b, &op).map(|_| b)
        });
        for (r, o) in out.into_iter().enumerate() {
            assert!(
                o.unwrap() == want,
                "{} rank {r}",
                ctx(cfg, CollOp::Allreduce, p, n)
            );
        }
    });
}

#[test]
fn reduce_scatter_block() {
    each(CollOp::ReduceScatterBlock, |cfg, p, n| {
        let n = if n == LARGE { n / p / 8 * 8 } else { n };
        let (op, f) = reduction(n);
        let want = reduce_ref(p, n * p, 4, f).pop().unwrap();
        let out = run(p, cfg, |c| {
            let mut b = vec![0; n];
            c.reduce_scatter_block(&data(c.rank(), n * p, 4), &mut b, &op)
                .map(|_| b)
        });
        for (r, o) in out.into_iter().enumerate() {
            assert!(
                o.unwrap() == want[r * n..(r + 1) * n],
                "{} rank {r}",
                ctx(cfg, CollOp::ReduceScatterBlock, p, n)
            );
        }
    });
}

#[test]
fn reduce_scatter() {
    each(CollOp::ReduceScatter, |cfg, p, n| {
        let (op, f) = reduction(n);
        let esz = op.elem_size();
        // Uneven counts, some zero.
        let counts: Vec<usize> = (0..p)
            .map(|i| {
                if i % 3 == 1 {
                    0
                } else {
                    (n / esz / p) * (i % 2 + 1) / 2 + i % 2
                }
            })
            .collect();
        let total: usize = counts.iter().sum();
        let want = reduce_ref(p, total * esz, 5, f).pop().unwrap();
        let out = run(p, cfg, |c| {
            let mut b = vec![0; counts[c.rank()] * esz];
            c.reduce_scatter(&data(c.rank(), total * esz, 5), &mut b, &counts, &op)
                .map(|_| b)
        });
        let mut at = 0;
        for (r, o) in out.into_iter().enumerate() {
            let len = counts[r] * esz;
            assert!(
                o.unwrap() == want[at..at + len],
                "{} rank {r}",
                ctx(cfg, CollOp::ReduceScatter, p, n)
            );
            at += len;
        }
    });
}

#[test]
fn scan_and_exscan() {
    for which in [CollOp::Scan, CollOp::Exscan] {
        each(which, |cfg, p, n| {
            let (op, f) = reduction(n);
            let want = reduce_ref(p, n, 6, f);
            let out = run(p, cfg, |c| {
                let mut b = vec![0xee; n];
                let x = data(c.rank(), n, 6);
                if which == CollOp::Scan {
                    c.scan(&x, &mut b, &op)
                } else {
                    c.exscan(&x, &mut b, &op)
                }
                .map(|_| b)
            });
            for (r, o) in out.into_iter().enumerate() {
                let o = o.unwrap();
                match (which, r) {
                    (CollOp::Scan, _) => {
                        assert!(o == want[r], "{} rank {r}", ctx(cfg, which, p, n))
                    }
                    (_, 0) => assert!(
                        o.iter().all(|&x| x == 0xee),
                        "exscan must leave rank 0 alone"
                    ),
                    _ => assert!(o == want[r - 1], "{} rank {r}", ctx(cfg, which, p, n)),
                }
            }
        });
    }
}

fn block_of(n: usize, p: usize) -> usize {
    if n == LARGE {
        n / p
    } else {
        n
    }
}

#[test]
fn gather_and_scatter() {
    for which in [CollOp::Gather, CollOp::Scatter] {
        each(which, |cfg, p, n| {
            let b = block_of(n, p);
            for root in [0, p - 1, p.div_ceil(2) % p] {
                let all: Vec<u8> = (0..p).flat_map(|r| data(r, b, 7)).collect();
                let out = run(p, cfg, |c| {
                    let me = c.rank();
                    if which == CollOp::Gather {
                        let mut g = if me == root { vec![0; p * b] } else { vec![] };
                        c.gather(&data(me, b, 7), &mut g, root).map(|_| g)
                    } else {
                        let mut s = vec![0; b];
                        let src = if me == root { all.clone() } else { vec![] };
                        c.scatter(&src, &mut s, root).map(|_| s)
                    }
                });
                for (r, o) in out.into_iter().enumerate() {
                    let o = o.unwrap();
                    if which == CollOp::Gather {
                        assert!(
                            r != root || o == all,
                            "{} root {root}",
                            ctx(cfg, which, p, n)
                        );
                    } else {
                        assert!(
                            o == data(r, b, 7),
                            "{} root {root} rank {r}",
                            ctx(cfg, which, p, n)
                        );
                    }
                }
            }
        });
    }
}

/// Uneven counts (some zero) and shuffled, gapped displacements.
fn layout(p: usize, n: usize) -> (Vec<usize>, Vec<usize>, usize) {
    let counts: Vec<usize> = (0..p)
        .map(|i| if i % 4 == 3 { 0 } else { n + i * (n % 5) })
        .collect();
    let mut displs = vec![0; p];
    let mut at = 0;
    for i in (0..p).rev() {
        displs[i] = at;
        at += counts[i] + 3;
    }
    (counts, displs, at)
}

#[test]
fn gatherv_scatterv_allgatherv() {
    for which in [CollOp::Gatherv, CollOp::Scatterv, CollOp::Allgatherv] {
        each(which, |cfg, p, n| {
            let (counts, displs, len) = layout(p, block_of(n, p));
            let root = p / 2;
            let out = run(p, cfg, |c| {
                let me = c.rank();
                let mine = data(me, counts[me], 8);
                match which {
                    CollOp::Gatherv => {
                        let mut g = if me == root { vec![0xaa; len] } else { vec![] };
                        c.gatherv(&mine, &mut g, &counts, &displs, root).map(|_| g)
                    }
                    CollOp::Allgatherv => {
                        let mut g = vec![0xaa; len];
                        c.allgatherv(&mine, &mut g, &counts, &displs).map(|_| g)
                    }
                    _ => {
                        let mut src = vec![0; if me == root { len } else { 0 }];
                        if me == root {
                            for r in 0..p {
                                src[displs[r]..displs[r] + counts[r]]
                                    .copy_from_slice(&data(r, counts[r], 8));
                            }
                        }
                        let mut s = vec![0; counts[me]];
                        c.scatterv(&src, &counts, &displs, &mut s, root).map(|_| s)
                    }
                }
            });
            for (r, o) in out.into_iter().enumerate() {
                let o = o.unwrap();
                if which == CollOp::Scatterv {
                    assert!(
                        o == data(r, counts[r], 8),
                        "{} rank {r}",
                        ctx(cfg, which, p, n)
                    );
                } else if which == CollOp::Allgatherv || r == root {
                    for q in 0..p {
                        assert!(
                            o[displs[q]..displs[q] + counts[q]] == data(q, counts[q], 8),
                            "{} rank {r} block {q}",
                            ctx(cfg, which, p, n)
                        );
                        assert_eq!(o[displs[q] + counts[q]], 0xaa, "gap overwritten");
                    }
                }
            }
        });
    }
}

#[test]
fn allgather() {
    each(CollOp::Allgather, |cfg, p, n| {
        let b = block_of(n, p);
        let want: Vec<u8> = (0..p).flat_map(|r| data(r, b, 9)).collect();
        let out = run(p, cfg, |c| {
            let mut g = vec![0; p * b];
            c.allgather(&data(c.rank(), b, 9), &mut g).map(|_| g)
        });
        for (r, o) in out.into_iter().enumerate() {
            assert!(
                o.unwrap() == want,
                "{} rank {r}",
                ctx(cfg, CollOp::Allgather, p, n)
            );
        }
    });
}

#[test]
fn alltoall() {
    each(CollOp::Alltoall, |cfg, p, n| {
        let b = block_of(n, p) / p.max(1);
        // Block j of rank i: data(i * 16 + j).
        let out = run(p, cfg, |c| {
            let me = c.rank();
            let send: Vec<u8> = (0..p).flat_map(|j| data(me * 16 + j, b, 10)).collect();
            let mut recv = vec![0; p * b];
            c.alltoall(&send, &mut recv).map(|_| recv)
        });
        for (r, o) in out.into_iter().enumerate() {
            let want: Vec<u8> = (0..p).flat_map(|i| data(i * 16 + r, b, 10)).collect();
            assert!(
                o.unwrap() == want,
                "{} rank {r}",
                ctx(cfg, CollOp::Alltoall, p, b)
            );
        }
    });
}

#[test]
fn alltoallv() {
    each(CollOp::Alltoallv, |cfg, p, n| {
        let n = block_of(n, p) / p.max(1);
        // Rank i sends (i + 2 j) % 3 * n + j bytes to rank j.
        let cnt = |i: usize, j: usize| (i + 2 * j) % 3 * n + j;
        let out = run(p, cfg, |c| {
            let me = c.rank();
            let scounts: Vec<usize> = (0..p).map(|j| cnt(me, j)).collect();
            let rcounts: Vec<usize> = (0..p).map(|i| cnt(i, me)).collect();
            let (mut sd, mut rd) = (vec![0; p], vec![0; p]);
            let (mut sa, mut ra) = (0, 0);
            for k in (0..p).rev() {
                sd[k] = sa;
                sa += scounts[k] + 1;
                rd[k] = ra;
                ra += rcounts[k] + 2;
            }
            let mut send = vec![0; sa];
            for j in 0..p {
                send[sd[j]..sd[j] + scounts[j]].copy_from_slice(&data(me * 16 + j, scounts[j], 11));
            }
            let mut recv = vec![0; ra];
            c.alltoallv(&send, &scounts, &sd, &mut recv, &rcounts, &rd)?;
            Ok::<_, ibdyn_collectives::CollError>(
                (0..p)
                    .map(|i| recv[rd[i]..rd[i] + rcounts[i]].to_vec())
                    .collect::<Vec<_>>(),
            )
        });
        for (r, o) in out.into_iter().enumerate() {
            for (i, blk) in o.unwrap().into_iter().enumerate() {
                assert!(
                    blk == data(i * 16 + r, cnt(i, r), 11),
                    "{} rank {r} from {i}",
                    ctx(cfg, CollOp::Alltoallv, p, n)
                );
            }
        }
    });
}
