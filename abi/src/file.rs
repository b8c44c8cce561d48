//! Files of MPI-IO over POSIX: each process of a file has its own descriptor and moves its
//! data with `pread`/`pwrite` at the byte ranges its view selects. A view (displacement,
//! etype, filetype) tiles the filetype's type map from the displacement; offsets are counted
//! in etypes of the data the view selects. The shared file pointer lives in a small file
//! made beside the data file (`.NAME.ibdyn-shfp-ID`) and unlinked as soon as every process
//! has it open, updated under an `fcntl` lock, so it works wherever the file system honours
//! POSIX locks, across nodes too.

use crate::consts::*;
use crate::derived::Ty;
use crate::error::{err, ErrHandler, MpiError, MpiResult};
use crate::table::Table;
use std::cell::RefCell;
use std::ffi::CString;
use std::os::raw::c_int;

/// File handles are this plus the table index.
const FILE_BASE: Handle = 0x7c00_0000;

/// What a view selects: `disp` bytes in, then the filetype tiled; offsets in etypes.
#[derive(Clone)]
pub struct View {
    /// The data representation's name ("native", or one MPI_Register_datarep registered).
    pub datarep: String,
    pub disp: i64,
    pub etype: Handle,
    pub etype_ty: Ty,
    pub filetype: Handle,
    pub filetype_ty: Ty,
}

impl View {
    /// The file's byte ranges (offset, length) that hold `len` bytes of the view's data
    /// starting `data_off` bytes into it, adjacent ranges merged.
    pub fn ranges(&self, data_off: u64, len: usize) -> Vec<(u64, usize)> {
        let ft = &self.filetype_ty;
        let mut out: Vec<(u64, usize)> = Vec::new();
        let mut push = |off: u64, l: usize| match out.last_mut() {
            Some(last) if last.0 + last.1 as u64 == off => last.1 += l,
            _ => out.push((off, l)),
        };
        if len == 0 || ft.size == 0 {
            return out;
        }
        if ft.contiguous() {
            push(self.disp as u64 + data_off, len);
            return out;
        }
        let mut blocks = Vec::new();
        ft.for_each_block_of(1, |o, l| blocks.push((o, l)));
        let tile_bytes = ft.size as u64;
        let mut tile = data_off / tile_bytes;
        let mut skip = (data_off % tile_bytes) as usize;
        let mut left = len;
        while left > 0 {
            let base = self.disp + tile as i64 * ft.extent as i64;
            for &(o, l) in &blocks {
                if left == 0 {
                    break;
                }
                if skip >= l {
                    skip -= l;
                    continue;
                }
                let n = (l - skip).min(left);
                push((base + o as i64) as u64 + skip as u64, n);
                left -= n;
                skip = 0;
            }
            tile += 1;
        }
        out
    }

    /// Bytes of the view's data that lie before file byte `end` (for MPI_SEEK_END).
    pub fn data_before(&self, end: u64) -> u64 {
        let ft = &self.filetype_ty;
        let start = self.disp.max(0) as u64;
        if end <= start || ft.size == 0 {
            return 0;
        }
        if ft.contiguous() {
            return end - start;
        }
        let ext = ft.extent.max(1) as u64;
        let whole = (end - start) / ext;
        let mut n = whole * ft.size as u64;
        let tile = start + whole * ext;
        ft.for_each_block_of(1, |o, l| {
            let b = (tile as i64 + o as i64) as u64;
            if b < end {
                n += (end - b).min(l as u64);
            }
        });
        n
    }
}

pub struct FileObj {
    pub fd: c_int,
    /// A private duplicate of the file's communicator.
    pub comm: Handle,
    pub amode: c_int,
    pub path: String,
    pub view: View,
    /// The individual file pointer, in etypes of the view.
    pub pos: i64,
    pub atomic: bool,
    pub errhandler: ErrHandler,
    /// The shared file pointer's file.
    pub shared: SharedPointer,
    /// The status a split collective's begin left for its end.
    pub split: Option<crate::status::MpiStatus>,
}

impl Drop for FileObj {
    fn drop(&mut self) {
        // SAFETY: our own descriptor, closed once.
        unsafe { libc::close(self.fd) };
    }
}

/// The errno of the last failed call, as an MPI error class with a message.
pub fn os_error(what: &str) -> MpiError {
    let e = std::io::Error::last_os_error();
    let class = match e.raw_os_error().unwrap_or(0) {
        libc::ENOENT => MPI_ERR_NO_SUCH_FILE,
        libc::EEXIST => MPI_ERR_FILE_EXISTS,
        libc::EACCES | libc::EPERM => MPI_ERR_ACCESS,
        libc::EROFS => MPI_ERR_READ_ONLY,
        libc::ENOSPC => MPI_ERR_NO_SPACE,
        libc::EDQUOT => MPI_ERR_QUOTA,
        libc::EISDIR | libc::ENAMETOOLONG | libc::ENOTDIR => MPI_ERR_BAD_FILE,
        _ => MPI_ERR_IO,
    };
    MpiError::new(class, format!("{what}: {e}"))
}

pub fn c_path(path: &str) -> MpiResult<CString> {
    CString::new(path).map_err(|_| MpiError::new(MPI_ERR_BAD_FILE, "the file name holds a NUL"))
}

/// Writes `data` at the file's byte ranges, in order.
pub fn write_ranges(fd: c_int, ranges: &[(u64, usize)], data: &[u8]) -> MpiResult<()> {
    let mut at = 0;
    for &(off, len) in ranges {
        let mut done = 0;
        while done < len {
            let piece = &data[at + done..at + len];
            // SAFETY: `piece` is readable for its length.
            let n = unsafe {
                libc::pwrite(
                    fd,
                    piece.as_ptr().cast(),
                    piece.len(),
                    (off + done as u64) as i64,
                )
            };
            if n < 0 {
                if std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
                    continue;
                }
                return Err(os_error("write"));
            }
            done += n as usize;
        }
        at += len;
    }
    Ok(())
}

/// Reads the file's byte ranges into `buf` in order; the bytes read (fewer at the end of
/// the file).
pub fn read_ranges(fd: c_int, ranges: &[(u64, usize)], buf: &mut [u8]) -> MpiResult<usize> {
    let mut at = 0;
    for &(off, len) in ranges {
        let mut done = 0;
        while done < len {
            let piece = &mut buf[at + done..at + len];
            // SAFETY: `piece` is writable for its length.
            let n = unsafe {
                libc::pread(
                    fd,
                    piece.as_mut_ptr().cast(),
                    piece.len(),
                    (off + done as u64) as i64,
                )
            };
            if n < 0 {
                if std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
                    continue;
                }
                return Err(os_error("read"));
            }
            if n == 0 {
                return Ok(at + done);
            }
            done += n as usize;
        }
        at += len;
    }
    Ok(at)
}

/// The shared file pointer: an i64 in its own file (unlinked once every process has it
/// open), read and advanced under a write lock. Where that file cannot be made (a read-only
/// directory), the data file opens all the same and only the shared pointer's calls fail.
pub struct SharedPointer {
    fd: Result<c_int, String>,
}

impl SharedPointer {
    pub fn open(path: &str, create: bool) -> MpiResult<SharedPointer> {
        let c = c_path(path)?;
        let flags = libc::O_RDWR | libc::O_CLOEXEC | if create { libc::O_CREAT } else { 0 };
        // SAFETY: plain open of a path we name.
        let fd = unsafe { libc::open(c.as_ptr(), flags, 0o600) };
        if fd < 0 {
            return Err(os_error(&format!("the shared file pointer's file {path}")));
        }
        Ok(SharedPointer { fd: Ok(fd) })
    }

    /// A shared pointer whose file could not be made, for `why`.
    pub fn unavailable(why: String) -> SharedPointer {
        SharedPointer { fd: Err(why) }
    }

    fn fd(&self) -> MpiResult<c_int> {
        self.fd.clone().or_else(|why| {
            err(
                MPI_ERR_UNSUPPORTED_OPERATION,
                format!(
                    "this file has no shared file pointer: {why}; open it from a directory \
                     the processes may write to, or use explicit offsets or individual \
                     file pointers"
                ),
            )
        })
    }

    fn lock(&self, kind: c_int) -> MpiResult<()> {
        // SAFETY: a zeroed flock is a valid "whole file" request once the type is set.
        let mut fl: libc::flock = unsafe { std::mem::zeroed() };
        fl.l_type = kind as libc::c_short;
        fl.l_whence = libc::SEEK_SET as libc::c_short;
        loop {
            // SAFETY: our descriptor and a valid flock.
            if unsafe { libc::fcntl(self.fd()?, libc::F_SETLKW, &fl) } == 0 {
                return Ok(());
            }
            if std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
                return Err(os_error("locking the shared file pointer"));
            }
        }
    }

    fn load(&self) -> MpiResult<i64> {
        let mut b = [0u8; 8];
        // SAFETY: 8 writable bytes.
        let n = unsafe { libc::pread(self.fd()?, b.as_mut_ptr().cast(), 8, 0) };
        match n {
            8 => Ok(i64::from_ne_bytes(b)),
            0 => Ok(0),
            _ => Err(os_error("reading the shared file pointer")),
        }
    }

    fn store(&self, v: i64) -> MpiResult<()> {
        let b = v.to_ne_bytes();
        // SAFETY: 8 readable bytes.
        match unsafe { libc::pwrite(self.fd()?, b.as_ptr().cast(), 8, 0) } {
            8 => Ok(()),
            _ => Err(os_error("writing the shared file pointer")),
        }
    }

    /// Returns the pointer and advances it by `by` etypes, atomically for every process.
    pub fn fetch_add(&self, by: i64) -> MpiResult<i64> {
        self.lock(libc::F_WRLCK as c_int)?;
        let r = self.load().and_then(|v| self.store(v + by).map(|_| v));
        let _ = self.lock(libc::F_UNLCK as c_int);
        r
    }

    pub fn set(&self, v: i64) -> MpiResult<()> {
        self.lock(libc::F_WRLCK as c_int)?;
        let r = self.store(v);
        let _ = self.lock(libc::F_UNLCK as c_int);
        r
    }

    pub fn get(&self) -> MpiResult<i64> {
        self.fetch_add(0)
    }

    /// `set`, where there is a shared pointer (opening for append, a new view).
    pub fn reset(&self, v: i64) -> MpiResult<()> {
        match self.fd {
            Ok(_) => self.set(v),
            Err(_) => Ok(()),
        }
    }
}

impl Drop for SharedPointer {
    fn drop(&mut self) {
        if let Ok(fd) = self.fd {
            // SAFETY: our own descriptor, closed once.
            unsafe { libc::close(fd) };
        }
    }
}

/// Data representations registered with MPI_Register_datarep: the name, and whether it
/// converts (ibdyn reads and writes only those that do not).
static DATAREPS: std::sync::Mutex<Vec<(String, bool)>> = std::sync::Mutex::new(Vec::new());

/// Registers data representation `name`; MPI_ERR_DUP_DATAREP if it exists.
pub fn register_datarep(name: &str, converts: bool) -> MpiResult<()> {
    let mut reps = DATAREPS.lock().unwrap_or_else(|p| p.into_inner());
    if ["native", "internal", "external32"].contains(&name) || reps.iter().any(|r| r.0 == name) {
        return err(
            MPI_ERR_DUP_DATAREP,
            format!("data representation {name:?} exists already"),
        );
    }
    reps.push((name.to_string(), converts));
    Ok(())
}

/// Whether ibdyn moves data of representation `name` (as it is in memory).
pub fn datarep_ok(name: &str) -> MpiResult<()> {
    if name == "native" || name == "internal" {
        return Ok(());
    }
    let reps = DATAREPS.lock().unwrap_or_else(|p| p.into_inner());
    match reps.iter().find(|r| r.0 == name) {
        Some((_, false)) => Ok(()),
        Some((_, true)) => err(
            MPI_ERR_UNSUPPORTED_DATAREP,
            format!("data representation {name:?} has conversion functions, which ibdyn does not call"),
        ),
        None => err(
            MPI_ERR_UNSUPPORTED_DATAREP,
            format!("data representation {name:?}: ibdyn reads and writes \"native\" (\"internal\" is the same) and representations registered without conversion functions"),
        ),
    }
}

ibdyn_owner::process_local! {
    static FILES: RefCell<Table<FileObj>> = RefCell::new(Table::new());
    /// MPI_FILE_NULL's error handler: the one MPI_File_open's errors go to.
    static DEFAULT_HANDLER: std::cell::Cell<ErrHandler> = std::cell::Cell::new(ErrHandler::Return);
}

pub fn add(f: FileObj) -> Handle {
    FILES.with(|t| FILE_BASE + t.borrow_mut().insert(f))
}

fn index(h: Handle) -> MpiResult<usize> {
    match h {
        MPI_FILE_NULL => err(MPI_ERR_FILE, "MPI_FILE_NULL is not a file"),
        h if h >= FILE_BASE => Ok(h - FILE_BASE),
        h => err(MPI_ERR_FILE, format!("{h:#x} is not a file handle")),
    }
}

/// Runs `f` on file `h`. `f` must not call MPI functions that touch files.
pub fn with<R>(h: Handle, f: impl FnOnce(&mut FileObj) -> MpiResult<R>) -> MpiResult<R> {
    let i = index(h)?;
    let f = |x: &mut FileObj| ibdyn_owner::borrowed(|| f(x));
    crate::state::owned(&FILES, |t| match t.borrow_mut().get_mut(i) {
        Some(x) => f(x),
        None => err(
            MPI_ERR_FILE,
            format!("file {h:#x} has been closed (or never existed)"),
        ),
    })
}

pub fn remove(h: Handle) -> MpiResult<FileObj> {
    let i = index(h)?;
    FILES.with(|t| t.borrow_mut().remove(i)).map_or_else(
        || {
            err(
                MPI_ERR_FILE,
                format!("file {h:#x} has been closed (or never existed)"),
            )
        },
        Ok,
    )
}

/// The error handler for an error about file `h` (MPI_FILE_NULL's for no file).
pub fn handler_of(h: Handle) -> ErrHandler {
    let eh = with(h, |f| Ok(f.errhandler)).unwrap_or_else(|_| default_handler());
    eh.about(h)
}

pub fn set_default_handler(eh: ErrHandler) {
    DEFAULT_HANDLER.with(|d| d.set(eh));
}

pub fn default_handler() -> ErrHandler {
    // Files return their errors unless told otherwise (also on a thread that may not call).
    DEFAULT_HANDLER
        .try_with(|d| d.get())
        .unwrap_or(ErrHandler::Return)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::derived::{self, Part};

    fn view(disp: i64, filetype: Handle) -> View {
        let ty = derived::resolve(filetype, false).unwrap();
        View {
            datarep: "native".into(),
            disp,
            etype: 0x247,
            etype_ty: derived::resolve(0x247, false).unwrap(),
            filetype,
            filetype_ty: ty,
        }
    }

    #[test]
    fn a_contiguous_view_is_one_range_after_the_displacement() {
        let _owner = ibdyn_owner::enter();
        let v = view(100, 0x247);
        assert_eq!(v.ranges(5, 10), vec![(105, 10)]);
        assert_eq!(v.data_before(130), 30);
        assert_eq!(v.data_before(50), 0);
    }

    #[test]
    fn a_strided_filetype_selects_its_blocks_tile_after_tile() {
        let _owner = ibdyn_owner::enter();
        // 2 bytes of every 8, then the type resized to 8: tiles at 0, 8, 16, ...
        let byte = derived::resolve(0x247, false).unwrap();
        let two = derived::build(
            &[Part {
                disp: 0,
                count: 2,
                ty: byte,
            }],
            false,
        )
        .unwrap();
        let t = derived::resolve(two, false).unwrap();
        let resized = derived::resized(&t, 0, 8);
        let v = view(0, resized);
        assert_eq!(v.ranges(0, 6), vec![(0, 2), (8, 2), (16, 2)]);
        // starting inside a block
        assert_eq!(v.ranges(3, 3), vec![(9, 1), (16, 2)]);
        assert_eq!(v.data_before(17), 5);
    }
}
