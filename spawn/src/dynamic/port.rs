//! Client/server between independently started jobs: ports, connect/accept, and the name
//! service of the daemons (publish/lookup/unpublish).

use super::wire::{gpids, hex, random_id, unhex, ConnectEnd, Refusal, Rendezvous};
use super::{env_secs, share_outcome};
use ibdyn_intercomm::{AddressCard, CommError, Communicator, Group, ProcCard, Result, Runtime};
use ibdyn_pmi::PmiClient;
use std::collections::{BTreeSet, HashSet};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

const PORT_PREFIX: &str = "ibdyn-port:";

/// An open port (MPI_Open_port): a name other jobs connect to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Port {
    id: u64,
    name: String,
}

impl Port {
    pub fn name(&self) -> &str {
        &self.name
    }
}

/// The ids of the ports this process has open. A connect on any other is refused as it
/// arrives (by the runtime's control responder, set at the first open).
static OPEN: Mutex<BTreeSet<u64>> = Mutex::new(BTreeSet::new());

fn open_ports() -> MutexGuard<'static, BTreeSet<u64>> {
    OPEN.lock().unwrap_or_else(|p| p.into_inner())
}

fn is_open(id: u64) -> bool {
    open_ports().contains(&id)
}

/// Opens a port on this process (the root that will accept on it).
pub fn open_port(comm: &Communicator) -> Port {
    let id = random_id();
    let rt = comm.runtime();
    open_ports().insert(id);
    rt.set_control_responder(Box::new(|d| {
        Refusal::of_request(d, is_open).map(|r| r.encode())
    }));
    let card = rt.card().to_bytes();
    let name = format!(
        "{PORT_PREFIX}{}",
        hex(&[&id.to_le_bytes()[..], &card].concat())
    );
    Port { id, name }
}

/// Closes a port; connections made through it stay, and a connect on it from now on is refused
/// (`MPI_ERR_PORT` at the connecting side).
pub fn close_port(port: Port) {
    open_ports().remove(&port.id);
}

fn parse_port(name: &str) -> Result<(u64, ProcCard)> {
    let hexed = name
        .strip_prefix(PORT_PREFIX)
        .ok_or_else(|| CommError::InvalidArgument(format!("{name:?} is not an ibdyn port name")))?;
    let malformed =
        |e: CommError| CommError::InvalidArgument(format!("port name {name:?} is malformed: {e}"));
    let b = unhex(hexed).map_err(malformed)?;
    if b.len() < 8 {
        return Err(CommError::InvalidArgument(format!(
            "port name {name:?} is too short"
        )));
    }
    let id = u64::from_le_bytes(b[0..8].try_into().expect("8 bytes"));
    Ok((id, ProcCard::from_bytes(&b[8..]).map_err(malformed)?))
}

fn cards_of(rt: &Runtime, comm: &Communicator) -> Result<Vec<ProcCard>> {
    comm.group()
        .members()
        .iter()
        .map(|&g| rt.card_of(g))
        .collect()
}

fn finish(rt: &Runtime, comm: &Communicator, shared: Vec<u8>) -> Result<Communicator> {
    let r = Rendezvous::decode(&shared)?;
    let remote = Group::new(gpids(&r.group));
    rt.learn_cards(r.group);
    rt.make_communicator(r.ctx, comm.group().clone(), Some(remote))
}

/// MPI_Comm_accept: collective over `comm`; `root` waits (at most `IBDYN_ACCEPT_TIMEOUT`
/// seconds, default 600) for one connect on `port` whose root takes the answer.
pub fn accept(port: &Port, comm: &Communicator, root: i32) -> Result<Communicator> {
    let rt = comm.runtime();
    let ctx = comm.derive_context();
    let outcome = (comm.rank() == root).then(|| -> Result<Vec<u8>> {
        let timeout = env_secs("IBDYN_ACCEPT_TIMEOUT", Duration::from_secs(600));
        let remote = await_connect(&rt, port.id, ctx, cards_of(&rt, comm)?, timeout).map_err(
            |e| match e {
                CommError::Timeout { what, .. } => CommError::Timeout {
                    what,
                    secs: timeout.as_secs(),
                },
                e => e,
            },
        )?;
        Ok(Rendezvous {
            accept: true,
            port_id: port.id,
            req: 0,
            ctx,
            group: remote,
        }
        .encode())
    });
    let shared = share_outcome(comm, root, outcome)?;
    finish(&rt, comm, shared)
}

/// The accepting root's side: answers connect requests on `port_id` until one's root
/// confirms that it took the answer, within `timeout`; returns that root's group. A request
/// whose root gave up (it withdrew, or our answer could not reach it) is dropped: its root
/// has already returned an error, so pairing with it would leave this side alone.
fn await_connect(
    rt: &Runtime,
    port_id: u64,
    ctx: u64,
    group: Vec<ProcCard>,
    timeout: Duration,
) -> Result<Vec<ProcCard>> {
    let deadline = Instant::now() + timeout;
    let left = || deadline.saturating_duration_since(Instant::now());
    let mut withdrawn = HashSet::new();
    let my_node = rt.card().node_uid;
    loop {
        let (from, msg) = rt.await_control(
            left(),
            "a connect on the port",
            None,
            |d| Rendezvous::is(d, false, port_id) || ConnectEnd::is(d, port_id),
            |_| Ok(()),
        )?;
        // Whoever knows the port can send to it: a datagram of another build, or a broken
        // one, is dropped rather than ending the accept of a server that serves many.
        let dropped = |e: CommError| {
            tracing::warn!("accept on port {port_id:x}: dropped a datagram from {from:?}: {e}")
        };
        if ConnectEnd::is(&msg, port_id) {
            // Withdrawn before we took it; a confirmation here is of an earlier accept's.
            match ConnectEnd::decode(&msg) {
                Ok(end) if !end.confirmed => {
                    withdrawn.insert(end.req);
                }
                Ok(_) => {}
                Err(e) => dropped(e),
            }
            continue;
        }
        let req = match Rendezvous::decode(&msg) {
            Ok(req) => req,
            Err(e) => {
                dropped(e);
                continue;
            }
        };
        if withdrawn.remove(&req.req) {
            continue;
        }
        let answer = Rendezvous {
            accept: true,
            port_id,
            req: req.req,
            ctx,
            group: group.clone(),
        };
        rt.control_send(&from, &answer.encode())?;
        let root = req
            .group
            .iter()
            .find(|c| c.fabric == from.to_bytes())
            .cloned();
        let end = rt.await_control(
            left(),
            "the connecting root to take the answer",
            Some(&from),
            |d| ConnectEnd::is_for(d, port_id, req.req),
            |pmi| match &root {
                Some(card) => connecting_root_alive(&my_node, card, pmi),
                None => Ok(()),
            },
        );
        match end {
            Ok((_, d)) if ConnectEnd::decode(&d)?.confirmed => return Ok(req.group),
            Ok(_) => tracing::debug!("a connect on port {port_id:x} was withdrawn"),
            Err(CommError::PeerDead { peer, detail }) => {
                tracing::debug!(
                    "the root of a connect on port {port_id:x} is gone ({peer}: {detail})"
                )
            }
            Err(e) => return Err(e),
        }
    }
}

/// Fails (as `PeerDead`) once the connecting root `card` has ended: a root that dies after
/// the answer reached it never confirms, and the accept must not wait for it until its bound.
/// A same-node root is checked by its pid and start time, another through the process
/// manager (which may not know a job of another launcher: then it counts as alive).
/// `my_node` is this process's node id (the runtime is borrowed while the check runs).
fn connecting_root_alive(my_node: &str, card: &ProcCard, pmi: &mut PmiClient) -> Result<()> {
    let gone = if card.node_uid == my_node {
        !ibdyn_shm::process_alive_since(card.pid as u32, card.start)
    } else {
        pmi.job_status(card.gpid.job)
            .is_ok_and(|st| st.exited.iter().any(|x| x.rank == card.gpid.rank))
    };
    if gone {
        return Err(CommError::PeerDead {
            peer: format!("{} (pid {})", card.gpid, card.pid),
            detail: "the connecting root ended before it took the answer".into(),
        });
    }
    Ok(())
}

/// The test knob `IBDYN_TEST_CONNECT_VANISH=<rank>`: that rank of the job, as a connecting
/// root, exits (code 3) once it has the answer and before it confirms it, as a process killed
/// at that moment would.
const VANISH_ENV: &str = "IBDYN_TEST_CONNECT_VANISH";

/// The test knob `IBDYN_TEST_CONNECT_GARBLE=<rank>`: that rank of the job, as a connecting
/// root, first sends its request cut short, as a broken client would.
const GARBLE_ENV: &str = "IBDYN_TEST_CONNECT_GARBLE";

/// Whether the test knob `var` names this process's rank.
fn knob_names_me(rt: &Runtime, var: &str) -> bool {
    std::env::var(var)
        .ok()
        .and_then(|v| v.trim().parse::<u32>().ok())
        == Some(rt.me().rank)
}

fn vanish_here(rt: &Runtime) {
    if knob_names_me(rt, VANISH_ENV) {
        eprintln!(
            "{VANISH_ENV}: rank {} exits before confirming its connect",
            rt.me().rank
        );
        std::process::exit(3);
    }
}

/// MPI_Comm_connect: collective over `comm`; `root` asks the accepting job at `port_name`
/// and waits at most `IBDYN_CONNECT_TIMEOUT` seconds (default 60) for the answer. It then
/// confirms that it took the answer, or tells the accepting root that it gave up.
pub fn connect(port_name: &str, comm: &Communicator, root: i32) -> Result<Communicator> {
    let rt = comm.runtime();
    let outcome = (comm.rank() == root).then(|| -> Result<Vec<u8>> {
        let (id, server) = parse_port(port_name)?;
        let timeout = env_secs("IBDYN_CONNECT_TIMEOUT", Duration::from_secs(60));
        let req = Rendezvous {
            accept: false,
            port_id: id,
            req: random_id(),
            ctx: 0,
            group: cards_of(&rt, comm)?,
        };
        let server = AddressCard::from_bytes(&server.fabric)?;
        if knob_names_me(&rt, GARBLE_ENV) {
            // Cut inside the group's cards: the header still names this request.
            let whole = req.encode();
            rt.control_send(&server, &whole[..whole.len() - 1])?;
        }
        rt.control_send(&server, &req.encode())?;
        let what = format!(
            "an accept on port {}",
            &port_name[..port_name.len().min(32)]
        );
        let answer = rt
            .await_control(
                timeout,
                &what,
                Some(&server),
                |d| Rendezvous::is_answer(d, id, req.req) || Refusal::is_for(d, id, req.req),
                |_| Ok(()),
            )
            .map_err(unanswered_port)
            .and_then(|(from, d)| {
                if Refusal::is_for(&d, id, req.req) {
                    return Err(CommError::InvalidArgument(format!(
                        "port {} is closed: its process accepts no connection on it",
                        &port_name[..port_name.len().min(32)]
                    )));
                }
                Ok((from, d))
            });
        if answer.is_ok() {
            vanish_here(&rt);
        }
        let end = ConnectEnd {
            port_id: id,
            req: req.req,
            confirmed: answer.is_ok(),
        };
        let told = rt.control_send(&server, &end.encode());
        let (_, answer) = answer?;
        told?;
        Ok(answer)
    });
    let shared = share_outcome(comm, root, outcome)?;
    finish(&rt, comm, shared)
}

/// Publishes `port` under `service` in the daemons' name service.
pub fn publish_name(comm: &Communicator, service: &str, port: &Port) -> Result<()> {
    Ok(comm
        .runtime()
        .with_pmi(|p| p.publish_name(service, port.name()))?)
}

/// Looks up the port published under `service`.
pub fn lookup_name(comm: &Communicator, service: &str) -> Result<String> {
    Ok(comm.runtime().with_pmi(|p| p.lookup_name(service))?)
}

pub fn unpublish_name(comm: &Communicator, service: &str) -> Result<()> {
    Ok(comm.runtime().with_pmi(|p| p.unpublish_name(service))?)
}

/// A port whose process never acknowledged: besides a process that ended, the cause users
/// meet is a port of a job started by another `ibdyn run`, whose datagrams carry another job
/// secret and are dropped unanswered.
fn unanswered_port(e: CommError) -> CommError {
    match e {
        CommError::PeerDead { peer, detail } => CommError::PeerDead {
            peer,
            detail: format!(
                "{detail} (the port's process has ended, or it belongs to a job started by \
                 another `ibdyn run`: separately started jobs meet through ports only as jobs \
                 of one `ibdyn dvm`)"
            ),
        },
        e => e,
    }
}
