//! Room in /dev/shm. A mapping of a file there that has no page left to give faults with
//! SIGBUS when touched, so an object meant to be used whole is checked against the room
//! before it is made (a check, not a reservation: reserving zeroes every page at once).

use crate::ShmError;

/// Free and total bytes of /dev/shm.
pub fn dev_shm_room() -> Option<(u64, u64)> {
    let s = nix::sys::statvfs::statvfs("/dev/shm").ok()?;
    let block = s.fragment_size() as u64;
    Some((
        s.blocks_available() as u64 * block,
        s.blocks() as u64 * block,
    ))
}

/// `Err(NoRoom)` when /dev/shm has fewer than `bytes` free for `what`.
pub fn check_room(bytes: usize, what: &str) -> Result<(), ShmError> {
    match dev_shm_room() {
        Some((free, total)) if (bytes as u64) > free => Err(ShmError::NoRoom {
            what: what.to_string(),
            bytes,
            free,
            total,
        }),
        _ => Ok(()),
    }
}

/// `bytes` in MiB with one decimal, for messages.
pub fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / (1u64 << 20) as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_object_larger_than_dev_shm_has_no_room() {
        let (free, total) = dev_shm_room().expect("/dev/shm");
        assert!(free <= total);
        assert!(check_room(4096, "a page").is_ok());
        let e = check_room(usize::MAX, "everything")
            .unwrap_err()
            .to_string();
        assert!(e.contains("everything") && e.contains("/dev/shm"), "{e}");
    }
}
