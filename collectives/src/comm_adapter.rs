//! `PointToPoint` for ibdyn communicators. Collectives run on a communicator's collective
//! view: `Collectives::new(comm.collective_view())`.

use crate::error::{CollError, Result};
use crate::p2p::{P2pRequest, PointToPoint};
use ibdyn_intercomm::{Communicator, Request};

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

/// Every process must make the same collective calls on a communicator in the same order, and
/// each call takes the next tag of the communicator's `Collectives`; so there is one per
/// communicator, cached on it, shared by every layer that runs collectives on it.
struct Cached(std::result::Result<std::rc::Rc<crate::Collectives<Communicator>>, String>);

/// The collectives of `comm` (an intracommunicator), made on first use with the settings of
/// `IBDYN_COLL_ALGO` (read once per process).
pub fn collectives_of(
    comm: &Communicator,
) -> Result<std::rc::Rc<crate::Collectives<Communicator>>> {
    static CONFIG: std::sync::OnceLock<std::result::Result<crate::AlgoConfig, String>> =
        std::sync::OnceLock::new();
    if comm.is_inter() {
        return Err(CollError::arg(
            "collective",
            "this operation needs an intracommunicator",
        ));
    }
    let cfg = CONFIG.get_or_init(|| crate::AlgoConfig::from_env().map_err(|e| e.to_string()));
    let cached = comm.attribute(|| {
        Cached(match cfg {
            Ok(cfg) => collectives_with(comm, cfg.clone())
                .map(std::rc::Rc::new)
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
    config: crate::AlgoConfig,
) -> Result<crate::Collectives<Communicator>> {
    if comm.is_inter() {
        return Err(CollError::arg(
            "collective",
            "this operation needs an intracommunicator",
        ));
    }
    let ids = comm.node_ids().map_err(CollError::comm)?;
    crate::Collectives::with_config(comm.collective_view(), config)?.with_nodes(&ids)
}
