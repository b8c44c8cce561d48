//! The `ibdyn` command line: `run`, `dvm`, `info` and the hidden `daemon`.

use crate::placement::{Bind, Binding};
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

// Parsed once per command line: `run`'s many options need no box.
#[allow(clippy::large_enum_variant)]
#[derive(Subcommand)]
enum Cmd {
    /// Run a parallel job: N processes of PROGRAM on K node daemons of this machine, or on
    /// hosts (`--hosts`, `--hostfile`, a Slurm allocation), one node daemon each.
    Run {
        /// Number of processes (default: with hosts, one per slot, or `--ppn` per host, as
        /// mpirun does in a batch allocation; else 1).
        #[arg(short = 'n', long = "np")]
        nprocs: Option<u32>,
        /// Number of node daemons on this machine (each stands for one node; default 1).
        #[arg(long)]
        nodes: Option<u32>,
        #[command(flatten)]
        hosts: crate::hosts::HostArgs,
        /// Ranks per node: each node (or host, in place of its slots) takes N ranks at a
        /// time, wrapping around past the last (also `--npernode`, and `-ppn` as MPICH's
        /// mpiexec spells it).
        #[arg(long, visible_alias = "npernode", value_name = "N")]
        ppn: Option<u32>,
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
        /// Taken and ignored, as scripts written for Open MPI pass them: ibdyn runs more ranks
        /// than slots or cores without being asked, and runs as root.
        #[arg(long, hide = true)]
        oversubscribe: bool,
        #[arg(long, hide = true)]
        allow_run_as_root: bool,
        /// Bind each rank to one core or hardware thread of its node daemon's CPUs, in
        /// local-rank order (the job's own ranks and those `ibdyn resize` adds; spawned ones are not
        /// bound).
        #[arg(long, value_enum, value_name = "UNIT", default_value_t = Bind::None)]
        bind_to: Bind,
        /// Bind each rank to N consecutive units (cores unless `--bind-to` says otherwise), for
        /// ranks that run threads of their own (also `--cpus-per-proc`; Open MPI's `--map-by
        /// slot:PE=N` and Hydra's `-bind-to core:N` are taken as this).
        #[arg(long, value_name = "N", visible_alias = "cpus-per-proc")]
        cpus_per_rank: Option<u32>,
        /// Each rank of the job says on its stderr, before its own output, which CPUs it is
        /// bound to (or may use, unbound), with its host and pid.
        #[arg(long)]
        report_bindings: bool,
        /// Set NAME=VALUE for every rank of the job, or pass NAME on with its value here
        /// (repeatable; Open MPI's `-x`; MPICH's `-genv NAME VALUE` is taken too).
        #[arg(short = 'x', value_name = "NAME[=VALUE]")]
        export: Vec<String>,
        /// Each rank's stdout and stderr in files of their own, DIR/rank.R/stdout and
        /// DIR/rank.R/stderr (DIR/job.J/rank.R/... for spawned jobs), instead of here.
        #[arg(long, value_name = "DIR")]
        output_filename: Option<PathBuf>,
        /// The ranks' working directory (default: this one; relative to this one).
        #[arg(long, value_name = "DIR")]
        wdir: Option<PathBuf>,
        /// End the job after SECS seconds: its ranks (and those of the jobs it spawned) are
        /// killed and `ibdyn run` exits with 124, as `timeout` does. 0: no limit.
        #[arg(long, value_name = "SECS", env = "MPIEXEC_TIMEOUT")]
        timeout: Option<u64>,
        /// Submit the job to the running DVM (`ibdyn dvm start`) instead of starting daemons.
        #[arg(long)]
        dvm: bool,
        /// Run MPI programs on ibdyn's MPI ABI library: its directory goes first on the
        /// ranks' LD_LIBRARY_PATH (for binaries built with another `mpicc_abi`).
        #[arg(long)]
        abi: bool,
        /// Keep K copies of the program started ahead on every node daemon that runs it,
        /// for the job's growth (`ibdyn resize --grow`, resource changes) and for spawns of
        /// the same command (the spawn info key `ibdyn_prestart`).
        #[arg(long, value_name = "K")]
        prestart: Option<u32>,
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
        /// The program and its arguments; several applications in one job (MPMD) are
        /// separated by ` : `, each after the first with its own `-n N`:
        /// `ibdyn run -n 1 ./master : -n 4 ./worker`.
        #[arg(
            required_unless_present = "app",
            trailing_var_arg = true,
            allow_hyphen_values = true
        )]
        command: Vec<String>,
        /// The applications from a file instead of the command line: one a line, `-n N
        /// PROGRAM ARGS` quoted as a shell would, `#` comments (Open MPI's `--app`/appfile,
        /// Hydra's `-configfile`).
        #[arg(
            long,
            value_name = "FILE",
            visible_alias = "appfile",
            conflicts_with = "command"
        )]
        app: Option<PathBuf>,
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
        /// This daemon's index (default: `SLURM_PROCID`, for one srun starting them all).
        #[arg(long)]
        index: Option<u32>,
        #[arg(long)]
        nnodes: u32,
        #[arg(long)]
        session_dir: PathBuf,
        /// Where the launcher listens, best first.
        #[arg(long, value_delimiter = ',', required = true)]
        launcher: Vec<SocketAddr>,
        #[arg(long)]
        iface: Option<String>,
        /// Read the job secret from the first line of stdin (ssh passes no environment).
        #[arg(long)]
        secret_stdin: bool,
        /// The job's host names, by daemon index (the `host` info key of a spawn).
        #[arg(long, value_delimiter = ',')]
        host_names: Vec<String>,
    },
}

#[derive(Subcommand)]
enum DvmAction {
    /// Start K node daemons in the background; prints where the contact file is.
    Start {
        #[arg(long)]
        nodes: Option<u32>,
        #[command(flatten)]
        hosts: crate::hosts::HostArgs,
    },
    /// End the DVM, its jobs and daemons.
    Stop,
    /// The DVM controller itself (started by `dvm start`).
    #[command(hide = true)]
    Serve {
        #[arg(long)]
        nodes: u32,
        #[command(flatten)]
        hosts: crate::hosts::HostArgs,
    },
}

fn dvm(action: DvmAction) -> i32 {
    let r = match action {
        DvmAction::Start { nodes, hosts } => hosts
            .plan(nodes.is_some())
            .and_then(|plan| {
                let k = plan
                    .as_ref()
                    .map_or(nodes.unwrap_or(1), |p| p.hosts.len() as u32);
                crate::dvm_start(nodes.unwrap_or(1), &hosts.to_args()).map(|p| (k, p))
            })
            .map(|(k, p)| {
                tell!(
                    "ibdyn dvm: {k} node daemon(s) running; contact file {}",
                    p.display()
                );
                0
            }),
        DvmAction::Stop => crate::dvm_stop().map(|_| {
            tell!("ibdyn dvm: stopped");
            0
        }),
        DvmAction::Serve { nodes, hosts } => hosts
            .plan(false)
            .and_then(|plan| crate::dvm_serve(nodes, plan)),
    };
    r.unwrap_or_else(|e| {
        say!("ibdyn dvm: {e}");
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

/// `-x NAME=VALUE`, or `-x NAME` with this process's value.
fn exported(spec: &str) -> Result<(String, String), String> {
    let (name, value) = match spec.split_once('=') {
        Some((n, v)) => (n, Some(v.to_string())),
        None => (spec, None),
    };
    if name.is_empty() || name.chars().any(|c| c.is_whitespace() || c == '\0') {
        return Err("not a variable name".into());
    }
    let value = match value {
        Some(v) => v,
        None => std::env::var(name).map_err(|_| format!("{name} is not set here"))?,
    };
    Ok((name.to_string(), value))
}

/// `--wdir DIR` as an absolute path (the daemons' working directory may differ), checked to
/// be a directory when the ranks run on this machine.
fn working_dir(dir: &std::path::Path, here: bool) -> Result<String, String> {
    let abs = std::path::absolute(dir).map_err(|e| format!("--wdir {}: {e}", dir.display()))?;
    if here {
        match std::fs::metadata(&abs) {
            Ok(m) if m.is_dir() => {}
            Ok(_) => return Err(format!("--wdir {}: not a directory", abs.display())),
            Err(e) => return Err(format!("--wdir {}: {e}", abs.display())),
        }
    }
    abs.into_os_string()
        .into_string()
        .map_err(|_| format!("--wdir {}: not UTF-8", dir.display()))
}

/// The info keys every command of the job gets: `ibdyn_prestart`, `-x`'s variables, the
/// binding, `--report-bindings`, `--wdir` (`here`: checked, the ranks run on this machine).
fn job_info(
    prestart: Option<u32>,
    export: &[String],
    binding: Binding,
    report_bindings: bool,
    wdir: Option<PathBuf>,
    here: bool,
) -> Result<Vec<(String, String)>, String> {
    let mut info: Vec<(String, String)> = prestart
        .map(|k| ("ibdyn_prestart".to_string(), k.to_string()))
        .into_iter()
        .collect();
    for spec in export {
        let (name, value) = exported(spec).map_err(|e| format!("-x {spec}: {e}"))?;
        info.push(ibdyn_pmi::wire::env_info(&name, &value));
    }
    if binding.width == 0 {
        return Err("--cpus-per-rank must be at least 1".into());
    }
    if binding.unit != Bind::None {
        info.push(("ibdyn_bind".to_string(), binding.to_info()));
    }
    if report_bindings {
        info.push(("ibdyn_report_bindings".to_string(), "1".to_string()));
    }
    if let Some(dir) = wdir {
        info.push(ibdyn_pmi::wire::wdir_info(&working_dir(&dir, here)?));
    }
    Ok(info)
}

/// The process count when `-n` is not given: with hosts (`--hosts`, `--hostfile`, a Slurm
/// allocation) one per slot, or `--ppn` per host, as mpirun fills an allocation; else 1.
fn default_nprocs(plan: Option<&crate::hosts::HostPlan>, ppn: Option<u32>, dvm: bool) -> u32 {
    match plan {
        Some(p) if !dvm => match ppn {
            Some(n) => n.saturating_mul(p.hosts.len() as u32),
            None => p.hosts.iter().map(|h| h.slots).fold(0, u32::saturating_add),
        },
        _ => 1,
    }
    .max(1)
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
            say!(
                "ibdyn cc: cannot run {}: {e} (build it with `cargo build -p ibdyn-abi`)",
                cc.display()
            );
            127
        }
    }
}

/// `ibdyn run --abi`: ibdyn's libmpi_abi.so.1 (beside this binary, or in IBDYN_ABI_LIBDIR)
/// first on the library path the ranks (and the jobs they spawn) inherit.
fn put_abi_library_first() -> Result<(), String> {
    let lib = match std::env::var_os("IBDYN_ABI_LIBDIR") {
        Some(d) => Some(PathBuf::from(d).join("libmpi_abi.so")).filter(|p| p.exists()),
        None => beside_this_binary("libmpi_abi.so"),
    }
    .ok_or("libmpi_abi.so is not built beside this binary (cargo build -p ibdyn-abi) nor in IBDYN_ABI_LIBDIR")?;
    let dir = lib.parent().ok_or("the library has no directory")?;
    // Programs ask the loader for the SONAME, libmpi_abi.so.1; cargo writes libmpi_abi.so.
    let soname = dir.join("libmpi_abi.so.1");
    if !soname.exists() {
        std::os::unix::fs::symlink("libmpi_abi.so", &soname)
            .map_err(|e| format!("cannot create {}: {e}", soname.display()))?;
    }
    let mut path = std::ffi::OsString::from(dir);
    if let Some(old) = std::env::var_os("LD_LIBRARY_PATH").filter(|o| !o.is_empty()) {
        path.push(":");
        path.push(old);
    }
    // Single-threaded still: nothing else reads the environment concurrently.
    std::env::set_var("LD_LIBRARY_PATH", path);
    Ok(())
}

/// `ibdyn resize --list`: the jobs a resize can name.
fn list_jobs(contact: Option<PathBuf>) -> i32 {
    match crate::psets::list(contact.as_deref()) {
        Ok(found) => {
            for (sock, sets) in found {
                for d in sets {
                    let job = d.members.first().map_or(0, |m| m.0);
                    tell!(
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
            say!("ibdyn resize --list: {e}");
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
            say!("ibdyn resize: give one of --grow N, --shrink N, --shrink-set NAME");
            return 2;
        }
    };
    match crate::psets::resize(job, &change, contact.as_deref()) {
        Ok(sets) => {
            for (what, d) in ["delta", "new main set"].iter().zip(&sets) {
                tell!("{what}: {} ({} processes)", d.name, d.members.len());
            }
            0
        }
        Err(e) => {
            say!("ibdyn resize: {e}");
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
    tell!("ibdyn {}", env!("CARGO_PKG_VERSION"));
    match beside_this_binary("libmpi_abi.so") {
        Some(p) => tell!(
            "MPI ABI library: {} (load it as libmpi_abi.so.1; `ibdyn cc` compiles against it)",
            p.display()
        ),
        None => tell!("MPI ABI library: not built (cargo build -p ibdyn-abi)"),
    }
    match ibdyn_verbs::devices() {
        Ok(d) if d.is_empty() => tell!("InfiniBand devices: none"),
        Ok(d) => {
            tell!("InfiniBand devices:");
            for x in d {
                tell!(
                    "  {} port {}: {} {} lid {} mtu {}",
                    x.name,
                    x.port,
                    x.link_layer,
                    x.state,
                    x.lid,
                    x.active_mtu
                );
            }
        }
        Err(e) => tell!("InfiniBand devices: cannot list ({e})"),
    }
    let forced = std::env::var("IBDYN_PROVIDER")
        .ok()
        .filter(|v| !v.trim().is_empty());
    match ibdyn_verbs::FabricConfig::default().resolve_provider() {
        Ok(p) => tell!(
            "fabric provider a job would use: {p}{}",
            match &forced {
                Some(v) => format!(" (forced by IBDYN_PROVIDER={v})"),
                None => " (IBDYN_PROVIDER=ib|sock forces one)".into(),
            }
        ),
        Err(e) => tell!("fabric provider: {e}"),
    }
    tell!("{}", crate::hosts::describe());
    tell!("cross-memory attach (CMA): {}", ibdyn_shm::cma::probe());
    let shm = std::path::Path::new("/dev/shm");
    let writable = std::fs::metadata(shm).is_ok_and(|m| m.is_dir());
    tell!(
        "shared-memory directory: /dev/shm ({})",
        if writable { "present" } else { "missing" }
    );
    0
}

/// Runs the command of this process's arguments; returns its exit status.
pub fn main() -> i32 {
    let cli = {
        use clap::CommandFactory;
        let args = std::env::args_os().collect();
        Cli::parse_from(match Cli::command().find_subcommand("run") {
            Some(run) => crate::spellings::spelt_out(args, run),
            None => args,
        })
    };
    init_logging();
    crate::rlimit::raise_nofile();
    let code = match cli.cmd {
        Cmd::Run {
            nprocs,
            nodes,
            hosts,
            ppn,
            map_by,
            tag_output,
            keep_going,
            oversubscribe: _,
            allow_run_as_root: _,
            bind_to,
            cpus_per_rank,
            report_bindings,
            export,
            output_filename,
            wdir,
            timeout,
            dvm,
            abi,
            prestart,
            psets,
            adopt_ready_fd,
            jobid,
            command,
            app,
        } => {
            // The program comes first after ibdyn's own options: a leading '-' here is an
            // option of ours that clap did not know, not a program.
            if let Some(word) = command.first().filter(|w| w.starts_with('-')) {
                say!(
                    "ibdyn run: unknown option {word:?} (the program comes after the \
                     options; `ibdyn run --help` lists them)"
                );
                return 2;
            }
            let plan = match hosts.plan(nodes.is_some()) {
                Ok(p) => p,
                Err(e) => {
                    say!("ibdyn run: {e}");
                    return 2;
                }
            };
            let apps = match (app, nprocs) {
                (Some(_), Some(_)) => Err("-n is given per line of the --app file".to_string()),
                (Some(file), None) => std::fs::read_to_string(&file)
                    .map_err(|e| format!("cannot read {}: {e}", file.display()))
                    .and_then(|t| crate::mpmd::from_file(&t))
                    .map_err(|e| format!("--app {}: {e}", file.display())),
                (None, n) => {
                    let n = n.unwrap_or_else(|| default_nprocs(plan.as_ref(), ppn, dvm));
                    crate::mpmd::split(n, command)
                }
            };
            let apps = match apps {
                Ok(apps) => apps,
                Err(e) => {
                    say!("ibdyn run: {e}");
                    return 2;
                }
            };
            let nprocs = match crate::mpmd::total(&apps) {
                Ok(n) => n,
                Err(e) => {
                    say!("ibdyn run: {e}");
                    return 2;
                }
            };
            if abi {
                if let Err(e) = put_abi_library_first() {
                    say!("ibdyn run --abi: {e}");
                    return 2;
                }
            }
            let preput = match crate::psets::preput(&psets, nprocs) {
                Ok(p) => p,
                Err(e) => {
                    say!("ibdyn run: {e}");
                    return 2;
                }
            };
            if ppn == Some(0) {
                say!("ibdyn run: --ppn must be at least 1");
                return 2;
            }
            if dvm && ppn.is_some() {
                say!("ibdyn run: --dvm places ranks on its daemons by --map-by: --ppn is not taken there");
                return 2;
            }
            if dvm && nodes.is_some() {
                say!(
                    "ibdyn run: --dvm runs on the DVM's daemons: give --nodes to `ibdyn dvm start`"
                );
                return 2;
            }
            if dvm && (hosts.hosts.is_some() || hosts.hostfile.is_some()) {
                say!("ibdyn run: --dvm runs on the DVM's daemons: give the hosts to `ibdyn dvm start`");
                return 2;
            }
            let binding = Binding {
                unit: match (bind_to, cpus_per_rank) {
                    (Bind::None, Some(_)) => Bind::Core,
                    (unit, _) => unit,
                },
                width: cpus_per_rank.unwrap_or(1),
            };
            // On other hosts the directory may exist there only.
            let here = plan.is_none() && !dvm;
            let info = match job_info(prestart, &export, binding, report_bindings, wdir, here) {
                Ok(i) => i,
                Err(e) => {
                    say!("ibdyn run: {e}");
                    return 2;
                }
            };
            if dvm {
                let job = crate::dvm::DvmJob {
                    apps: &apps,
                    info,
                    timeout_secs: timeout,
                    output_dir: output_filename.as_deref(),
                };
                let r = crate::run_on_dvm(job, tag_output, preput, map_by);
                return r.unwrap_or_else(|e| {
                    say!("ibdyn run: {e}");
                    e.exit_status()
                });
            }
            let opts = RunOptions {
                preput,
                nnodes: nodes.unwrap_or(1),
                map_by,
                tag_output,
                apps,
                daemon_exe: None,
                keep_going,
                info,
                adopt: adopt_ready_fd.map(|fd| Adopt {
                    ready_fd: fd,
                    jobid: jobid.unwrap_or(0),
                }),
                hosts: plan,
                // A singleton's private launcher lives as long as the singleton does.
                timeout_secs: timeout.filter(|_| adopt_ready_fd.is_none()),
                ppn,
                output_dir: output_filename,
            };
            match crate::run(opts) {
                Ok(status) => status,
                Err(e) => {
                    say!("ibdyn run: {e}");
                    e.exit_status()
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
            iface,
            secret_stdin,
            host_names,
        } => {
            let index = match index.or_else(|| {
                std::env::var("SLURM_PROCID")
                    .ok()
                    .and_then(|v| v.parse().ok())
            }) {
                Some(i) => i,
                None => {
                    say!("ibdyn daemon: no --index and no SLURM_PROCID");
                    return 2;
                }
            };
            let opts = DaemonOptions {
                index,
                nnodes,
                session_dir,
                launcher,
                iface,
                secret_stdin,
                host_names,
            };
            match crate::daemon_main(opts) {
                Ok(c) => c,
                Err(e) => {
                    say!("ibdyn daemon {index}: {e}");
                    1
                }
            }
        }
    };
    code
}
