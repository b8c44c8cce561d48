//! The names of the shared-memory objects this process created and has not removed, so that
//! at its end it removes exactly those instead of reading all of `/dev/shm` (with thousands of
//! processes on a node, each reading every other's entries made ending quadratic).

use std::sync::Mutex;

use crate::ShmError;

static OWNED: Mutex<Vec<String>> = Mutex::new(Vec::new());

fn owned() -> std::sync::MutexGuard<'static, Vec<String>> {
    OWNED.lock().unwrap_or_else(|e| e.into_inner())
}

/// Records `name` as created by this process. A name already recorded is refused, so a
/// second creation does not unlink a live object as if it were stale.
pub(crate) fn claim(name: &str) -> Result<(), ShmError> {
    let mut owned = owned();
    if owned.iter().any(|n| n == name) {
        return Err(ShmError::AlreadyOpen {
            name: name.to_string(),
        });
    }
    owned.push(name.to_string());
    Ok(())
}

/// Forgets `name` (it is being removed, or its creation failed); false if it was not on the
/// list, e.g. [`remove_own_segments`] removed it already.
pub(crate) fn release(name: &str) -> bool {
    let mut owned = owned();
    let before = owned.len();
    owned.retain(|n| n != name);
    owned.len() != before
}

/// Removes from `/dev/shm` every object this process created and still owns; returns how
/// many were removed. A forked child inherits its parent's list but not its objects: only names
/// carrying the caller's own process id are touched.
pub fn remove_own_segments() -> usize {
    let me = std::process::id() as i32;
    let mut owned = owned();
    let mut removed = 0;
    owned.retain(|name| {
        if crate::owner_pid(name) != Some(me) {
            return true;
        }
        if std::fs::remove_file(format!("/dev/shm/{name}")).is_ok() {
            removed += 1;
        }
        false
    });
    removed
}
