//! Dynamic processes: Comm_spawn, Comm_get_parent, Intercomm_merge, Comm_disconnect.

use super::{out, read};
use crate::consts::*;
use crate::error::{err, MpiError, MpiResult};
use crate::state::{with_state, Comm};
use crate::{call, export};
use ibdyn::traits::*;
use ibdyn::CommError;
use std::ffi::CStr;
use std::os::raw::{c_char, c_int};
use std::process::Command;

/// The command of a spawn: `command` with the NULL-terminated `argv`.
///
/// # Safety
/// `command` is a C string; `argv` is NULL (MPI_ARGV_NULL) or a NULL-terminated array of C
/// strings.
unsafe fn command_of(command: *const c_char, argv: *const *const c_char) -> MpiResult<Command> {
    if command.is_null() {
        return err(MPI_ERR_SPAWN, "command is NULL at the root");
    }
    // SAFETY: the caller's C string.
    let program = unsafe { CStr::from_ptr(command) }
        .to_string_lossy()
        .into_owned();
    let mut cmd = Command::new(program);
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
    call("MPI_Comm_spawn", comm, || {
        if info != MPI_INFO_NULL {
            return err(
                MPI_ERR_INFO,
                "info objects are not supported yet: pass MPI_INFO_NULL",
            );
        }
        let spawned = with_state(|s| {
            let e = s.comm(comm)?;
            let intra = e.comm.intra("MPI_Comm_spawn")?;
            let eh = e.errhandler;
            if !(0..intra.size()).contains(&root) {
                return err(
                    MPI_ERR_ROOT,
                    format!(
                        "root {root} is out of range for a communicator of {}",
                        intra.size()
                    ),
                );
            }
            let is_root = intra.rank() == root;
            // Only the root's command and count matter (MPI); the others pass anything.
            let (cmd, n) = if is_root {
                // SAFETY: the root's C strings.
                let cmd = unsafe { command_of(command, argv) }?;
                let n = u32::try_from(maxprocs)
                    .ok()
                    .filter(|&n| n > 0)
                    .ok_or_else(|| {
                        MpiError::new(MPI_ERR_SPAWN, format!("maxprocs {maxprocs} must be > 0"))
                    })?;
                (cmd, n)
            } else {
                (Command::new(""), 1)
            };
            Ok(match intra.process_at_rank(root).spawn(&cmd, n) {
                Ok(ic) => {
                    let size = ic.remote_size();
                    Ok((s.add_comm(Comm::Inter(ic), eh), size))
                }
                Err(e) => Err(e),
            })
        })?;
        let n = if errcodes.is_null() {
            0
        } else {
            usize::try_from(maxprocs).unwrap_or(0)
        };
        match spawned {
            Ok((h, size)) => {
                for i in 0..n {
                    let code = if (i as c_int) < size {
                        MPI_SUCCESS
                    } else {
                        MPI_ERR_SPAWN
                    };
                    // SAFETY: the caller's array of maxprocs codes.
                    unsafe { errcodes.add(i).write(code) };
                }
                // SAFETY: the caller's output argument.
                unsafe { out(intercomm, h, "intercomm") }
            }
            Err(e) => {
                let failed: Vec<u32> = match &e {
                    CommError::SpawnFailed { failures } => {
                        failures.iter().map(|f| f.rank).collect()
                    }
                    _ => (0..n as u32).collect(),
                };
                for i in 0..n {
                    let code = if failed.contains(&(i as u32)) {
                        MPI_ERR_SPAWN
                    } else {
                        MPI_SUCCESS
                    };
                    // SAFETY: the caller's array of maxprocs codes.
                    unsafe { errcodes.add(i).write(code) };
                }
                // SAFETY: the caller's output argument.
                unsafe { out(intercomm, MPI_COMM_NULL, "intercomm") }?;
                Err(e.into())
            }
        }
    })
}

unsafe fn comm_get_parent(parent: *mut Handle) -> c_int {
    call("MPI_Comm_get_parent", MPI_COMM_SELF, || {
        let h = with_state(|s| {
            if let Some(h) = s.parent {
                return Ok(h);
            }
            let Some(p) = s.universe().parent() else {
                return Ok(MPI_COMM_NULL);
            };
            let h = s.add_comm(Comm::Inter(p), s.errhandler_for(MPI_COMM_WORLD));
            s.parent = Some(h);
            Ok(h)
        })?;
        // SAFETY: the caller's output argument.
        unsafe { out(parent, h, "parent") }
    })
}

unsafe fn intercomm_merge(intercomm: Handle, high: c_int, newcomm: *mut Handle) -> c_int {
    call("MPI_Intercomm_merge", intercomm, || {
        let h = with_state(|s| {
            let e = s.comm(intercomm)?;
            let eh = e.errhandler;
            let merged = e.comm.inter("MPI_Intercomm_merge")?.merge(high != 0)?;
            Ok(s.add_comm(Comm::Intra(merged), eh))
        })?;
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
        with_state(|s| {
            let e = s.comm(h)?;
            match &e.comm {
                Comm::Intra(c) => c.disconnect()?,
                Comm::Inter(c) => c.disconnect()?,
            }
            s.remove_comm(h)?;
            Ok(())
        })?;
        // SAFETY: checked above.
        unsafe { out(comm, MPI_COMM_NULL, "comm") }
    })
}

export!(MPI_Comm_spawn, PMPI_Comm_spawn, comm_spawn,
    (command: *const c_char, argv: *const *const c_char, maxprocs: c_int, info: Handle, root: c_int,
     comm: Handle, intercomm: *mut Handle, array_of_errcodes: *mut c_int) -> c_int);
export!(MPI_Comm_get_parent, PMPI_Comm_get_parent, comm_get_parent, (parent: *mut Handle) -> c_int);
export!(MPI_Intercomm_merge, PMPI_Intercomm_merge, intercomm_merge,
    (intercomm: Handle, high: c_int, newintracomm: *mut Handle) -> c_int);
export!(MPI_Comm_disconnect, PMPI_Comm_disconnect, comm_disconnect, (comm: *mut Handle) -> c_int);
