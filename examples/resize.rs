//! An elastic, loop-based application (seed 000, Listing 1): a block-distributed array is
//! updated every iteration and summed; between iterations rank 0 checks for a pending
//! resource change of the job's main set, and when there is one every process (old, new, and
//! retiring) integrates it, the array is gathered and redistributed over the new main set,
//! and the loop goes on. The result does not depend on the changes.
//!
//! ```sh
//! ibdyn run -n 2 target/release/examples/resize --iters 400                # then, elsewhere:
//! ibdyn resize --grow 2 ; ibdyn resize --shrink 3
//! ibdyn run -n 2 target/release/examples/resize --change 50:+2 --change 120:-3   # self-driven
//! ```

use ibdyn::traits::*;
use ibdyn::{
    IntraCommunicator, PsetOp, PsetOpOptions, Session, SessionOptions, SystemOperation, PSET_WORLD,
};
use std::time::{Duration, Instant};

type R<T = ()> = Result<T, String>;

fn ok<T>(what: &str, r: ibdyn::Result<T>) -> R<T> {
    r.map_err(|e| format!("{what}: {e}"))
}

struct Args {
    len: usize,
    iters: u64,
    /// (iteration, +n grow / -n shrink) asked for by rank 0 itself.
    changes: Vec<(u64, i64)>,
    /// Sleep per iteration, so that a change from another terminal finds the job running.
    pause: Duration,
}

fn args() -> R<Args> {
    let mut a = Args {
        len: 100_000,
        iters: 200,
        changes: Vec::new(),
        pause: Duration::from_millis(10),
    };
    let mut it = std::env::args().skip(1);
    while let Some(k) = it.next() {
        let mut v = || it.next().ok_or(format!("{k} needs a value"));
        let num = |s: String| {
            s.parse::<u64>()
                .map_err(|_| format!("{k}: {s} is not a number"))
        };
        match k.as_str() {
            "--len" => a.len = num(v()?)? as usize,
            "--iters" => a.iters = num(v()?)?,
            "--pause-ms" => a.pause = Duration::from_millis(num(v()?)?),
            "--change" => {
                let s = v()?;
                let (i, n) = s
                    .split_once(':')
                    .ok_or(format!("--change {s}: expected ITER:+N or ITER:-N"))?;
                let n: i64 = n.parse().map_err(|_| format!("--change {s}: bad count"))?;
                a.changes.push((num(i.to_string())?, n));
            }
            other => return Err(format!("unknown option {other}")),
        }
    }
    Ok(a)
}

/// The block of `len` elements owned by `rank` of `size`.
fn block(len: usize, rank: usize, size: usize) -> std::ops::Range<usize> {
    let (q, r) = (len / size, len % size);
    let lo = rank * q + rank.min(r);
    lo..lo + q + usize::from(rank < r)
}

/// The application's state, distributed: iteration count and this process's block.
struct State {
    iter: u64,
    data: Vec<i64>,
}

/// Gathers every block at rank 0 of `comm`.
fn gather(comm: &IntraCommunicator, mine: &[i64]) -> R<Vec<i64>> {
    if comm.rank() != 0 {
        ok("send block", comm.process_at_rank(0).send(mine))?;
        return Ok(Vec::new());
    }
    let mut all = mine.to_vec();
    for r in 1..comm.size() {
        let (v, _) = ok("recv block", comm.process_at_rank(r).receive_vec::<i64>())?;
        all.extend(v);
    }
    Ok(all)
}

/// Rank 0 of `comm` sends each rank its block of `all` and the iteration count.
fn scatter(comm: &IntraCommunicator, all: &[i64], iter: u64, len: usize) -> R<State> {
    let (rank, size) = (comm.rank() as usize, comm.size() as usize);
    let mut it = [iter];
    ok(
        "bcast iter",
        comm.process_at_rank(0).broadcast_into(&mut it[..]),
    )?;
    if rank == 0 {
        for r in 1..size {
            let b = block(len, r, size);
            ok("send block", comm.process_at_rank(r as i32).send(&all[b]))?;
        }
        return Ok(State {
            iter: it[0],
            data: all[block(len, 0, size)].to_vec(),
        });
    }
    let (data, _) = ok("recv block", comm.process_at_rank(0).receive_vec::<i64>())?;
    Ok(State { iter: it[0], data })
}

/// Joins the new main set: a communicator over it, tagged by its name (unique per change).
fn join(s: &Session, main: &str) -> R<IntraCommunicator> {
    let g = ok("group of main", s.group_from_pset(main))?;
    ok("communicator of main", g.create_comm(main))
}

fn run() -> R {
    let a = args()?;
    let s = ok(
        "Session::init",
        Session::init(SessionOptions {
            group_timeout: Duration::from_secs(60),
        }),
    )?;
    // Started by a grow? Then the others are mid-run: integrate and receive a block.
    let (mut main, mut comm, mut st) = match ok("recv", s.recv_res_change(PSET_WORLD))?
        .filter(|c| c.included && c.kind.starts())
    {
        Some(c) => {
            let (main, _) = ok("integrate", s.integrate_res_change(&c.delta, None))?;
            let comm = join(&s, &main)?;
            let st = scatter(&comm, &[], 0, a.len)?;
            (main, comm, st)
        }
        None => {
            let comm = join(&s, PSET_WORLD)?;
            let b = block(a.len, comm.rank() as usize, comm.size() as usize);
            let data = b.map(|i| i as i64).collect();
            (PSET_WORLD.to_string(), comm, State { iter: 0, data })
        }
    };
    if comm.rank() == 0 && st.iter == 0 {
        println!(
            "resize: job {} ready with {} processes",
            ok("world", s.group_from_pset(PSET_WORLD))?.members()[0].job,
            comm.size()
        );
    }
    let mut total = 0i64;
    let t0 = Instant::now();
    while st.iter < a.iters {
        // One iteration: every element grows by its index; the global sum is reduced.
        let b = block(a.len, comm.rank() as usize, comm.size() as usize);
        for (v, i) in st.data.iter_mut().zip(b) {
            *v += i as i64;
        }
        let local: i64 = st.data.iter().sum();
        let mut sum = [0i64];
        ok(
            "allreduce",
            comm.all_reduce_into(&[local], &mut sum, SystemOperation::sum()),
        )?;
        total = sum[0];
        st.iter += 1;
        std::thread::sleep(a.pause);
        // Rank 0 asks for a change (self-driven) and checks for a pending one.
        let mut flag = [0u8];
        if comm.rank() == 0 {
            if let Some(&(_, n)) = a.changes.iter().find(|(i, _)| *i == st.iter) {
                let (op, k) = if n > 0 {
                    (PsetOp::Grow, n as u32)
                } else {
                    (PsetOp::Shrink, (-n) as u32)
                };
                ok(
                    "pset_op",
                    s.pset_op(op, &[&main], &PsetOpOptions::processes(k)),
                )?;
            }
            let c = ok("query", s.query_pset_op(ibdyn::PSET_SELF, &main))?;
            flag[0] = u8::from(c.is_some_and(|c| c.state == ibdyn::ChangeState::Pending));
        }
        ok(
            "bcast flag",
            comm.process_at_rank(0).broadcast_into(&mut flag[..]),
        )?;
        if flag[0] == 0 {
            continue;
        }
        // Adapt: everyone learns the new main set; the array moves to it.
        let change = if comm.rank() == 0 {
            ok("query", s.query_pset_op(ibdyn::PSET_SELF, &main))?
        } else {
            None
        };
        let delta = match &change {
            Some(c) => c.delta.clone(),
            None => {
                ok("query", s.query_pset_op(ibdyn::PSET_SELF, &main))?
                    .ok_or("the change vanished")?
                    .delta
            }
        };
        let provided = change.as_ref().map(|c| c.new_main.as_str());
        let (new_main, leave) = ok("integrate", s.integrate_res_change(&delta, provided))?;
        let all = gather(&comm, &st.data)?;
        comm.free();
        if leave {
            println!("resize: a retired process leaves at iteration {}", st.iter);
            return Ok(());
        }
        let old = main.clone();
        main = new_main;
        comm = join(&s, &main)?;
        st = scatter(&comm, &all, st.iter, a.len)?;
        if comm.rank() == 0 {
            ok("finalize_pset_op", s.finalize_pset_op(&old))?;
            println!(
                "resize: iteration {}: now {} processes ({main})",
                st.iter,
                comm.size()
            );
        }
    }
    if comm.rank() == 0 {
        let n = a.len as i64;
        let expect = (a.iters as i64 + 1) * n * (n - 1) / 2;
        println!(
            "resize: sum after {} iterations = {total} (expected {expect}) with {} processes in {:.2} s",
            a.iters,
            comm.size(),
            t0.elapsed().as_secs_f64()
        );
        if total != expect {
            return Err("wrong sum".into());
        }
    }
    Ok(())
}

fn main() {
    if let Err(e) = run() {
        eprintln!("resize: {e}");
        std::process::exit(1);
    }
}
