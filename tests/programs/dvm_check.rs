//! The test program of `tests/dvm.rs`: jobs that many at once make a DVM interleave.
//!
//! - `dvm_check lines TAG K`: every rank writes `TAG <rank> <i>` for i in 0..K to stdout and
//!   `TAG <rank> e<i>` to stderr, a line at a time.
//! - `dvm_check server NAME`: rank 0 opens a port and publishes it as NAME; the job accepts
//!   (root 0), server rank r sends r to client rank r (if any), and the job disconnects.
//! - `dvm_check client NAME`: rank 0 looks NAME up (retrying for `IBDYN_LOOKUP_SECS`, default
//!   20); the job connects and client rank r checks what server rank r sent.
//! - `dvm_check spawner N K`: rank 0 spawns N children running `child K` and every rank exits
//!   at once, without waiting for them; a child writes `CHILD <rank> <i>` for i in 0..K
//!   (then the children meet in a barrier).
//! - `dvm_check publish NAME`: every rank r opens a port, publishes it as `NAME.r` and ends
//!   without unpublishing it. `dvm_check absent NAME N`: rank 0's lookups of `NAME.0` to
//!   `NAME.<N-1>` must all fail.
//! - `dvm_check hold TAG`: every rank writes its pid to `$TMPDIR/hold-TAG.<rank>` and waits to
//!   be killed (it gives up after 120 s).
//!
//! Every rank writes `<MODE> <rank> start` first and `<MODE> <rank> done` last (stdout).

use ibdyn::traits::*;
use std::time::{Duration, Instant};

fn e(what: &'static str) -> impl Fn(ibdyn::CommError) -> String {
    move |err| format!("{what}: {err}")
}

fn number(args: &[String], i: usize, what: &str) -> Result<u32, String> {
    args.get(i)
        .and_then(|a| a.parse().ok())
        .ok_or_else(|| format!("{what} (argument {i}) is not a number"))
}

fn lines(rank: i32, tag: &str, k: u32) {
    for i in 0..k {
        println!("{tag} {rank} {i}");
        eprintln!("{tag} {rank} e{i}");
    }
}

fn serve(universe: &ibdyn::Universe, name: &str) -> Result<(), String> {
    let world = universe.world();
    let me = universe.self_comm();
    let port = ibdyn::open_port(&me);
    if world.rank() == 0 {
        ibdyn::publish_name(&me, name, &port).map_err(e("publish"))?;
    }
    let client = world
        .process_at_rank(0)
        .accept(&port)
        .map_err(e("accept"))?;
    if world.rank() == 0 {
        ibdyn::unpublish_name(&me, name).map_err(e("unpublish"))?;
    }
    let r = world.rank();
    if r < client.remote_size() {
        client.send(&r.to_le_bytes(), r, 1).map_err(e("send"))?;
    }
    client.disconnect().map_err(e("disconnect"))
}

fn connect(universe: &ibdyn::Universe, name: &str) -> Result<(), String> {
    let world = universe.world();
    let mut port = String::new();
    if world.rank() == 0 {
        let secs = std::env::var("IBDYN_LOOKUP_SECS")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(20);
        let deadline = Instant::now() + Duration::from_secs(secs);
        port = loop {
            match ibdyn::lookup_name(&universe.self_comm(), name) {
                Ok(p) => break p,
                Err(_) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(20))
                }
                Err(err) => return Err(format!("lookup of {name}: {err}")),
            }
        };
    }
    let server = world
        .process_at_rank(0)
        .connect(&port)
        .map_err(e("connect"))?;
    let r = world.rank();
    if r < server.remote_size() {
        let (got, _) = server.recv_vec(r, 1).map_err(e("receive"))?;
        if got != r.to_le_bytes() {
            return Err(format!("server rank {r} sent {got:?}"));
        }
    }
    server.disconnect().map_err(e("disconnect"))
}

fn spawner(universe: &ibdyn::Universe, n: u32, k: u32) -> Result<(), String> {
    let world = universe.world();
    if world.rank() == 0 {
        let exe = std::env::current_exe().map_err(|err| format!("current_exe: {err}"))?;
        let mut cmd = std::process::Command::new(exe);
        cmd.args(["child", &k.to_string()]);
        world
            .process_at_rank(0)
            .spawn(&cmd, n)
            .map_err(e("spawn"))?;
    }
    Ok(())
}

fn run(universe: &ibdyn::Universe, args: &[String]) -> Result<(), String> {
    let rank = universe.world().rank();
    let name = || args.get(1).cloned().ok_or("no NAME given".to_string());
    match args.first().map(String::as_str) {
        Some("lines") => {
            let tag = args.get(1).ok_or("no TAG given")?;
            lines(rank, tag, number(args, 2, "K")?);
            Ok(())
        }
        Some("server") => serve(universe, &name()?),
        Some("client") => connect(universe, &name()?),
        Some("spawner") => spawner(universe, number(args, 1, "N")?, number(args, 2, "K")?),
        Some("publish") => {
            let me = universe.self_comm();
            let port = ibdyn::open_port(&me);
            ibdyn::publish_name(&me, &format!("{}.{rank}", name()?), &port).map_err(e("publish"))
        }
        Some("absent") if rank == 0 => {
            for r in 0..number(args, 2, "N")? {
                let service = format!("{}.{r}", name()?);
                if let Ok(port) = ibdyn::lookup_name(&universe.self_comm(), &service) {
                    return Err(format!("{service} is still published: {port}"));
                }
            }
            Ok(())
        }
        Some("absent") => Ok(()),
        Some("hold") => {
            let tag = args.get(1).ok_or("no TAG given")?;
            let mark = std::env::temp_dir().join(format!("hold-{tag}.{rank}"));
            let pid = std::process::id().to_string();
            std::fs::write(&mark, pid).map_err(|err| format!("{}: {err}", mark.display()))?;
            std::thread::sleep(Duration::from_secs(120));
            Err("hold: not killed within 120 s".into())
        }
        Some("child") => {
            if universe.parent().is_none() {
                return Err("child: no parent".into());
            }
            lines(rank, "CHILD", number(args, 1, "K")?);
            // A rank that leaves at once may take a start-up message to a sibling with it.
            universe.world().barrier().map_err(e("barrier"))
        }
        _ => Err(
            "usage: dvm_check lines TAG K | server NAME | client NAME | spawner N K | publish NAME \
             | absent NAME N | hold TAG"
                .into(),
        ),
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mode = args.first().cloned().unwrap_or_default().to_uppercase();
    let universe = ibdyn::initialize().unwrap_or_else(|err| {
        eprintln!("dvm_check: init: {err}");
        std::process::exit(2)
    });
    let rank = universe.world().rank();
    println!("{mode} {rank} start");
    match run(&universe, &args) {
        Ok(()) => println!("{mode} {rank} done"),
        Err(err) => {
            eprintln!("dvm_check {mode} rank {rank}: {err}");
            std::process::exit(1);
        }
    }
}
