//! Reading and writing files: at an explicit offset, at the individual file pointer, at the
//! shared one, and in rank order (`ordered`); blocking, collective (`_all`), non-blocking
//! (`I`: complete when they return, with a completed request) and split collective
//! (`_begin`/`_end`); `int` and `_c` counts. Every form moves the data with `pread`/`pwrite`
//! at the byte ranges of the file's view (`crate::file`).

use super::buffers::{byte_len, recv_buf, send_buf};
use super::file::file_call;
use super::selfcall::allgather;
use crate::consts::*;
use crate::error::{err, MpiResult};
use crate::file::{self, read_ranges, write_ranges};
use crate::request::{Active, ReqEntry};
use crate::state::with_state;
use crate::status::{self, MpiStatus};
use crate::{derived, export};
use std::ffi::c_void;
use std::os::raw::c_int;

/// What an access does: a collective write goes in two phases (`file_two_phase`).
#[derive(Clone, Copy)]
enum Op {
    Read,
    Write,
    WriteAll,
}

/// Where an access starts.
#[derive(Clone, Copy)]
enum Ptr {
    /// An explicit offset, in etypes of the view.
    At(i64),
    Individual,
    Shared,
    /// The shared pointer, in the order of the processes' ranks (collective).
    Ordered,
}

/// This process's offset in an ordered access of `n` etypes: the processes of `fc` take
/// consecutive places from the shared pointer, in rank order.
fn ordered_start(fh: Handle, fc: Handle, n: i64) -> MpiResult<i64> {
    let (rank, size) = with_state(|s| {
        let r = s.comm(fc)?.comm.raw();
        Ok((r.rank() as usize, r.size() as usize))
    })?;
    let counts = allgather(n, size, fc)?;
    let total: i64 = counts.iter().sum();
    let base = if rank == 0 {
        file::with(fh, |f| f.shared.fetch_add(total))?
    } else {
        0
    };
    let bases = allgather(base, size, fc)?;
    Ok(bases[0] + counts[..rank].iter().sum::<i64>())
}

/// Does `op` on `count` elements of `ty` at `buf`; the status (its count in bytes).
fn io(
    fh: Handle,
    ptr: Ptr,
    buf: *mut c_void,
    count: i64,
    ty: Handle,
    op: Op,
) -> MpiResult<ibdyn::Status> {
    let write = !matches!(op, Op::Read);
    let mty = derived::resolve(ty, true)?;
    let len = byte_len(count, &mty)?;
    let (fd, view, pos, amode, fc) =
        file::with(fh, |f| Ok((f.fd, f.view.clone(), f.pos, f.amode, f.comm)))?;
    if write && amode & MPI_MODE_RDONLY != 0 {
        return err(MPI_ERR_READ_ONLY, "the file is open MPI_MODE_RDONLY");
    }
    if !write && amode & MPI_MODE_WRONLY != 0 {
        return err(MPI_ERR_ACCESS, "the file is open MPI_MODE_WRONLY");
    }
    if amode & MPI_MODE_SEQUENTIAL != 0 && matches!(ptr, Ptr::At(_) | Ptr::Individual) {
        return err(
            MPI_ERR_UNSUPPORTED_OPERATION,
            "a file open MPI_MODE_SEQUENTIAL takes the shared file pointer only",
        );
    }
    let es = view.etype_ty.size;
    if len % es != 0 {
        return err(
            MPI_ERR_TYPE,
            format!("{len} bytes are not whole etypes of {es} bytes"),
        );
    }
    let n = (len / es) as i64;
    let start = match ptr {
        Ptr::At(o) if o < 0 => return err(MPI_ERR_ARG, format!("offset {o} is negative")),
        Ptr::At(o) => o,
        Ptr::Individual => pos,
        Ptr::Shared => file::with(fh, |f| f.shared.fetch_add(n))?,
        Ptr::Ordered => ordered_start(fh, fc, n)?,
    };
    let ranges = view.ranges(start as u64 * es as u64, len);
    let moved = if write {
        // SAFETY: the program's buffer of `count` elements of `ty` (MPI's contract).
        let data = unsafe { send_buf(buf, count, ty) }?;
        if let Op::WriteAll = op {
            let n = with_state(|s| Ok(s.comm(fc)?.comm.raw().size() as usize))?;
            super::file_two_phase::write_all(fd, fc, n, &ranges, &data)?;
        } else {
            write_ranges(fd, &ranges, &data)?;
        }
        len
    } else {
        // SAFETY: as above, writable.
        let mut rb = unsafe { recv_buf(buf, count, ty) }?;
        let got = read_ranges(fd, &ranges, rb.bytes())?;
        rb.finish(got);
        got
    };
    if let Ptr::Individual = ptr {
        file::with(fh, |f| {
            f.pos = pos + (moved / es) as i64;
            Ok(())
        })?;
    }
    Ok(ibdyn::Status {
        source: MPI_ANY_SOURCE,
        tag: ibdyn::ANY_TAG,
        count: moved,
    })
}

/// The ABI form of a file access's status.
fn mpi_status(st: &ibdyn::Status) -> MpiStatus {
    let mut m = MpiStatus {
        source: MPI_ANY_SOURCE,
        tag: MPI_ANY_TAG,
        error: MPI_SUCCESS,
        internal: [0; 5],
    };
    // SAFETY: our own status.
    unsafe { status::store(&mut m, st) };
    m
}

fn with_status(
    name: &str,
    fh: Handle,
    st: *mut MpiStatus,
    f: impl FnOnce() -> MpiResult<ibdyn::Status>,
) -> c_int {
    file_call(name, fh, || {
        let s = f()?;
        // SAFETY: the caller's status (or MPI_STATUS_IGNORE, NULL).
        unsafe { status::store(st, &s) };
        Ok(())
    })
}

fn with_request(
    name: &str,
    fh: Handle,
    request: *mut Handle,
    f: impl FnOnce() -> MpiResult<ibdyn::Status>,
) -> c_int {
    file_call(name, fh, || {
        if request.is_null() {
            return err(MPI_ERR_ARG, "the output argument request is NULL");
        }
        let s = f()?;
        let fc = file::with(fh, |f| Ok(f.comm))?;
        let h = with_state(|st| {
            let ci = st.comm_index(fc)?;
            Ok(st.add_req(ReqEntry::new(Active::Done(s), ci)))
        })?;
        // SAFETY: the caller's output argument (checked non-null).
        unsafe { request.write(h) };
        Ok(())
    })
}

fn begin(name: &str, fh: Handle, f: impl FnOnce() -> MpiResult<ibdyn::Status>) -> c_int {
    file_call(name, fh, || {
        if file::with(fh, |x| Ok(x.split.is_some()))? {
            return err(
                MPI_ERR_OTHER,
                "a split collective of this file is active already: end it first",
            );
        }
        let s = mpi_status(&f()?);
        file::with(fh, |x| {
            x.split = Some(s);
            Ok(())
        })
    })
}

unsafe fn end(name: &str, fh: Handle, st: *mut MpiStatus) -> c_int {
    file_call(name, fh, || {
        let s = file::with(fh, |x| {
            x.split.take().map_or_else(
                || err(MPI_ERR_OTHER, "no split collective of this file to end"),
                Ok,
            )
        })?;
        if !st.is_null() {
            // SAFETY: the caller's status.
            unsafe { st.write(s) };
        }
        Ok(())
    })
}

/// The exported accesses at an explicit offset.
macro_rules! at_offset {
    ($($f:ident $name:literal $n:ty, $op:expr, $how:ident;)*) => {$(
        unsafe fn $f(fh: Handle, offset: i64, buf: *mut c_void, count: $n, ty: Handle,
                     st: *mut at_offset!(@out $how)) -> c_int {
            at_offset!(@run $how, $name, fh, st, || io(fh, Ptr::At(offset), buf, count.into(), ty, $op))
        }
    )*};
    (@out status) => { MpiStatus };
    (@out request) => { Handle };
    (@run status, $name:expr, $fh:expr, $st:expr, $f:expr) => { with_status($name, $fh, $st, $f) };
    (@run request, $name:expr, $fh:expr, $st:expr, $f:expr) => { with_request($name, $fh, $st, $f) };
}

at_offset! {
    read_at "MPI_File_read_at" c_int, Op::Read, status;
    read_at_c "MPI_File_read_at_c" i64, Op::Read, status;
    read_at_all "MPI_File_read_at_all" c_int, Op::Read, status;
    read_at_all_c "MPI_File_read_at_all_c" i64, Op::Read, status;
    write_at "MPI_File_write_at" c_int, Op::Write, status;
    write_at_c "MPI_File_write_at_c" i64, Op::Write, status;
    write_at_all "MPI_File_write_at_all" c_int, Op::WriteAll, status;
    write_at_all_c "MPI_File_write_at_all_c" i64, Op::WriteAll, status;
    iread_at "MPI_File_iread_at" c_int, Op::Read, request;
    iread_at_c "MPI_File_iread_at_c" i64, Op::Read, request;
    iread_at_all "MPI_File_iread_at_all" c_int, Op::Read, request;
    iread_at_all_c "MPI_File_iread_at_all_c" i64, Op::Read, request;
    iwrite_at "MPI_File_iwrite_at" c_int, Op::Write, request;
    iwrite_at_c "MPI_File_iwrite_at_c" i64, Op::Write, request;
    iwrite_at_all "MPI_File_iwrite_at_all" c_int, Op::WriteAll, request;
    iwrite_at_all_c "MPI_File_iwrite_at_all_c" i64, Op::WriteAll, request;
}

/// The exported accesses at a file pointer.
macro_rules! at_pointer {
    ($($f:ident $name:literal $n:ty, $ptr:expr, $op:expr, $how:ident;)*) => {$(
        unsafe fn $f(fh: Handle, buf: *mut c_void, count: $n, ty: Handle,
                     st: *mut at_offset!(@out $how)) -> c_int {
            at_offset!(@run $how, $name, fh, st, || io(fh, $ptr, buf, count.into(), ty, $op))
        }
    )*};
}

at_pointer! {
    read "MPI_File_read" c_int, Ptr::Individual, Op::Read, status;
    read_c "MPI_File_read_c" i64, Ptr::Individual, Op::Read, status;
    read_all "MPI_File_read_all" c_int, Ptr::Individual, Op::Read, status;
    read_all_c "MPI_File_read_all_c" i64, Ptr::Individual, Op::Read, status;
    write "MPI_File_write" c_int, Ptr::Individual, Op::Write, status;
    write_c "MPI_File_write_c" i64, Ptr::Individual, Op::Write, status;
    write_all "MPI_File_write_all" c_int, Ptr::Individual, Op::WriteAll, status;
    write_all_c "MPI_File_write_all_c" i64, Ptr::Individual, Op::WriteAll, status;
    iread "MPI_File_iread" c_int, Ptr::Individual, Op::Read, request;
    iread_c "MPI_File_iread_c" i64, Ptr::Individual, Op::Read, request;
    iread_all "MPI_File_iread_all" c_int, Ptr::Individual, Op::Read, request;
    iread_all_c "MPI_File_iread_all_c" i64, Ptr::Individual, Op::Read, request;
    iwrite "MPI_File_iwrite" c_int, Ptr::Individual, Op::Write, request;
    iwrite_c "MPI_File_iwrite_c" i64, Ptr::Individual, Op::Write, request;
    iwrite_all "MPI_File_iwrite_all" c_int, Ptr::Individual, Op::WriteAll, request;
    iwrite_all_c "MPI_File_iwrite_all_c" i64, Ptr::Individual, Op::WriteAll, request;
    read_shared "MPI_File_read_shared" c_int, Ptr::Shared, Op::Read, status;
    read_shared_c "MPI_File_read_shared_c" i64, Ptr::Shared, Op::Read, status;
    write_shared "MPI_File_write_shared" c_int, Ptr::Shared, Op::Write, status;
    write_shared_c "MPI_File_write_shared_c" i64, Ptr::Shared, Op::Write, status;
    iread_shared "MPI_File_iread_shared" c_int, Ptr::Shared, Op::Read, request;
    iread_shared_c "MPI_File_iread_shared_c" i64, Ptr::Shared, Op::Read, request;
    iwrite_shared "MPI_File_iwrite_shared" c_int, Ptr::Shared, Op::Write, request;
    iwrite_shared_c "MPI_File_iwrite_shared_c" i64, Ptr::Shared, Op::Write, request;
    read_ordered "MPI_File_read_ordered" c_int, Ptr::Ordered, Op::Read, status;
    read_ordered_c "MPI_File_read_ordered_c" i64, Ptr::Ordered, Op::Read, status;
    write_ordered "MPI_File_write_ordered" c_int, Ptr::Ordered, Op::Write, status;
    write_ordered_c "MPI_File_write_ordered_c" i64, Ptr::Ordered, Op::Write, status;
}

/// The split collectives' begins (the access runs here; `_end` returns its status).
macro_rules! begins {
    ($($f:ident $name:literal $n:ty, $ptr:expr, $op:expr;)*) => {$(
        unsafe fn $f(fh: Handle, buf: *mut c_void, count: $n, ty: Handle) -> c_int {
            begin($name, fh, || io(fh, $ptr, buf, count.into(), ty, $op))
        }
    )*};
}

begins! {
    read_all_begin "MPI_File_read_all_begin" c_int, Ptr::Individual, Op::Read;
    read_all_begin_c "MPI_File_read_all_begin_c" i64, Ptr::Individual, Op::Read;
    write_all_begin "MPI_File_write_all_begin" c_int, Ptr::Individual, Op::WriteAll;
    write_all_begin_c "MPI_File_write_all_begin_c" i64, Ptr::Individual, Op::WriteAll;
    read_ordered_begin "MPI_File_read_ordered_begin" c_int, Ptr::Ordered, Op::Read;
    read_ordered_begin_c "MPI_File_read_ordered_begin_c" i64, Ptr::Ordered, Op::Read;
    write_ordered_begin "MPI_File_write_ordered_begin" c_int, Ptr::Ordered, Op::Write;
    write_ordered_begin_c "MPI_File_write_ordered_begin_c" i64, Ptr::Ordered, Op::Write;
}

/// The explicit-offset split collectives' begins.
macro_rules! begins_at {
    ($($f:ident $name:literal $n:ty, $op:expr;)*) => {$(
        unsafe fn $f(fh: Handle, offset: i64, buf: *mut c_void, count: $n, ty: Handle) -> c_int {
            begin($name, fh, || io(fh, Ptr::At(offset), buf, count.into(), ty, $op))
        }
    )*};
}

begins_at! {
    read_at_all_begin "MPI_File_read_at_all_begin" c_int, Op::Read;
    read_at_all_begin_c "MPI_File_read_at_all_begin_c" i64, Op::Read;
    write_at_all_begin "MPI_File_write_at_all_begin" c_int, Op::WriteAll;
    write_at_all_begin_c "MPI_File_write_at_all_begin_c" i64, Op::WriteAll;
}

/// The split collectives' ends.
macro_rules! ends {
    ($($f:ident $name:literal;)*) => {$(
        unsafe fn $f(fh: Handle, _buf: *mut c_void, st: *mut MpiStatus) -> c_int {
            // SAFETY: passed through.
            unsafe { end($name, fh, st) }
        }
    )*};
}

ends! {
    read_all_end "MPI_File_read_all_end";
    write_all_end "MPI_File_write_all_end";
    read_at_all_end "MPI_File_read_at_all_end";
    write_at_all_end "MPI_File_write_at_all_end";
    read_ordered_end "MPI_File_read_ordered_end";
    write_ordered_end "MPI_File_write_ordered_end";
}

/// Exports each function as MPI_ and PMPI_ with its C signature's shape.
macro_rules! exports {
    (at $($m:ident $pm:ident $f:ident $n:ty, $out:ty;)*) => {$(
        export!($m, $pm, $f, (fh: Handle, offset: i64, buf: *mut c_void, count: $n, datatype: Handle, out: *mut $out) -> c_int);
    )*};
    (ptr $($m:ident $pm:ident $f:ident $n:ty, $out:ty;)*) => {$(
        export!($m, $pm, $f, (fh: Handle, buf: *mut c_void, count: $n, datatype: Handle, out: *mut $out) -> c_int);
    )*};
    (begin $($m:ident $pm:ident $f:ident $n:ty;)*) => {$(
        export!($m, $pm, $f, (fh: Handle, buf: *mut c_void, count: $n, datatype: Handle) -> c_int);
    )*};
    (begin_at $($m:ident $pm:ident $f:ident $n:ty;)*) => {$(
        export!($m, $pm, $f, (fh: Handle, offset: i64, buf: *mut c_void, count: $n, datatype: Handle) -> c_int);
    )*};
    (end $($m:ident $pm:ident $f:ident;)*) => {$(
        export!($m, $pm, $f, (fh: Handle, buf: *mut c_void, status: *mut MpiStatus) -> c_int);
    )*};
}

exports! { at
    MPI_File_read_at PMPI_File_read_at read_at c_int, MpiStatus;
    MPI_File_read_at_c PMPI_File_read_at_c read_at_c i64, MpiStatus;
    MPI_File_read_at_all PMPI_File_read_at_all read_at_all c_int, MpiStatus;
    MPI_File_read_at_all_c PMPI_File_read_at_all_c read_at_all_c i64, MpiStatus;
    MPI_File_write_at PMPI_File_write_at write_at c_int, MpiStatus;
    MPI_File_write_at_c PMPI_File_write_at_c write_at_c i64, MpiStatus;
    MPI_File_write_at_all PMPI_File_write_at_all write_at_all c_int, MpiStatus;
    MPI_File_write_at_all_c PMPI_File_write_at_all_c write_at_all_c i64, MpiStatus;
    MPI_File_iread_at PMPI_File_iread_at iread_at c_int, Handle;
    MPI_File_iread_at_c PMPI_File_iread_at_c iread_at_c i64, Handle;
    MPI_File_iread_at_all PMPI_File_iread_at_all iread_at_all c_int, Handle;
    MPI_File_iread_at_all_c PMPI_File_iread_at_all_c iread_at_all_c i64, Handle;
    MPI_File_iwrite_at PMPI_File_iwrite_at iwrite_at c_int, Handle;
    MPI_File_iwrite_at_c PMPI_File_iwrite_at_c iwrite_at_c i64, Handle;
    MPI_File_iwrite_at_all PMPI_File_iwrite_at_all iwrite_at_all c_int, Handle;
    MPI_File_iwrite_at_all_c PMPI_File_iwrite_at_all_c iwrite_at_all_c i64, Handle;
}

exports! { ptr
    MPI_File_read PMPI_File_read read c_int, MpiStatus;
    MPI_File_read_c PMPI_File_read_c read_c i64, MpiStatus;
    MPI_File_read_all PMPI_File_read_all read_all c_int, MpiStatus;
    MPI_File_read_all_c PMPI_File_read_all_c read_all_c i64, MpiStatus;
    MPI_File_write PMPI_File_write write c_int, MpiStatus;
    MPI_File_write_c PMPI_File_write_c write_c i64, MpiStatus;
    MPI_File_write_all PMPI_File_write_all write_all c_int, MpiStatus;
    MPI_File_write_all_c PMPI_File_write_all_c write_all_c i64, MpiStatus;
    MPI_File_iread PMPI_File_iread iread c_int, Handle;
    MPI_File_iread_c PMPI_File_iread_c iread_c i64, Handle;
    MPI_File_iread_all PMPI_File_iread_all iread_all c_int, Handle;
    MPI_File_iread_all_c PMPI_File_iread_all_c iread_all_c i64, Handle;
    MPI_File_iwrite PMPI_File_iwrite iwrite c_int, Handle;
    MPI_File_iwrite_c PMPI_File_iwrite_c iwrite_c i64, Handle;
    MPI_File_iwrite_all PMPI_File_iwrite_all iwrite_all c_int, Handle;
    MPI_File_iwrite_all_c PMPI_File_iwrite_all_c iwrite_all_c i64, Handle;
    MPI_File_read_shared PMPI_File_read_shared read_shared c_int, MpiStatus;
    MPI_File_read_shared_c PMPI_File_read_shared_c read_shared_c i64, MpiStatus;
    MPI_File_write_shared PMPI_File_write_shared write_shared c_int, MpiStatus;
    MPI_File_write_shared_c PMPI_File_write_shared_c write_shared_c i64, MpiStatus;
    MPI_File_iread_shared PMPI_File_iread_shared iread_shared c_int, Handle;
    MPI_File_iread_shared_c PMPI_File_iread_shared_c iread_shared_c i64, Handle;
    MPI_File_iwrite_shared PMPI_File_iwrite_shared iwrite_shared c_int, Handle;
    MPI_File_iwrite_shared_c PMPI_File_iwrite_shared_c iwrite_shared_c i64, Handle;
    MPI_File_read_ordered PMPI_File_read_ordered read_ordered c_int, MpiStatus;
    MPI_File_read_ordered_c PMPI_File_read_ordered_c read_ordered_c i64, MpiStatus;
    MPI_File_write_ordered PMPI_File_write_ordered write_ordered c_int, MpiStatus;
    MPI_File_write_ordered_c PMPI_File_write_ordered_c write_ordered_c i64, MpiStatus;
}

exports! { begin
    MPI_File_read_all_begin PMPI_File_read_all_begin read_all_begin c_int;
    MPI_File_read_all_begin_c PMPI_File_read_all_begin_c read_all_begin_c i64;
    MPI_File_write_all_begin PMPI_File_write_all_begin write_all_begin c_int;
    MPI_File_write_all_begin_c PMPI_File_write_all_begin_c write_all_begin_c i64;
    MPI_File_read_ordered_begin PMPI_File_read_ordered_begin read_ordered_begin c_int;
    MPI_File_read_ordered_begin_c PMPI_File_read_ordered_begin_c read_ordered_begin_c i64;
    MPI_File_write_ordered_begin PMPI_File_write_ordered_begin write_ordered_begin c_int;
    MPI_File_write_ordered_begin_c PMPI_File_write_ordered_begin_c write_ordered_begin_c i64;
}

exports! { begin_at
    MPI_File_read_at_all_begin PMPI_File_read_at_all_begin read_at_all_begin c_int;
    MPI_File_read_at_all_begin_c PMPI_File_read_at_all_begin_c read_at_all_begin_c i64;
    MPI_File_write_at_all_begin PMPI_File_write_at_all_begin write_at_all_begin c_int;
    MPI_File_write_at_all_begin_c PMPI_File_write_at_all_begin_c write_at_all_begin_c i64;
}

exports! { end
    MPI_File_read_all_end PMPI_File_read_all_end read_all_end;
    MPI_File_write_all_end PMPI_File_write_all_end write_all_end;
    MPI_File_read_at_all_end PMPI_File_read_at_all_end read_at_all_end;
    MPI_File_write_at_all_end PMPI_File_write_at_all_end write_at_all_end;
    MPI_File_read_ordered_end PMPI_File_read_ordered_end read_ordered_end;
    MPI_File_write_ordered_end PMPI_File_write_ordered_end write_ordered_end;
}
