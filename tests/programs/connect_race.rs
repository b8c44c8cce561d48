//! Test program for simultaneous first contact (issue 13). Every pair it makes meets for the first
//! time from both sides at once, with messages in flight both ways:
//!
//! - `connect_race alltoall ROUNDS`: each rank sends to every other rank and receives from every
//!   other rank at once, ROUNDS times, at sizes on both sides of the eager limit.
//! - `connect_race spawn COUNT CHILDREN [HOST]`: rank 0 spawns CHILDREN children COUNT times
//!   (on daemon HOST when given); parent and children send to each other before receiving.
//!
//! Prints `OK ...` at rank 0 when everything arrived intact; `FAIL ...` and exit 1 otherwise.

use ibdyn::{Communicator, SpawnOptions};
use std::process::Command;

type Res<T> = Result<T, String>;

/// Children tell the parent which node they run on with this tag.
const NODE_TAG: i32 = 1000;

fn e(err: ibdyn::CommError) -> String {
    err.to_string()
}

/// The payload `from` sends `to` in round `round`: recognisable bytes of a size that depends
/// on the round (eager or rendezvous).
fn payload(from: i32, to: i32, round: u32) -> Vec<u8> {
    let len = match round % 4 {
        0 => 8,
        1 => 3000,
        2 => 40_000,
        _ => 300_000,
    };
    (0..len)
        .map(|i| (i as u32 ^ (from as u32 * 31) ^ (to as u32 * 7) ^ round) as u8)
        .collect()
}

/// Send to and receive from every remote rank of `comm` at once, then check what came.
fn exchange<C: Communicator>(comm: &C, round: u32, remote: i32) -> Res<()> {
    let me = comm.rank();
    let sends: Vec<Vec<u8>> = (0..remote).map(|r| payload(me, r, round)).collect();
    let mut bufs: Vec<Vec<u8>> = (0..remote)
        .map(|r| vec![0u8; payload(r, me, round).len()])
        .collect();
    let mut reqs = Vec::new();
    for (r, s) in sends.iter().enumerate() {
        if !comm.is_inter() && r as i32 == me {
            continue;
        }
        reqs.push(comm.isend(s, r as i32, round as i32).map_err(e)?);
    }
    for (r, b) in bufs.iter_mut().enumerate() {
        if !comm.is_inter() && r as i32 == me {
            continue;
        }
        reqs.push(comm.irecv(b, r as i32, round as i32).map_err(e)?);
    }
    ibdyn::wait_all(reqs).map_err(e)?;
    for (r, b) in bufs.iter().enumerate() {
        if (comm.is_inter() || r as i32 != me) && *b != payload(r as i32, me, round) {
            return Err(format!("round {round}: wrong bytes from rank {r}"));
        }
    }
    Ok(())
}

fn alltoall(u: &ibdyn::Universe, rounds: u32) -> Res<String> {
    let w = u.world();
    for round in 0..rounds {
        exchange(&w, round, w.size())?;
    }
    Ok(format!(
        "alltoall of {} ranks, {rounds} rounds, {} fabric connection(s) at rank 0",
        w.size(),
        u.connection_count()
    ))
}

fn spawn(u: &ibdyn::Universe, count: u32, children: u32, host: Option<&str>) -> Res<String> {
    let w = u.world();
    let me = std::env::current_exe().map_err(|x| x.to_string())?;
    let mut opts = SpawnOptions::default();
    if let Some(h) = host {
        opts.info.push(("host".into(), h.into()));
    }
    use ibdyn::traits::*;
    let mut nodes = std::collections::BTreeSet::new();
    for i in 0..count {
        let mut cmd = Command::new(&me);
        cmd.arg("child").arg(i.to_string());
        let inter = w
            .process_at_rank(0)
            .spawn_with(&cmd, children, &opts)
            .map_err(|x| format!("spawn {i}: {x}"))?;
        exchange(&inter, i, inter.remote_size()).map_err(|x| format!("spawn {i}: {x}"))?;
        for r in 0..inter.remote_size() {
            let mut node = [0u8; 4];
            inter
                .recv(&mut node, r, NODE_TAG)
                .map_err(|x| format!("spawn {i}: {x}"))?;
            nodes.insert(u32::from_le_bytes(node));
        }
        inter.disconnect().map_err(|x| format!("spawn {i}: {x}"))?;
    }
    Ok(format!(
        "{count} spawns of {children} child(ren), children on nodes {:?}",
        nodes
    ))
}

/// A spawned child: the same exchange with the parents, at once, then leave.
fn child(u: &ibdyn::Universe, round: u32) -> Res<()> {
    let parent = u.parent().ok_or("the child was not spawned")?;
    exchange(&parent, round, parent.remote_size())?;
    let node = u.with_pmi(|p| p.node_id());
    parent.send(&node.to_le_bytes(), 0, NODE_TAG).map_err(e)?;
    parent.disconnect().map_err(e)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let u = match ibdyn::initialize() {
        Ok(u) => u,
        Err(err) => {
            println!("FAIL initialize: {err}");
            std::process::exit(1);
        }
    };
    let arg = |i: usize| args.get(i).and_then(|s| s.parse::<u32>().ok());
    let result = match args.first().map(String::as_str) {
        Some("alltoall") => alltoall(&u, arg(1).unwrap_or(4)).map(Some),
        Some("spawn") => spawn(
            &u,
            arg(1).unwrap_or(10),
            arg(2).unwrap_or(1),
            args.get(3).map(String::as_str),
        )
        .map(Some),
        Some("child") => child(&u, arg(1).unwrap_or(0)).map(|()| None),
        other => Err(format!("unknown mode {other:?}")),
    };
    let rank = u.world().rank();
    match result {
        Ok(Some(what)) if rank == 0 => println!("OK {what}"),
        Ok(_) => {}
        Err(m) => {
            println!("FAIL rank {rank}: {m}");
            std::process::exit(1);
        }
    }
    if let Err(err) = u.finalize() {
        println!("FAIL finalize: {err}");
        std::process::exit(1);
    }
}
