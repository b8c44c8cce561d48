//! Intercommunicator collectives under `ibdyn run -n N`: `intercoll_check A` splits the world
//! into ranks 0..A and A..N, joins them with `intercomm_create`, and checks every
//! intercommunicator collective against a reference computed locally (results cross between
//! the groups). Then it checks that the two-level (node-aware) forms of the world's
//! collectives give the flat forms' results. Rank 0 prints `intercoll_check: all passed`.

use ibdyn::traits::*;
use ibdyn::{InterCommunicator, InterRoot, IntraCommunicator, SystemOperation, UserOperation};
use ibdyn_collectives::{collectives_with, AlgoConfig, BuiltinOp, CollOp, ElemType, Op};

#[path = "support/mod.rs"]
mod support;
use support::{check, e, R};

fn v(r: i32, i: usize) -> i64 {
    ((r as i64) * 131 + (i as i64) * 7) % 1000 - 300
}

fn vals(r: i32, n: usize) -> Vec<i64> {
    (0..n).map(|i| v(r, i)).collect()
}

/// Near-equal parts of `total` over `parts`.
fn split(total: usize, parts: usize) -> Vec<usize> {
    (0..parts)
        .map(|i| total / parts + usize::from(i < total % parts))
        .collect()
}

struct Side {
    /// World ranks of the local and the remote group.
    mine: Vec<i32>,
    theirs: Vec<i32>,
    lr: usize,
    /// 0 for the first group, 1 for the second.
    g: usize,
}

fn inter_ops(ic: &InterCommunicator, s: &Side, n: usize) -> R {
    let (p, q) = (s.mine.len(), s.theirs.len());
    let me = s.mine[s.lr];
    let other_sum = |i: usize| s.theirs.iter().map(|&r| v(r, i)).sum::<i64>();

    ic.barrier().map_err(e("barrier"))?;

    // bcast, in both directions: the first group's last rank, then the second group's rank 0.
    for (root_g, root_lr) in [(0usize, None), (1usize, Some(0usize))] {
        let root_lr = root_lr.unwrap_or(if s.g == 0 { p - 1 } else { q - 1 });
        let root_world = if s.g == root_g {
            s.mine[root_lr]
        } else {
            s.theirs[root_lr]
        };
        let mut b = if me == root_world {
            vals(me, n)
        } else {
            vec![0; n]
        };
        let role = if s.g != root_g {
            InterRoot::Remote(root_lr as i32)
        } else if s.lr == root_lr {
            InterRoot::Root
        } else {
            InterRoot::ProcNull
        };
        ic.inter_broadcast_into(role, &mut b[..])
            .map_err(e("bcast"))?;
        if s.g != root_g {
            check(b == vals(root_world, n), "bcast", n)?;
        }
    }
    // Root's remote side also through `Root` on `process_at_rank` (MPI's rank argument).
    let mut b = vec![0i64; n];
    if s.g == 1 {
        ic.process_at_rank(0)
            .broadcast_into(&mut b[..])
            .map_err(e("bcast via Root"))?;
        check(b == vals(s.theirs[0], n), "bcast via Root", n)?;
    } else {
        let mut b = vals(me, n);
        let role = if s.lr == 0 {
            InterRoot::Root
        } else {
            InterRoot::ProcNull
        };
        ic.inter_broadcast_into(role, &mut b[..])
            .map_err(e("bcast"))?;
    }

    // reduce to the second group's last rank: sum, and a non-commutative one.
    let first =
        UserOperation::non_commutative(|inv: &[i64], inout: &mut [i64]| inout.copy_from_slice(inv));
    for (op, name) in [
        (SystemOperation::sum(), "reduce sum"),
        (first.clone(), "reduce non-commutative"),
    ] {
        let mut out = vec![0i64; n];
        let role = if s.g == 0 {
            InterRoot::Remote(q as i32 - 1)
        } else if s.lr == p - 1 {
            InterRoot::Root
        } else {
            InterRoot::ProcNull
        };
        ic.inter_reduce_into(role, &vals(me, n), &mut out, op)
            .map_err(e(name))?;
        if role == InterRoot::Root {
            let want: Vec<i64> = if name == "reduce sum" {
                (0..n).map(other_sum).collect()
            } else {
                vals(s.theirs[0], n)
            };
            check(out == want, name, n)?;
        }
    }

    let mut out = vec![0i64; n];
    ic.all_reduce_into(&vals(me, n), &mut out, SystemOperation::sum())
        .map_err(e("allreduce"))?;
    check(
        out == (0..n).map(other_sum).collect::<Vec<_>>(),
        "allreduce",
        n,
    )?;
    ic.all_reduce_into(&vals(me, n), &mut out, first)
        .map_err(e("allreduce non-commutative"))?;
    check(out == vals(s.theirs[0], n), "allreduce non-commutative", n)?;

    // The operations with a block per remote rank: at most 512 KiB per block, so the 4 MiB
    // round stays quick on two cores (the whole-buffer operations above take it in full).
    let n = n.min(1 << 16);

    // allgather with different block sizes per group: group g sends n + g elements.
    let (mb, rb) = (n + s.g, n + 1 - s.g);
    let mut all = vec![0i64; q * rb];
    ic.all_gather_into(&vals(me, mb)[..], &mut all[..])
        .map_err(e("allgather"))?;
    check(
        (0..q).all(|i| all[i * rb..(i + 1) * rb] == vals(s.theirs[i], rb)[..]),
        "allgather",
        n,
    )?;

    // alltoall: block j to remote rank j holds f(me, j); block i received is f(remote i, my rank).
    let f = |from: i32, to: usize, k: usize| from as i64 * 1_000_000 + to as i64 * 1000 + k as i64;
    let send: Vec<i64> = (0..q)
        .flat_map(|j| (0..n).map(move |k| f(me, j, k)))
        .collect();
    let mut recv = vec![0i64; q * n];
    ic.all_to_all_into(&send[..], &mut recv[..])
        .map_err(e("alltoall"))?;
    check(
        (0..q).all(|i| (0..n).all(|k| recv[i * n + k] == f(s.theirs[i], s.lr, k))),
        "alltoall",
        n,
    )?;

    // reduce_scatter_block: both groups reduce the same total, T = n p q elements.
    let total = n * p * q;
    let rc = total / p;
    let mut part = vec![0i64; rc];
    ic.reduce_scatter_block_into(&vals(me, total), &mut part, SystemOperation::sum())
        .map_err(e("reduce_scatter_block"))?;
    check(
        part.iter()
            .enumerate()
            .all(|(i, &x)| x == other_sum(s.lr * rc + i)),
        "reduce_scatter_block",
        n,
    )?;

    let counts = split(total + 3, p);
    let at: usize = counts[..s.lr].iter().sum();
    let mut part = vec![0i64; counts[s.lr]];
    ic.inter_reduce_scatter_into(
        &vals(me, total + 3),
        &mut part,
        &counts,
        SystemOperation::sum(),
    )
    .map_err(e("reduce_scatter"))?;
    check(
        part.iter()
            .enumerate()
            .all(|(i, &x)| x == other_sum(at + i)),
        "reduce_scatter",
        n,
    )?;
    // The CommunicatorCollectives form means the same on an intercommunicator.
    let mut same = vec![0i64; counts[s.lr]];
    ic.reduce_scatter_into(
        &vals(me, total + 3),
        &mut same,
        &counts,
        SystemOperation::sum(),
    )
    .map_err(e("reduce_scatter_into"))?;
    check(
        same == part,
        "reduce_scatter_into on an intercommunicator",
        n,
    )?;

    // gather to the first group's rank 0; scatter from the second group's rank 0.
    let role = if s.g == 1 {
        InterRoot::Remote(0)
    } else if s.lr == 0 {
        InterRoot::Root
    } else {
        InterRoot::ProcNull
    };
    let mut g = vec![0i64; if role == InterRoot::Root { q * n } else { 0 }];
    ic.inter_gather_into(role, &vals(me, n)[..], &mut g[..])
        .map_err(e("gather"))?;
    if role == InterRoot::Root {
        check(
            (0..q).all(|i| g[i * n..(i + 1) * n] == vals(s.theirs[i], n)[..]),
            "gather",
            n,
        )?;
    }
    let role = if s.g == 0 {
        InterRoot::Remote(0)
    } else if s.lr == 0 {
        InterRoot::Root
    } else {
        InterRoot::ProcNull
    };
    let src: Vec<i64> = if role == InterRoot::Root {
        (0..q).flat_map(|j| vals(1000 + j as i32, n)).collect()
    } else {
        Vec::new()
    };
    let mut mine = vec![0i64; n];
    ic.inter_scatter_into(role, &src[..], &mut mine[..])
        .map_err(e("scatter"))?;
    if s.g == 0 {
        check(mine == vals(1000 + s.lr as i32, n), "scatter", n)?;
    }
    non_blocking(ic, s, n)?;
    non_blocking_data(ic, s, n)
}

/// ireduce, igather, iscatter (root: the second group's rank 0), iallgather, ialltoall,
/// ireduce_scatter_block and ireduce_scatter, all in flight together, completed in reverse.
fn non_blocking_data(ic: &InterCommunicator, s: &Side, n: usize) -> R {
    let (p, q) = (s.mine.len(), s.theirs.len());
    let me = s.mine[s.lr];
    let role = match (s.g, s.lr) {
        (1, 0) => InterRoot::Root,
        (1, _) => InterRoot::ProcNull,
        _ => InterRoot::Remote(0),
    };
    let root = role == InterRoot::Root;
    let sum_of = |ranks: &[i32], i: usize| ranks.iter().map(|&r| v(r, i)).sum::<i64>();
    let mine = vals(me, n);
    // Rooted: the root gets the first group's sum and blocks; its scatter gives remote rank
    // j the values of `me + j`.
    let mut red = vec![0i64; if root { n } else { 0 }];
    let mut gat = vec![0i64; if root { n * q } else { 0 }];
    let sca: Vec<i64> = if root {
        (0..q).flat_map(|j| vals(me + j as i32, n)).collect()
    } else {
        Vec::new()
    };
    let mut got = vec![0i64; if s.g == 0 { n } else { 0 }];
    // Unrooted: blocks of n values; both groups reduce vectors of p * q * n values.
    let mut all = vec![0i64; q * n];
    let a2a: Vec<i64> = (0..q).flat_map(|j| vals(me * 10 + j as i32, n)).collect();
    let mut a2a_out = vec![0i64; q * n];
    let total = p * q * n;
    let vec_all: Vec<i64> = (0..total).map(|i| v(me, i)).collect();
    let mut rsb = vec![0i64; total / p];
    let counts = split(total, p);
    let mut rs = vec![0i64; counts[s.lr]];
    let reqs = vec![
        ic.immediate_inter_reduce_into(role, &mine, &mut red, SystemOperation::sum())
            .map_err(e("ireduce"))?,
        ic.immediate_inter_gather_into(role, &mine[..], &mut gat[..])
            .map_err(e("igather"))?,
        ic.immediate_inter_scatter_into(role, &sca[..], &mut got[..])
            .map_err(e("iscatter"))?,
        ic.immediate_inter_all_gather_into(&mine[..], &mut all[..])
            .map_err(e("iallgather"))?,
        ic.immediate_inter_all_to_all_into(&a2a[..], &mut a2a_out[..])
            .map_err(e("ialltoall"))?,
        ic.immediate_inter_reduce_scatter_block_into(&vec_all, &mut rsb, SystemOperation::sum())
            .map_err(e("ireduce_scatter_block"))?,
        ic.immediate_inter_reduce_scatter_into(&vec_all, &mut rs, &counts, SystemOperation::sum())
            .map_err(e("ireduce_scatter"))?,
    ];
    for r in reqs.into_iter().rev() {
        r.wait()
            .map_err(e("a non-blocking intercommunicator collective"))?;
    }
    if root {
        check(
            red == (0..n).map(|i| sum_of(&s.theirs, i)).collect::<Vec<_>>(),
            "ireduce",
            n,
        )?;
        let want: Vec<i64> = s.theirs.iter().flat_map(|&r| vals(r, n)).collect();
        check(gat == want, "igather", n)?;
    }
    if s.g == 0 {
        check(got == vals(s.theirs[0] + s.lr as i32, n), "iscatter", n)?;
    }
    let want: Vec<i64> = s.theirs.iter().flat_map(|&r| vals(r, n)).collect();
    check(all == want, "iallgather", n)?;
    let want: Vec<i64> = s
        .theirs
        .iter()
        .flat_map(|&r| vals(r * 10 + s.lr as i32, n))
        .collect();
    check(a2a_out == want, "ialltoall", n)?;
    let at = s.lr * total / p;
    let reduced: Vec<i64> = (at..at + total / p).map(|i| sum_of(&s.theirs, i)).collect();
    check(rsb == reduced, "ireduce_scatter_block", n)?;
    let at: usize = counts[..s.lr].iter().sum();
    let reduced: Vec<i64> = (at..at + counts[s.lr])
        .map(|i| sum_of(&s.theirs, i))
        .collect();
    check(rs == reduced, "ireduce_scatter", n)
}

/// ibarrier, iallreduce (commutative and not), ibcast from the second group's rank 0, all
/// in flight together with a blocking barrier among them, completed out of order.
fn non_blocking(ic: &InterCommunicator, s: &Side, n: usize) -> R {
    let me = s.mine[s.lr];
    let other_sum = |i: usize| s.theirs.iter().map(|&r| v(r, i)).sum::<i64>();
    let first =
        UserOperation::non_commutative(|inv: &[i64], inout: &mut [i64]| inout.copy_from_slice(inv));
    let mine = vals(me, n);
    let (mut sum, mut firsts) = (vec![0i64; n], vec![0i64; n]);
    let role = match (s.g, s.lr) {
        (1, 0) => InterRoot::Root,
        (1, _) => InterRoot::ProcNull,
        _ => InterRoot::Remote(0),
    };
    let mut b = if role == InterRoot::Root {
        vals(me + 500, n)
    } else {
        vec![0i64; n]
    };
    let bar = ic.immediate_barrier().map_err(e("ibarrier"))?;
    let mut a = ic
        .immediate_all_reduce_into(&mine, &mut sum, SystemOperation::sum())
        .map_err(e("iallreduce"))?;
    let bc = ic
        .immediate_inter_broadcast_into(role, &mut b[..])
        .map_err(e("ibcast"))?;
    let c = ic
        .immediate_all_reduce_into(&mine, &mut firsts, first)
        .map_err(e("iallreduce non-commutative"))?;
    ic.barrier().map_err(e("barrier among non-blocking ones"))?;
    c.wait().map_err(e("iallreduce non-commutative"))?;
    let start = std::time::Instant::now();
    while !a.test().map_err(e("iallreduce test"))? {
        if start.elapsed() > std::time::Duration::from_secs(60) {
            return Err("iallreduce did not complete by polling".into());
        }
        std::thread::yield_now();
    }
    drop(a);
    bc.wait().map_err(e("ibcast"))?;
    bar.wait().map_err(e("ibarrier"))?;
    check(
        sum == (0..n).map(other_sum).collect::<Vec<_>>(),
        "iallreduce",
        n,
    )?;
    check(
        firsts == vals(s.theirs[0], n),
        "iallreduce non-commutative",
        n,
    )?;
    if s.g == 0 {
        check(b == vals(s.theirs[0] + 500, n), "ibcast", n)?;
    }
    Ok(())
}

/// The world's collectives, two-level (automatic) against flat, on the same data.
fn two_level_vs_flat(w: &IntraCommunicator, n: usize) -> ibdyn_collectives::Result<Option<String>> {
    let rank = w.rank();
    let size = w.size() as usize;
    let mut cfg = AlgoConfig::from_env()?;
    for op in [
        CollOp::Barrier,
        CollOp::Bcast,
        CollOp::Reduce,
        CollOp::Allreduce,
        CollOp::Allgather,
    ] {
        cfg.set_flat(op, true);
    }
    let d1 = w.dup().map_err(ibdyn_collectives::CollError::comm)?;
    let d2 = w.dup().map_err(ibdyn_collectives::CollError::comm)?;
    let flat = collectives_with(d1.as_raw(), cfg.clone())?;
    let mut cfg2 = cfg;
    for op in [
        CollOp::Barrier,
        CollOp::Bcast,
        CollOp::Reduce,
        CollOp::Allreduce,
        CollOp::Allgather,
    ] {
        cfg2.set_flat(op, false);
    }
    let two = collectives_with(d2.as_raw(), cfg2)?;
    let bytes = |x: &[i64]| ibdyn_collectives::as_bytes(x).to_vec();
    let mine = bytes(&vals(rank, n));
    let sum = Op::builtin(BuiltinOp::Sum, ElemType::I64)?;
    let mut outs: Vec<Vec<Vec<u8>>> = Vec::new();
    for c in [&flat, &two] {
        let mut o = Vec::new();
        c.barrier()?;
        let mut b = if rank as usize == size - 1 {
            mine.clone()
        } else {
            vec![0; mine.len()]
        };
        c.bcast(&mut b, size - 1)?;
        o.push(b);
        let mut r = vec![
            0u8;
            if rank == 1 % size as i32 {
                mine.len()
            } else {
                0
            }
        ];
        c.reduce(&mine, &mut r, &sum, 1 % size)?;
        o.push(r);
        let mut a = vec![0u8; mine.len()];
        c.allreduce(&mine, &mut a, &sum)?;
        o.push(a);
        let mut g = vec![0u8; mine.len() * size];
        c.allgather(&mine, &mut g)?;
        o.push(g);
        c.barrier()?;
        outs.push(o);
    }
    let names = ["bcast", "reduce", "allreduce", "allgather"];
    for (i, name) in names.iter().enumerate() {
        if outs[0][i] != outs[1][i] {
            return Ok(Some(format!(
                "two-level {name} differs from flat with {n} elements"
            )));
        }
    }
    let want: Vec<i64> = (0..n)
        .map(|i| (0..size as i32).map(|r| v(r, i)).sum())
        .collect();
    if outs[1][2] != bytes(&want) {
        return Ok(Some(format!("two-level allreduce wrong with {n} elements")));
    }
    if rank == 0 && n == 0 {
        println!(
            "intercoll_check: two-level forms {}",
            if two.is_two_level() {
                "active"
            } else {
                "not applicable"
            }
        );
    }
    Ok(None)
}

fn main() {
    let u = ibdyn::initialize().unwrap_or_else(|err| {
        eprintln!("intercoll_check: init: {err}");
        std::process::exit(2)
    });
    let w = u.world();
    let size = w.size();
    let a: i32 = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(size / 2)
        .clamp(1, size - 1);
    let fail = |msg: String| -> ! {
        eprintln!("intercoll_check: rank {}: {msg}", w.rank());
        std::process::exit(1)
    };
    let g = usize::from(w.rank() >= a);
    let local = w
        .split(Some(g as u32), 0)
        .map_err(e("split"))
        .unwrap_or_else(|m| fail(m))
        .unwrap_or_else(|| fail("split gave none".into()));
    let remote_leader = if g == 0 { a } else { 0 };
    let ic = local
        .intercomm_create(0, &w, remote_leader, 77)
        .map_err(e("intercomm_create"))
        .unwrap_or_else(|m| fail(m));
    let (first, second): (Vec<i32>, Vec<i32>) = ((0..a).collect(), (a..size).collect());
    let s = if g == 0 {
        Side {
            mine: first,
            theirs: second,
            lr: ic.rank() as usize,
            g,
        }
    } else {
        Side {
            mine: second,
            theirs: first,
            lr: ic.rank() as usize,
            g,
        }
    };
    for n in [0usize, 1, 13, 2000, 40_000, 524_288] {
        if let Err(msg) = inter_ops(&ic, &s, n) {
            fail(msg);
        }
    }
    for n in [0usize, 1, 13, 2000, 40_000] {
        match two_level_vs_flat(&w, n) {
            Ok(None) => {}
            Ok(Some(msg)) => fail(msg),
            Err(err) => fail(format!("two-level check: {err}")),
        }
    }
    if w.rank() == 0 {
        println!("intercoll_check: all passed on {a}+{} ranks", size - a);
    }
    drop(u);
}
