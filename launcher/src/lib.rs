//! Process manager: the `ibdyn run` launcher, the node daemon that serves PMI to the ranks,
//! the DVM, and the `ibdyn` command. Every daemon stands for one node (on this machine, or on
//! a host started through ssh, an exec template or srun: `hosts`); they talk to each other
//! and to the launcher over TCP, every connection opened by an HMAC challenge-response over
//! the per-job secret, and run fence / allgather as a tree. Applications never link this crate: they reach it through
//! PMI (see `ibdyn-pmi`) and the dynamic-process layer (`ibdyn-spawn`).

/// `eprintln!` that never panics: a message to a stderr whose reader has gone (`ibdyn run ...
/// 2>&1 | head`) is dropped instead of ending the launcher with a panic.
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

/// `println!` that never panics (`ibdyn info | head -1`).
macro_rules! tell {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout(), $($arg)*);
    }};
}

pub mod cli;
pub mod daemon;
pub mod dvm;
mod error;
mod foreign_mpi;
pub mod hosts;
mod jobtable;
mod link;
pub mod mpmd;
mod output;
pub mod placement;
mod protocol;
pub mod psets;
mod rank_files;
mod rlimit;
pub mod run;
pub mod secret;
mod signals;
mod spellings;
mod stdin_fg;
mod time_limit;

pub use daemon::{daemon_main, App, DaemonOptions, JobSpec};
pub use dvm::{dvm_dir, dvm_serve, dvm_start, dvm_stop, run_on_dvm, DvmJob};
pub use error::{LaunchError, Result};
pub use placement::{MapBy, Placement};
pub use run::{resolve_program, run, Adopt, RunOptions};
