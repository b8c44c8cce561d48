//! Dynamic processes on top of the runtime: spawn and spawn-multiple (returning an
//! intercommunicator to the children), the children's parent intercommunicator, and
//! client/server connection between independently started jobs (ports, connect/accept).
//!
//! The wire-up follows the paper: the spawning root asks its daemon for the children and
//! leaves them its address card; the child root sends one UD control datagram to the parent
//! root (group size, job id); the parent root answers with the intercommunicator's context
//! id and the parents' cards; each root broadcasts what it learnt in its own group.
//! Connections between other ranks are made on first use.

mod child;
mod port;
mod spawn;
mod wire;

pub use child::attach_parent;
pub use port::{
    accept, close_port, connect, lookup_name, open_port, publish_name, unpublish_name, Port,
};
pub use spawn::{spawn_multiple, SpawnOptions};
pub use wire::Wireup;

use ibdyn_intercomm::{CommError, Communicator, Result};
use std::time::Duration;

/// Default bound on waiting for spawned children to connect back (`IBDYN_SPAWN_TIMEOUT`, s).
pub const DEFAULT_SPAWN_TIMEOUT: Duration = Duration::from_secs(60);

pub(crate) fn env_secs(name: &str, default: Duration) -> Duration {
    std::env::var(name)
        .ok()
        .and_then(|v| v.trim().parse::<f64>().ok())
        .map_or(default, Duration::from_secs_f64)
}

/// Broadcasts a variable-length message from `root` of an intracommunicator, through the
/// collectives layer (length first, then the bytes).
pub(crate) fn bcast_vec(comm: &Communicator, root: i32, data: Vec<u8>) -> Result<Vec<u8>> {
    let coll = ibdyn_collectives::collectives_of(comm)?;
    let mut len = (data.len() as u64).to_le_bytes();
    coll.bcast(&mut len, root as usize)?;
    let mut buf = if comm.rank() == root {
        data
    } else {
        vec![0u8; u64::from_le_bytes(len) as usize]
    };
    coll.bcast(&mut buf, root as usize)?;
    Ok(buf)
}

/// Outcome of a root-only step, broadcast so every member returns the same result; the root
/// keeps its own error as it was (its kind tells the caller's error class); the others get
/// an `InvalidArgument` naming the root where the root's arguments were refused, and
/// `RootFailed` with the root's text for any other failure.
pub(crate) fn share_outcome(
    comm: &Communicator,
    root: i32,
    outcome: Option<Result<Vec<u8>>>,
) -> Result<Vec<u8>> {
    let msg = match outcome {
        Some(Ok(payload)) => [&[0u8][..], &payload].concat(),
        Some(Err(CommError::SpawnFailed { failures })) => {
            let mut b = vec![1u8];
            for f in &failures {
                let text = f.message.as_bytes();
                b.extend_from_slice(&f.rank.to_le_bytes());
                b.extend_from_slice(&f.code.to_le_bytes());
                b.extend_from_slice(&(text.len() as u32).to_le_bytes());
                b.extend_from_slice(text);
            }
            b
        }
        Some(Err(e)) => {
            let msg = match &e {
                CommError::InvalidArgument(why) => [&[3u8][..], why.as_bytes()].concat(),
                e => [&[2u8][..], e.to_string().as_bytes()].concat(),
            };
            bcast_vec(comm, root, msg)?;
            return Err(e);
        }
        None => Vec::new(),
    };
    let got = bcast_vec(comm, root, msg)?;
    match got.first() {
        Some(0) => Ok(got[1..].to_vec()),
        Some(1) => Err(CommError::SpawnFailed {
            failures: decode_failures(&got[1..]),
        }),
        Some(2) => Err(CommError::RootFailed {
            root,
            error: String::from_utf8_lossy(&got[1..]).into_owned(),
        }),
        Some(3) => Err(CommError::InvalidArgument(format!(
            "the root (rank {root}) refused its arguments: {}",
            String::from_utf8_lossy(&got[1..])
        ))),
        _ => Err(CommError::Malformed("empty outcome from the root".into())),
    }
}

fn decode_failures(mut b: &[u8]) -> Vec<ibdyn_intercomm::ChildFailure> {
    let mut out = Vec::new();
    while b.len() >= 12 {
        let rank = u32::from_le_bytes(b[0..4].try_into().expect("4 bytes"));
        let code = i32::from_le_bytes(b[4..8].try_into().expect("4 bytes"));
        let n =
            (u32::from_le_bytes(b[8..12].try_into().expect("4 bytes")) as usize).min(b.len() - 12);
        let message = String::from_utf8_lossy(&b[12..12 + n]).into_owned();
        out.push(ibdyn_intercomm::ChildFailure {
            rank,
            code,
            message,
        });
        b = &b[12 + n..];
    }
    out
}
