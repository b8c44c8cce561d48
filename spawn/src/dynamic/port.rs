//! Client/server between independently started jobs: ports, connect/accept, and the name
//! service of the daemons (publish/lookup/unpublish).

use super::wire::{gpids, hex, random_id, unhex, Rendezvous};
use super::{env_secs, share_outcome};
use ibdyn_intercomm::{AddressCard, CommError, Communicator, Group, ProcCard, Result, Runtime};
use std::time::Duration;

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

/// Opens a port on this process (the root that will accept on it).
pub fn open_port(comm: &Communicator) -> Port {
    let id = random_id();
    let card = comm.runtime().card().to_bytes();
    let name = format!(
        "{PORT_PREFIX}{}",
        hex(&[&id.to_le_bytes()[..], &card].concat())
    );
    Port { id, name }
}

/// Closes a port; connections made through it stay.
pub fn close_port(_port: Port) {}

fn parse_port(name: &str) -> Result<(u64, ProcCard)> {
    let hexed = name
        .strip_prefix(PORT_PREFIX)
        .ok_or_else(|| CommError::InvalidArgument(format!("{name:?} is not an ibdyn port name")))?;
    let b = unhex(hexed)?;
    if b.len() < 8 {
        return Err(CommError::InvalidArgument(format!(
            "port name {name:?} is too short"
        )));
    }
    let id = u64::from_le_bytes(b[0..8].try_into().expect("8 bytes"));
    Ok((id, ProcCard::from_bytes(&b[8..])?))
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
/// seconds, default 600) for one connect on `port`.
pub fn accept(port: &Port, comm: &Communicator, root: i32) -> Result<Communicator> {
    let rt = comm.runtime();
    let ctx = comm.derive_context();
    let outcome = (comm.rank() == root).then(|| -> Result<Vec<u8>> {
        let timeout = env_secs("IBDYN_ACCEPT_TIMEOUT", Duration::from_secs(600));
        let id = port.id;
        let (from, req) = rt.await_control(
            timeout,
            "a connect on the port",
            None,
            |d| Rendezvous::is(d, false, id),
            |_| Ok(()),
        )?;
        let req = Rendezvous::decode(&req)?;
        let answer = Rendezvous {
            accept: true,
            port_id: id,
            ctx,
            group: cards_of(&rt, comm)?,
        };
        rt.control_send(&from, &answer.encode())?;
        Ok(Rendezvous {
            accept: true,
            port_id: id,
            ctx,
            group: req.group,
        }
        .encode())
    });
    let shared = share_outcome(comm, root, outcome)?;
    finish(&rt, comm, shared)
}

/// MPI_Comm_connect: collective over `comm`; `root` asks the accepting job at `port_name`
/// and waits at most `IBDYN_CONNECT_TIMEOUT` seconds (default 60) for the answer.
pub fn connect(port_name: &str, comm: &Communicator, root: i32) -> Result<Communicator> {
    let rt = comm.runtime();
    let outcome = (comm.rank() == root).then(|| -> Result<Vec<u8>> {
        let (id, server) = parse_port(port_name)?;
        let timeout = env_secs("IBDYN_CONNECT_TIMEOUT", Duration::from_secs(60));
        let req = Rendezvous {
            accept: false,
            port_id: id,
            ctx: 0,
            group: cards_of(&rt, comm)?,
        };
        let server = AddressCard::from_bytes(&server.fabric)?;
        rt.control_send(&server, &req.encode())?;
        let what = format!(
            "an accept on port {}",
            &port_name[..port_name.len().min(32)]
        );
        let (_, answer) = rt.await_control(
            timeout,
            &what,
            Some(&server),
            |d| Rendezvous::is(d, true, id),
            |_| Ok(()),
        )?;
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
