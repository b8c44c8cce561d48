//! `ibdyn dvm serve`: the controller process. It starts the node daemons, writes the contact
//! file, accepts clients and runs the `Controller` on one event loop until `dvm stop`, a
//! signal or the death of a daemon.

use super::controller::Controller;
use super::dvm_dir;
use crate::error::{LaunchError, Result};
use crate::link;
use crate::protocol::{Report, ToDaemon, ToDvm};
use crate::run::{start_daemons, DaemonSet, LEvent};
use crate::{secret, signals};
use crossbeam_channel::Sender;
use ibdyn_pmi::wire::Frame;
use std::io::Write;
use std::net::{TcpListener, TcpStream};
use std::os::unix::fs::OpenOptionsExt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// After `dvm stop`, how long the jobs get to end before the daemons are shut down.
const STOP_GRACE: Duration = Duration::from_secs(10);
/// After a daemon died: its ranks will never be reported as ended, so the jobs that had some
/// there never end; this is time for the other daemons' ranks, killed, to end and be reported.
const LOST_DAEMON_GRACE: Duration = Duration::from_secs(2);

/// Accepts clients; each presents the secret in its first line (read on a thread of its own,
/// so a slow or silent client holds up no other) or is closed unanswered.
fn serve_clients(listener: TcpListener, secret: String, tx: Sender<LEvent>) {
    let next = Arc::new(AtomicU64::new(1));
    let _ = std::thread::Builder::new()
        .name("dvm-accept".into())
        .spawn(move || {
            for s in listener.incoming() {
                let Ok(s) = s else { continue };
                let (secret, tx, next) = (secret.clone(), tx.clone(), next.clone());
                let spawned = std::thread::Builder::new()
                    .name("dvm-hello".into())
                    .spawn(move || open_client(s, &secret, &tx, &next));
                if let Err(e) = spawned {
                    tracing::warn!("dvm: cannot serve a client: {e}");
                }
            }
        });
}

fn open_client(mut s: TcpStream, secret: &str, tx: &Sender<LEvent>, next: &AtomicU64) {
    if let Err(e) = link::accept_hello(&mut s, secret) {
        tracing::warn!("dvm: refused a client: {e}");
        return;
    }
    let id = next.fetch_add(1, Ordering::Relaxed);
    let Ok(w) = s.try_clone() else { return };
    let _ = s.set_nodelay(true);
    let out = link::start_writer(w, format!("client{id}"));
    if tx.send(LEvent::ClientOpen(id, out)).is_err() {
        return;
    }
    let (t1, t2) = (tx.clone(), tx.clone());
    let _ = link::start_reader(
        s,
        format!("client{id}"),
        move |f| {
            let _ = t1.send(LEvent::Client(id, f));
        },
        move || {
            let _ = t2.send(LEvent::ClientClosed(id));
        },
    );
}

/// `ibdyn dvm serve` (started by `dvm start`): runs until `dvm stop` or a signal.
pub fn dvm_serve(nnodes: u32, hosts: Option<crate::hosts::HostPlan>) -> Result<i32> {
    let dir = dvm_dir()?;
    let contact_path = dir.join("contact");
    let exe =
        std::env::current_exe().map_err(|e| LaunchError::io("find the ibdyn executable", e))?;
    let (tx, rx) = crossbeam_channel::unbounded::<LEvent>();
    let sig_tx = tx.clone();
    signals::watch(move |s| {
        let _ = sig_tx.send(LEvent::Signal(s));
    })?;
    let DaemonSet {
        mut daemons,
        outboxes,
        session,
        ..
    } = start_daemons(nnodes, hosts.as_ref(), &exe, &tx)?;
    let listener =
        TcpListener::bind("127.0.0.1:0").map_err(|e| LaunchError::io("bind a TCP port", e))?;
    let port = listener
        .local_addr()
        .map_err(|e| LaunchError::io("local_addr", e))?
        .port();
    let secret_hex = secret::format_secret(secret::random_u64()?);
    let tmp = dir.join(format!("contact.{}", std::process::id()));
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&tmp)
        .and_then(|mut f| {
            writeln!(
                f,
                "port={port} secret={secret_hex} pid={}",
                std::process::id()
            )
        })
        .and_then(|_| std::fs::rename(&tmp, &contact_path))
        .map_err(|e| LaunchError::io(format!("write {}", contact_path.display()), e))?;
    serve_clients(listener, secret_hex, tx.clone());
    drop(tx);
    let mut ctl = Controller::new(outboxes);
    let mut lost_daemon = false;
    loop {
        if let Some(t) = ctl.stopping_since() {
            let grace = if lost_daemon {
                LOST_DAEMON_GRACE
            } else {
                STOP_GRACE
            };
            if !ctl.any_live_job() || t.elapsed() >= grace {
                break;
            }
        }
        let ev = match rx.recv_timeout(Duration::from_millis(200)) {
            Ok(ev) => ev,
            Err(crossbeam_channel::RecvTimeoutError::Timeout) => continue,
            Err(_) => break,
        };
        match ev {
            LEvent::Daemon(d, Frame::Line(cmd)) => match Report::decode(&cmd) {
                Ok(r) => ctl.on_daemon(r),
                Err(e) => tracing::warn!("dvm: bad line from daemon {d}: {e}"),
            },
            LEvent::Daemon(..) | LEvent::Stdin(_) => {}
            LEvent::DaemonClosed(d) => {
                if ctl.stopping_since().is_none() {
                    tracing::warn!("dvm: node daemon {d} died: stopping");
                    lost_daemon = true;
                    ctl.daemon_died(d);
                }
            }
            LEvent::ClientOpen(id, out) => ctl.client_open(id, out),
            LEvent::Client(id, Frame::Line(cmd)) => match ToDvm::decode(&cmd) {
                Ok(m) => ctl.on_client(id, m),
                Err(e) => ctl.refuse(id, &format!("bad request: {e}")),
            },
            LEvent::Client(..) => {}
            LEvent::ClientClosed(id) => ctl.client_closed(id),
            LEvent::Signal(s) => match signals::for_ranks(s) {
                Some(to_ranks) => ctl.pass_on(to_ranks, None),
                None => ctl.stop(&format!("it got {}", signals::name(s))),
            },
        }
    }
    ctl.finish_clients();
    for o in ctl.daemons() {
        let _ = o.send(ToDaemon::Shutdown.encode().to_line());
    }
    drop(ctl);
    daemons.reap(Duration::from_secs(5));
    if lost_daemon {
        crate::run::remove_objects_of_exited("dvm");
    }
    drop(session);
    let _ = std::fs::remove_file(&contact_path);
    // The private directory goes too when nothing else is in it.
    let _ = std::fs::remove_dir(&dir);
    Ok(0)
}
