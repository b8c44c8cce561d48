//! ibdyn-verbs: the inter-node fabric.
//!
//! Two providers behind one small trait ([`provider::Provider`]): `ib` (libibverbs through
//! `rdma-sys`, cargo feature `ib`, on by default) and `sock` (UDP for UD, TCP for RC, RDMA emulated
//! by the target's progress loop). Shared above both: the UD control channel
//! (retransmission, duplicate suppression, packetisation, authentication keyed from the job secret) and the on-demand RC
//! connection manager. [`Fabric`] ties them together.
//!
//! Build without libibverbs headers: `cargo build -p ibdyn-verbs --no-default-features`; the
//! runtime is then complete on `sock`.

mod auth;
mod card;
mod config;
mod conn_wire;
mod connmgr;
mod error;
mod fabric;
pub mod iface;
mod pieces;
mod preopen;
pub mod provider;
pub mod regcache;
mod sock;
mod ud_channel;

#[cfg(feature = "ib")]
pub mod ib;

#[cfg(test)]
mod fake;
#[cfg(test)]
mod tests;

pub use card::{AddressCard, IbAddr, SockAddr};
pub use config::{FabricConfig, ProviderKind};
pub use connmgr::ConnStats;
pub use error::{Result, VerbFailure, VerbsError};
pub use fabric::{Event, Fabric, FabricStats, RemoteBuf};
pub use preopen::Preopened;
pub use ud_channel::ChannelStats;

/// One InfiniBand/RoCE device port, for `ibdyn info`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceInfo {
    pub name: String,
    pub port: u8,
    pub link_layer: String,
    pub state: String,
    pub lid: u16,
    pub active_mtu: u32,
}

/// The InfiniBand devices present; `Ok(empty)` when none (or when built without `ib`).
pub fn devices() -> Result<Vec<DeviceInfo>> {
    #[cfg(feature = "ib")]
    {
        ib::devices()
    }
    #[cfg(not(feature = "ib"))]
    {
        Ok(Vec::new())
    }
}
