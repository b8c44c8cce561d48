//! Every environment variable the launcher, the daemons and the client agree on.

/// Path of the node daemon's PMI Unix socket (ibdyn launcher).
pub const PMI_SOCK: &str = "IBDYN_PMI_SOCK";
/// Rank of the process in its job (ibdyn launcher).
pub const RANK: &str = "IBDYN_RANK";
/// Number of processes in the job (ibdyn launcher).
pub const SIZE: &str = "IBDYN_SIZE";
/// Job id, a u32 in decimal.
pub const JOBID: &str = "IBDYN_JOBID";
/// Index of the node daemon the process runs under.
pub const NODE: &str = "IBDYN_NODE";
/// Unique id of the daemon instance: equal values mean shared memory is possible.
pub const NODE_UID: &str = "IBDYN_NODE_UID";
/// Number of node daemons of the job.
pub const NNODES: &str = "IBDYN_NNODES";
/// Per-job secret, hex u64 (TCP between daemons, verbs control datagrams).
pub const JOB_SECRET: &str = "IBDYN_JOB_SECRET";
/// Private (0700) session directory of the job.
pub const SESSION_DIR: &str = "IBDYN_SESSION_DIR";
/// Application number (index of the command in an MPMD launch).
pub const APPNUM: &str = "IBDYN_APPNUM";
/// This rank's index among its job's ranks on the same node (0-based, in rank order): for
/// choosing a GPU or a core set in a wrapper script.
pub const LOCAL_RANK: &str = "IBDYN_LOCAL_RANK";
/// How many ranks of its job share the rank's node.
pub const LOCAL_SIZE: &str = "IBDYN_LOCAL_SIZE";
/// [`LOCAL_RANK`] under the name MPICH's launcher gives it.
pub const HYDRA_LOCAL_RANK: &str = "MPI_LOCALRANKID";
/// [`LOCAL_SIZE`] under the name MPICH's launcher gives it.
pub const HYDRA_LOCAL_SIZE: &str = "MPI_LOCALNRANKS";
/// The rank, the size, [`LOCAL_RANK`] and [`LOCAL_SIZE`] under the names Open MPI's mpirun
/// gives them, for wrapper scripts written for it (choosing a GPU by local rank). Only
/// these: a PMIx name would make a PMIx client look for a server there is not.
pub const OMPI_RANK: &str = "OMPI_COMM_WORLD_RANK";
pub const OMPI_SIZE: &str = "OMPI_COMM_WORLD_SIZE";
pub const OMPI_LOCAL_RANK: &str = "OMPI_COMM_WORLD_LOCAL_RANK";
pub const OMPI_LOCAL_SIZE: &str = "OMPI_COMM_WORLD_LOCAL_SIZE";
/// Bound in seconds on any wait for the PMI server (default 300).
pub const PMI_TIMEOUT: &str = "IBDYN_PMI_TIMEOUT";
/// tracing filter, e.g. `debug`.
pub const LOG: &str = "IBDYN_LOG";

/// Pre-connected PMI socket handed out by MPICH's hydra (and other PMI-1 launchers).
pub const HYDRA_PMI_FD: &str = "PMI_FD";
/// Rank under a PMI-1 launcher.
pub const HYDRA_PMI_RANK: &str = "PMI_RANK";
/// Size under a PMI-1 launcher.
pub const HYDRA_PMI_SIZE: &str = "PMI_SIZE";

/// host:port of the PMI-1 server for clients that connect instead of inheriting `PMI_FD`.
pub const PMI_PORT: &str = "PMI_PORT";
/// What such a client says it is on connecting (`cmd=initack pmiid=N`).
pub const PMI_ID: &str = "PMI_ID";

/// Set to 1 in the processes of a spawned job (hydra's convention).
pub const SPAWNED: &str = "PMI_SPAWNED";
/// Job id of the job whose process spawned this one (spawned jobs only).
pub const PARENT_JOBID: &str = "IBDYN_PARENT_JOBID";
/// Keys the spawner put before the job started (comma-separated): fetched with the PMI
/// start-up exchange instead of one round trip each later.
pub const PREPUT_KEYS: &str = "IBDYN_PREPUT_KEYS";
/// Their values (each hex, comma-separated, in the order of the keys), when small enough to
/// travel in the environment: a spawned process then knows its parent before the start-up
/// exchange is answered.
pub const PREPUT_VALUES: &str = "IBDYN_PREPUT_VALUES";
/// The `ibdyn` binary a singleton starts its private daemon with.
pub const BIN: &str = "IBDYN_BIN";
/// Prefix of the variables carrying `ibdyn_*` spawn info keys (`ibdyn_wireup` → `IBDYN_INFO_WIREUP`).
pub const INFO_PREFIX: &str = "IBDYN_INFO_";

/// Whether a setting's value turns something off: `0`, `no`, `false` or `off` (any case).
pub fn is_off(value: &str) -> bool {
    matches!(
        value.trim().to_ascii_lowercase().as_str(),
        "0" | "no" | "false" | "off"
    )
}
