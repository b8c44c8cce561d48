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
        if len == 0 {
            return Scratch(Vec::new());
        }
        let reused = FREE.with(|f| {
            let mut f = f.borrow_mut();
            let i = f.iter().position(|b| b.capacity() >= len)?;
            Some(f.swap_remove(i))
        });
        let mut v = reused.unwrap_or_default();
        v.clear();
        v.resize(len, 0);
        Scratch(v)
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
