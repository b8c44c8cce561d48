//! The `ibdyn` command-line tool.

use clap::{Parser, Subcommand};
use ibdyn_spawn::{DaemonOptions, MapBy, RunOptions};
use std::io::IsTerminal;
use std::net::SocketAddr;
use std::path::PathBuf;

#[derive(Parser)]
#[command(
    name = "ibdyn",
    version,
    about = "InfiniBand-native runtime for dynamic parallel jobs"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Run a parallel job: N processes of PROGRAM on K node daemons of this machine.
    Run {
        /// Number of processes.
        #[arg(short = 'n', long = "np", default_value_t = 1)]
        nprocs: u32,
        /// Number of node daemons (each stands for one node).
        #[arg(long, default_value_t = 1)]
        nodes: u32,
        /// Placement: `slot` fills nodes block-wise, `node` goes round-robin.
        #[arg(long, value_enum, default_value_t = MapBy::Slot)]
        map_by: MapBy,
        /// Prefix every output line with `[rank] ` (`[job.rank] ` for spawned jobs).
        #[arg(long)]
        tag_output: bool,
        /// A rank of the job ending abnormally is reported; the rest runs on (exit status
        /// non-zero at the end).
        #[arg(long)]
        keep_going: bool,
        /// Private launcher of a singleton: write the ready line to this descriptor.
        #[arg(long, hide = true, requires = "jobid")]
        adopt_ready_fd: Option<i32>,
        /// Job id of the adopted singleton.
        #[arg(long, hide = true)]
        jobid: Option<u32>,
        /// The program and its arguments.
        #[arg(required = true, trailing_var_arg = true, allow_hyphen_values = true)]
        command: Vec<String>,
    },
    /// Version, fabric providers, CMA permission, shared-memory directory.
    Info,
    /// A node daemon (started by `ibdyn run`).
    #[command(hide = true)]
    Daemon {
        #[arg(long)]
        index: u32,
        #[arg(long)]
        nnodes: u32,
        #[arg(long)]
        session_dir: PathBuf,
        #[arg(long)]
        launcher: SocketAddr,
    },
}

fn init_logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_env(ibdyn::pmi::env::LOG)
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .try_init();
}

fn main() {
    let cli = Cli::parse();
    init_logging();
    let code = match cli.cmd {
        Cmd::Run {
            nprocs,
            nodes,
            map_by,
            tag_output,
            keep_going,
            adopt_ready_fd,
            jobid,
            mut command,
        } => {
            let program = command.remove(0);
            let opts = RunOptions {
                nprocs,
                nnodes: nodes,
                map_by,
                tag_output,
                program,
                args: command,
                daemon_exe: None,
                keep_going,
                adopt: adopt_ready_fd.map(|fd| ibdyn_spawn::Adopt {
                    ready_fd: fd,
                    jobid: jobid.unwrap_or(0),
                }),
            };
            match ibdyn_spawn::run(opts) {
                Ok(status) => status,
                Err(e) => {
                    eprintln!("ibdyn run: {e}");
                    match e {
                        ibdyn_spawn::SpawnError::Program { .. } => 127,
                        _ => 1,
                    }
                }
            }
        }
        Cmd::Info => {
            println!("ibdyn {}", env!("CARGO_PKG_VERSION"));
            0
        }
        Cmd::Daemon {
            index,
            nnodes,
            session_dir,
            launcher,
        } => {
            let opts = DaemonOptions {
                index,
                nnodes,
                session_dir,
                launcher,
            };
            match ibdyn_spawn::daemon_main(opts) {
                Ok(c) => c,
                Err(e) => {
                    eprintln!("ibdyn daemon {index}: {e}");
                    1
                }
            }
        }
    };
    std::process::exit(code);
}
