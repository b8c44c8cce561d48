//! Dynamic processes in rsmpi's shape: `world.process_at_rank(root).spawn(&cmd, n)` returns
//! an intercommunicator to the children; children find theirs with `universe.parent()`;
//! independently started jobs meet through ports (`open_port`, `accept`, `connect`) and the
//! daemons' name service. All of them are collective over an intracommunicator.

use crate::communicator::sealed::Kind;
use crate::point_to_point::Process;
use crate::{Communicator, InterCommunicator, IntraCommunicator, Result};
use std::process::Command;

pub use ibdyn_spawn::dynamic::{Port, SpawnOptions, Wireup};

/// Spawning, collective over an intracommunicator, with this process as the root.
pub trait Spawn {
    /// Starts `maxprocs` copies of `cmd` (program, arguments, environment and working
    /// directory are taken from it). Returns the intercommunicator to the children
    /// (MPI_Comm_spawn).
    fn spawn(&self, cmd: &Command, maxprocs: u32) -> Result<InterCommunicator>;
    /// `spawn` with info keys (`host`, `wdir`, ...), the wire-up kind and the timeout
    /// (MPI_Comm_spawn with an MPI_Info).
    fn spawn_with(
        &self,
        cmd: &Command,
        maxprocs: u32,
        opts: &SpawnOptions,
    ) -> Result<InterCommunicator>;
    /// Several programs as one job, ranks numbered in order (MPI_Comm_spawn_multiple).
    fn spawn_multiple(
        &self,
        cmds: &[(&Command, u32)],
        opts: &SpawnOptions,
    ) -> Result<InterCommunicator>;
}

impl Spawn for Process<'_, IntraCommunicator> {
    fn spawn(&self, cmd: &Command, maxprocs: u32) -> Result<InterCommunicator> {
        self.spawn_with(cmd, maxprocs, &SpawnOptions::default())
    }
    fn spawn_with(
        &self,
        cmd: &Command,
        maxprocs: u32,
        opts: &SpawnOptions,
    ) -> Result<InterCommunicator> {
        self.spawn_multiple(&[(cmd, maxprocs)], opts)
    }
    fn spawn_multiple(
        &self,
        cmds: &[(&Command, u32)],
        opts: &SpawnOptions,
    ) -> Result<InterCommunicator> {
        let comm = self.communicator().as_raw();
        Kind::wrap(ibdyn_spawn::dynamic::spawn_multiple(
            comm,
            self.rank(),
            cmds,
            opts,
        )?)
    }
}

/// Client/server connection, collective over an intracommunicator, with this process as
/// the root.
pub trait ConnectAccept {
    /// Waits for one job to connect on `port` (opened by this process) (MPI_Comm_accept).
    fn accept(&self, port: &Port) -> Result<InterCommunicator>;
    /// Connects to the job accepting on the port named `port_name` (MPI_Comm_connect).
    fn connect(&self, port_name: &str) -> Result<InterCommunicator>;
}

impl ConnectAccept for Process<'_, IntraCommunicator> {
    fn accept(&self, port: &Port) -> Result<InterCommunicator> {
        let comm = self.communicator().as_raw();
        Kind::wrap(ibdyn_spawn::dynamic::accept(port, comm, self.rank())?)
    }
    fn connect(&self, port_name: &str) -> Result<InterCommunicator> {
        let comm = self.communicator().as_raw();
        Kind::wrap(ibdyn_spawn::dynamic::connect(port_name, comm, self.rank())?)
    }
}

/// Opens a port on this process, the root that will accept on it (MPI_Open_port); any
/// communicator of this process serves.
pub fn open_port<C: Communicator>(comm: &C) -> Port {
    ibdyn_spawn::dynamic::open_port(comm.as_raw())
}

/// Closes a port opened by `open_port`; connections made through it stay (MPI_Close_port).
pub fn close_port(port: Port) {
    ibdyn_spawn::dynamic::close_port(port)
}

/// Publishes `port` under `service` in the daemons' name service (MPI_Publish_name).
pub fn publish_name<C: Communicator>(comm: &C, service: &str, port: &Port) -> Result<()> {
    ibdyn_spawn::dynamic::publish_name(comm.as_raw(), service, port)
}

/// The port name published under `service` (MPI_Lookup_name).
pub fn lookup_name<C: Communicator>(comm: &C, service: &str) -> Result<String> {
    ibdyn_spawn::dynamic::lookup_name(comm.as_raw(), service)
}

/// Withdraws the name `service` (MPI_Unpublish_name).
pub fn unpublish_name<C: Communicator>(comm: &C, service: &str) -> Result<()> {
    ibdyn_spawn::dynamic::unpublish_name(comm.as_raw(), service)
}
