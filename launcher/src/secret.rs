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

/// 16 random bytes as hex: the challenge of one connection.
pub fn nonce() -> Result<String> {
    Ok(format!("{:016x}{:016x}", random_u64()?, random_u64()?))
}

type HmacSha256 = hmac::Hmac<sha2::Sha256>;

fn mac(secret: &str, parts: &[&str]) -> HmacSha256 {
    use hmac::Mac;
    // HMAC takes a key of any length.
    let mut m = HmacSha256::new_from_slice(secret.as_bytes()).expect("HMAC accepts any key");
    for p in parts {
        m.update(&(p.len() as u64).to_le_bytes());
        m.update(p.as_bytes());
    }
    m
}

/// HMAC-SHA256 of `parts` (length-prefixed, so no two lists collide) under the job secret,
/// as hex: what proves knowledge of the secret without sending it.
pub fn proof(secret: &str, parts: &[&str]) -> String {
    use hmac::Mac;
    mac(secret, parts)
        .finalize()
        .into_bytes()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// What a connector sends to prove the secret on the acceptor's challenge `nonce`, as
/// `role` (`daemon` or `client`) with `index` (see `link::connect_auth`).
pub fn hello_proof(secret: &str, nonce: &str, role: &str, index: u32) -> String {
    proof(secret, &["ibdyn-hello", nonce, role, &index.to_string()])
}

/// Checks a proof in constant time.
pub fn verify(secret: &str, parts: &[&str], proof_hex: &str) -> bool {
    use hmac::Mac;
    let Some(bytes) = ibdyn_pmi::wire::hex_decode(proof_hex).ok() else {
        return false;
    };
    mac(secret, parts).verify_slice(&bytes).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proofs_verify_only_under_the_same_secret_and_parts() {
        let p = proof("00aa", &["hello", "n1"]);
        assert_eq!(p.len(), 64);
        assert!(verify("00aa", &["hello", "n1"], &p));
        assert!(!verify("00ab", &["hello", "n1"], &p));
        assert!(!verify("00aa", &["hello", "n2"], &p));
        assert!(!verify("00aa", &["hellon", "1"], &p));
        assert!(!verify("00aa", &["hello", "n1"], "zz"));
        assert_ne!(nonce().unwrap(), nonce().unwrap());
    }
}
