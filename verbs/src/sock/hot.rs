//! The stream that delivered last is read at the start of a progress round, before any
//! poll(2); when it had input, or is the process's only connection, the round skips its poll.
//! A ping-pong over one connection then costs one `read` per message and per idle round
//! instead of a `poll` and a `read`, as a TCP program spinning on its one socket does. At most
//! `MAX_SKIPPED` rounds in a row skip the poll, so the datagram socket, the listener and the
//! other streams are still looked at while one stream keeps delivering.

/// Rounds in a row that may skip the poll.
pub(crate) const MAX_SKIPPED: u32 = 16;

#[derive(Default)]
pub(crate) struct Hot {
    qp: Option<u32>,
    skipped: u32,
}

impl Hot {
    /// The stream to read before polling, when this round may still skip its poll.
    pub(crate) fn candidate(&self) -> Option<u32> {
        self.qp.filter(|_| self.skipped < MAX_SKIPPED)
    }

    /// The candidate had input: this round skips its poll.
    pub(crate) fn skipped(&mut self) {
        self.skipped += 1;
    }

    /// A poll(2) ran: every socket was looked at.
    pub(crate) fn polled(&mut self) {
        self.skipped = 0;
    }

    /// `qp`'s stream delivered frames.
    pub(crate) fn delivered(&mut self, qp: u32) {
        self.qp = Some(qp);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_poll_comes_after_at_most_max_skipped_rounds() {
        let mut h = Hot::default();
        assert_eq!(h.candidate(), None, "no stream has delivered yet");
        h.delivered(7);
        for _ in 0..MAX_SKIPPED {
            assert_eq!(h.candidate(), Some(7));
            h.skipped();
        }
        assert_eq!(h.candidate(), None, "this round must poll");
        h.polled();
        assert_eq!(h.candidate(), Some(7));
        h.delivered(9);
        assert_eq!(h.candidate(), Some(9));
    }
}
