//! Start and end: MPI_Init ... MPI_Finalize, versions, clocks, the processor name, Abort.

use super::{out, out_string};
use crate::consts::*;
use crate::error::err;
use crate::state::{self, phase, Phase};
use crate::{call, export};
use std::os::raw::{c_char, c_double, c_int};

const LIBRARY_VERSION: &str = concat!(
    "ibdyn ",
    env!("CARGO_PKG_VERSION"),
    " (MPI 5.0 standard ABI 1.0, libmpi_abi.so.1)"
);

unsafe fn init(_argc: *mut c_int, _argv: *mut *mut *mut c_char) -> c_int {
    call("MPI_Init", MPI_COMM_SELF, || {
        state::init(MPI_THREAD_SINGLE)?;
        crate::threads::provide(MPI_THREAD_SINGLE);
        Ok(())
    })
}

unsafe fn init_thread(
    _argc: *mut c_int,
    _argv: *mut *mut *mut c_char,
    required: c_int,
    provided: *mut c_int,
) -> c_int {
    call("MPI_Init_thread", MPI_COMM_SELF, || {
        let level = crate::threads::provided_for(required);
        state::init(level)?;
        // After init: from here on, calls of any thread take the state through entries.
        crate::threads::provide(required);
        // SAFETY: the caller's output argument.
        unsafe { out(provided, level, "provided") }
    })
}

unsafe fn initialized(flag: *mut c_int) -> c_int {
    call("MPI_Initialized", MPI_COMM_SELF, || {
        // SAFETY: the caller's output argument.
        unsafe { out(flag, c_int::from(phase() != Phase::Before), "flag") }
    })
}

unsafe fn finalized(flag: *mut c_int) -> c_int {
    call("MPI_Finalized", MPI_COMM_SELF, || {
        // SAFETY: the caller's output argument.
        unsafe { out(flag, c_int::from(phase() == Phase::Finalized), "flag") }
    })
}

unsafe fn finalize() -> c_int {
    call("MPI_Finalize", MPI_COMM_SELF, || {
        // MPI: the attributes of MPI_COMM_SELF are deleted first, their callbacks run while
        // MPI still works (libraries hook their clean-up there).
        super::attr::delete_all(MPI_COMM_SELF)?;
        state::finalize()
    })
}

unsafe fn query_thread(provided: *mut c_int) -> c_int {
    call("MPI_Query_thread", MPI_COMM_SELF, || {
        let level = state::with_state(|s| Ok(s.thread_level))?;
        // SAFETY: the caller's output argument.
        unsafe { out(provided, level, "provided") }
    })
}

unsafe fn is_thread_main(flag: *mut c_int) -> c_int {
    call("MPI_Is_thread_main", MPI_COMM_SELF, || {
        if phase() != Phase::Running {
            return err(MPI_ERR_OTHER, "called outside MPI_Init ... MPI_Finalize");
        }
        // SAFETY: the caller's output argument.
        unsafe { out(flag, c_int::from(crate::threads::is_main()), "flag") }
    })
}

/// The profiling interface's hook: a tool intercepting PMPI sees the level; the library
/// itself has nothing to switch (the standard's default). Variadic in C; the extra
/// arguments are not read.
unsafe fn pcontrol(_level: c_int) -> c_int {
    MPI_SUCCESS
}

unsafe fn abort(comm: Handle, errorcode: c_int) -> c_int {
    // The communicator by its name where it has one (MPI_COMM_WORLD, or the program's).
    let named = state::with_state(|s| Ok(s.comm(comm)?.name.clone()))
        .ok()
        .filter(|n| !n.is_empty())
        .map_or_else(|| format!("{comm:#x}"), |n| format!("{n} ({comm:#x})"));
    eprintln!("ibdyn MPI: MPI_Abort called on communicator {named} with error code {errorcode}; ending the job");
    // A non-zero exit ends the job under `ibdyn run`; MPI leaves the code's use to the
    // implementation, and 0 would read as success.
    std::process::exit(if errorcode == 0 { 1 } else { errorcode })
}

unsafe fn get_version(version: *mut c_int, subversion: *mut c_int) -> c_int {
    call("MPI_Get_version", MPI_COMM_SELF, || {
        // SAFETY: the caller's output arguments.
        unsafe {
            out(version, MPI_VERSION, "version")?;
            out(subversion, MPI_SUBVERSION, "subversion")
        }
    })
}

unsafe fn abi_get_version(major: *mut c_int, minor: *mut c_int) -> c_int {
    call("MPI_Abi_get_version", MPI_COMM_SELF, || {
        // SAFETY: the caller's output arguments.
        unsafe {
            out(major, MPI_ABI_VERSION, "abi_major")?;
            out(minor, MPI_ABI_SUBVERSION, "abi_minor")
        }
    })
}

/// The sizes of the ABI's integer types, as MPI_Abi_get_info reports them.
unsafe fn abi_get_info(info: *mut Handle) -> c_int {
    call("MPI_Abi_get_info", MPI_COMM_SELF, || {
        let sizes = [
            ("mpi_aint_size", std::mem::size_of::<isize>()),
            ("mpi_count_size", std::mem::size_of::<i64>()),
            ("mpi_offset_size", std::mem::size_of::<i64>()),
        ];
        let entries = sizes.iter().map(|(k, n)| (k.to_string(), n.to_string()));
        let h = crate::infos::add(entries.collect())?;
        // SAFETY: the caller's output argument.
        unsafe { out(info, h, "info") }
    })
}

unsafe fn get_library_version(version: *mut c_char, len: *mut c_int) -> c_int {
    call("MPI_Get_library_version", MPI_COMM_SELF, || {
        // SAFETY: MPI sizes the buffer MPI_MAX_LIBRARY_VERSION_STRING.
        unsafe {
            out_string(
                version,
                MPI_MAX_LIBRARY_VERSION_STRING,
                len,
                LIBRARY_VERSION,
            )
        }
    })
}

unsafe fn wtime() -> c_double {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid timespec to fill; CLOCK_MONOTONIC always exists on Linux.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as c_double + ts.tv_nsec as c_double * 1e-9
}

unsafe fn wtick() -> c_double {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: as in wtime.
    unsafe { libc::clock_getres(libc::CLOCK_MONOTONIC, &mut ts) };
    let r = ts.tv_sec as c_double + ts.tv_nsec as c_double * 1e-9;
    if r > 0.0 {
        r
    } else {
        1e-9
    }
}

unsafe fn get_processor_name(name: *mut c_char, len: *mut c_int) -> c_int {
    call("MPI_Get_processor_name", MPI_COMM_SELF, || {
        let mut buf = [0u8; MPI_MAX_PROCESSOR_NAME];
        // SAFETY: `buf` is writable for its length; gethostname NUL-terminates on success.
        if unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len() - 1) } != 0 {
            return err(
                MPI_ERR_OTHER,
                format!("gethostname failed: {}", std::io::Error::last_os_error()),
            );
        }
        let n = buf.iter().position(|&b| b == 0).unwrap_or(buf.len() - 1);
        let host = String::from_utf8_lossy(&buf[..n]).into_owned();
        // SAFETY: MPI sizes the buffer MPI_MAX_PROCESSOR_NAME.
        unsafe { out_string(name, MPI_MAX_PROCESSOR_NAME, len, &host) }
    })
}

export!(MPI_Init, PMPI_Init, init, (argc: *mut c_int, argv: *mut *mut *mut c_char) -> c_int);
export!(MPI_Init_thread, PMPI_Init_thread, init_thread,
    (argc: *mut c_int, argv: *mut *mut *mut c_char, required: c_int, provided: *mut c_int) -> c_int);
export!(any_thread MPI_Initialized, PMPI_Initialized, initialized, (flag: *mut c_int) -> c_int);
export!(any_thread MPI_Finalized, PMPI_Finalized, finalized, (flag: *mut c_int) -> c_int);
export!(MPI_Finalize, PMPI_Finalize, finalize, () -> c_int);
export!(MPI_Query_thread, PMPI_Query_thread, query_thread, (provided: *mut c_int) -> c_int);
export!(any_thread MPI_Is_thread_main, PMPI_Is_thread_main, is_thread_main, (flag: *mut c_int) -> c_int);
export!(any_thread MPI_Pcontrol, PMPI_Pcontrol, pcontrol, (level: c_int) -> c_int);
export!(any_thread MPI_Abort, PMPI_Abort, abort, (comm: Handle, errorcode: c_int) -> c_int);
export!(any_thread MPI_Get_version, PMPI_Get_version, get_version,
    (version: *mut c_int, subversion: *mut c_int) -> c_int);
export!(any_thread MPI_Abi_get_version, PMPI_Abi_get_version, abi_get_version,
    (abi_major: *mut c_int, abi_minor: *mut c_int) -> c_int);
export!(MPI_Abi_get_info, PMPI_Abi_get_info, abi_get_info, (info: *mut Handle) -> c_int);

export!(any_thread MPI_Get_library_version, PMPI_Get_library_version, get_library_version,
    (version: *mut c_char, resultlen: *mut c_int) -> c_int);
export!(any_thread MPI_Wtime, PMPI_Wtime, wtime, () -> c_double);
export!(any_thread MPI_Wtick, PMPI_Wtick, wtick, () -> c_double);
export!(MPI_Get_processor_name, PMPI_Get_processor_name, get_processor_name,
    (name: *mut c_char, resultlen: *mut c_int) -> c_int);
