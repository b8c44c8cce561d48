//! The send slots of the registered slab: each posted SEND (UD datagram or RC piece) copies its
//! bytes into a free slot, which returns to the pool when the send completes, or when its RC
//! queue pair is destroyed (pure, tested without a device).

/// Who a slot is lent to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Sender {
    Ud,
    /// An RC queue pair, by number.
    Rc(u32),
}

pub(crate) struct SendSlots {
    free: Vec<u32>,
    owner: Vec<Option<Sender>>,
    ud_held: u32,
}

impl SendSlots {
    pub(crate) fn new(count: u32) -> SendSlots {
        SendSlots {
            free: (0..count).collect(),
            owner: vec![None; count as usize],
            ud_held: 0,
        }
    }

    /// A free slot, now lent to `by`; `None` when all are lent.
    pub(crate) fn take(&mut self, by: Sender) -> Option<u32> {
        let slot = self.free.pop()?;
        self.owner[slot as usize] = Some(by);
        if by == Sender::Ud {
            self.ud_held += 1;
        }
        Some(slot)
    }

    /// `by` is done with `slot` (its send completed, or could not be posted). A slot `by` does
    /// not hold (e.g. of a queue pair destroyed meanwhile, already returned) stays as it is;
    /// returns whether the slot came back.
    pub(crate) fn give_back(&mut self, by: Sender, slot: u32) -> bool {
        match self.owner.get_mut(slot as usize) {
            Some(owner) if *owner == Some(by) => {
                *owner = None;
                self.free.push(slot);
                if by == Sender::Ud {
                    self.ud_held -= 1;
                }
                true
            }
            _ => false,
        }
    }

    /// Returns every slot of a destroyed queue pair (its sends will never complete); how many.
    pub(crate) fn release_qp(&mut self, qpn: u32) -> usize {
        let mut n = 0;
        for (slot, owner) in self.owner.iter_mut().enumerate() {
            if *owner == Some(Sender::Rc(qpn)) {
                *owner = None;
                self.free.push(slot as u32);
                n += 1;
            }
        }
        n
    }

    /// UD sends posted and not completed.
    pub(crate) fn ud_in_flight(&self) -> u32 {
        self.ud_held
    }

    #[cfg(test)]
    fn available(&self) -> usize {
        self.free.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_are_reused_after_completion() {
        let mut s = SendSlots::new(2);
        let a = s.take(Sender::Rc(7)).unwrap();
        assert!(s.give_back(Sender::Rc(7), a));
        let b = s.take(Sender::Ud).unwrap();
        assert_eq!(a, b, "the slot just returned is lent again");
        assert_eq!(s.ud_in_flight(), 1);
        assert!(s.give_back(Sender::Ud, b));
        assert_eq!((s.ud_in_flight(), s.available()), (0, 2));
    }

    #[test]
    fn exhaustion_lends_nothing_until_a_slot_returns() {
        let mut s = SendSlots::new(3);
        let lent: Vec<u32> = (0..3).map(|_| s.take(Sender::Rc(1)).unwrap()).collect();
        let mut sorted = lent.clone();
        sorted.sort();
        assert_eq!(sorted, vec![0, 1, 2], "each slot lent once");
        assert_eq!(s.take(Sender::Ud), None);
        assert_eq!(s.take(Sender::Rc(2)), None);
        assert!(s.give_back(Sender::Rc(1), lent[1]));
        assert_eq!(s.take(Sender::Rc(2)), Some(lent[1]));
        assert_eq!(s.take(Sender::Rc(2)), None);
    }

    #[test]
    fn a_destroyed_queue_pairs_slots_return_and_its_late_completions_are_ignored() {
        let mut s = SendSlots::new(4);
        let dead: Vec<u32> = (0..2).map(|_| s.take(Sender::Rc(5)).unwrap()).collect();
        let live = s.take(Sender::Rc(6)).unwrap();
        let ud = s.take(Sender::Ud).unwrap();
        assert_eq!(s.release_qp(5), 2);
        assert_eq!(s.available(), 2);
        // A flushed completion of the destroyed queue pair arrives after its slot was lent on.
        let again = s.take(Sender::Rc(6)).unwrap();
        assert!(dead.contains(&again));
        assert!(
            !s.give_back(Sender::Rc(5), again),
            "not the holder any more"
        );
        assert_eq!(s.available(), 1);
        assert_eq!(s.release_qp(5), 0);
        assert!(s.give_back(Sender::Rc(6), live));
        assert!(s.give_back(Sender::Rc(6), again));
        assert!(!s.give_back(Sender::Rc(6), again), "returned only once");
        assert!(!s.give_back(Sender::Ud, 99), "an unknown slot is ignored");
        assert!(s.give_back(Sender::Ud, ud));
        assert_eq!((s.available(), s.ud_in_flight()), (4, 0));
    }
}
