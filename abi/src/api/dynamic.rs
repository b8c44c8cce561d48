//! Dynamic processes: Comm_spawn(_multiple) with info keys `host`, `wdir`, `path`, `env`
//! (Open MPI's `NAME=VALUE` lines), `ibdyn_*`
//! (e.g. `ibdyn_prestart`) and per child error codes, Comm_get_parent, Intercomm_merge,
//! Comm_disconnect, ports (Open_port, Close_port, Comm_accept, Comm_connect, Comm_join) and
//! the name service (Publish_name, Lookup_name, Unpublish_name).

use super::info::{entries, text};
use super::{out, read};
use crate::consts::*;
use crate::error::{err, MpiError, MpiResult};
use crate::state::{staged, with_state, Comm, Parent, State};
use crate::{call, export};
use ibdyn::traits::*;
use ibdyn::{CommError, SpawnOptions};
use std::ffi::CStr;
use std::os::raw::{c_char, c_int};
use std::path::Path;
use std::process::Command;

/// One command of a spawn: the program, its NULL-terminated `argv`, its info entries.
///
/// # Safety
/// `command` is a C string; `argv` is NULL (MPI_ARGV_NULL) or a NULL-terminated array of C
/// strings.
unsafe fn command_of(
    command: *const c_char,
    argv: *const *const c_char,
    info: &[(String, String)],
) -> MpiResult<Command> {
    if command.is_null() {
        return err(MPI_ERR_SPAWN, "command is NULL at the root");
    }
    // SAFETY: the caller's C string.
    let mut program = unsafe { CStr::from_ptr(command) }
        .to_string_lossy()
        .into_owned();
    let get = |k: &str| info.iter().find(|e| e.0 == k).map(|e| e.1.clone());
    if let Some(dirs) = get("path") {
        if !program.contains('/') {
            if let Some(p) = dirs
                .split(':')
                .map(|d| Path::new(d).join(&program))
                .find(|p| p.is_file())
            {
                program = p.display().to_string();
            }
        }
    }
    let mut cmd = Command::new(program);
    if let Some(w) = get("wdir") {
        cmd.current_dir(w);
    }
    // Open MPI's form: `NAME=VALUE` lines, several separated by newlines.
    if let Some(vars) = get("env") {
        for line in vars.lines().filter(|l| !l.is_empty()) {
            match line.split_once('=') {
                Some((name, value)) if !name.is_empty() => {
                    cmd.env(name, value);
                }
                _ => {
                    return err(
                        MPI_ERR_INFO_VALUE,
                        format!("info key env: {line:?} is not NAME=VALUE"),
                    )
                }
            }
        }
    }
    if !argv.is_null() {
        for i in 0.. {
            // SAFETY: the array is NULL-terminated; we stop at the NULL.
            let a = unsafe { *argv.add(i) };
            if a.is_null() {
                break;
            }
            // SAFETY: each entry is a C string.
            cmd.arg(unsafe { CStr::from_ptr(a) }.to_string_lossy().into_owned());
        }
    }
    Ok(cmd)
}

/// The commands of a spawn at the root: (command, count) each, and the options.
type Apps = (Vec<(Command, u32)>, SpawnOptions);

/// Spawns `apps` (significant at the root only) from `comm`; writes one error code per child
/// (`total` of them) and the intercommunicator.
fn spawn_apps(
    name: &'static str,
    comm: Handle,
    root: c_int,
    apps: impl FnOnce() -> MpiResult<Apps>,
    total: usize,
    intercomm: *mut Handle,
    errcodes: *mut c_int,
) -> c_int {
    call(name, comm, || {
        let at_root = with_state(|s| {
            let intra = s.comm(comm)?.comm.intra(name)?;
            check_root(intra, root)?;
            Ok(intra.rank() == root)
        })?;
        // Only the root's commands matter (MPI); the others pass anything. Read before the
        // spawn takes the state (the info objects live there).
        // A root that cannot read its arguments still takes part, refusing the spawn, so the
        // others learn why instead of waiting for it.
        let (cmds, opts, root_err) = match at_root.then(apps) {
            Some(Ok((c, o))) => (c, o, None),
            Some(Err(e)) => {
                let refused = SpawnOptions {
                    refused: Some(e.message.clone()),
                    ..SpawnOptions::default()
                };
                (Vec::new(), refused, Some(e))
            }
            None => (vec![(Command::new(""), 1)], SpawnOptions::default(), None),
        };
        let spawned = staged(
            |s| {
                let e = s.comm(comm)?;
                Ok((e.comm.intra(name)?.clone(), e.errhandler))
            },
            |(intra, eh)| {
                let refs: Vec<(&Command, u32)> = cmds.iter().map(|(c, n)| (c, *n)).collect();
                Ok((intra.process_at_rank(root).spawn_multiple(&refs, &opts), eh))
            },
            |s, (spawned, eh)| {
                Ok(spawned.map(|ic| {
                    let size = ic.remote_size();
                    (s.add_comm(Comm::Inter(ic), eh), size)
                }))
            },
        )?;
        if let Some(e) = root_err {
            for i in 0..if errcodes.is_null() { 0 } else { total } {
                // SAFETY: the caller's array of one code per child.
                unsafe { errcodes.add(i).write(MPI_ERR_SPAWN) };
            }
            // SAFETY: the caller's output argument.
            unsafe { out(intercomm, MPI_COMM_NULL, "intercomm") }?;
            return Err(e);
        }
        let n = if errcodes.is_null() { 0 } else { total };
        let (h, failed): (Handle, Vec<u32>) = match &spawned {
            Ok((h, size)) => (*h, (*size as u32..n as u32).collect()),
            Err(CommError::SpawnFailed { failures }) => {
                (MPI_COMM_NULL, failures.iter().map(|f| f.rank).collect())
            }
            Err(_) => (MPI_COMM_NULL, (0..n as u32).collect()),
        };
        for i in 0..n {
            let code = if failed.contains(&(i as u32)) {
                MPI_ERR_SPAWN
            } else {
                MPI_SUCCESS
            };
            // SAFETY: the caller's array of one code per child.
            unsafe { errcodes.add(i).write(code) };
        }
        // SAFETY: the caller's output argument.
        unsafe { out(intercomm, h, "intercomm") }?;
        spawned.map(|_| ()).map_err(|e| {
            let class = match &e {
                CommError::PeerDead { .. } => MPI_ERR_PROC_ABORTED,
                // The root's failure, seen by the others; a bad command; the children's.
                _ => MPI_ERR_SPAWN,
            };
            MpiError::new(class, e.to_string())
        })
    })
}

fn count(maxprocs: c_int) -> MpiResult<u32> {
    u32::try_from(maxprocs)
        .ok()
        .filter(|&n| n > 0)
        .ok_or_else(|| MpiError::new(MPI_ERR_SPAWN, format!("maxprocs {maxprocs} must be > 0")))
}

/// The spawn's options: each command's `host` and ibdyn's own info keys (`ibdyn_prestart`,
/// `ibdyn_node`) as given (the wire-up has its own option), for the process manager to place
/// and start that command by.
fn options(infos: &[Vec<(String, String)>]) -> SpawnOptions {
    let placement = |info: &Vec<(String, String)>| {
        info.iter()
            .filter(|(k, _)| k == "host" || (k.starts_with("ibdyn_") && k != "ibdyn_wireup"))
            .cloned()
            .collect()
    };
    SpawnOptions {
        per_command: infos.iter().map(placement).collect(),
        ..SpawnOptions::default()
    }
}

#[allow(clippy::too_many_arguments)]
unsafe fn comm_spawn(
    command: *const c_char,
    argv: *const *const c_char,
    maxprocs: c_int,
    info: Handle,
    root: c_int,
    comm: Handle,
    intercomm: *mut Handle,
    errcodes: *mut c_int,
) -> c_int {
    let total = usize::try_from(maxprocs).unwrap_or(0);
    let apps = || {
        let info = entries(info)?;
        // SAFETY: the root's C strings.
        let cmd = unsafe { command_of(command, argv, &info) }?;
        Ok((vec![(cmd, count(maxprocs)?)], options(&[info])))
    };
    spawn_apps(
        "MPI_Comm_spawn",
        comm,
        root,
        apps,
        total,
        intercomm,
        errcodes,
    )
}

#[allow(clippy::too_many_arguments)]
unsafe fn comm_spawn_multiple(
    n: c_int,
    commands: *const *const c_char,
    argvs: *const *const *const c_char,
    maxprocs: *const c_int,
    infos: *const Handle,
    root: c_int,
    comm: Handle,
    intercomm: *mut Handle,
    errcodes: *mut c_int,
) -> c_int {
    let k = usize::try_from(n).unwrap_or(0);
    // The error code array has one entry per child, known at every process only by the
    // counts (significant at the root; the others' arrays are not written by MPI's rule).
    let total = if maxprocs.is_null() {
        0
    } else {
        // SAFETY: the caller's array of `count` counts.
        (0..k)
            .map(|i| usize::try_from(unsafe { *maxprocs.add(i) }).unwrap_or(0))
            .sum()
    };
    let apps = || {
        if commands.is_null() || maxprocs.is_null() {
            return err(
                MPI_ERR_SPAWN,
                "array_of_commands or array_of_maxprocs is NULL at the root",
            );
        }
        let mut cmds = Vec::with_capacity(k);
        let mut all_info = Vec::with_capacity(k);
        for i in 0..k {
            // SAFETY: the root's arrays of `count` entries.
            let (c, a, m, inf) = unsafe {
                (
                    *commands.add(i),
                    if argvs.is_null() {
                        std::ptr::null()
                    } else {
                        *argvs.add(i)
                    },
                    *maxprocs.add(i),
                    if infos.is_null() {
                        MPI_INFO_NULL
                    } else {
                        *infos.add(i)
                    },
                )
            };
            let info = entries(inf)?;
            // SAFETY: as above.
            let mut cmd = unsafe { command_of(c, a, &info) }?;
            all_info.push(info);
            // Each command is its own application: MPI_APPNUM is its index.
            cmd.env(ibdyn::pmi::env::APPNUM, i.to_string());
            cmds.push((cmd, count(m)?));
        }
        Ok((cmds, options(&all_info)))
    };
    spawn_apps(
        "MPI_Comm_spawn_multiple",
        comm,
        root,
        apps,
        total,
        intercomm,
        errcodes,
    )
}

unsafe fn comm_get_parent(parent: *mut Handle) -> c_int {
    call("MPI_Comm_get_parent", MPI_COMM_SELF, || {
        let h = with_state(|s| {
            match s.parent {
                Parent::Made(h) => return Ok(h),
                Parent::Gone => return Ok(MPI_COMM_NULL),
                Parent::Unmade => {}
            }
            let Some(p) = s.universe()?.parent() else {
                return Ok(MPI_COMM_NULL);
            };
            let h = s.add_comm(Comm::Inter(p), s.errhandler_for(MPI_COMM_WORLD));
            s.comm_mut(h)?.name = "MPI_COMM_PARENT".into();
            s.parent = Parent::Made(h);
            Ok(h)
        })?;
        // SAFETY: the caller's output argument.
        unsafe { out(parent, h, "parent") }
    })
}

unsafe fn intercomm_merge(intercomm: Handle, high: c_int, newcomm: *mut Handle) -> c_int {
    call("MPI_Intercomm_merge", intercomm, || {
        let h = staged(
            |s| {
                let e = s.comm(intercomm)?;
                Ok((e.comm.inter("MPI_Intercomm_merge")?.clone(), e.errhandler))
            },
            |(ic, eh)| Ok((ic.merge(high != 0)?, eh)),
            |s, (merged, eh)| Ok(s.add_comm(Comm::Intra(merged), eh)),
        )?;
        // SAFETY: the caller's output argument.
        unsafe { out(newcomm, h, "newintracomm") }
    })
}

unsafe fn comm_disconnect(comm: *mut Handle) -> c_int {
    // SAFETY: the caller's in/out argument (checked for NULL).
    let h = unsafe { read(comm, "comm") }.unwrap_or(MPI_COMM_NULL);
    call("MPI_Comm_disconnect", h, || {
        // SAFETY: as above.
        let h = unsafe { read(comm, "comm") }?;
        super::attr::delete_all(h)?;
        staged(
            |s| Ok(s.comm(h)?.comm.clone()),
            |c| match &c {
                Comm::Intra(c) => Ok(c.disconnect()?),
                Comm::Inter(c) => Ok(c.disconnect()?),
            },
            |s, ()| s.remove_comm(h).map(drop),
        )?;
        // SAFETY: checked above.
        unsafe { out(comm, MPI_COMM_NULL, "comm") }
    })
}

unsafe fn open_port(_info: Handle, port_name: *mut c_char) -> c_int {
    call("MPI_Open_port", MPI_COMM_SELF, || {
        let name = with_state(|s| {
            let p = ibdyn::open_port(s.comm(MPI_COMM_SELF)?.comm.intra("MPI_Open_port")?);
            let n = p.name().to_string();
            s.objects.ports.push(p);
            Ok(n)
        })?;
        if name.len() >= MPI_MAX_PORT_NAME {
            return err(MPI_ERR_INTERN, "a port name longer than MPI_MAX_PORT_NAME");
        }
        // SAFETY: MPI sizes the buffer MPI_MAX_PORT_NAME.
        unsafe { super::out_string(port_name, MPI_MAX_PORT_NAME, std::ptr::null_mut(), &name) }
    })
}

/// The open port named `name`, if this process opened it.
fn port_index(s: &State, name: &str) -> MpiResult<usize> {
    s.objects
        .ports
        .iter()
        .position(|p| p.name() == name)
        .ok_or_else(|| {
            MpiError::new(
                MPI_ERR_PORT,
                format!("{name:?} is not a port this process opened (MPI_Open_port)"),
            )
        })
}

unsafe fn close_port(port_name: *const c_char) -> c_int {
    call("MPI_Close_port", MPI_COMM_SELF, || {
        // SAFETY: the caller's C string.
        let name = unsafe { text(port_name, "port_name") }?;
        with_state(|s| {
            let i = port_index(s, &name)?;
            ibdyn::close_port(s.objects.ports.remove(i));
            Ok(())
        })
    })
}

/// `root` is a rank of `intra`.
fn check_root(intra: &ibdyn::IntraCommunicator, root: c_int) -> MpiResult<()> {
    if (0..intra.size()).contains(&root) {
        return Ok(());
    }
    err(
        MPI_ERR_ROOT,
        format!(
            "root {root} is out of range for a communicator of {}",
            intra.size()
        ),
    )
}

/// Accept (or connect) on `comm` with `root`; the port name matters at the root only.
fn connect_accept(
    name: &'static str,
    accept: bool,
    port_name: *const c_char,
    root: c_int,
    comm: Handle,
    newcomm: *mut Handle,
) -> c_int {
    call(name, comm, || {
        let h = staged(
            |s| {
                let e = s.comm(comm)?;
                let intra = e.comm.intra(name)?;
                check_root(intra, root)?;
                let at_root = intra.rank() == root;
                // SAFETY: the caller's C string, significant at the root.
                let pname = if at_root {
                    unsafe { text(port_name, "port_name") }?
                } else {
                    String::new()
                };
                let port = (accept && at_root)
                    .then(|| port_index(s, &pname).map(|i| s.objects.ports[i].clone()))
                    .transpose()?;
                Ok((intra.clone(), e.errhandler, pname, port))
            },
            |(intra, eh, pname, port)| {
                let ic = match port {
                    Some(port) => intra.process_at_rank(root).accept(&port),
                    None if accept => {
                        // Only the root's port counts: the others pass a stand-in, closed at
                        // once.
                        let stand_in = ibdyn::open_port(&intra);
                        let r = intra.process_at_rank(root).accept(&stand_in);
                        ibdyn::close_port(stand_in);
                        r
                    }
                    None => intra.process_at_rank(root).connect(&pname),
                }
                .map_err(|e| match e {
                    e @ CommError::InvalidArgument(_) => MpiError::new(MPI_ERR_PORT, e.to_string()),
                    e => MpiError::from(e),
                })?;
                Ok((ic, eh))
            },
            |s, (ic, eh)| Ok(s.add_comm(Comm::Inter(ic), eh)),
        )?;
        // SAFETY: the caller's output argument.
        unsafe { out(newcomm, h, "newcomm") }
    })
}

unsafe fn comm_accept(
    port_name: *const c_char,
    _info: Handle,
    root: c_int,
    comm: Handle,
    newcomm: *mut Handle,
) -> c_int {
    connect_accept("MPI_Comm_accept", true, port_name, root, comm, newcomm)
}

unsafe fn comm_connect(
    port_name: *const c_char,
    _info: Handle,
    root: c_int,
    comm: Handle,
    newcomm: *mut Handle,
) -> c_int {
    connect_accept("MPI_Comm_connect", false, port_name, root, comm, newcomm)
}

unsafe fn publish_name(service: *const c_char, _info: Handle, port_name: *const c_char) -> c_int {
    call("MPI_Publish_name", MPI_COMM_SELF, || {
        // SAFETY: the caller's C strings.
        let (svc, pname) = unsafe {
            (
                text(service, "service_name")?,
                text(port_name, "port_name")?,
            )
        };
        with_state(|s| {
            let port = s.objects.ports[port_index(s, &pname)?].clone();
            ibdyn::publish_name(
                s.comm(MPI_COMM_SELF)?.comm.intra("MPI_Publish_name")?,
                &svc,
                &port,
            )
            .map_err(|e| MpiError::new(MPI_ERR_SERVICE, format!("publishing {svc:?}: {e}")))
        })
    })
}

unsafe fn lookup_name(service: *const c_char, _info: Handle, port_name: *mut c_char) -> c_int {
    call("MPI_Lookup_name", MPI_COMM_SELF, || {
        // SAFETY: the caller's C string.
        let svc = unsafe { text(service, "service_name") }?;
        let name = with_state(|s| {
            ibdyn::lookup_name(s.comm(MPI_COMM_SELF)?.comm.intra("MPI_Lookup_name")?, &svc).map_err(
                |e| {
                    MpiError::new(
                        MPI_ERR_NAME,
                        format!("no port is published as {svc:?}: {e}"),
                    )
                },
            )
        })?;
        // SAFETY: MPI sizes the buffer MPI_MAX_PORT_NAME.
        unsafe { super::out_string(port_name, MPI_MAX_PORT_NAME, std::ptr::null_mut(), &name) }
    })
}

unsafe fn unpublish_name(
    service: *const c_char,
    _info: Handle,
    _port_name: *const c_char,
) -> c_int {
    call("MPI_Unpublish_name", MPI_COMM_SELF, || {
        // SAFETY: the caller's C string.
        let svc = unsafe { text(service, "service_name") }?;
        with_state(|s| {
            ibdyn::unpublish_name(
                s.comm(MPI_COMM_SELF)?.comm.intra("MPI_Unpublish_name")?,
                &svc,
            )
            .map_err(|e| MpiError::new(MPI_ERR_SERVICE, format!("unpublishing {svc:?}: {e}")))
        })
    })
}

/// Waits (bounded) until `fd` is ready for `events`. Between looks the runtime's wait hook
/// takes its turn (other threads' calls at MPI_THREAD_MULTIPLE, collectives in flight), or
/// the wait blocks on the descriptor in 10 ms slices.
fn ready(fd: c_int, events: i16) -> MpiResult<()> {
    let deadline =
        std::time::Instant::now() + std::time::Duration::from_millis(JOIN_TIMEOUT_MS as u64);
    loop {
        let mut p = libc::pollfd {
            fd,
            events,
            revents: 0,
        };
        // SAFETY: one valid pollfd.
        let n = unsafe { libc::poll(&mut p, 1, 0) };
        match n {
            1 => return Ok(()),
            0 if std::time::Instant::now() > deadline => {
                return err(
                    MPI_ERR_OTHER,
                    format!(
                        "MPI_Comm_join: the peer did not answer on descriptor {fd} within {} s",
                        JOIN_TIMEOUT_MS / 1000
                    ),
                )
            }
            0 => {
                if !ibdyn_intercomm::turns::wait_hook(true) {
                    // SAFETY: as above.
                    unsafe { libc::poll(&mut p, 1, 10) };
                }
            }
            _ => {
                return err(
                    MPI_ERR_ARG,
                    format!(
                        "MPI_Comm_join: descriptor {fd}: {}",
                        std::io::Error::last_os_error()
                    ),
                )
            }
        }
    }
}

const JOIN_TIMEOUT_MS: c_int = 60_000;

/// Writes all of `data` to socket `fd`.
fn write_all(fd: c_int, mut data: &[u8]) -> MpiResult<()> {
    while !data.is_empty() {
        ready(fd, libc::POLLOUT)?;
        // SAFETY: `data` is valid for its length.
        let n = unsafe { libc::write(fd, data.as_ptr().cast(), data.len()) };
        if n <= 0 {
            return err(
                MPI_ERR_ARG,
                format!(
                    "MPI_Comm_join: writing to descriptor {fd}: {}",
                    std::io::Error::last_os_error()
                ),
            );
        }
        data = &data[n as usize..];
    }
    Ok(())
}

/// Reads exactly `buf.len()` bytes from socket `fd`.
fn read_exact(fd: c_int, buf: &mut [u8]) -> MpiResult<()> {
    let mut at = 0;
    while at < buf.len() {
        ready(fd, libc::POLLIN)?;
        // SAFETY: `buf[at..]` is valid for writes.
        let n = unsafe { libc::read(fd, buf[at..].as_mut_ptr().cast(), buf.len() - at) };
        if n <= 0 {
            return err(
                MPI_ERR_ARG,
                format!("MPI_Comm_join: the peer closed descriptor {fd} (or it failed)"),
            );
        }
        at += n as usize;
    }
    Ok(())
}

/// Both sides open a port and swap its name over socket `fd`; the smaller name accepts, the
/// other connects.
fn join_over(fd: c_int, me: &ibdyn::IntraCommunicator) -> MpiResult<ibdyn::InterCommunicator> {
    let port = ibdyn::open_port(me);
    let swapped = (|| {
        let mine = port.name().as_bytes();
        write_all(fd, &(mine.len() as u32).to_le_bytes())?;
        write_all(fd, mine)?;
        let mut len = [0u8; 4];
        read_exact(fd, &mut len)?;
        let len = u32::from_le_bytes(len) as usize;
        if len >= MPI_MAX_PORT_NAME {
            return err(
                MPI_ERR_ARG,
                "MPI_Comm_join: the peer sent no port name (is it in MPI_Comm_join?)",
            );
        }
        let mut theirs = vec![0u8; len];
        read_exact(fd, &mut theirs)?;
        Ok(String::from_utf8_lossy(&theirs).into_owned())
    })();
    let joined = swapped.and_then(|theirs| {
        Ok(if port.name() < theirs.as_str() {
            me.process_at_rank(0).accept(&port)?
        } else {
            me.process_at_rank(0).connect(&theirs)?
        })
    });
    ibdyn::close_port(port);
    joined
}

/// MPI_Comm_join (`join_over`), with the state released while it waits.
unsafe fn comm_join(fd: c_int, intercomm: *mut Handle) -> c_int {
    call("MPI_Comm_join", MPI_COMM_SELF, || {
        let h = staged(
            |s| {
                let e = s.comm(MPI_COMM_SELF)?;
                Ok((e.comm.intra("MPI_Comm_join")?.clone(), e.errhandler))
            },
            |(me, eh)| Ok((join_over(fd, &me)?, eh)),
            |s, (ic, eh)| Ok(s.add_comm(Comm::Inter(ic), eh)),
        )?;
        // SAFETY: the caller's output argument.
        unsafe { out(intercomm, h, "intercomm") }
    })
}

export!(MPI_Comm_join, PMPI_Comm_join, comm_join, (fd: c_int, intercomm: *mut Handle) -> c_int);
export!(MPI_Comm_spawn, PMPI_Comm_spawn, comm_spawn,
    (command: *const c_char, argv: *const *const c_char, maxprocs: c_int, info: Handle, root: c_int,
     comm: Handle, intercomm: *mut Handle, array_of_errcodes: *mut c_int) -> c_int);
export!(MPI_Comm_spawn_multiple, PMPI_Comm_spawn_multiple, comm_spawn_multiple,
    (count: c_int, array_of_commands: *const *const c_char, array_of_argv: *const *const *const c_char,
     array_of_maxprocs: *const c_int, array_of_info: *const Handle, root: c_int, comm: Handle,
     intercomm: *mut Handle, array_of_errcodes: *mut c_int) -> c_int);
export!(MPI_Comm_get_parent, PMPI_Comm_get_parent, comm_get_parent, (parent: *mut Handle) -> c_int);
export!(MPI_Intercomm_merge, PMPI_Intercomm_merge, intercomm_merge,
    (intercomm: Handle, high: c_int, newintracomm: *mut Handle) -> c_int);
export!(MPI_Comm_disconnect, PMPI_Comm_disconnect, comm_disconnect, (comm: *mut Handle) -> c_int);
export!(MPI_Open_port, PMPI_Open_port, open_port, (info: Handle, port_name: *mut c_char) -> c_int);
export!(MPI_Close_port, PMPI_Close_port, close_port, (port_name: *const c_char) -> c_int);
export!(MPI_Comm_accept, PMPI_Comm_accept, comm_accept,
    (port_name: *const c_char, info: Handle, root: c_int, comm: Handle, newcomm: *mut Handle) -> c_int);
export!(MPI_Comm_connect, PMPI_Comm_connect, comm_connect,
    (port_name: *const c_char, info: Handle, root: c_int, comm: Handle, newcomm: *mut Handle) -> c_int);
export!(MPI_Publish_name, PMPI_Publish_name, publish_name,
    (service_name: *const c_char, info: Handle, port_name: *const c_char) -> c_int);
export!(MPI_Lookup_name, PMPI_Lookup_name, lookup_name,
    (service_name: *const c_char, info: Handle, port_name: *mut c_char) -> c_int);
export!(MPI_Unpublish_name, PMPI_Unpublish_name, unpublish_name,
    (service_name: *const c_char, info: Handle, port_name: *const c_char) -> c_int);
