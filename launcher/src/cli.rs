//! The `ibdyn` command line: `run`, `dvm`, `info` and the hidden `daemon`.

use crate::{Adopt, DaemonOptions, LaunchError, MapBy, RunOptions};
use clap::{Parser, Subcommand};
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
        /// Submit the job to the running DVM (`ibdyn dvm start`) instead of starting daemons.
        #[arg(long)]
        dvm: bool,
        /// Name a process set of the job for MPI Sessions: `NAME=RANKS`, e.g.
        /// `--pset app://even=0,2,4` (ranks and ranges like `4-7`); repeatable.
        #[arg(long = "pset", value_name = "NAME=RANKS")]
        psets: Vec<String>,
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
    /// Grow or shrink a running job (under `ibdyn run` or `ibdyn dvm`): posts a resource
    /// change against the job's main process set; the job's processes see it pending.
    Resize {
        /// The job id (optional when one daemon set runs one job).
        job: Option<u32>,
        /// Start N more processes.
        #[arg(long, value_name = "N", group = "change")]
        grow: Option<u32>,
        /// Retire the last N processes of the main set.
        #[arg(long, value_name = "N", group = "change")]
        shrink: Option<u32>,
        /// Retire the processes of the set NAME.
        #[arg(long, value_name = "NAME", group = "change")]
        shrink_set: Option<String>,
        /// List the running jobs (id, main set, size) and their daemons' contact.
        #[arg(long, group = "change")]
        list: bool,
        /// The root daemon's PMI socket (SESSION_DIR/node0/pmi.sock) when several run.
        #[arg(long)]
        contact: Option<PathBuf>,
    },
    /// Version, fabric providers, CMA permission, shared-memory directory, the MPI ABI library.
    Info,
    /// Compile and link a C MPI program against ibdyn's MPI ABI library (like `mpicc`): runs
    /// `ibdyn-cc` from beside this binary with the arguments given.
    Cc {
        /// Arguments for the C compiler (`-show` prints the command instead).
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
    /// Persistent node daemons that `ibdyn run --dvm` submits jobs to.
    Dvm {
        #[command(subcommand)]
        action: DvmAction,
    },
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

#[derive(Subcommand)]
enum DvmAction {
    /// Start K node daemons in the background; prints where the contact file is.
    Start {
        #[arg(long, default_value_t = 1)]
        nodes: u32,
    },
    /// End the DVM, its jobs and daemons.
    Stop,
    /// The DVM controller itself (started by `dvm start`).
    #[command(hide = true)]
    Serve {
        #[arg(long)]
        nodes: u32,
    },
}

fn dvm(action: DvmAction) -> i32 {
    let r = match action {
        DvmAction::Start { nodes } => crate::dvm_start(nodes).map(|p| {
            println!(
                "ibdyn dvm: {nodes} node daemon(s) running; contact file {}",
                p.display()
            );
            0
        }),
        DvmAction::Stop => crate::dvm_stop().map(|_| {
            println!("ibdyn dvm: stopped");
            0
        }),
        DvmAction::Serve { nodes } => crate::dvm_serve(nodes),
    };
    r.unwrap_or_else(|e| {
        eprintln!("ibdyn dvm: {e}");
        1
    })
}

fn init_logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_env(ibdyn_pmi::env::LOG)
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .try_init();
}

/// A file that ships beside the `ibdyn` binary (the same build or installation).
fn beside_this_binary(name: &str) -> Option<PathBuf> {
    let me = std::env::current_exe().ok()?;
    // The tests run the command as an example: target/<profile>/examples/ibdyn.
    let dirs = [
        me.parent()?.to_path_buf(),
        me.parent()?.parent()?.to_path_buf(),
    ];
    dirs.into_iter().map(|d| d.join(name)).find(|p| p.exists())
}

/// `ibdyn cc ARGS`: `ibdyn-cc ARGS`, found beside this binary or on PATH.
fn compile_c(args: &[String]) -> i32 {
    let cc = beside_this_binary("ibdyn-cc").unwrap_or_else(|| PathBuf::from("ibdyn-cc"));
    match std::process::Command::new(&cc).args(args).status() {
        Ok(st) => st.code().unwrap_or(1),
        Err(e) => {
            eprintln!(
                "ibdyn cc: cannot run {}: {e} (build it with `cargo build -p ibdyn-abi`)",
                cc.display()
            );
            127
        }
    }
}

/// `ibdyn resize --list`: the jobs a resize can name.
fn list_jobs(contact: Option<PathBuf>) -> i32 {
    match crate::psets::list(contact.as_deref()) {
        Ok(found) => {
            for (sock, sets) in found {
                for d in sets {
                    let job = d.members.first().map_or(0, |m| m.0);
                    println!(
                        "job {job}: main set {} ({} processes), contact {}",
                        d.name,
                        d.members.len(),
                        sock.display()
                    );
                }
            }
            0
        }
        Err(e) => {
            eprintln!("ibdyn resize --list: {e}");
            1
        }
    }
}

/// `ibdyn resize`: prints the delta set and the new main set.
fn resize(
    job: Option<u32>,
    grow: Option<u32>,
    shrink: Option<u32>,
    shrink_set: Option<String>,
    contact: Option<PathBuf>,
) -> i32 {
    use crate::psets::Resize;
    let change = match (grow, shrink, shrink_set) {
        (Some(n), None, None) => Resize::Grow(n),
        (None, Some(n), None) => Resize::Shrink(n),
        (None, None, Some(s)) => Resize::ShrinkSet(s),
        _ => {
            eprintln!("ibdyn resize: give one of --grow N, --shrink N, --shrink-set NAME");
            return 2;
        }
    };
    match crate::psets::resize(job, &change, contact.as_deref()) {
        Ok(sets) => {
            for (what, d) in ["delta", "new main set"].iter().zip(&sets) {
                println!("{what}: {} ({} processes)", d.name, d.members.len());
            }
            0
        }
        Err(e) => {
            eprintln!("ibdyn resize: {e}");
            match e {
                LaunchError::Usage(_) => 2,
                _ => 1,
            }
        }
    }
}

/// `ibdyn info`: what this machine offers a job.
fn info() -> i32 {
    // A report for a terminal or a pipe: `ibdyn info | head` ends quietly, like other tools.
    // SAFETY: restoring the default disposition of SIGPIPE has no memory-safety preconditions.
    unsafe { libc::signal(libc::SIGPIPE, libc::SIG_DFL) };
    println!("ibdyn {}", env!("CARGO_PKG_VERSION"));
    match beside_this_binary("libmpi_abi.so") {
        Some(p) => println!(
            "MPI ABI library: {} (load it as libmpi_abi.so.1; `ibdyn cc` compiles against it)",
            p.display()
        ),
        None => println!("MPI ABI library: not built (cargo build -p ibdyn-abi)"),
    }
    match ibdyn_verbs::devices() {
        Ok(d) if d.is_empty() => println!("InfiniBand devices: none"),
        Ok(d) => {
            println!("InfiniBand devices:");
            for x in d {
                println!(
                    "  {} port {}: {} {} lid {} mtu {}",
                    x.name, x.port, x.link_layer, x.state, x.lid, x.active_mtu
                );
            }
        }
        Err(e) => println!("InfiniBand devices: cannot list ({e})"),
    }
    let forced = std::env::var("IBDYN_PROVIDER")
        .ok()
        .filter(|v| !v.trim().is_empty());
    match ibdyn_verbs::FabricConfig::default().resolve_provider() {
        Ok(p) => println!(
            "fabric provider a job would use: {p}{}",
            match &forced {
                Some(v) => format!(" (forced by IBDYN_PROVIDER={v})"),
                None => " (IBDYN_PROVIDER=ib|sock forces one)".into(),
            }
        ),
        Err(e) => println!("fabric provider: {e}"),
    }
    println!("cross-memory attach (CMA): {}", ibdyn_shm::cma::probe());
    let shm = std::path::Path::new("/dev/shm");
    let writable = std::fs::metadata(shm).is_ok_and(|m| m.is_dir());
    println!(
        "shared-memory directory: /dev/shm ({})",
        if writable { "present" } else { "missing" }
    );
    0
}

/// Runs the command of this process's arguments; returns its exit status.
pub fn main() -> i32 {
    let cli = Cli::parse();
    init_logging();
    let code = match cli.cmd {
        Cmd::Run {
            nprocs,
            nodes,
            map_by,
            tag_output,
            keep_going,
            dvm,
            psets,
            adopt_ready_fd,
            jobid,
            mut command,
        } => {
            let program = command.remove(0);
            let preput = match crate::psets::preput(&psets, nprocs) {
                Ok(p) => p,
                Err(e) => {
                    eprintln!("ibdyn run: {e}");
                    return 2;
                }
            };
            if dvm {
                let r = crate::run_on_dvm(nprocs, &program, &command, tag_output, preput);
                return r.unwrap_or_else(|e| {
                    eprintln!("ibdyn run: {e}");
                    match e {
                        LaunchError::Program { .. } => 127,
                        _ => 1,
                    }
                });
            }
            let opts = RunOptions {
                preput,
                nprocs,
                nnodes: nodes,
                map_by,
                tag_output,
                program,
                args: command,
                daemon_exe: None,
                keep_going,
                adopt: adopt_ready_fd.map(|fd| Adopt {
                    ready_fd: fd,
                    jobid: jobid.unwrap_or(0),
                }),
            };
            match crate::run(opts) {
                Ok(status) => status,
                Err(e) => {
                    eprintln!("ibdyn run: {e}");
                    match e {
                        LaunchError::Program { .. } => 127,
                        _ => 1,
                    }
                }
            }
        }
        Cmd::Resize {
            list: true,
            contact,
            ..
        } => list_jobs(contact),
        Cmd::Resize {
            job,
            grow,
            shrink,
            shrink_set,
            contact,
            ..
        } => resize(job, grow, shrink, shrink_set, contact),
        Cmd::Info => info(),
        Cmd::Cc { args } => compile_c(&args),
        Cmd::Dvm { action } => dvm(action),
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
            match crate::daemon_main(opts) {
                Ok(c) => c,
                Err(e) => {
                    eprintln!("ibdyn daemon {index}: {e}");
                    1
                }
            }
        }
    };
    code
}
