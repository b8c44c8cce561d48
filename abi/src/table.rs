//! A table of live objects addressed by a small index: O(1) look-up, slots reused through a
//! free list, so steady-state traffic allocates nothing.

pub struct Table<T> {
    slots: Vec<Option<T>>,
    free: Vec<usize>,
}

impl<T> Default for Table<T> {
    fn default() -> Table<T> {
        Table::new()
    }
}

impl<T> Table<T> {
    pub fn new() -> Table<T> {
        Table {
            slots: Vec::new(),
            free: Vec::new(),
        }
    }

    /// Stores `v` and returns its index.
    pub fn insert(&mut self, v: T) -> usize {
        match self.free.pop() {
            Some(i) => {
                self.slots[i] = Some(v);
                i
            }
            None => {
                self.slots.push(Some(v));
                self.slots.len() - 1
            }
        }
    }

    /// Keeps the first `n` slots for `put` (insert never hands them out).
    pub fn reserve(&mut self, n: usize) {
        while self.slots.len() < n {
            self.slots.push(None);
        }
    }

    /// Stores `v` in reserved slot `i`.
    pub fn put(&mut self, i: usize, v: T) {
        self.reserve(i + 1);
        self.slots[i] = Some(v);
    }

    /// Empties slot `i` without handing it to later inserts (a reserved slot).
    pub fn clear_slot(&mut self, i: usize) -> Option<T> {
        self.slots.get_mut(i).and_then(Option::take)
    }

    pub fn is_empty(&self) -> bool {
        self.slots.iter().all(Option::is_none)
    }

    pub fn get(&self, i: usize) -> Option<&T> {
        self.slots.get(i).and_then(Option::as_ref)
    }

    pub fn get_mut(&mut self, i: usize) -> Option<&mut T> {
        self.slots.get_mut(i).and_then(Option::as_mut)
    }

    /// Takes the object out; its index is reused by a later insert.
    pub fn remove(&mut self, i: usize) -> Option<T> {
        let v = self.slots.get_mut(i).and_then(Option::take);
        if v.is_some() {
            self.free.push(i);
        }
        v
    }

    /// Takes every object out, in index order.
    pub fn drain(&mut self) -> Vec<T> {
        self.free.clear();
        self.slots.drain(..).flatten().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::Table;

    #[test]
    fn slots_are_reused_and_removed_ones_are_gone() {
        let mut t = Table::new();
        let a = t.insert("a");
        let b = t.insert("b");
        assert_eq!(t.remove(a), Some("a"));
        assert_eq!(t.get(a), None);
        assert_eq!(t.remove(a), None);
        let c = t.insert("c");
        assert_eq!(c, a);
        assert_eq!(t.get(b), Some(&"b"));
        assert_eq!(t.drain(), vec!["c", "b"]);
    }
}
