//! `ibdyn-bench intercomm-coll --op OP`: OSU-style latency of intercommunicator collectives
//! on intercommunicators A+B (default 1+3, 2+2, 1+7) made with split + intercomm_create,
//! 8 B to 1 MiB: mean over iterations, min/avg/max over all processes. Rooted operations
//! (root: rank 0 of the first group) are preceded by an uncounted barrier, as the paper does.
//! `--method loop`: the peers' method over a spawn's intercommunicator (`intercomm_loop.rs`).

use crate::job::{self, add_rows, sizes};
use crate::report::Report;
use ibdyn::traits::*;
use ibdyn::{InterCommunicator, InterRoot, SystemOperation};
use std::time::Instant;

#[derive(clap::Args)]
pub struct Args {
    /// barrier, bcast, reduce, allreduce, allgather, alltoall, gather, scatter, reduce_scatter
    /// (default: allreduce; with `--method loop`, the six operations and barrier).
    #[arg(long)]
    op: Option<String>,
    /// Group sizes, e.g. "1+3,2+2,1+7" (default; with `--method loop` "1+3,2+2": parents +
    /// spawned children).
    #[arg(long)]
    groups: Option<String>,
    /// barrier: an uncounted barrier before each rooted operation, groups from split +
    /// intercomm_create; loop: the peers' method (spawned children, warm-up of 5, one
    /// barrier, N operations back to back, max over processes of the mean).
    #[arg(long, default_value = "barrier")]
    method: String,
    /// Node daemons.
    #[arg(long, default_value_t = 1)]
    nodes: usize,
    /// Largest message size in bytes (per process block for allgather/alltoall/gather/scatter).
    #[arg(long, default_value_t = 1 << 20)]
    max_size: usize,
    /// Iterations for small messages.
    #[arg(long, default_value_t = 1000)]
    iters: usize,
    /// Inside the job: the size of the first group.
    #[arg(long, hide = true, default_value_t = 0)]
    split: usize,
}

const OPS: &[&str] = &[
    "barrier",
    "bcast",
    "reduce",
    "allreduce",
    "allgather",
    "alltoall",
    "gather",
    "scatter",
    "reduce_scatter",
];

fn parse_groups(s: &str) -> Result<Vec<(usize, usize)>, String> {
    s.split(',')
        .map(|g| {
            let (a, b) = g
                .trim()
                .split_once('+')
                .ok_or_else(|| format!("bad group pair {g:?} (want A+B)"))?;
            let (a, b) = (a.parse::<usize>(), b.parse::<usize>());
            match (a, b) {
                (Ok(a), Ok(b)) if a > 0 && b > 0 => Ok((a, b)),
                _ => Err(format!("bad group pair {g:?} (want A+B, both positive)")),
            }
        })
        .collect()
}

pub fn run(a: Args, json: bool) -> Result<(), String> {
    if let Some(op) = a.op.as_deref().filter(|op| !OPS.contains(op)) {
        return Err(format!("unknown --op {op:?}; one of {}", OPS.join(", ")));
    }
    match a.method.as_str() {
        "barrier" => {}
        "loop" => return run_loop(&a, json),
        m => return Err(format!("unknown --method {m:?}; barrier or loop")),
    }
    let op = a.op.clone().unwrap_or_else(|| "allreduce".into());
    if job::in_job() {
        return rank_main(&a, &op);
    }
    let mut report = Report::new("intercomm-coll", json);
    let groups = a.groups.as_deref().unwrap_or("1+3,2+2,1+7");
    for (ga, gb) in parse_groups(groups)? {
        let args = vec![
            "intercomm-coll".into(),
            "--op".into(),
            op.clone(),
            "--max-size".into(),
            a.max_size.to_string(),
            "--iters".into(),
            a.iters.to_string(),
            "--split".into(),
            ga.to_string(),
        ];
        let rows = job::run_job(ga + gb, a.nodes, &[], &[], &args)?;
        let lead = [
            ("op", op.clone()),
            ("groups", format!("{ga}+{gb}")),
            ("nodes", a.nodes.to_string()),
        ];
        add_rows(&mut report, &lead, &rows)?;
    }
    report.finish();
    Ok(())
}

/// The loop method: the job's ranks, or the outer process running one job per pair.
fn run_loop(a: &Args, json: bool) -> Result<(), String> {
    let ops: Vec<&str> = match a.op.as_deref() {
        Some(op) => vec![op],
        None => crate::intercomm_loop::LOOP_OPS.to_vec(),
    };
    if job::in_job() {
        let children = parse_groups(a.groups.as_deref().unwrap_or("1+3"))?
            .first()
            .map_or(3, |g| g.1);
        let plan = crate::intercomm_loop::LoopPlan {
            ops,
            children,
            max_size: a.max_size,
            iters: a.iters,
        };
        return crate::intercomm_loop::rank_main(&plan);
    }
    let pairs = parse_groups(a.groups.as_deref().unwrap_or("1+3,2+2"))?;
    let results = crate::intercomm_loop::run_pairs(&pairs, a.nodes, |c| {
        let mut v: Vec<String> = ["intercomm-coll", "--method", "loop", "--groups"]
            .map(String::from)
            .to_vec();
        v.push(format!("1+{c}"));
        for (k, x) in [("--max-size", a.max_size), ("--iters", a.iters)] {
            v.push(k.into());
            v.push(x.to_string());
        }
        if let Some(op) = &a.op {
            v.push("--op".into());
            v.push(op.clone());
        }
        v
    })?;
    let mut report = Report::new("intercomm-coll", json);
    for (groups, rows) in results {
        let lead = [
            ("method", "loop".to_string()),
            ("groups", groups),
            ("nodes", a.nodes.to_string()),
        ];
        add_rows(&mut report, &lead, &rows)?;
    }
    report.finish();
    Ok(())
}

pub(crate) struct Bufs {
    pub(crate) send: Vec<u64>,
    pub(crate) recv: Vec<u64>,
}

fn bytes(v: &mut [u64]) -> &mut [u8] {
    // SAFETY: a u64 buffer viewed as bytes; any bytes are fine for u64.
    unsafe { std::slice::from_raw_parts_mut(v.as_mut_ptr().cast::<u8>(), v.len() * 8) }
}

/// One operation; root is rank 0 of the first group.
pub(crate) fn one(
    ic: &InterCommunicator,
    first: bool,
    op: &str,
    size: usize,
    b: &mut Bufs,
) -> ibdyn::Result<()> {
    let (p, q) = (ic.size() as usize, ic.remote_size() as usize);
    let role = match (first, ic.rank()) {
        (true, 0) => InterRoot::Root,
        (true, _) => InterRoot::ProcNull,
        (false, _) => InterRoot::Remote(0),
    };
    let elems = (size / 8).max(1);
    let (s, r) = (&mut b.send, &mut b.recv);
    match op {
        "barrier" => ic.barrier(),
        "bcast" => ic.inter_broadcast_into(role, &mut bytes(s)[..size]),
        "reduce" => {
            ic.inter_reduce_into(role, &s[..elems], &mut r[..elems], SystemOperation::sum())
        }
        "allreduce" => ic.all_reduce_into(&s[..elems], &mut r[..elems], SystemOperation::sum()),
        "allgather" => ic.all_gather_into(&bytes(s)[..size], &mut bytes(r)[..size * q]),
        "alltoall" => ic.all_to_all_into(&bytes(s)[..size * q], &mut bytes(r)[..size * q]),
        "gather" => {
            let n = if role == InterRoot::Root { size * q } else { 0 };
            ic.inter_gather_into(role, &bytes(s)[..size], &mut bytes(r)[..n])
        }
        "scatter" => {
            let n = if role == InterRoot::Root { size * q } else { 0 };
            ic.inter_scatter_into(role, &bytes(s)[..n], &mut bytes(r)[..size])
        }
        "reduce_scatter" => {
            // Both groups reduce p q blocks of `elems`; each process gets its share.
            let total = elems * p * q;
            ic.reduce_scatter_block_into(&s[..total], &mut r[..total / p], SystemOperation::sum())
        }
        _ => Ok(()),
    }
}

fn rank_main(a: &Args, op: &str) -> Result<(), String> {
    let e = |e: ibdyn::CommError| e.to_string();
    let u = ibdyn::initialize().map_err(e)?;
    let w = u.world();
    let n = w.size() as usize;
    let split = a.split.clamp(1, n.saturating_sub(1).max(1));
    let first = (w.rank() as usize) < split;
    let local = w
        .split(Some(u32::from(!first)), 0)
        .map_err(e)?
        .ok_or("split gave no communicator")?;
    let ic = local
        .intercomm_create(0, &w, if first { split as i32 } else { 0 }, 91)
        .map_err(e)?;
    let rooted = matches!(op, "bcast" | "reduce" | "gather" | "scatter");
    let list = if op == "barrier" {
        vec![0]
    } else {
        sizes(8, a.max_size)
    };
    let cap = (a.max_size.max(8) * n.max(n * n / 4)) / 8 + 8;
    let mut b = Bufs {
        send: vec![1u64; cap],
        recv: vec![0u64; cap],
    };
    for size in list {
        let iters = job::iters_for(size.max(1) * n.min(8), a.iters).max(10);
        // Warm-up iterations as the timed ones (OSU does the same): the barrier's own first
        // uses (its node buffer is made on the third) must not land in a timed iteration.
        for _ in 0..iters.min(20) {
            if rooted {
                w.barrier().map_err(e)?;
            }
            one(&ic, first, op, size, &mut b).map_err(e)?;
        }
        let mut total = 0.0;
        for _ in 0..iters {
            if rooted {
                w.barrier().map_err(e)?;
            }
            let t = Instant::now();
            one(&ic, first, op, size, &mut b).map_err(e)?;
            total += t.elapsed().as_secs_f64();
        }
        job::emit_over_ranks(
            &w,
            &[("size", size.to_string())],
            total * 1e6 / iters as f64,
        )
        .map_err(e)?;
    }
    u.finalize().map_err(e)
}
