//! Info objects. They belong to the process, not to an initialisation of MPI: a program
//! makes the info it passes to MPI_Session_init before any init, and may read or free info
//! objects after MPI_Finalize (MPI 4.0, section 11.4.1).

use crate::consts::*;
use crate::error::{MpiError, MpiResult};
use crate::table::Table;
use std::cell::RefCell;

/// An info object: its keys in insertion order.
pub type Info = Vec<(String, String)>;

/// Info handles are this plus the table index.
const INFO_BASE: Handle = 0x5800_0000;

ibdyn_owner::process_local! {
    static INFOS: RefCell<Table<Info>> = RefCell::new(Table::new());
}

fn not_info(h: Handle) -> MpiError {
    MpiError::new(
        MPI_ERR_INFO,
        format!("{h:#x} is not an info object (freed already, or MPI_INFO_NULL?)"),
    )
}

/// A new info object holding `i`.
pub fn add(i: Info) -> MpiResult<Handle> {
    crate::state::owned(&INFOS, |t| Ok(INFO_BASE + t.borrow_mut().insert(i)))
}

/// A copy of the entries of info object `h`.
pub fn get(h: Handle) -> MpiResult<Info> {
    crate::state::owned(&INFOS, |t| {
        h.checked_sub(INFO_BASE)
            .and_then(|i| t.borrow().get(i).cloned())
            .ok_or_else(|| not_info(h))
    })
}

/// Runs `f` on the entries of info object `h` to change them.
pub fn with_mut<R>(h: Handle, f: impl FnOnce(&mut Info) -> MpiResult<R>) -> MpiResult<R> {
    crate::state::owned(&INFOS, |t| {
        let mut t = t.borrow_mut();
        match h.checked_sub(INFO_BASE).and_then(|i| t.get_mut(i)) {
            Some(i) => f(i),
            None => Err(not_info(h)),
        }
    })
}

/// Frees info object `h`.
pub fn free(h: Handle) -> MpiResult<()> {
    crate::state::owned(&INFOS, |t| {
        let mut t = t.borrow_mut();
        let i = h.checked_sub(INFO_BASE).filter(|&i| t.get(i).is_some());
        let i = i.ok_or_else(|| not_info(h))?;
        t.remove(i);
        Ok(())
    })
}
