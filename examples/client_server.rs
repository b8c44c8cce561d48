//! Client/server between jobs through ports and the name service.
//! `client_server server NAME` opens a port, publishes it as NAME, accepts one client, answers
//! its message and disconnects. `client_server client NAME` looks NAME up (waiting for it),
//! connects, sends a message, checks the answer. `client_server pair` runs both in one job
//! (rank 0 serves, rank 1 connects). `client_server noaccept` checks that connecting to a port
//! nobody accepts on fails within `IBDYN_CONNECT_TIMEOUT`. `client_server late` (2 ranks) checks
//! that a connect which gave up is not accepted afterwards: rank 1's first connect times out
//! before rank 0 accepts, so that accept must time out too; the second pair then meets.
//! `client_server portfile-server FILE` writes its port's name to FILE and accepts (until
//! `IBDYN_ACCEPT_TIMEOUT`); `client_server portfile-client FILE`, started by another `ibdyn
//! run`, connects to it and expects the failure that says why.

use ibdyn::traits::*;
use std::time::{Duration, Instant};

fn e(err: ibdyn::CommError) -> String {
    err.to_string()
}

fn serve(universe: &ibdyn::Universe, name: &str) -> Result<(), String> {
    let me = universe.self_comm();
    let port = ibdyn::open_port(&me);
    ibdyn::publish_name(&me, name, &port).map_err(e)?;
    answer_one(&me, &port)?;
    ibdyn::unpublish_name(&me, name).map_err(e)?;
    ibdyn::close_port(port);
    println!("client_server: served");
    Ok(())
}

fn connect(universe: &ibdyn::Universe, name: &str) -> Result<(), String> {
    let me = universe.self_comm();
    let port = lookup(&me, name)?;
    ask_once(&me, &port, b"hello")?;
    println!("client_server: connected and answered");
    Ok(())
}

/// Accepts one client on `port`, answers its message with "re: " and the message, disconnects.
fn answer_one(me: &ibdyn::IntraCommunicator, port: &ibdyn::Port) -> Result<(), String> {
    let client = me.process_at_rank(0).accept(port).map_err(e)?;
    let (msg, _) = client.recv_vec(0, 1).map_err(e)?;
    client
        .send(&[&b"re: "[..], &msg].concat(), 0, 2)
        .map_err(e)?;
    client.disconnect().map_err(e)
}

/// Connects to `port`, sends `word`, checks the server's answer, disconnects.
fn ask_once(me: &ibdyn::IntraCommunicator, port: &str, word: &[u8]) -> Result<(), String> {
    let server = me.process_at_rank(0).connect(port).map_err(e)?;
    server.send(word, 0, 1).map_err(e)?;
    let (answer, _) = server.recv_vec(0, 2).map_err(e)?;
    if answer != [&b"re: "[..], word].concat() {
        return Err(format!(
            "wrong answer {:?}",
            String::from_utf8_lossy(&answer)
        ));
    }
    server.disconnect().map_err(e)
}

/// Waits for `name` in the name service (the server publishes it at its own pace).
fn lookup(me: &ibdyn::IntraCommunicator, name: &str) -> Result<String, String> {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        match ibdyn::lookup_name(me, name) {
            Ok(p) => return Ok(p),
            Err(_) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(20)),
            Err(err) => return Err(format!("lookup of {name}: {err}")),
        }
    }
}

fn late_server(universe: &ibdyn::Universe, name: &str) -> Result<(), String> {
    let me = universe.self_comm();
    let world = universe.world();
    let port = ibdyn::open_port(&me);
    ibdyn::publish_name(&me, name, &port).map_err(e)?;
    // Rank 1's connect has given up by now; its request may be waiting for us.
    world.recv(&mut [], 1, 9).map_err(e)?;
    match me.process_at_rank(0).accept(&port) {
        Ok(_) => return Err("accepted a connect whose root had given up".into()),
        Err(err) => println!("client_server: the abandoned connect was not accepted: {err}"),
    }
    world.send(&[], 1, 10).map_err(e)?;
    answer_one(&me, &port)?;
    ibdyn::unpublish_name(&me, name).map_err(e)?;
    println!("client_server: served the second connect");
    Ok(())
}

fn late_client(universe: &ibdyn::Universe, name: &str) -> Result<(), String> {
    let me = universe.self_comm();
    let world = universe.world();
    let port = lookup(&me, name)?;
    let first = me.process_at_rank(0).connect(&port);
    world.send(&[], 0, 9).map_err(e)?;
    if first.is_ok() {
        return Err("the first connect succeeded though nobody accepted".into());
    }
    world.recv(&mut [], 0, 10).map_err(e)?;
    ask_once(&me, &port, b"again")?;
    println!("client_server: connected the second time");
    Ok(())
}

fn main() {
    let universe = ibdyn::initialize().unwrap_or_else(|err| {
        eprintln!("client_server: init: {err}");
        std::process::exit(2)
    });
    let args: Vec<String> = std::env::args().skip(1).collect();
    let name = args
        .get(1)
        .cloned()
        .unwrap_or_else(|| "ibdyn-client-server".into());
    let rank = universe.world().rank();
    let result = match args.first().map(String::as_str) {
        Some("server") => serve(&universe, &name),
        Some("client") => connect(&universe, &name),
        Some("pair") if rank == 0 => serve(&universe, &name),
        Some("pair") => connect(&universe, &name),
        Some("noaccept") if rank == 0 => {
            let me = universe.self_comm();
            let port = ibdyn::open_port(&me);
            ibdyn::publish_name(&me, &name, &port).map_err(e).map(|_| {
                // Stay alive (but never accept) until the client has given up.
                let _ = universe.world().recv(&mut [], 1, 9);
            })
        }
        Some("noaccept") => {
            let me = universe.self_comm();
            let r = (|| -> Result<(), String> {
                let port = lookup(&me, &name)?;
                match me.process_at_rank(0).connect(&port) {
                    Err(err) => {
                        println!("client_server: connect failed as expected: {err}");
                        Ok(())
                    }
                    Ok(_) => Err("connect to a port nobody accepts on succeeded".into()),
                }
            })();
            let _ = universe.world().send(&[], 0, 9);
            r
        }
        Some("portfile-server") => {
            let me = universe.self_comm();
            let port = ibdyn::open_port(&me);
            let tmp = format!("{name}.tmp");
            std::fs::write(&tmp, port.name())
                .and_then(|_| std::fs::rename(&tmp, &name))
                .map_err(|err| format!("write {name}: {err}"))
                .map(|_| match me.process_at_rank(0).accept(&port) {
                    Err(err) => println!("client_server: accept ended: {err}"),
                    Ok(_) => println!("client_server: accepted"),
                })
        }
        Some("portfile-client") => {
            let me = universe.self_comm();
            let deadline = Instant::now() + Duration::from_secs(30);
            let port = loop {
                match std::fs::read_to_string(&name) {
                    Ok(p) => break Ok(p),
                    Err(_) if Instant::now() < deadline => {
                        std::thread::sleep(Duration::from_millis(20))
                    }
                    Err(err) => break Err(format!("read {name}: {err}")),
                }
            };
            port.and_then(|p| match me.process_at_rank(0).connect(&p) {
                Err(err) => {
                    println!("client_server: connect to another job's port failed: {err}");
                    Ok(())
                }
                Ok(_) => Err("connected to another job's port".into()),
            })
        }
        Some("late") if rank == 0 => late_server(&universe, &name),
        Some("late") => late_client(&universe, &name),
        _ => Err(
            "usage: client_server server|client|pair|noaccept|late [NAME] \
             | portfile-server|portfile-client FILE"
                .into(),
        ),
    };
    if let Err(msg) = result {
        eprintln!("client_server: rank {rank}: {msg}");
        std::process::exit(1);
    }
}
