//! The collectives of ibdyn's communicators: `PointToPoint` for
//! `ibdyn_intercomm::Communicator`, and the per-communicator collective state cached on it
//! (the front end's `Collectives` of an intracommunicator, `InterCollectives` of an
//! intercommunicator). The only module that names the concrete communicator; without the
//! `comm` feature the crate is the algorithms, the tiers and the intercommunicator
//! collectives over any `PointToPoint` (what the mock tests run).

use crate::error::{CollError, Result};
use crate::p2p::{P2pRequest, PointToPoint};
use crate::{AlgoConfig, Collectives, InterCollectives};
use ibdyn_intercomm::{CommError, Communicator, Request};
use std::rc::Rc;
use std::sync::OnceLock;

impl PointToPoint for Communicator {
    type Request<'a>
        = Request<'a>
    where
        Self: 'a;

    fn rank(&self) -> usize {
        Communicator::rank(self) as usize
    }
    fn size(&self) -> usize {
        Communicator::size(self) as usize
    }
    fn isend<'a>(&'a self, buf: &'a [u8], dest: usize, tag: i32) -> Result<Request<'a>> {
        Communicator::isend(self, buf, dest as i32, tag).map_err(CollError::comm)
    }
    fn irecv<'a>(&'a self, buf: &'a mut [u8], src: usize, tag: i32) -> Result<Request<'a>> {
        Communicator::irecv(self, buf, src as i32, tag).map_err(CollError::comm)
    }
    fn context_id(&self) -> u64 {
        Communicator::context_id(self)
    }
    fn progress(&self) {
        // A probe drives the progress engine; what it finds does not matter here.
        if let Err(e) = self.iprobe(ibdyn_intercomm::ANY_SOURCE, ibdyn_intercomm::ANY_TAG) {
            tracing::trace!("progress while waiting on shared memory: {e}");
        }
        crate::patience::hook(false);
    }
    fn is_truncation(&self, e: &CollError) -> bool {
        match e {
            CollError::Comm(inner) => matches!(
                inner.downcast_ref::<CommError>(),
                Some(CommError::Truncated { .. })
            ),
            _ => false,
        }
    }
}

impl P2pRequest for Request<'_> {
    fn wait(self) -> Result<usize> {
        Request::wait(self)
            .map(|s| s.count)
            .map_err(CollError::comm)
    }
    fn test(&mut self) -> Result<Option<usize>> {
        Request::test(self)
            .map(|o| o.map(|s| s.count))
            .map_err(CollError::comm)
    }
}

impl From<CollError> for CommError {
    /// A point-to-point failure inside a collective comes back as itself (a dead peer stays a
    /// dead peer); every other collective error is wrapped.
    fn from(e: CollError) -> Self {
        match e {
            CollError::Comm(inner) => match inner.downcast::<CommError>() {
                Ok(c) => *c,
                Err(other) => CommError::Collective(other),
            },
            other => CommError::Collective(Box::new(other)),
        }
    }
}

/// Every process must make the same collective calls on a communicator in the same order, and
/// each call takes the next tag of the communicator's `Collectives`; so there is one per
/// communicator, cached on it, shared by every layer that runs collectives on it.
struct Cached(std::result::Result<Rc<Collectives<Communicator>>, String>);

/// The collectives of `comm` (an intracommunicator), made on first use with the settings of
/// `IBDYN_COLL_ALGO` (read once per process).
pub fn collectives_of(comm: &Communicator) -> Result<Rc<Collectives<Communicator>>> {
    static CONFIG: OnceLock<std::result::Result<AlgoConfig, String>> = OnceLock::new();
    if comm.is_inter() {
        return Err(CollError::arg(
            "collective",
            "this operation needs an intracommunicator",
        ));
    }
    let cfg = CONFIG.get_or_init(|| AlgoConfig::from_env().map_err(|e| e.to_string()));
    let cached = comm.attribute(|| {
        Cached(match cfg {
            Ok(cfg) => collectives_with(comm, cfg.clone())
                .map(Rc::new)
                .map_err(|e| e.to_string()),
            Err(e) => Err(e.clone()),
        })
    });
    match &cached.0 {
        Ok(c) => Ok(c.clone()),
        Err(e) => Err(CollError::BadSetting {
            setting: crate::ALGO_ENV.into(),
            why: e.clone(),
        }),
    }
}

/// New collectives on `comm` (an intracommunicator) with `config`, node-aware when `comm`
/// spans several nodes. Not cached: keep it, and call it collectively (e.g. on a `dup` of
/// the communicator, to compare settings side by side).
pub fn collectives_with(
    comm: &Communicator,
    config: AlgoConfig,
) -> Result<Collectives<Communicator>> {
    if comm.is_inter() {
        return Err(CollError::arg(
            "collective",
            "this operation needs an intracommunicator",
        ));
    }
    let ids = comm.node_ids().map_err(CollError::comm)?;
    Collectives::with_config(comm.collective_view(), config)?.with_nodes(&ids)
}

struct CachedInter(std::result::Result<Rc<InterCollectives<Communicator>>, String>);

/// The collectives of intercommunicator `comm`, made on first use and cached on it.
pub fn inter_collectives_of(comm: &Communicator) -> Result<Rc<InterCollectives<Communicator>>> {
    if !comm.is_inter() {
        return Err(CollError::arg(
            "intercommunicator collective",
            "this operation needs an intercommunicator",
        ));
    }
    let cached = comm.attribute(|| {
        CachedInter(
            inter_collectives(comm)
                .map(Rc::new)
                .map_err(|e| e.to_string()),
        )
    });
    match &cached.0 {
        Ok(c) => Ok(c.clone()),
        Err(e) => Err(CollError::Failed(format!(
            "intercommunicator collectives: {e}"
        ))),
    }
}

fn inter_collectives(comm: &Communicator) -> Result<InterCollectives<Communicator>> {
    let local = collectives_of(&comm.local_comm())?;
    InterCollectives::new(
        local,
        comm.collective_view(),
        comm.remote_size() as usize,
        comm.runtime().card().node_uid,
    )
}
