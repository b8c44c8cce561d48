//! The per-job secret that authenticates TCP connections between launcher and daemons.

use crate::error::{LaunchError, Result};

/// A random u64 from the kernel.
pub fn random_u64() -> Result<u64> {
    let mut b = [0u8; 8];
    // SAFETY: the buffer is valid for 8 bytes.
    let n = unsafe { libc::getrandom(b.as_mut_ptr().cast(), b.len(), 0) };
    if n != 8 {
        return Err(LaunchError::io(
            "getrandom",
            std::io::Error::last_os_error(),
        ));
    }
    Ok(u64::from_ne_bytes(b))
}

pub fn format_secret(s: u64) -> String {
    format!("{s:016x}")
}

pub fn parse_secret(text: &str) -> Option<u64> {
    u64::from_str_radix(text.trim(), 16).ok()
}

/// Compares without stopping at the first difference.
pub fn same_secret(a: &str, b: &str) -> bool {
    a.len() == b.len()
        && a.bytes()
            .zip(b.bytes())
            .fold(0u8, |acc, (x, y)| acc | (x ^ y))
            == 0
}
