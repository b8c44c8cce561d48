//! MPI-IO files: MPI_File_open, close, delete, set_view/get_view, size, preallocate, sync,
//! amode, atomicity, group, info, type extent, byte offset, the file pointers (seek,
//! position, their shared forms) and error handlers (a file's errors return by default, as
//! MPI says). Reading and writing are in `file_io`; the file model in `crate::file`.

use super::out;
use super::selfcall::*;
use crate::consts::*;
use crate::derived;
use crate::error::{err, MpiError, MpiResult};
use crate::file::{self, c_path, os_error, FileObj, SharedPointer, View};
use crate::state::with_state;
use crate::user_errhandler::{self as user, ErrFn, Kind};
use crate::{call_with, export};
use std::ffi::CStr;
use std::os::raw::{c_char, c_int};
use std::sync::atomic::{AtomicU64, Ordering};

/// Runs the body of file function `name` on file `fh`, with the file's error handler. The
/// bodies borrow nothing of the state across the calls they make to exchange with the
/// file's other processes, so those let other threads in (`threads::yielding`).
pub(super) fn file_call(name: &str, fh: Handle, f: impl FnOnce() -> MpiResult<()>) -> c_int {
    call_with(
        name,
        || file::handler_of(fh),
        || crate::threads::yielding(f),
    )
}

fn amode_ok(amode: c_int) -> MpiResult<c_int> {
    let access = [MPI_MODE_RDONLY, MPI_MODE_WRONLY, MPI_MODE_RDWR]
        .iter()
        .filter(|&&m| amode & m != 0)
        .count();
    if access != 1 {
        return err(
            MPI_ERR_AMODE,
            "the access mode needs exactly one of MPI_MODE_RDONLY, MPI_MODE_WRONLY, MPI_MODE_RDWR",
        );
    }
    if amode & MPI_MODE_RDONLY != 0 && amode & (MPI_MODE_CREATE | MPI_MODE_EXCL) != 0 {
        return err(
            MPI_ERR_AMODE,
            "MPI_MODE_RDONLY cannot be combined with MPI_MODE_CREATE or MPI_MODE_EXCL",
        );
    }
    if amode & MPI_MODE_RDWR != 0 && amode & MPI_MODE_SEQUENTIAL != 0 {
        return err(
            MPI_ERR_AMODE,
            "MPI_MODE_RDWR cannot be combined with MPI_MODE_SEQUENTIAL",
        );
    }
    let mut flags = libc::O_CLOEXEC;
    flags |= match () {
        _ if amode & MPI_MODE_RDONLY != 0 => libc::O_RDONLY,
        _ if amode & MPI_MODE_WRONLY != 0 => libc::O_WRONLY,
        _ => libc::O_RDWR,
    };
    Ok(flags)
}

/// The byte view of a freshly opened file: displacement 0, etype and filetype MPI_BYTE.
fn byte_view() -> MpiResult<View> {
    let b = derived::resolve(MPI_BYTE, false)?;
    Ok(View {
        datarep: "native".into(),
        disp: 0,
        etype: MPI_BYTE,
        etype_ty: b.clone(),
        filetype: MPI_BYTE,
        filetype_ty: b,
    })
}

fn open(comm: Handle, path: &str, amode: c_int) -> MpiResult<Handle> {
    let flags = amode_ok(amode)?;
    let cpath = c_path(path)?;
    let mut fc = MPI_COMM_NULL;
    // SAFETY: our output slot.
    check(unsafe { PMPI_Comm_dup(comm, &mut fc) }, "MPI_Comm_dup")?;
    let opened = (|| {
        let (rank, size) = with_state(|s| {
            let r = s.comm(fc)?.comm.raw();
            Ok((r.rank(), r.size()))
        })?;
        // The first process creates the file (and sees MPI_MODE_EXCL's refusal); the others
        // open it once it exists.
        let mut create = 0;
        if amode & MPI_MODE_CREATE != 0 {
            create |= libc::O_CREAT;
        }
        if amode & MPI_MODE_EXCL != 0 {
            create |= libc::O_EXCL;
        }
        let open_with = |extra: c_int| {
            // SAFETY: plain open of the program's path.
            let fd = unsafe { libc::open(cpath.as_ptr(), flags | extra, 0o644) };
            if fd < 0 {
                Err(os_error(&format!("opening {path}")))
            } else {
                Ok(fd)
            }
        };
        let first = if rank == 0 {
            Some(open_with(create))
        } else {
            None
        };
        // Every process returns the first one's error class.
        let class = match &first {
            Some(Err(e)) => e.class,
            _ => MPI_SUCCESS,
        };
        let agreed = reduce_int(class, MPI_MAX, fc)?;
        if agreed != MPI_SUCCESS {
            return match first {
                Some(Err(e)) => Err(e),
                _ => err(
                    agreed,
                    format!("the first process of the file could not open {path}"),
                ),
            };
        }
        let fd = match first {
            Some(r) => r,
            None => open_with(create & !libc::O_EXCL),
        };
        if !all_ok(fd.is_ok(), fc)? {
            if let Ok(fd) = fd {
                // SAFETY: our descriptor.
                unsafe { libc::close(fd) };
            }
            return fd.and_then(|_| err(MPI_ERR_IO, format!("a process could not open {path}")));
        }
        let fd = fd?;
        let (rank, n) = (rank as usize, size as usize);
        // Every process gets the same answer (the making is collective).
        let shared = shared_pointer(fc, rank, n, path)
            .unwrap_or_else(|e| SharedPointer::unavailable(e.message));
        let mut f = FileObj {
            fd,
            comm: fc,
            amode,
            path: path.to_string(),
            view: byte_view()?,
            pos: 0,
            atomic: false,
            errhandler: file::default_handler(),
            shared,
            split: None,
        };
        if amode & MPI_MODE_APPEND != 0 {
            let end = size_of(fd)?;
            f.pos = end;
            if rank == 0 {
                f.shared.reset(end)?;
            }
        }
        // SAFETY: the file's communicator.
        check(unsafe { PMPI_Barrier(fc) }, "MPI_Barrier")?;
        Ok(file::add(f))
    })();
    if opened.is_err() {
        // SAFETY: the duplicate made above.
        unsafe { PMPI_Comm_free(&mut fc) };
    }
    opened
}

/// The shared file pointer's file beside `path`: made by the first process, opened by the
/// others after it.
fn shared_pointer(fc: Handle, rank: usize, n: usize, path: &str) -> MpiResult<SharedPointer> {
    static SEQ: AtomicU64 = AtomicU64::new(0);
    let p = std::path::Path::new(path);
    let dir = p.parent().filter(|d| !d.as_os_str().is_empty());
    let name = p
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let id = [
        std::process::id() as i64,
        SEQ.fetch_add(1, Ordering::Relaxed) as i64,
    ];
    let first = allgather(id, n, fc)?[0];
    let side = format!(".{name}.ibdyn-shfp-{}-{}", first[0], first[1]);
    let side = match dir {
        Some(d) => d.join(side).to_string_lossy().into_owned(),
        None => side,
    };
    shared_file(
        fc,
        rank,
        &side,
        ("the shared file pointer", MPI_ERR_IO),
        |create| SharedPointer::open(&side, create),
    )
}

fn size_of(fd: c_int) -> MpiResult<i64> {
    // SAFETY: a zeroed stat is a valid output buffer.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: our descriptor and buffer.
    if unsafe { libc::fstat(fd, &mut st) } != 0 {
        return Err(os_error("fstat"));
    }
    Ok(st.st_size)
}

unsafe fn file_open(
    comm: Handle,
    filename: *const c_char,
    amode: c_int,
    _info: Handle,
    fh: *mut Handle,
) -> c_int {
    file_call("MPI_File_open", MPI_FILE_NULL, || {
        if filename.is_null() || fh.is_null() {
            return err(MPI_ERR_ARG, "filename or fh is NULL");
        }
        with_state(|s| {
            if matches!(s.comm(comm)?.comm, crate::state::Comm::Inter(_)) {
                return err(MPI_ERR_COMM, "a file needs an intracommunicator");
            }
            Ok(())
        })?;
        // SAFETY: the caller's C string.
        let name = unsafe { CStr::from_ptr(filename) }
            .to_string_lossy()
            .into_owned();
        // ROMIO's "ufs:" style prefixes name the file system; the path follows.
        let path = name
            .split_once(':')
            .filter(|(p, _)| p.len() > 1 && !p.contains('/'))
            .map_or(name.as_str(), |(_, r)| r);
        let h = crate::threads::yielding(|| open(comm, path, amode))?;
        // SAFETY: the caller's output argument (checked non-null).
        unsafe { out(fh, h, "fh") }
    })
}

unsafe fn file_close(fh: *mut Handle) -> c_int {
    // SAFETY: the caller's in/out argument, read for the error handler.
    let h = unsafe { fh.as_ref() }.copied().unwrap_or(MPI_FILE_NULL);
    file_call("MPI_File_close", h, || {
        let (fc, delete) =
            file::with(h, |f| Ok((f.comm, f.amode & MPI_MODE_DELETE_ON_CLOSE != 0)))?;
        // Every process has written before the file is gone or its pointer file removed.
        // SAFETY: the file's communicator.
        check(unsafe { PMPI_Barrier(fc) }, "MPI_Barrier")?;
        let f = file::remove(h)?;
        let rank = with_state(|s| Ok(s.comm(fc)?.comm.raw().rank()))?;
        let path = f.path.clone();
        drop(f);
        if delete && rank == 0 {
            let c = c_path(&path)?;
            // SAFETY: removing the program's file, as MPI_MODE_DELETE_ON_CLOSE asks.
            unsafe { libc::unlink(c.as_ptr()) };
        }
        let mut c = fc;
        // SAFETY: the file's own duplicate, freed once.
        check(unsafe { PMPI_Comm_free(&mut c) }, "MPI_Comm_free")?;
        // SAFETY: the caller's in/out argument.
        unsafe { out(fh, MPI_FILE_NULL, "fh") }
    })
}

unsafe fn file_delete(filename: *const c_char, _info: Handle) -> c_int {
    file_call("MPI_File_delete", MPI_FILE_NULL, || {
        if filename.is_null() {
            return err(MPI_ERR_ARG, "filename is NULL");
        }
        // SAFETY: the caller's C string, passed to unlink.
        if unsafe { libc::unlink(filename) } != 0 {
            // SAFETY: as above.
            let name = unsafe { CStr::from_ptr(filename) }.to_string_lossy();
            return Err(os_error(&format!("deleting {name}")));
        }
        Ok(())
    })
}

unsafe fn file_set_view(
    fh: Handle,
    disp: i64,
    etype: Handle,
    filetype: Handle,
    datarep: *const c_char,
    _info: Handle,
) -> c_int {
    file_call("MPI_File_set_view", fh, || {
        let rep = if datarep.is_null() {
            "native".to_string()
        } else {
            // SAFETY: the caller's C string.
            unsafe { CStr::from_ptr(datarep) }
                .to_string_lossy()
                .into_owned()
        };
        file::datarep_ok(&rep)?;
        let etype_ty = derived::resolve(etype, true)?;
        let filetype_ty = derived::resolve(filetype, true)?;
        if etype_ty.size == 0 || filetype_ty.size % etype_ty.size != 0 {
            return err(MPI_ERR_ARG, "the filetype must hold whole etypes");
        }
        let fc = file::with(fh, |f| {
            if disp < 0 && disp != MPI_DISPLACEMENT_CURRENT {
                return err(MPI_ERR_ARG, format!("displacement {disp} is negative"));
            }
            let d = if disp == MPI_DISPLACEMENT_CURRENT {
                if f.amode & MPI_MODE_SEQUENTIAL == 0 {
                    return err(
                        MPI_ERR_ARG,
                        "MPI_DISPLACEMENT_CURRENT is for files opened MPI_MODE_SEQUENTIAL",
                    );
                }
                f.shared.get()? * f.view.etype_ty.size as i64 + f.view.disp
            } else {
                disp
            };
            f.view = View {
                datarep: rep,
                disp: d,
                etype,
                etype_ty,
                filetype,
                filetype_ty,
            };
            f.pos = 0;
            Ok(f.comm)
        })?;
        let rank = with_state(|s| Ok(s.comm(fc)?.comm.raw().rank()))?;
        // The shared pointer goes back to 0 once every process has left the old view.
        // SAFETY: the file's communicator; the view is collective.
        check(unsafe { PMPI_Barrier(fc) }, "MPI_Barrier")?;
        if rank == 0 {
            file::with(fh, |f| f.shared.reset(0))?;
        }
        // SAFETY: as above.
        check(unsafe { PMPI_Barrier(fc) }, "MPI_Barrier")
    })
}

unsafe fn file_get_view(
    fh: Handle,
    disp: *mut i64,
    etype: *mut Handle,
    filetype: *mut Handle,
    datarep: *mut c_char,
) -> c_int {
    file_call("MPI_File_get_view", fh, || {
        let v = file::with(fh, |f| Ok(f.view.clone()))?;
        // SAFETY: the caller's output arguments (datarep holds MPI_MAX_DATAREP_STRING).
        unsafe {
            out(disp, v.disp, "disp")?;
            out(etype, derived::handle_of(v.etype, &v.etype_ty), "etype")?;
            out(
                filetype,
                derived::handle_of(v.filetype, &v.filetype_ty),
                "filetype",
            )?;
            super::out_string(
                datarep,
                MPI_MAX_DATAREP_STRING,
                std::ptr::null_mut(),
                &v.datarep,
            )
        }
    })
}

unsafe fn file_get_size(fh: Handle, size: *mut i64) -> c_int {
    file_call("MPI_File_get_size", fh, || {
        let n = file::with(fh, |f| size_of(f.fd))?;
        // SAFETY: the caller's output argument.
        unsafe { out(size, n, "size") }
    })
}

/// MPI_File_set_size and MPI_File_preallocate (which only grows the file).
fn resize(name: &str, fh: Handle, size: i64, grow_only: bool) -> c_int {
    file_call(name, fh, || {
        if size < 0 {
            return err(MPI_ERR_ARG, format!("size {size} is negative"));
        }
        let (fc, amode) = file::with(fh, |f| Ok((f.comm, f.amode)))?;
        if amode & MPI_MODE_RDONLY != 0 {
            return err(MPI_ERR_READ_ONLY, "the file is open MPI_MODE_RDONLY");
        }
        // Every process has finished its accesses before the size changes, and sees the new
        // size after the call.
        // SAFETY: the file's communicator; the call is collective.
        check(unsafe { PMPI_Barrier(fc) }, "MPI_Barrier")?;
        let resized = if with_state(|s| Ok(s.comm(fc)?.comm.raw().rank()))? == 0 {
            file::with(fh, |f| {
                if !grow_only || size_of(f.fd)? < size {
                    // SAFETY: our descriptor.
                    if unsafe { libc::ftruncate(f.fd, size) } != 0 {
                        return Err(os_error("resizing"));
                    }
                }
                Ok(())
            })
        } else {
            Ok(())
        };
        // Every process returns the first one's outcome.
        if !all_ok(resized.is_ok(), fc)? {
            resized?;
            return err(
                MPI_ERR_IO,
                "the first process of the file could not resize it",
            );
        }
        Ok(())
    })
}

unsafe fn file_set_size(fh: Handle, size: i64) -> c_int {
    resize("MPI_File_set_size", fh, size, false)
}

unsafe fn file_preallocate(fh: Handle, size: i64) -> c_int {
    resize("MPI_File_preallocate", fh, size, true)
}

unsafe fn file_sync(fh: Handle) -> c_int {
    file_call("MPI_File_sync", fh, || {
        let (fc, fd) = file::with(fh, |f| Ok((f.comm, f.fd)))?;
        // SAFETY: our descriptor.
        let synced = match unsafe { libc::fsync(fd) } {
            0 => Ok(()),
            _ => Err(os_error("fsync")),
        };
        // Every process learns whether all of them synced (the call is collective).
        if !all_ok(synced.is_ok(), fc)? {
            synced?;
            return err(MPI_ERR_IO, "another process of the file could not sync it");
        }
        Ok(())
    })
}

unsafe fn file_get_amode(fh: Handle, amode: *mut c_int) -> c_int {
    file_call("MPI_File_get_amode", fh, || {
        let a = file::with(fh, |f| Ok(f.amode))?;
        // SAFETY: the caller's output argument.
        unsafe { out(amode, a, "amode") }
    })
}

unsafe fn file_set_atomicity(fh: Handle, flag: c_int) -> c_int {
    file_call("MPI_File_set_atomicity", fh, || {
        file::with(fh, |f| {
            f.atomic = flag != 0;
            Ok(())
        })
    })
}

unsafe fn file_get_atomicity(fh: Handle, flag: *mut c_int) -> c_int {
    file_call("MPI_File_get_atomicity", fh, || {
        let a = file::with(fh, |f| Ok(f.atomic))?;
        // SAFETY: the caller's output argument.
        unsafe { out(flag, c_int::from(a), "flag") }
    })
}

unsafe fn file_get_group(fh: Handle, group: *mut Handle) -> c_int {
    file_call("MPI_File_get_group", fh, || {
        let fc = file::with(fh, |f| Ok(f.comm))?;
        // SAFETY: passed on.
        check(unsafe { PMPI_Comm_group(fc, group) }, "MPI_Comm_group")
    })
}

unsafe fn file_get_info(fh: Handle, info: *mut Handle) -> c_int {
    file_call("MPI_File_get_info", fh, || {
        file::with(fh, |_| Ok(()))?;
        // The hints ibdyn uses: none.
        // SAFETY: passed on.
        check(unsafe { PMPI_Info_create(info) }, "MPI_Info_create")
    })
}

unsafe fn file_set_info(fh: Handle, _info: Handle) -> c_int {
    file_call("MPI_File_set_info", fh, || file::with(fh, |_| Ok(())))
}

fn type_extent(
    name: &str,
    fh: Handle,
    datatype: Handle,
    put: impl FnOnce(i64) -> MpiResult<()>,
) -> c_int {
    file_call(name, fh, || {
        file::with(fh, |_| Ok(()))?;
        put(derived::resolve(datatype, false)?.extent as i64)
    })
}

unsafe fn file_get_type_extent(fh: Handle, datatype: Handle, extent: *mut isize) -> c_int {
    // SAFETY: the caller's output argument.
    type_extent("MPI_File_get_type_extent", fh, datatype, |e| unsafe {
        out(extent, e as isize, "extent")
    })
}

unsafe fn file_get_type_extent_c(fh: Handle, datatype: Handle, extent: *mut i64) -> c_int {
    // SAFETY: the caller's output argument.
    type_extent("MPI_File_get_type_extent_c", fh, datatype, |e| unsafe {
        out(extent, e, "extent")
    })
}

unsafe fn file_get_byte_offset(fh: Handle, offset: i64, disp: *mut i64) -> c_int {
    file_call("MPI_File_get_byte_offset", fh, || {
        if offset < 0 {
            return err(MPI_ERR_ARG, format!("offset {offset} is negative"));
        }
        let b = file::with(fh, |f| {
            let data = offset as u64 * f.view.etype_ty.size as u64;
            Ok(f.view
                .ranges(data, 1)
                .first()
                .map_or(f.view.disp, |r| r.0 as i64))
        })?;
        // SAFETY: the caller's output argument.
        unsafe { out(disp, b, "disp") }
    })
}

/// The new position of a seek, in etypes.
fn seek_to(f: &FileObj, current: i64, offset: i64, whence: c_int) -> MpiResult<i64> {
    let p = match whence {
        MPI_SEEK_SET => offset,
        MPI_SEEK_CUR => current + offset,
        MPI_SEEK_END => {
            let end = f.view.data_before(size_of(f.fd)? as u64) as i64;
            end / f.view.etype_ty.size as i64 + offset
        }
        w => {
            return err(
                MPI_ERR_ARG,
                format!("whence {w}: use MPI_SEEK_SET, MPI_SEEK_CUR or MPI_SEEK_END"),
            )
        }
    };
    if p < 0 {
        return err(
            MPI_ERR_ARG,
            format!("the seek would go to offset {p}, before the view's start"),
        );
    }
    Ok(p)
}

unsafe fn file_seek(fh: Handle, offset: i64, whence: c_int) -> c_int {
    file_call("MPI_File_seek", fh, || {
        file::with(fh, |f| {
            f.pos = seek_to(f, f.pos, offset, whence)?;
            Ok(())
        })
    })
}

unsafe fn file_get_position(fh: Handle, offset: *mut i64) -> c_int {
    file_call("MPI_File_get_position", fh, || {
        let p = file::with(fh, |f| Ok(f.pos))?;
        // SAFETY: the caller's output argument.
        unsafe { out(offset, p, "offset") }
    })
}

unsafe fn file_seek_shared(fh: Handle, offset: i64, whence: c_int) -> c_int {
    file_call("MPI_File_seek_shared", fh, || {
        let fc = file::with(fh, |f| Ok(f.comm))?;
        let rank = with_state(|s| Ok(s.comm(fc)?.comm.raw().rank()))?;
        // Collective: every process waits until the first has moved the pointer.
        // SAFETY: the file's communicator.
        check(unsafe { PMPI_Barrier(fc) }, "MPI_Barrier")?;
        if rank == 0 {
            file::with(fh, |f| {
                let cur = f.shared.get()?;
                let p = seek_to(f, cur, offset, whence)?;
                f.shared.set(p)
            })?;
        }
        // SAFETY: as above.
        check(unsafe { PMPI_Barrier(fc) }, "MPI_Barrier")
    })
}

unsafe fn file_get_position_shared(fh: Handle, offset: *mut i64) -> c_int {
    file_call("MPI_File_get_position_shared", fh, || {
        let p = file::with(fh, |f| f.shared.get())?;
        // SAFETY: the caller's output argument.
        unsafe { out(offset, p, "offset") }
    })
}

unsafe fn file_set_errhandler(fh: Handle, handler: Handle) -> c_int {
    file_call("MPI_File_set_errhandler", fh, || {
        let h = user::resolve(handler, Kind::File)?;
        if fh == MPI_FILE_NULL {
            file::set_default_handler(h);
            return Ok(());
        }
        file::with(fh, |f| {
            f.errhandler = h;
            Ok(())
        })
    })
}

unsafe fn file_get_errhandler(fh: Handle, handler: *mut Handle) -> c_int {
    file_call("MPI_File_get_errhandler", fh, || {
        let h = if fh == MPI_FILE_NULL {
            file::default_handler()
        } else {
            file::with(fh, |f| Ok(f.errhandler))?
        };
        // SAFETY: the caller's output argument.
        unsafe { out(handler, user::handle_for_get(h), "errhandler") }
    })
}

unsafe fn file_create_errhandler(func: Option<ErrFn>, handler: *mut Handle) -> c_int {
    crate::call("MPI_File_create_errhandler", MPI_COMM_SELF, || {
        let Some(func) = func else {
            return err(MPI_ERR_ARG, "the error handler function is NULL");
        };
        // SAFETY: the caller's output argument.
        unsafe {
            out(
                handler,
                user::create(user::Func::Classic(func), Kind::File, None),
                "errhandler",
            )
        }
    })
}

unsafe fn file_call_errhandler(fh: Handle, code: c_int) -> c_int {
    if fh != MPI_FILE_NULL {
        let found = file_call("MPI_File_call_errhandler", fh, || {
            file::with(fh, |_| Ok(()))
        });
        if found != MPI_SUCCESS {
            return found;
        }
    }
    let e = MpiError::new(code, "raised by the program (MPI_File_call_errhandler)");
    crate::error::raise("MPI_File_call_errhandler", e, file::handler_of(fh));
    MPI_SUCCESS
}

/// MPI_Register_datarep(_c): the name is registered; a representation without conversion
/// functions is then read and written as it is in memory.
unsafe fn register_datarep(
    datarep: *const c_char,
    read_fn: usize,
    write_fn: usize,
    _extent_fn: usize,
    _extra: usize,
) -> c_int {
    crate::call("MPI_Register_datarep", MPI_COMM_SELF, || {
        if datarep.is_null() {
            return err(MPI_ERR_ARG, "datarep is NULL");
        }
        // SAFETY: the caller's C string.
        let name = unsafe { CStr::from_ptr(datarep) }
            .to_string_lossy()
            .into_owned();
        file::register_datarep(&name, read_fn != 0 || write_fn != 0)
    })
}

export!(MPI_Register_datarep, PMPI_Register_datarep, register_datarep,
    (datarep: *const c_char, read_conversion_fn: usize, write_conversion_fn: usize,
     dtype_file_extent_fn: usize, extra_state: usize) -> c_int);
export!(MPI_Register_datarep_c, PMPI_Register_datarep_c, register_datarep,
    (datarep: *const c_char, read_conversion_fn: usize, write_conversion_fn: usize,
     dtype_file_extent_fn: usize, extra_state: usize) -> c_int);
export!(MPI_File_open, PMPI_File_open, file_open,
    (comm: Handle, filename: *const c_char, amode: c_int, info: Handle, fh: *mut Handle) -> c_int);
export!(MPI_File_close, PMPI_File_close, file_close, (fh: *mut Handle) -> c_int);
export!(MPI_File_delete, PMPI_File_delete, file_delete, (filename: *const c_char, info: Handle) -> c_int);
export!(MPI_File_set_view, PMPI_File_set_view, file_set_view,
    (fh: Handle, disp: i64, etype: Handle, filetype: Handle, datarep: *const c_char, info: Handle) -> c_int);
export!(MPI_File_get_view, PMPI_File_get_view, file_get_view,
    (fh: Handle, disp: *mut i64, etype: *mut Handle, filetype: *mut Handle, datarep: *mut c_char) -> c_int);
export!(MPI_File_get_size, PMPI_File_get_size, file_get_size, (fh: Handle, size: *mut i64) -> c_int);
export!(MPI_File_set_size, PMPI_File_set_size, file_set_size, (fh: Handle, size: i64) -> c_int);
export!(MPI_File_preallocate, PMPI_File_preallocate, file_preallocate, (fh: Handle, size: i64) -> c_int);
export!(MPI_File_sync, PMPI_File_sync, file_sync, (fh: Handle) -> c_int);
export!(MPI_File_get_amode, PMPI_File_get_amode, file_get_amode, (fh: Handle, amode: *mut c_int) -> c_int);
export!(MPI_File_set_atomicity, PMPI_File_set_atomicity, file_set_atomicity, (fh: Handle, flag: c_int) -> c_int);
export!(MPI_File_get_atomicity, PMPI_File_get_atomicity, file_get_atomicity, (fh: Handle, flag: *mut c_int) -> c_int);
export!(MPI_File_get_group, PMPI_File_get_group, file_get_group, (fh: Handle, group: *mut Handle) -> c_int);
export!(MPI_File_get_info, PMPI_File_get_info, file_get_info, (fh: Handle, info_used: *mut Handle) -> c_int);
export!(MPI_File_set_info, PMPI_File_set_info, file_set_info, (fh: Handle, info: Handle) -> c_int);
export!(MPI_File_get_type_extent, PMPI_File_get_type_extent, file_get_type_extent,
    (fh: Handle, datatype: Handle, extent: *mut isize) -> c_int);
export!(MPI_File_get_type_extent_c, PMPI_File_get_type_extent_c, file_get_type_extent_c,
    (fh: Handle, datatype: Handle, extent: *mut i64) -> c_int);
export!(MPI_File_get_byte_offset, PMPI_File_get_byte_offset, file_get_byte_offset,
    (fh: Handle, offset: i64, disp: *mut i64) -> c_int);
export!(MPI_File_seek, PMPI_File_seek, file_seek, (fh: Handle, offset: i64, whence: c_int) -> c_int);
export!(MPI_File_get_position, PMPI_File_get_position, file_get_position, (fh: Handle, offset: *mut i64) -> c_int);
export!(MPI_File_seek_shared, PMPI_File_seek_shared, file_seek_shared,
    (fh: Handle, offset: i64, whence: c_int) -> c_int);
export!(MPI_File_get_position_shared, PMPI_File_get_position_shared, file_get_position_shared,
    (fh: Handle, offset: *mut i64) -> c_int);
export!(MPI_File_set_errhandler, PMPI_File_set_errhandler, file_set_errhandler,
    (file: Handle, errhandler: Handle) -> c_int);
export!(MPI_File_get_errhandler, PMPI_File_get_errhandler, file_get_errhandler,
    (file: Handle, errhandler: *mut Handle) -> c_int);
export!(MPI_File_create_errhandler, PMPI_File_create_errhandler, file_create_errhandler,
    (file_errhandler_fn: Option<ErrFn>, errhandler: *mut Handle) -> c_int);
export!(MPI_File_call_errhandler, PMPI_File_call_errhandler, file_call_errhandler,
    (fh: Handle, errorcode: c_int) -> c_int);
