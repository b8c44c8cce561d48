//! `ibdyn-bench`: one binary, one subcommand per benchmark. Each prints, in the same run,
//! the physical limit it is measured against (rows marked `floor`).

mod bw;
mod coll;
mod coll_plot;
mod dynamic;
mod floors;
mod floors_net;
mod floors_proc;
mod hosts_spawn;
mod init;
mod intercomm_coll;
mod intercomm_loop;
mod job;
mod latency;
mod launch;
mod machine;
mod merge_loop;
mod netlab;
mod plot_text;
mod pmi;
mod report;
mod res_change;
mod res_timeline;
mod session_init;
mod spawn_burst;
mod spawn_plot;
mod spawn_report;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "ibdyn-bench",
    about = "ibdyn benchmarks (OSU-style tables; --json for JSON Lines)"
)]
struct Cli {
    /// Print JSON Lines (one object per measured row) instead of a table.
    #[arg(long, global = true)]
    json: bool,
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// PMI put+fence+get, allgather, iallgather+wait, and overlap.
    Pmi(pmi::Args),
    /// Wall time of `ibdyn run -n N` of a program that only initialises and finalises
    /// (`--hosts 1,2,4,8`: across namespace hosts through ssh, against mpiexec.hydra).
    Launch(launch::Args),
    /// Point-to-point one-way latency between two ranks (OSU style).
    Latency(latency::Args),
    /// Point-to-point bandwidth between two ranks, window of 64 (OSU style).
    Bw(bw::Args),
    /// Intracommunicator collective latency, 8 B to 1 MiB (OSU style).
    Coll(coll::Args),
    /// Intercommunicator collective latency (1+3, 2+2, 1+7), 8 B to 1 MiB (OSU style).
    IntercommColl(intercomm_coll::Args),
    /// Start-up time and connections held: on-demand against all-to-all wire-up.
    Init(init::Args),
    /// Time of the spawn call at the parent root (P parents, N children).
    SpawnLatency(dynamic::Args),
    /// Back-to-back spawns per second, children alive until the end.
    SpawnRate(dynamic::Args),
    /// Spawns in bursts: latency per position in a burst of back-to-back spawns, burst wall
    /// time against its fork+exec floor; with --prestart, where the copies run out.
    SpawnBurst(spawn_burst::Args),
    /// Resource changes (seed 000 Table 1): grow/shrink a loop-based job every K iterations.
    ResChange(res_change::Args),
    /// Session::init, group_from_pset and create_comm, cold, re-init, and beside a universe.
    SessionInit(session_init::Args),
    /// Intercommunicator merge latency, N children for N parents.
    Merge(dynamic::Args),
    /// Inter- against intra-communicator ping-pong.
    IntercommLatency(dynamic::Args),
    /// What this machine charges for steps no runtime avoids: cpuid, waking a sleeping
    /// thread (same core, another core), first touch of a shared page, fork+exec.
    Machine(machine::Args),
    /// Draws the loop-method intercommunicator-collective table (files of
    /// scripts/compare-peers.sh --out) to a PNG.
    PlotIntercomm(coll_plot::Args),
}

fn main() {
    // A table piped into `head` ends the program quietly, as other command-line tools do
    // (the ranks of a benchmark's job keep Rust's default: their output goes to the launcher).
    if !job::in_job() {
        // SAFETY: restoring SIGPIPE's default action before any thread starts.
        unsafe { libc::signal(libc::SIGPIPE, libc::SIG_DFL) };
    }
    let cli = Cli::parse();
    let result = match cli.cmd {
        Cmd::Pmi(a) => pmi::run(a, cli.json),
        Cmd::Launch(a) => launch::run(a, cli.json),
        Cmd::Latency(a) => latency::run(a, cli.json),
        Cmd::Bw(a) => bw::run(a, cli.json),
        Cmd::Coll(a) => coll::run(a, cli.json),
        Cmd::Init(a) => init::run(a, cli.json),
        Cmd::SpawnLatency(a) => dynamic::run(dynamic::Which::SpawnLatency, a, cli.json),
        Cmd::SpawnRate(a) => dynamic::run(dynamic::Which::SpawnRate, a, cli.json),
        Cmd::Merge(a) => dynamic::run(dynamic::Which::Merge, a, cli.json),
        Cmd::IntercommLatency(a) => dynamic::run(dynamic::Which::IntercommLatency, a, cli.json),
        Cmd::IntercommColl(a) => intercomm_coll::run(a, cli.json),
        Cmd::SpawnBurst(a) => spawn_burst::run(a, cli.json),
        Cmd::ResChange(a) => res_change::run(a, cli.json),
        Cmd::SessionInit(a) => session_init::run(a, cli.json),
        Cmd::Machine(a) => machine::run(a, cli.json),
        Cmd::PlotIntercomm(a) => coll_plot::run(a),
    };
    if let Err(e) = result {
        eprintln!("ibdyn-bench: {e}");
        std::process::exit(1);
    }
}
