//! Dynamic processes in rsmpi's shape: `world.process_at_rank(root).spawn(&cmd, n)` returns
//! an intercommunicator to the children; children find theirs with `universe.parent()`;
//! independently started jobs meet through ports (`open_port`, `accept`, `connect`) and the
//! daemons' name service.

use crate::point_to_point::Process;
use crate::{Communicator, Result};
use std::process::Command;

pub use ibdyn_spawn::dynamic::{
    close_port, lookup_name, open_port, publish_name, unpublish_name, Port, SpawnOptions, Wireup,
};

/// Spawning, collective over the communicator, with this process as the root.
pub trait Spawn {
    /// Starts `maxprocs` copies of `cmd` (program, arguments, environment and working
    /// directory are taken from it). Returns the intercommunicator to the children.
    fn spawn(&self, cmd: &Command, maxprocs: u32) -> Result<Communicator>;
    /// `spawn` with info keys (`host`, `wdir`, ...), the wire-up kind and the timeout.
    fn spawn_with(&self, cmd: &Command, maxprocs: u32, opts: &SpawnOptions)
        -> Result<Communicator>;
    /// Several programs as one job (MPI_Comm_spawn_multiple), ranks numbered in order.
    fn spawn_multiple(&self, cmds: &[(&Command, u32)], opts: &SpawnOptions)
        -> Result<Communicator>;
}

impl Spawn for Process<'_> {
    fn spawn(&self, cmd: &Command, maxprocs: u32) -> Result<Communicator> {
        self.spawn_with(cmd, maxprocs, &SpawnOptions::default())
    }
    fn spawn_with(
        &self,
        cmd: &Command,
        maxprocs: u32,
        opts: &SpawnOptions,
    ) -> Result<Communicator> {
        ibdyn_spawn::dynamic::spawn_multiple(
            self.communicator(),
            self.rank(),
            &[(cmd, maxprocs)],
            opts,
        )
    }
    fn spawn_multiple(
        &self,
        cmds: &[(&Command, u32)],
        opts: &SpawnOptions,
    ) -> Result<Communicator> {
        ibdyn_spawn::dynamic::spawn_multiple(self.communicator(), self.rank(), cmds, opts)
    }
}

/// Client/server connection, collective over the communicator, with this process as root.
pub trait ConnectAccept {
    /// Waits for one job to connect on `port` (opened by this process).
    fn accept(&self, port: &Port) -> Result<Communicator>;
    /// Connects to the job accepting on the port named `port_name`.
    fn connect(&self, port_name: &str) -> Result<Communicator>;
}

impl ConnectAccept for Process<'_> {
    fn accept(&self, port: &Port) -> Result<Communicator> {
        ibdyn_spawn::dynamic::accept(port, self.communicator(), self.rank())
    }
    fn connect(&self, port_name: &str) -> Result<Communicator> {
        ibdyn_spawn::dynamic::connect(port_name, self.communicator(), self.rank())
    }
}
