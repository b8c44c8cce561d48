//! The parents' side of a spawn.

use super::wire::{hex, random_id, Hello, ParentInfo, Welcome, Wireup, PARENT_KEY};
use super::{env_secs, share_outcome, DEFAULT_SPAWN_TIMEOUT};
use ibdyn_intercomm::{
    AddressCard, ChildFailure, CommError, Communicator, Gpid, Group, Result, Runtime,
};
use ibdyn_pmi::wire::{self as pmi_wire, SpawnCommand, SpawnRequest};
use std::time::{Duration, Instant};

/// What a spawn needs beyond the commands.
#[derive(Clone, Debug)]
pub struct SpawnOptions {
    /// PMI info keys passed to the process manager: `host` (daemon index), `wdir`, `env`,
    /// `ibdyn_prestart` (copies of the command the daemon keeps started ahead; README).
    pub info: Vec<(String, String)>,
    /// Info keys of each command of `spawn_multiple`, by its index, after `info` (a command's
    /// own `host`, say); commands beyond its end take `info` alone.
    pub per_command: Vec<Vec<(String, String)>>,
    pub wireup: Wireup,
    /// Bound on the children connecting back.
    pub timeout: Duration,
    /// Set at a root that could not read its arguments: the spawn starts nothing and fails
    /// on every rank with this reason (the others would otherwise wait for the root).
    pub refused: Option<String>,
}

impl Default for SpawnOptions {
    fn default() -> Self {
        SpawnOptions {
            info: Vec::new(),
            per_command: Vec::new(),
            wireup: Wireup::Ud,
            timeout: env_secs("IBDYN_SPAWN_TIMEOUT", DEFAULT_SPAWN_TIMEOUT),
            refused: None,
        }
    }
}

/// The spawn info key asking the daemon to keep copies of the command started ahead.
const PRESTART_KEY: &str = "ibdyn_prestart";
/// `IBDYN_PRESTART=N` in a process's environment: its spawns that do not set the info key ask
/// for N copies (programs that cannot be changed, e.g. other people's MPI programs).
pub const PRESTART_ENV: &str = "IBDYN_PRESTART";

/// The `ibdyn_prestart` value `IBDYN_PRESTART` gives, if it is set.
fn prestart_default() -> Result<Option<String>> {
    match std::env::var(PRESTART_ENV) {
        Err(_) => Ok(None),
        Ok(v) if v.trim().is_empty() => Ok(None),
        Ok(v) if v.trim().parse::<u32>().is_ok() => Ok(Some(v.trim().to_string())),
        Ok(v) => Err(CommError::InvalidArgument(format!(
            "{PRESTART_ENV}={v:?} is not a number of copies (set e.g. {PRESTART_ENV}=4, or unset it)"
        ))),
    }
}

/// Turns a `std::process::Command` (program, arguments, environment, working directory) and
/// a process count into a PMI spawn command.
fn to_spawn_command(
    cmd: &std::process::Command,
    n: u32,
    opts: &SpawnOptions,
    own: &[(String, String)],
) -> Result<SpawnCommand> {
    let text = |s: &std::ffi::OsStr, what: &str| {
        s.to_str()
            .map(str::to_string)
            .ok_or_else(|| CommError::InvalidArgument(format!("{what} {s:?} is not UTF-8")))
    };
    let mut info = opts.info.clone();
    info.extend_from_slice(own);
    if !info.iter().any(|(k, _)| k == PRESTART_KEY) {
        if let Some(n) = prestart_default()? {
            info.push((PRESTART_KEY.into(), n));
        }
    }
    if let Some(dir) = cmd.get_current_dir() {
        info.push(pmi_wire::wdir_info(&text(
            dir.as_os_str(),
            "working directory",
        )?));
    }
    for (k, v) in cmd.get_envs() {
        if let Some(v) = v {
            info.push(pmi_wire::env_info(
                &text(k, "variable")?,
                &text(v, "value")?,
            ));
        }
    }
    info.push((
        "ibdyn_wireup".into(),
        if opts.wireup == Wireup::Rc {
            "rc".into()
        } else {
            "ud".into()
        },
    ));
    Ok(SpawnCommand {
        program: text(cmd.get_program(), "program")?,
        args: cmd
            .get_args()
            .map(|a| text(a, "argument"))
            .collect::<Result<_>>()?,
        nprocs: n,
        info,
    })
}

/// MPI_Comm_spawn_multiple: collective over `comm`; `root` starts `n` processes of each
/// command as one new job. Returns the intercommunicator whose remote group is the children.
pub fn spawn_multiple(
    comm: &Communicator,
    root: i32,
    cmds: &[(&std::process::Command, u32)],
    opts: &SpawnOptions,
) -> Result<Communicator> {
    if comm.is_inter() {
        return Err(CommError::InvalidArgument(
            "spawn needs an intracommunicator".into(),
        ));
    }
    comm.gpid_of(root)?;
    let rt = comm.runtime();
    let ctx = comm.derive_context();
    let outcome = (comm.rank() == root).then(|| root_spawn(&rt, comm, ctx, cmds, opts));
    let shared = share_outcome(comm, root, outcome)?;
    if shared.len() != 8 {
        return Err(CommError::Malformed(
            "spawn outcome of the wrong size".into(),
        ));
    }
    let job = u32::from_le_bytes(shared[0..4].try_into().expect("4 bytes"));
    let size = u32::from_le_bytes(shared[4..8].try_into().expect("4 bytes"));
    let remote = Group::new((0..size).map(|rank| Gpid { job, rank }).collect());
    rt.make_communicator(ctx, comm.group().clone(), Some(remote))
}

/// The root's part: ask the process manager, then meet the child root.
fn root_spawn(
    rt: &Runtime,
    comm: &Communicator,
    ctx: u64,
    cmds: &[(&std::process::Command, u32)],
    opts: &SpawnOptions,
) -> Result<Vec<u8>> {
    if let Some(why) = &opts.refused {
        return Err(CommError::InvalidArgument(why.clone()));
    }
    if cmds.is_empty() || cmds.iter().any(|(_, n)| *n == 0) {
        return Err(CommError::InvalidArgument(
            "spawn needs at least one command with at least one process".into(),
        ));
    }
    let spawn_id = random_id();
    let info = ParentInfo {
        spawn_id,
        wireup: opts.wireup,
        root: rt.card(),
    };
    let req = SpawnRequest {
        commands: cmds
            .iter()
            .enumerate()
            .map(|(i, (c, n))| {
                let own = opts.per_command.get(i).map_or(&[][..], Vec::as_slice);
                to_spawn_command(c, *n, opts, own)
            })
            .collect::<Result<_>>()?,
        preput: vec![(PARENT_KEY.to_string(), hex(&info.encode()))],
    };
    let t0 = Instant::now();
    let reply = match rt.with_pmi(|p| p.spawn(&req)) {
        Ok(r) => r,
        Err(ibdyn_pmi::PmiError::SpawnFailed(reply)) => {
            let failures = reply
                .children
                .iter()
                .filter(|c| !c.started())
                .map(|c| ChildFailure {
                    rank: c.rank,
                    code: c.errno,
                    message: c.message.clone(),
                })
                .collect();
            return Err(CommError::SpawnFailed { failures });
        }
        Err(e) => return Err(e.into()),
    };
    let failures: Vec<ChildFailure> = reply
        .children
        .iter()
        .filter(|c| !c.started())
        .map(|c| ChildFailure {
            rank: c.rank,
            code: c.errno,
            message: c.message.clone(),
        })
        .collect();
    if !failures.is_empty() {
        return Err(CommError::SpawnFailed { failures });
    }
    let (job, size) = (reply.job_id, reply.size);
    tracing::debug!("spawn: job {job} of {size} started in {:?}", t0.elapsed());
    let group = comm
        .group()
        .members()
        .iter()
        .map(|&g| rt.card_of(g))
        .collect::<Result<Vec<_>>>()?;
    let welcome = Welcome {
        spawn_id,
        ctx,
        group,
    }
    .encode();
    let check = |pmi: &mut ibdyn_pmi::PmiClient| children_alive(pmi, job);
    match opts.wireup {
        Wireup::Ud => {
            let hello = rt.await_control(
                opts.timeout,
                "the spawned job's root to connect back",
                None,
                |d| Hello::is(d, spawn_id),
                check,
            )?;
            let hello = Hello::decode(&hello.1)?;
            let to = AddressCard::from_bytes(&hello.root.fabric)?;
            rt.learn_cards([hello.root]);
            rt.control_send(&to, &welcome)?;
        }
        Wireup::Rc => {
            let pair = root_pair(rt, spawn_id, Gpid { job, rank: 0 })?;
            let mut buf = Vec::new();
            super::child::recv_bounded(&pair, &mut buf, opts.timeout, |pmi| {
                children_alive(pmi, job)
            })?;
            Hello::decode(&buf)?;
            pair.send(&welcome, 0, 0)?;
        }
    }
    tracing::debug!("spawn: job {job} connected back after {:?}", t0.elapsed());
    Ok([job.to_le_bytes(), size.to_le_bytes()].concat())
}

/// The intercommunicator of just the two roots, for the connection-based wire-up.
pub(crate) fn root_pair(rt: &Runtime, spawn_id: u64, other: Gpid) -> Result<Communicator> {
    let ctx = ibdyn_intercomm::context::from_names(&["spawn-roots", &spawn_id.to_string()]);
    rt.make_communicator(
        ctx,
        Group::new(vec![rt.me()]),
        Some(Group::new(vec![other])),
    )
}

/// Fails when a child of `job` has exited before connecting back.
fn children_alive(pmi: &mut ibdyn_pmi::PmiClient, job: u32) -> Result<()> {
    let status = pmi.job_status(job)?;
    if status.exited.is_empty() {
        return Ok(());
    }
    let failures = status
        .exited
        .iter()
        .map(|x| ChildFailure {
            rank: x.rank,
            code: x.code.unwrap_or(-1),
            message: format!("exited before connecting back: {}", x.how()),
        })
        .collect();
    Err(CommError::SpawnFailed { failures })
}
