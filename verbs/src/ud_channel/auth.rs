//! The authenticator of control datagrams: a truncated HMAC-SHA256 over the whole datagram,
//! keyed with a key derived from the job secret. The secret itself never goes on the wire
//! (control datagrams cross hosts), and a datagram of another job, or altered on the way,
//! fails the check. Only control datagrams carry it, never RC data.

use hmac::{Hmac, Mac};
use sha2::Sha256;

/// Bytes of the tag at the end of every datagram.
pub(crate) const TAG_LEN: usize = 16;

/// Separates this key from any other use of the job secret.
const KEY_LABEL: &[u8] = b"ibdyn ud control datagram key v2";

#[derive(Clone)]
pub(crate) struct Authenticator {
    /// The MAC already keyed (cloned per datagram, which spares rehashing the key).
    keyed: Hmac<Sha256>,
}

impl Authenticator {
    pub(crate) fn new(job_secret: u64) -> Self {
        let mut kdf = Hmac::<Sha256>::new_from_slice(&job_secret.to_le_bytes())
            .expect("HMAC takes a key of any length");
        kdf.update(KEY_LABEL);
        let key = kdf.finalize().into_bytes();
        Authenticator {
            keyed: Hmac::<Sha256>::new_from_slice(&key).expect("HMAC takes a key of any length"),
        }
    }

    fn tag(&self, bytes: &[u8]) -> [u8; TAG_LEN] {
        let mut m = self.keyed.clone();
        m.update(bytes);
        let full = m.finalize().into_bytes();
        let mut t = [0u8; TAG_LEN];
        t.copy_from_slice(&full[..TAG_LEN]);
        t
    }

    /// Appends the tag of everything in `datagram` so far.
    pub(crate) fn seal(&self, datagram: &mut Vec<u8>) {
        let t = self.tag(datagram);
        datagram.extend_from_slice(&t);
    }

    /// The datagram without its tag, if the tag is right.
    pub(crate) fn open<'a>(&self, datagram: &'a [u8]) -> Option<&'a [u8]> {
        let body_len = datagram.len().checked_sub(TAG_LEN)?;
        let (body, tag) = datagram.split_at(body_len);
        let mut m = self.keyed.clone();
        m.update(body);
        // Constant time, so the tag cannot be guessed byte by byte.
        m.verify_truncated_left(tag).ok()?;
        Some(body)
    }
}
