//! Checks of a job across hosts (network namespaces in the tests).
//! `hosts_check world`: every rank prints `hosts_check: rank R addrs A,B fabric F` (the
//! non-loopback IPv4 addresses of the host it runs on, and the address its fabric endpoints
//! bind to; ` slurm_step S` inside a Slurm step), then the world does an allreduce and a ring exchange; rank 0 prints
//! `hosts_check: world ok`. `hosts_check spawn HOST`: rank 0 spawns one child onto HOST (the
//! `host` info key); the child prints its addresses like a rank; parents and child merge and
//! allreduce; rank 0 prints `hosts_check: spawn ok`. `hosts_check spawn HOST prestart`: the same
//! with `ibdyn_prestart=1` until a child is a copy forked from a template on HOST (the second
//! and later children are copies started there; each child also prints `hosts_check:
//! prestarted 0|1 forked 0|1`); at most 30 s.

use ibdyn::traits::*;
use ibdyn::{SpawnOptions, SystemOperation};
use std::process::Command;

fn e(err: ibdyn::CommError) -> String {
    err.to_string()
}

fn report(who: &str) {
    let addrs: Vec<String> = ibdyn_verbs::iface::local_addresses()
        .unwrap_or_default()
        .into_iter()
        .filter(|a| a.ip.is_ipv4() && !a.loopback)
        .map(|a| a.ip.to_string())
        .collect();
    let fabric = std::env::var(ibdyn_verbs::iface::FABRIC_IP_ENV).unwrap_or_default();
    // Under a daemon started by srun, the Slurm step the ranks run in.
    let step = std::env::var("SLURM_STEP_ID")
        .map(|s| format!(" slurm_step {s}"))
        .unwrap_or_default();
    println!(
        "hosts_check: {who} addrs {} fabric {fabric}{step}",
        addrs.join(",")
    );
}

fn merged_sum(merged: &ibdyn::IntraCommunicator) -> Result<(), String> {
    let mut sum = [0i64];
    merged
        .all_reduce_into(&[merged.rank() as i64], &mut sum, SystemOperation::sum())
        .map_err(e)?;
    let n = merged.size() as i64;
    if sum[0] != n * (n - 1) / 2 {
        return Err(format!("allreduce gave {} for {n} ranks", sum[0]));
    }
    Ok(())
}

fn world(universe: &ibdyn::Universe) -> Result<(), String> {
    let w = universe.world();
    report(&format!("rank {}", w.rank()));
    merged_sum(&w)?;
    let (me, n) = (w.rank(), w.size());
    let mut got = [0u8; 4];
    w.sendrecv(
        &me.to_le_bytes(),
        (me + 1) % n,
        7,
        &mut got,
        (me + n - 1) % n,
        7,
    )
    .map_err(e)?;
    if i32::from_le_bytes(got) != (me + n - 1) % n {
        return Err("the ring exchange delivered the wrong rank".into());
    }
    w.barrier().map_err(e)?;
    if me == 0 {
        println!("hosts_check: world ok");
    }
    Ok(())
}

fn spawn(universe: &ibdyn::Universe, host: &str, prestart: bool) -> Result<(), String> {
    let w = universe.world();
    let me = std::env::current_exe().map_err(|x| x.to_string())?;
    let mut cmd = Command::new(me);
    cmd.arg("child");
    let mut info = vec![("host".into(), host.into())];
    if prestart {
        info.push(("ibdyn_prestart".into(), "1".into()));
    }
    let opts = SpawnOptions {
        info,
        ..SpawnOptions::default()
    };
    let start = std::time::Instant::now();
    loop {
        let child = w.process_at_rank(0).spawn_with(&cmd, 1, &opts).map_err(e)?;
        let merged = child.merge(false).map_err(e)?;
        merged_sum(&merged)?;
        let forked = any_forked(&merged, false)?;
        child.disconnect().map_err(e)?;
        if !prestart || forked {
            break;
        }
        if start.elapsed() > std::time::Duration::from_secs(30) {
            return Err("no child was a forked copy within 30 s".into());
        }
    }
    if w.rank() == 0 {
        println!("hosts_check: spawn ok");
    }
    Ok(())
}

/// Whether any member of `merged` says `forked` (all learn it).
fn any_forked(merged: &ibdyn::IntraCommunicator, forked: bool) -> Result<bool, String> {
    let mut any = [0i64];
    merged
        .all_reduce_into(&[forked as i64], &mut any, SystemOperation::max())
        .map_err(e)?;
    Ok(any[0] == 1)
}

fn child(universe: &ibdyn::Universe) -> Result<(), String> {
    let parent = universe.parent().ok_or("no parent")?;
    report("child");
    let forked = ibdyn::pmi::prestart::was_forked();
    println!(
        "hosts_check: prestarted {} forked {}",
        ibdyn::pmi::prestart::was_prestarted() as u8,
        forked as u8
    );
    let merged = parent.merge(true).map_err(e)?;
    merged_sum(&merged)?;
    any_forked(&merged, forked)?;
    parent.disconnect().map_err(e)
}

fn main() {
    let universe = match ibdyn::initialize() {
        Ok(u) => u,
        Err(err) => {
            eprintln!("hosts_check: init: {err}");
            std::process::exit(1);
        }
    };
    let args: Vec<String> = std::env::args().skip(1).collect();
    let r = match args.first().map(String::as_str) {
        Some("world") => world(&universe),
        Some("spawn") => spawn(
            &universe,
            args.get(1).map_or("", String::as_str),
            args.get(2).is_some_and(|a| a == "prestart"),
        ),
        Some("child") => child(&universe),
        _ => Err("usage: hosts_check world | spawn HOST [prestart]".into()),
    };
    if let Err(err) = r {
        eprintln!("hosts_check: {err}");
        std::process::exit(1);
    }
}
