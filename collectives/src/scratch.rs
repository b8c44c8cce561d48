//! Reused working buffers. Large collectives need megabytes of scratch space per call; a
//! fresh allocation of that size is a fresh mapping whose every page faults on first touch,
//! which costs as much as a copy. Freed buffers are kept (a few, per thread) for the next call.

use std::cell::RefCell;
use std::ops::{Deref, DerefMut};

/// Buffers kept for reuse, and the largest one kept.
const KEEP: usize = 4;
const KEEP_MAX: usize = 64 << 20;

thread_local! {
    static FREE: RefCell<Vec<Vec<u8>>> = const { RefCell::new(Vec::new()) };
}

/// A zeroed buffer of `len` bytes that returns to the pool when dropped.
pub(crate) struct Scratch(Vec<u8>);

impl Scratch {
    pub fn zeroed(len: usize) -> Scratch {
        let mut v = Self::reuse(len);
        v.clear();
        v.resize(len, 0);
        Scratch(v)
    }

    /// A buffer of `len` bytes for a result that overwrites all of it before it is read
    /// (a gather's, a reduction's, a received message's): a reused buffer keeps its old
    /// bytes instead of being zeroed, which for the leaders' megabyte buffers of the
    /// intercommunicator collectives cost as much as the copy that then fills them.
    pub fn for_output(len: usize) -> Scratch {
        let mut v = Self::reuse(len);
        if v.len() >= len {
            v.truncate(len);
        } else {
            v.resize(len, 0);
        }
        Scratch(v)
    }

    /// A kept buffer with room for `len` bytes, or an empty one.
    fn reuse(len: usize) -> Vec<u8> {
        if len == 0 {
            return Vec::new();
        }
        FREE.with(|f| {
            let mut f = f.borrow_mut();
            let i = f.iter().position(|b| b.capacity() >= len)?;
            Some(f.swap_remove(i))
        })
        .unwrap_or_default()
    }
}

impl Deref for Scratch {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        &self.0
    }
}

impl DerefMut for Scratch {
    fn deref_mut(&mut self) -> &mut [u8] {
        &mut self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let v = std::mem::take(&mut self.0);
        if v.capacity() == 0 || v.capacity() > KEEP_MAX {
            return;
        }
        // `try_with`: a buffer dropped while the thread ends is simply freed.
        let _ = FREE.try_with(|f| {
            let mut f = f.borrow_mut();
            if f.len() < KEEP {
                f.push(v);
            } else if let Some(small) = f.iter_mut().min_by_key(|b| b.capacity()) {
                if small.capacity() < v.capacity() {
                    *small = v;
                }
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zeroed_is_zero_and_output_keeps_a_reused_buffers_bytes() {
        {
            let mut a = Scratch::zeroed(4096);
            assert!(a.iter().all(|&b| b == 0));
            a.fill(7);
        }
        let b = Scratch::for_output(1000);
        assert_eq!(b.len(), 1000);
        assert!(b.iter().all(|&x| x == 7), "a reused buffer is not cleared");
        drop(b);
        let c = Scratch::zeroed(4096);
        assert!(c.iter().all(|&x| x == 0), "zeroed clears what output left");
        drop(c);
        // Longer than what the kept buffer held: the new part is zero.
        let d = Scratch::for_output(6000);
        assert_eq!(d.len(), 6000);
        assert!(Scratch::for_output(0).is_empty());
    }
}
