//! A mapped receive segment: creation (owner), opening (senders), typed access to its words.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use memmap2::{MmapOptions, MmapRaw};

use crate::layout::*;
use crate::{ShmConfig, ShmError};

pub(crate) struct Segment {
    map: MmapRaw,
    pub geo: Geometry,
    pub path: String,
    /// Identity of the file mapped, to tell a later segment of the same name from ours.
    pub ino: (u64, u64),
}

fn shm_path(name: &str) -> String {
    format!("/dev/shm/{name}")
}

fn io_err(path: &str, source: io::Error) -> ShmError {
    ShmError::Io {
        path: path.to_string(),
        source,
    }
}

/// Opens the existing `/dev/shm/<name>` for reading and writing (never through a symbolic
/// link); returns it with its path and metadata.
pub(crate) fn open_existing(name: &str) -> Result<(File, String, std::fs::Metadata), ShmError> {
    if name.is_empty() || name.contains('/') {
        return Err(ShmError::Config(format!("{name:?} is not a segment name")));
    }
    let path = shm_path(name);
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(&path)
        .map_err(|e| match e.kind() {
            io::ErrorKind::NotFound => ShmError::Missing {
                name: name.to_string(),
            },
            _ => io_err(&path, e),
        })?;
    let meta = file.metadata().map_err(|e| io_err(&path, e))?;
    Ok((file, path, meta))
}

impl Segment {
    /// Creates and initialises `/dev/shm/<name>` (0600, exclusive). A leftover file of the
    /// same name that this process does not own is stale (pid reuse) and is replaced.
    pub fn create(name: &str, cfg: &ShmConfig) -> Result<Segment, ShmError> {
        cfg.validate()?;
        let path = shm_path(name);
        crate::owned::claim(name)?;
        let made = Self::create_claimed(&path, cfg);
        if made.is_err() {
            crate::owned::release(name);
        }
        made
    }

    fn create_claimed(path: &str, cfg: &ShmConfig) -> Result<Segment, ShmError> {
        let open = || {
            OpenOptions::new()
                .read(true)
                .write(true)
                .create_new(true)
                .mode(0o600)
                .open(path)
        };
        let file = match open() {
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                tracing::debug!(path, "removing stale shared-memory segment");
                std::fs::remove_file(path).map_err(|e| io_err(path, e))?;
                open()
            }
            other => other,
        }
        .map_err(|e| io_err(path, e))?;
        let made = Self::init(&file, path, Geometry::from_config(cfg));
        if made.is_err() {
            let _ = std::fs::remove_file(path);
        }
        made
    }

    fn init(file: &File, path: &str, geo: Geometry) -> Result<Segment, ShmError> {
        file.set_len(geo.segment_bytes() as u64)
            .map_err(|e| io_err(path, e))?;
        let meta = file.metadata().map_err(|e| io_err(path, e))?;
        // Not populated: a fresh process would spend most of its start-up zeroing cells it
        // may never use; each page faults in once, on first use.
        let map = MmapOptions::new()
            .map_raw(file)
            .map_err(|e| io_err(path, e))?;
        let seg = Segment {
            map,
            geo,
            path: path.to_string(),
            ino: (meta.dev(), meta.ino()),
        };
        let pid = std::process::id() as u64;
        seg.u64_at(OFF_VERSION).store(
            VERSION as u64 | ((HEADER_BYTES as u64) << 32),
            Ordering::Relaxed,
        );
        seg.u64_at(OFF_CELLS)
            .store(geo.cells as u64, Ordering::Relaxed);
        seg.u64_at(OFF_STRIDE)
            .store(geo.stride as u64, Ordering::Relaxed);
        seg.u64_at(OFF_PAYLOAD)
            .store(geo.payload as u64, Ordering::Relaxed);
        seg.u64_at(OFF_OWNER).store(pid, Ordering::Relaxed);
        // Cell sequences start at zero (the fresh file): "free, first lap" for every cell, so
        // making a queue touches no cell page (see `RecvQueue::reclaim_abandoned`).
        // Publishes everything above to a sender that sees the magic.
        seg.u64_at(OFF_MAGIC).store(MAGIC, Ordering::Release);
        Ok(seg)
    }

    /// Maps an existing segment and validates its header.
    pub fn open(name: &str) -> Result<Segment, ShmError> {
        let (file, path, meta) = open_existing(name)?;
        let len = usize::try_from(meta.len()).unwrap_or(usize::MAX);
        let malformed = |what: String| ShmError::Malformed {
            name: name.to_string(),
            what,
        };
        // SAFETY: geteuid has no preconditions.
        let me = unsafe { libc::geteuid() };
        if meta.uid() != me {
            return Err(malformed(format!("owned by uid {}, not {me}", meta.uid())));
        }
        if !(HEADER_BYTES..=HEADER_BYTES + (64 << 30)).contains(&len) {
            return Err(malformed(format!("size {len} bytes")));
        }
        let map = MmapOptions::new()
            .map_raw(&file)
            .map_err(|e| io_err(&path, e))?;
        let mut seg = Segment {
            map,
            geo: Geometry {
                cells: 0,
                stride: 0,
                payload: 0,
            },
            path,
            ino: (meta.dev(), meta.ino()),
        };
        let magic = seg.u64_at(OFF_MAGIC).load(Ordering::Acquire);
        if magic != MAGIC {
            return Err(ShmError::BadMagic {
                name: name.to_string(),
                found: magic,
            });
        }
        let word = seg.u64_at(OFF_VERSION).load(Ordering::Relaxed);
        let (version, header) = (word as u32, (word >> 32) as u32);
        if version != VERSION {
            return Err(ShmError::Version {
                name: name.to_string(),
                found: version,
                expected: VERSION,
            });
        }
        if header as usize != HEADER_BYTES {
            return Err(malformed(format!("header size {header}")));
        }
        seg.geo = Geometry::validate(
            name,
            seg.u64_at(OFF_CELLS).load(Ordering::Relaxed),
            seg.u64_at(OFF_STRIDE).load(Ordering::Relaxed),
            seg.u64_at(OFF_PAYLOAD).load(Ordering::Relaxed),
            len,
        )?;
        Ok(seg)
    }

    /// Maps the first page of every cell into this process now, writable, so that the rest
    /// of a first lap round the ring takes no page fault per message (a fault costs a few
    /// microseconds in a virtual machine; an 8 B message 0.2 us). The rest of a cell faults
    /// in when a large message first reaches it.
    ///
    /// With `resident_only`, only pages some process has already touched are mapped: a
    /// receiver maps what its busy senders populated, and a short-lived process whose ring
    /// saw a few packets from several peers allocates and zeroes no page it will not use.
    pub(crate) fn prefault_cell_heads(&self, resident_only: bool) {
        let heads = self.cell_head_pages();
        let resident = if resident_only {
            match self.resident_pages() {
                Some(r) => Some(r),
                None => return,
            }
        } else {
            None
        };
        let base = self.map.as_mut_ptr() as usize;
        for start in heads {
            if let Some(r) = &resident {
                if !matches!(r.get((start - base) / page_size()), Some(v) if v & 1 == 1) {
                    continue;
                }
            }
            // SAFETY: `start` begins a whole page of this live mapping (`cell_head_pages`);
            // MADV_POPULATE_WRITE only faults pages in and changes no byte. An older kernel
            // refuses it (EINVAL): the pages then fault on first use as before.
            let r = unsafe {
                libc::madvise(
                    start as *mut libc::c_void,
                    page_size(),
                    libc::MADV_POPULATE_WRITE,
                )
            };
            if r != 0 {
                return;
            }
        }
    }

    /// One byte per page of the mapping, bit 0 set when the page is in memory (`mincore`,
    /// which for a shared file mapping reports the file's pages whether or not this process
    /// mapped them yet). None if the kernel refuses.
    fn resident_pages(&self) -> Option<Vec<u8>> {
        let pages = self.map.len().div_ceil(page_size());
        let mut v = vec![0u8; pages];
        // SAFETY: the mapping is live and page aligned; `v` holds one byte per page of it.
        let r = unsafe {
            libc::mincore(
                self.map.as_mut_ptr() as *mut libc::c_void,
                self.map.len(),
                v.as_mut_ptr(),
            )
        };
        (r == 0).then_some(v)
    }

    /// The distinct page addresses holding the start of each cell, in ring order.
    pub(crate) fn cell_head_pages(&self) -> Vec<usize> {
        let page = page_size();
        let base = self.map.as_mut_ptr() as usize;
        let mut pages: Vec<usize> = (0..self.geo.cells as u64)
            .map(|pos| (base + self.geo.cell_offset(pos)) & !(page - 1))
            .collect();
        pages.dedup();
        pages
    }

    /// Removes the file and forgets the name (owner side, on drop).
    /// Removes the segment's name unless this process removed it already: even a removal
    /// that finds nothing takes the directory's lock, for which thousands of processes
    /// ending at once contend.
    pub fn unlink_owned(&self, name: &str) {
        if !crate::owned::release(name) {
            return;
        }
        if let Err(e) = std::fs::remove_file(&self.path) {
            if e.kind() != io::ErrorKind::NotFound {
                tracing::warn!(path = self.path, "cannot remove shared-memory segment: {e}");
            }
        }
    }

    pub fn owner_pid(&self) -> i32 {
        self.u64_at(OFF_OWNER).load(Ordering::Relaxed) as i32
    }

    #[inline]
    fn u64_at(&self, off: usize) -> &AtomicU64 {
        debug_assert!(off & 7 == 0 && off + 8 <= self.map.len());
        // SAFETY: the mapping is page-aligned and `off` is a multiple of 8 inside it (all callers
        // pass layout constants or `Geometry::cell_offset`, which stays in bounds), so the
        // pointer is valid and aligned for AtomicU64; the reference lives no longer than &self,
        // and the mapping lives as long as self. Other processes only touch it atomically.
        unsafe { &*(self.map.as_mut_ptr().add(off) as *const AtomicU64) }
    }

    #[inline]
    fn u32_at(&self, off: usize) -> &AtomicU32 {
        debug_assert!(off & 3 == 0 && off + 4 <= self.map.len());
        // SAFETY: as in `u64_at`, with 4-byte alignment.
        unsafe { &*(self.map.as_mut_ptr().add(off) as *const AtomicU32) }
    }

    #[inline]
    pub fn enqueue_pos(&self) -> &AtomicU64 {
        self.u64_at(OFF_ENQUEUE)
    }

    #[inline]
    pub fn doorbell(&self) -> &AtomicU32 {
        self.u32_at(OFF_DOORBELL)
    }

    #[inline]
    pub fn sleeping(&self) -> &AtomicU32 {
        self.u32_at(OFF_SLEEPING)
    }

    /// The cell for `pos`, its address computed once.
    #[inline]
    pub fn cell(&self, pos: u64) -> CellRef<'_> {
        // SAFETY: `cell_offset` is inside the mapping and a whole cell (stride) follows it.
        let base = unsafe { self.map.as_mut_ptr().add(self.geo.cell_offset(pos)) };
        CellRef {
            base,
            _seg: std::marker::PhantomData,
        }
    }

    /// Every position before this one has been handed back by the receiver.
    #[inline]
    pub fn released_pos(&self) -> &AtomicU64 {
        self.u64_at(OFF_RELEASED)
    }

    /// How many producers sleep until the receiver frees cells (`RecvQueue::wait_for_room`).
    #[inline]
    pub fn room_waiters(&self) -> &AtomicU32 {
        self.u32_at(OFF_ROOM_WAITERS)
    }

    /// The futex those producers sleep on; the receiver bumps it when it frees cells.
    #[inline]
    pub fn room(&self) -> &AtomicU32 {
        self.u32_at(OFF_ROOM)
    }

    #[inline]
    pub fn cell_seq(&self, pos: u64) -> &AtomicU64 {
        self.u64_at(self.geo.cell_offset(pos) + CELL_SEQ)
    }

    /// Pid of the producer that claimed the cell for `pos` (0: none recorded this lap).
    #[inline]
    pub fn cell_producer(&self, pos: u64) -> &AtomicU32 {
        self.u32_at(self.geo.cell_offset(pos) + CELL_PRODUCER)
    }

    /// Length word of the cell for `pos`. Plain (non-atomic) data, ordered by the sequence word.
    #[inline]
    pub fn cell_len(&self, pos: u64) -> *mut u32 {
        // SAFETY: in bounds as `cell_offset` is; alignment 8 (stride and header are multiples of 64).
        unsafe {
            self.map
                .as_mut_ptr()
                .add(self.geo.cell_offset(pos) + CELL_LEN) as *mut u32
        }
    }
}

/// One cell of a mapped segment (see `layout.rs` for its words).
pub(crate) struct CellRef<'a> {
    base: *mut u8,
    _seg: std::marker::PhantomData<&'a Segment>,
}

impl CellRef<'_> {
    #[inline]
    pub fn seq(&self) -> &AtomicU64 {
        // SAFETY: the cell start is 64-byte aligned inside the mapping, which outlives 'a.
        unsafe { &*(self.base.add(CELL_SEQ) as *const AtomicU64) }
    }

    #[inline]
    pub fn producer(&self) -> &AtomicU32 {
        // SAFETY: as in `seq`, 4-byte aligned.
        unsafe { &*(self.base.add(CELL_PRODUCER) as *const AtomicU32) }
    }

    /// Plain data, ordered by the sequence word.
    #[inline]
    pub fn len(&self) -> *mut u32 {
        // SAFETY: in bounds, 8-byte aligned.
        unsafe { self.base.add(CELL_LEN) as *mut u32 }
    }

    /// First payload byte; `geo.payload` bytes follow inside the mapping.
    #[inline]
    pub fn data(&self) -> *mut u8 {
        // SAFETY: cell start + CELL_DATA + payload <= cell start + stride.
        unsafe { self.base.add(CELL_DATA) }
    }
}

pub(crate) fn page_size() -> usize {
    // SAFETY: sysconf has no preconditions.
    let p = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if p > 0 {
        p as usize
    } else {
        4096
    }
}
