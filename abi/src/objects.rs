//! The local objects of the library besides communicators and requests: groups, attribute
//! keys (with the predefined attributes' values) and open ports. (Info objects outlive
//! MPI's initialisation: `infos`.)

use crate::consts::*;
use crate::error::{err, MpiResult};
use crate::table::Table;
use ibdyn_intercomm::Group;
use std::os::raw::c_int;

/// Group handles are this plus the table index.
const GROUP_BASE: Handle = 0x5000_0000;
/// User keyvals are this plus the table index (above the predefined ones).
const KEYVAL_BASE: c_int = 0x1000;

/// `int copy_fn(MPI_Comm, int keyval, void *extra, void *in, void *out, int *flag)`.
pub type CopyFn =
    unsafe extern "C" fn(Handle, c_int, usize, usize, *mut usize, *mut c_int) -> c_int;
/// `int delete_fn(MPI_Comm, int keyval, void *value, void *extra)`.
pub type DeleteFn = unsafe extern "C" fn(Handle, c_int, usize, usize) -> c_int;

#[derive(Clone, Copy)]
pub struct Keyval {
    /// The copy function's address: 0 is MPI_COMM_NULL_COPY_FN, 1 MPI_COMM_DUP_FN.
    pub copy: usize,
    pub delete: Option<DeleteFn>,
    pub extra: usize,
}

/// A key in the table: the program may free it while attributes still use it (MPI-4.1
/// sec 7.7); it stays until the last of them is deleted.
struct KeyEntry {
    kv: Keyval,
    freed: bool,
    /// How many attributes (of any object) use the key.
    uses: usize,
}

/// The table index of user key `k` (any other value is not one).
fn key_index(k: c_int) -> Option<usize> {
    usize::try_from(k.wrapping_sub(KEYVAL_BASE)).ok()
}

#[derive(Default)]
pub struct Objects {
    groups: Table<Group>,
    keyvals: Table<KeyEntry>,
    pub ports: Vec<ibdyn::Port>,
    /// Datatype attributes: (datatype, keyval, value), oldest first.
    pub type_attrs: Vec<(Handle, std::os::raw::c_int, usize)>,
    /// The values the predefined attributes point to: TAG_UB, HOST, IO, WTIME_IS_GLOBAL,
    /// APPNUM, LASTUSEDCODE, UNIVERSE_SIZE (boxed: their addresses are handed out).
    pub predefined: Box<[c_int; 8]>,
}

impl Objects {
    pub fn add_group(&mut self, g: Group) -> Handle {
        if g.size() == 0 {
            return MPI_GROUP_EMPTY;
        }
        GROUP_BASE + self.groups.insert(g)
    }

    pub fn group(&self, h: Handle) -> MpiResult<Group> {
        match h {
            MPI_GROUP_EMPTY => Ok(Group::empty()),
            MPI_GROUP_NULL => err(MPI_ERR_GROUP, "MPI_GROUP_NULL is not a group"),
            h => h
                .checked_sub(GROUP_BASE)
                .and_then(|i| self.groups.get(i))
                .cloned()
                .ok_or_else(|| {
                    crate::error::MpiError::new(
                        MPI_ERR_GROUP,
                        format!("{h:#x} is not a group (freed already?)"),
                    )
                }),
        }
    }

    pub fn free_group(&mut self, h: Handle) -> MpiResult<()> {
        if h == MPI_GROUP_EMPTY {
            return Ok(());
        }
        self.group(h)?;
        self.groups.remove(h - GROUP_BASE);
        Ok(())
    }

    pub fn add_keyval(&mut self, kv: Keyval) -> c_int {
        let e = KeyEntry {
            kv,
            freed: false,
            uses: 0,
        };
        KEYVAL_BASE + self.keyvals.insert(e) as c_int
    }

    fn entry(&self, k: c_int) -> MpiResult<&KeyEntry> {
        key_index(k)
            .and_then(|i| self.keyvals.get(i))
            .ok_or_else(|| {
                crate::error::MpiError::new(
                    MPI_ERR_KEYVAL,
                    format!("{k} is not an attribute key of this process"),
                )
            })
    }

    fn entry_mut(&mut self, k: c_int) -> Option<&mut KeyEntry> {
        key_index(k).and_then(|i| self.keyvals.get_mut(i))
    }

    /// Key `k`, also when freed but still used by attributes (to read and delete them).
    pub fn keyval(&self, k: c_int) -> MpiResult<Keyval> {
        self.entry(k).map(|e| e.kv)
    }

    /// Key `k` for setting a new attribute: not freed.
    pub fn live_keyval(&self, k: c_int) -> MpiResult<Keyval> {
        let e = self.entry(k)?;
        if e.freed {
            return err(MPI_ERR_KEYVAL, format!("attribute key {k} was freed"));
        }
        Ok(e.kv)
    }

    /// One more attribute uses key `k`.
    pub fn attach(&mut self, k: c_int) {
        if let Some(e) = self.entry_mut(k) {
            e.uses += 1;
        }
    }

    /// An attribute of key `k` was deleted; a freed key goes with its last attribute.
    pub fn detach(&mut self, k: c_int) {
        if let Some(e) = self.entry_mut(k) {
            e.uses = e.uses.saturating_sub(1);
        }
        self.remove_if_done(k);
    }

    /// MPI_*_free_keyval: the key goes now, or with its last attribute.
    pub fn free_keyval(&mut self, k: c_int) -> MpiResult<()> {
        self.live_keyval(k)?;
        if let Some(e) = self.entry_mut(k) {
            e.freed = true;
        }
        self.remove_if_done(k);
        Ok(())
    }

    /// Removes key `k` once it is freed and no attribute uses it.
    fn remove_if_done(&mut self, k: c_int) {
        if let Some(i) = key_index(k) {
            if self.keyvals.get(i).is_some_and(|e| e.freed && e.uses == 0) {
                self.keyvals.remove(i);
            }
        }
    }
}
