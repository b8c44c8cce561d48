//! RDMA emulation on `sock`: the target's progress loop serves reads and writes, but only inside
//! windows it exposed.

use std::collections::HashMap;

/// Exposed memory windows by rkey.
#[derive(Default)]
pub(crate) struct Windows {
    next_rkey: u32,
    by_rkey: HashMap<u32, (u64, u64)>,
}

impl Windows {
    pub(crate) fn expose(&mut self, addr: u64, len: u64) -> u32 {
        self.next_rkey = self.next_rkey.wrapping_add(1).max(1);
        while self.by_rkey.contains_key(&self.next_rkey) {
            self.next_rkey = self.next_rkey.wrapping_add(1).max(1);
        }
        self.by_rkey.insert(self.next_rkey, (addr, len));
        self.next_rkey
    }

    pub(crate) fn release(&mut self, rkey: u32) {
        self.by_rkey.remove(&rkey);
    }

    /// Check `[addr, addr+len)` lies inside the window `rkey`; Err names what is wrong.
    pub(crate) fn check(&self, rkey: u32, addr: u64, len: u64) -> Result<(), String> {
        let Some(&(base, blen)) = self.by_rkey.get(&rkey) else {
            return Err(format!("rkey {rkey:#x} is not exposed"));
        };
        let end = addr
            .checked_add(len)
            .ok_or_else(|| "range overflows".to_string())?;
        if addr < base || end > base + blen {
            return Err(format!(
                "range {addr:#x}+{len} is outside the exposed window {base:#x}+{blen} (rkey {rkey:#x})"
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_check_ranges() {
        let mut w = Windows::default();
        let k = w.expose(1000, 100);
        assert!(w.check(k, 1000, 100).is_ok());
        assert!(w.check(k, 1050, 50).is_ok());
        assert!(w.check(k, 1000, 0).is_ok());
        assert!(w.check(k, 999, 10).is_err());
        assert!(w.check(k, 1050, 51).is_err());
        assert!(w.check(k, u64::MAX, 2).is_err());
        assert!(w.check(k + 1, 1000, 1).is_err());
        w.release(k);
        assert!(w.check(k, 1000, 1).is_err());
    }
}
