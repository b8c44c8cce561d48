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

#[derive(Default)]
pub struct Objects {
    groups: Table<Group>,
    keyvals: Table<Keyval>,
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

    pub fn add_keyval(&mut self, k: Keyval) -> c_int {
        KEYVAL_BASE + self.keyvals.insert(k) as c_int
    }

    pub fn keyval(&self, k: c_int) -> MpiResult<Keyval> {
        usize::try_from(k - KEYVAL_BASE)
            .ok()
            .and_then(|i| self.keyvals.get(i))
            .copied()
            .ok_or_else(|| {
                crate::error::MpiError::new(
                    MPI_ERR_KEYVAL,
                    format!("{k} is not an attribute key of this process"),
                )
            })
    }

    pub fn free_keyval(&mut self, k: c_int) -> MpiResult<()> {
        self.keyval(k)?;
        self.keyvals.remove((k - KEYVAL_BASE) as usize);
        Ok(())
    }
}
