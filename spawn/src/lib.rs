//! Process manager: the `ibdyn run` launcher and the node daemon that serves PMI to the ranks.
//! Every daemon stands for one node; they talk to each other and to the launcher over TCP on
//! loopback, authenticated by a per-job secret, and run fence / allgather as a tree.

pub mod daemon;
pub mod dvm;
pub mod dynamic;
mod error;
mod jobtable;
pub mod launcher;
mod link;
pub mod placement;
mod report;
pub mod secret;
mod signals;

pub use daemon::{daemon_main, App, DaemonOptions, JobSpec};
pub use dvm::{dvm_dir, dvm_serve, dvm_start, dvm_stop, run_on_dvm};
pub use error::{Result, SpawnError};
pub use launcher::{resolve_program, run, Adopt, RunOptions};
pub use placement::{MapBy, Placement};
