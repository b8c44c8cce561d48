//! A prestarted copy (the `ibdyn_prestart` spawn info key) opens what does not depend on
//! its job or rank before it waits for its assignment, so that the spawn that takes it
//! does not wait for it: the shared-memory receive queue (named by pid), the permission for
//! peers' single-copy reads, and the fabric's job-independent part (bound sockets; an
//! InfiniBand device's queues).

use crate::error::Result;
use ibdyn_pmi::prestart::{self, Waited};
use ibdyn_shm::{RecvQueue, ShmConfig};
use ibdyn_verbs::{FabricConfig, Preopened};

pub(crate) struct Opened {
    pub(crate) rx: RecvQueue,
    pub(crate) fabric: Option<Preopened>,
}

/// What every process opens on its node: its receive queue, and the permission for peers'
/// single-copy reads.
pub(crate) fn open_local() -> Result<Opened> {
    let rx = RecvQueue::create(&ShmConfig::from_env()?)?;
    if let Err(e) = ibdyn_shm::cma::allow_peers() {
        tracing::debug!("could not allow peers to read this process: {e}");
    }
    Ok(Opened { rx, fabric: None })
}

/// `open_local` and the fabric's job-independent part.
fn open_ahead() -> Result<Opened> {
    let mut opened = open_local()?;
    // A failure shows again, with its consequences, when the fabric is opened for real.
    opened.fabric = Preopened::open(&FabricConfig::default())
        .inspect_err(|e| tracing::debug!("opening the fabric ahead: {e}"))
        .ok();
    Ok(opened)
}

/// In a waiting copy: opens ahead, then waits for the assignment (and ends quietly, its
/// shared memory removed, if none comes). None in a process started for its rank. A
/// template opens nothing: it forks copies, and each opens its own.
pub(crate) fn open_then_wait() -> Result<Option<Opened>> {
    prestart::serve_forks()?;
    if !prestart::is_waiting_copy() {
        return Ok(None);
    }
    let opened = open_ahead()?;
    if prestart::wait_for_assignment()? == Waited::NotNeeded {
        drop(opened);
        std::process::exit(0);
    }
    Ok(Some(opened))
}
