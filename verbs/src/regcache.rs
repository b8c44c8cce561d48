//! Memory registration cache: registering memory with the HCA costs a system call and page
//! pinning, so regions are reused while in use and kept a little after their last use.
//!
//! Pure logic, generic over the registration handle, so it is tested without a device. Caveat
//! shared by all such caches: a region freed by the application and reallocated at the same
//! address while still cached (unused) refers to the old pages; `max_unused` bounds how long
//! that can last and `0` turns caching of unused regions off.

/// A cached registration covering `[addr, addr+len)`.
pub struct Entry<H> {
    pub addr: u64,
    pub len: u64,
    pub handle: H,
    refs: u32,
    last_use: u64,
}

pub struct RegCache<H> {
    entries: Vec<Entry<H>>,
    max_unused: usize,
    clock: u64,
    pub hits: u64,
    pub misses: u64,
}

impl<H> RegCache<H> {
    pub fn new(max_unused: usize) -> Self {
        RegCache {
            entries: Vec::new(),
            max_unused,
            clock: 0,
            hits: 0,
            misses: 0,
        }
    }

    /// The registration covering `[addr, addr+len)`, registering it with `register` on a miss.
    /// Each successful call must be paired with one `release`.
    pub fn acquire<E>(
        &mut self,
        addr: u64,
        len: u64,
        register: impl FnOnce(u64, u64) -> Result<H, E>,
    ) -> Result<&H, E> {
        self.clock += 1;
        let end = addr.saturating_add(len);
        if let Some(i) = self
            .entries
            .iter()
            .position(|e| e.addr <= addr && end <= e.addr.saturating_add(e.len))
        {
            self.hits += 1;
            let e = &mut self.entries[i];
            e.refs += 1;
            e.last_use = self.clock;
            return Ok(&self.entries[i].handle);
        }
        self.misses += 1;
        let handle = register(addr, len)?;
        self.entries.push(Entry {
            addr,
            len,
            handle,
            refs: 1,
            last_use: self.clock,
        });
        Ok(&self.entries.last().expect("just pushed").handle)
    }

    /// Drop one use of the entry matching `which`; returns handles evicted (to deregister).
    pub fn release(&mut self, which: impl Fn(&H) -> bool) -> Vec<H> {
        if let Some(e) = self
            .entries
            .iter_mut()
            .find(|e| e.refs > 0 && which(&e.handle))
        {
            e.refs -= 1;
        }
        self.evict()
    }

    fn evict(&mut self) -> Vec<H> {
        let mut out = Vec::new();
        while self.entries.iter().filter(|e| e.refs == 0).count() > self.max_unused {
            let Some((i, _)) = self
                .entries
                .iter()
                .enumerate()
                .filter(|(_, e)| e.refs == 0)
                .min_by_key(|(_, e)| e.last_use)
            else {
                break;
            };
            out.push(self.entries.swap_remove(i).handle);
        }
        out
    }

    /// Remove everything (at teardown); returns all handles.
    pub fn drain(&mut self) -> Vec<H> {
        self.entries.drain(..).map(|e| e.handle).collect()
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reg(counter: &mut u32) -> impl FnOnce(u64, u64) -> Result<(u32, u64, u64), ()> + '_ {
        move |a, l| {
            *counter += 1;
            Ok((*counter, a, l))
        }
    }

    #[test]
    fn hits_inside_a_registered_range() {
        let mut n = 0;
        let mut c = RegCache::new(4);
        let k1 = c.acquire(1000, 100, reg(&mut n)).unwrap().0;
        let k2 = c.acquire(1010, 50, reg(&mut n)).unwrap().0;
        assert_eq!(k1, k2);
        assert_eq!((c.hits, c.misses, n), (1, 1, 1));
        // Crossing the end is a miss.
        let k3 = c.acquire(1090, 20, reg(&mut n)).unwrap().0;
        assert_ne!(k1, k3);
        assert_eq!(c.len(), 2);
    }

    #[test]
    fn evicts_least_recently_used_unused() {
        let mut n = 0;
        let mut c = RegCache::new(1);
        for a in [0u64, 1000, 2000] {
            c.acquire(a, 10, reg(&mut n)).unwrap();
        }
        assert!(c.release(|h| h.1 == 0).is_empty());
        // Two unused with room for one: the older goes.
        let ev = c.release(|h| h.1 == 1000);
        assert_eq!(ev.iter().map(|h| h.1).collect::<Vec<_>>(), vec![0]);
        // In-use entries are never evicted.
        assert_eq!(c.len(), 2);
        let ev = c.release(|h| h.1 == 2000);
        assert_eq!(ev.len(), 1);
        assert_eq!(c.drain().len(), 1);
    }

    #[test]
    fn no_caching_when_max_unused_is_zero_and_errors_propagate() {
        let mut c: RegCache<u32> = RegCache::new(0);
        c.acquire(5, 5, |_, _| Ok::<_, ()>(7)).unwrap();
        assert_eq!(c.release(|h| *h == 7), vec![7]);
        assert!(c.is_empty());
        assert!(c.acquire(5, 5, |_, _| Err::<u32, _>("no")).is_err());
        assert!(c.is_empty());
    }
}
