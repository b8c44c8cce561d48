//! What a fabric can open before its process knows its job and rank: a prestarted copy
//! (the `ibdyn_prestart` spawn info key) opens it while it waits for its assignment, so
//! that a spawn which takes the copy does not pay for it.

use crate::config::{FabricConfig, ProviderKind};
use crate::error::Result;
use crate::provider::Provider;
use crate::sock::{BoundSockets, SockProvider};

/// Opened with a configuration whose job secret and local key may still be unknown; the
/// fabric is then opened with [`Fabric::open_with`](crate::Fabric::open_with) and the full
/// configuration (otherwise the same).
pub struct Preopened(Early);

enum Early {
    /// The sock provider keys its HELLO with the job secret: only its sockets come early.
    Sock(BoundSockets),
    /// An InfiniBand provider (device, protection domain, queues) knows no job identity.
    #[cfg(feature = "ib")]
    Ib(Box<dyn Provider>),
}

impl Preopened {
    pub fn open(cfg: &FabricConfig) -> Result<Preopened> {
        Ok(Preopened(match cfg.resolve_provider()? {
            ProviderKind::Sock => Early::Sock(BoundSockets::bind(cfg)?),
            #[cfg(feature = "ib")]
            ProviderKind::Ib => Early::Ib(Box::new(crate::ib::IbProvider::open(cfg)?)),
            #[cfg(not(feature = "ib"))]
            ProviderKind::Ib => return Err(crate::VerbsError::IbNotCompiled),
        }))
    }

    pub(crate) fn into_provider(self, cfg: &FabricConfig) -> Result<Box<dyn Provider>> {
        Ok(match self.0 {
            Early::Sock(sockets) => {
                Box::new(SockProvider::open_on(cfg, sockets.rebound_for(cfg)?)?)
            }
            #[cfg(feature = "ib")]
            Early::Ib(p) => p,
        })
    }
}
