//! A process whose fabric has one connection reads that stream at the start of a progress
//! round instead of polling: a ping-pong then costs one `read` per message and per idle round
//! instead of a `poll` and a `read`, as a TCP program spinning on its one socket does. At most
//! `MAX_SKIPPED` rounds in a row skip the poll, so the datagram socket (a new peer's connection
//! request) and the listener are still looked at.

/// Rounds in a row that may skip the poll.
pub(crate) const MAX_SKIPPED: u32 = 16;

/// Counts the rounds since the last poll.
#[derive(Default)]
pub(crate) struct PollSkips {
    skipped: u32,
}

impl PollSkips {
    /// Whether this round may skip its poll.
    pub(crate) fn may_skip(&self) -> bool {
        self.skipped < MAX_SKIPPED
    }

    /// This round skips its poll.
    pub(crate) fn skipped(&mut self) {
        self.skipped += 1;
    }

    /// A poll(2) ran: every socket was looked at.
    pub(crate) fn polled(&mut self) {
        self.skipped = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_poll_comes_after_at_most_max_skipped_rounds() {
        let mut h = PollSkips::default();
        for _ in 0..MAX_SKIPPED {
            assert!(h.may_skip());
            h.skipped();
        }
        assert!(!h.may_skip(), "this round must poll");
        h.polled();
        assert!(h.may_skip());
    }
}
