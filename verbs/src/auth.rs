//! The authenticator of what the fabric sends between hosts before a connection exists (UD
//! control datagrams, the `sock` provider's TCP hello): a truncated HMAC-SHA256 keyed with a
//! key derived from the job secret and the use. The secret itself never goes on the wire, and
//! a message of another job, or altered on the way, fails the check. RC data carries none.

use hmac::{Hmac, Mac};
use sha2::Sha256;

/// Bytes of the tag at the end of every datagram.
pub(crate) const TAG_LEN: usize = 16;

/// Labels that separate the keys of each use of the job secret.
pub(crate) const UD_CONTROL: &[u8] = b"ibdyn ud control datagram key v2";
pub(crate) const SOCK_HELLO: &[u8] = b"ibdyn sock tcp hello key v1";

#[derive(Clone)]
pub(crate) struct Authenticator {
    /// The MAC already keyed (cloned per datagram, which spares rehashing the key).
    keyed: Hmac<Sha256>,
}

impl Authenticator {
    pub(crate) fn new(job_secret: u64, label: &[u8]) -> Self {
        let mut kdf = Hmac::<Sha256>::new_from_slice(&job_secret.to_le_bytes())
            .expect("HMAC takes a key of any length");
        kdf.update(label);
        let key = kdf.finalize().into_bytes();
        Authenticator {
            keyed: Hmac::<Sha256>::new_from_slice(&key).expect("HMAC takes a key of any length"),
        }
    }

    /// The tag of `bytes`.
    pub(crate) fn tag(&self, bytes: &[u8]) -> [u8; TAG_LEN] {
        let mut m = self.keyed.clone();
        m.update(bytes);
        let full = m.finalize().into_bytes();
        let mut t = [0u8; TAG_LEN];
        t.copy_from_slice(&full[..TAG_LEN]);
        t
    }

    /// Appends the tag of everything in `datagram` so far (any message).
    pub(crate) fn seal(&self, datagram: &mut Vec<u8>) {
        let t = self.tag(datagram);
        datagram.extend_from_slice(&t);
    }

    /// Whether `tag` is the tag of `bytes` (in constant time, so it cannot be guessed byte by
    /// byte).
    pub(crate) fn verify(&self, bytes: &[u8], tag: &[u8]) -> bool {
        let mut m = self.keyed.clone();
        m.update(bytes);
        m.verify_truncated_left(tag).is_ok() && tag.len() == TAG_LEN
    }

    /// The message without its tag, if the tag is right.
    pub(crate) fn open<'a>(&self, datagram: &'a [u8]) -> Option<&'a [u8]> {
        let body_len = datagram.len().checked_sub(TAG_LEN)?;
        let (body, tag) = datagram.split_at(body_len);
        self.verify(body, tag).then_some(body)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tag_verifies_only_under_the_same_secret_and_use_and_in_full() {
        let a = Authenticator::new(0x5ec7e7, SOCK_HELLO);
        let t = a.tag(b"subject");
        assert!(a.verify(b"subject", &t));
        assert!(!a.verify(b"subjecT", &t));
        assert!(!a.verify(b"subject", &t[..TAG_LEN - 1]), "a shortened tag");
        assert!(!a.verify(b"subject", &[]), "no tag");
        assert!(!Authenticator::new(0x5ec7e8, SOCK_HELLO).verify(b"subject", &t));
        assert!(!Authenticator::new(0x5ec7e7, UD_CONTROL).verify(b"subject", &t));
        let mut sealed = b"datagram".to_vec();
        a.seal(&mut sealed);
        assert_eq!(a.open(&sealed), Some(&b"datagram"[..]));
        assert!(!sealed.windows(8).any(|w| w == 0x5ec7e7u64.to_le_bytes()));
        assert_eq!(a.open(&sealed[..TAG_LEN - 1]), None);
    }
}
