//! Process-management interface: the PMI-1 wire protocol ("simple PMI"), ibdyn's extensions
//! (allgather, non-blocking ifence / iallgather, get_wait), the server-side state a node
//! daemon keeps, and the client a process uses.

mod client;
mod conn;
pub mod env;
mod error;
mod ibdyn;
mod idle;
pub mod jobs;
pub mod mapping;
mod pmi1;
pub mod prestart;
mod private_launcher;
pub mod pset_ops;
pub mod psets;
mod server;
mod session;
mod singleton;
pub mod state;
pub mod wire;

pub use client::{PmiClient, PmiRequest, DEFAULT_GET_WAIT, DEFAULT_TIMEOUT};
pub use error::{PmiError, Result};
pub use idle::{set_idle_hook, set_idle_slice};
pub use jobs::{kvsname_of, ChildStart, JobStatus, RankExit, SpawnReply};
pub use mapping::{ProcessMapping, PROCESS_MAPPING_KEY};
pub use private_launcher::FINALIZED_LINE as SINGLETON_FINALIZED_LINE;
pub use server::{PmiCompletion, ServerKind};
pub use wire::{SpawnCommand, SpawnRequest};
