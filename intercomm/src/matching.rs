//! Message matching, MPI's rules and nothing else (no I/O): receives are posted with a pattern
//! (context id, source or `ANY_SOURCE`, tag or `ANY_TAG`); a message carries an envelope
//! (context id, source, tag). A message meets the oldest posted receive it matches, and a
//! receive meets the oldest unexpected message it matches, so messages of one sender are
//! received in the order they arrived.

use std::collections::VecDeque;

/// Wildcards and the null process, with MPI's meaning.
pub const ANY_SOURCE: i32 = -2;
pub const ANY_TAG: i32 = -1;
pub const PROC_NULL: i32 = -3;

/// What a message says about itself.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) struct Envelope {
    pub ctx: u64,
    /// The sender's rank in the communicator.
    pub src: u32,
    pub tag: i32,
}

/// What a receive accepts.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) struct Pattern {
    pub ctx: u64,
    /// A rank, or `ANY_SOURCE`.
    pub src: i32,
    /// A tag, or `ANY_TAG`.
    pub tag: i32,
}

impl Pattern {
    #[inline]
    pub fn matches(&self, e: &Envelope) -> bool {
        self.ctx == e.ctx
            && (self.src == ANY_SOURCE || self.src as u32 == e.src)
            && (self.tag == ANY_TAG || self.tag == e.tag)
    }
}

/// The posted-receive queue (each receive named by a token `P`) and the unexpected-message
/// queue (each message with its body `U`).
pub(crate) struct Matcher<P, U> {
    posted: VecDeque<(Pattern, P)>,
    unexpected: VecDeque<(Envelope, U)>,
    /// Messages kept so far (`held`).
    held: u64,
}

impl<P, U> Default for Matcher<P, U> {
    fn default() -> Self {
        Matcher {
            posted: VecDeque::new(),
            unexpected: VecDeque::new(),
            held: 0,
        }
    }
}

impl<P: Copy + PartialEq, U> Matcher<P, U> {
    /// Queues a receive behind those posted before. Look in the unexpected queue first
    /// (`take_unexpected`): a receive is only posted when nothing there matches it.
    pub fn post(&mut self, pattern: Pattern, token: P) {
        self.posted.push_back((pattern, token));
    }

    /// The oldest posted receive that `e` matches, removed from the queue.
    #[inline]
    pub fn take_posted(&mut self, e: &Envelope) -> Option<P> {
        // Usually the oldest posted receive is the one.
        let (front, token) = self.posted.front()?;
        if front.matches(e) {
            let token = *token;
            self.posted.pop_front();
            return Some(token);
        }
        let i = self.posted.iter().position(|(p, _)| p.matches(e))?;
        self.posted.remove(i).map(|(_, token)| token)
    }

    /// Keeps a message no posted receive matched, behind those kept before.
    pub fn hold(&mut self, e: Envelope, body: U) {
        self.unexpected.push_back((e, body));
        self.held += 1;
    }

    /// How many messages have been kept so far: a look for some in the queue is due only
    /// when it changed.
    pub fn held(&self) -> u64 {
        self.held
    }

    /// The oldest unexpected message `p` matches, removed from the queue.
    pub fn take_unexpected(&mut self, p: &Pattern) -> Option<(Envelope, U)> {
        let i = self.unexpected.iter().position(|(e, _)| p.matches(e))?;
        self.unexpected.remove(i)
    }

    /// The oldest unexpected message for which `which` holds, removed from the queue (a
    /// withdrawn send).
    pub fn withdraw(&mut self, which: impl Fn(&Envelope, &U) -> bool) -> Option<(Envelope, U)> {
        let i = self.unexpected.iter().position(|(e, u)| which(e, u))?;
        self.unexpected.remove(i)
    }

    /// The oldest unexpected message `p` matches, left in the queue.
    pub fn probe(&self, p: &Pattern) -> Option<(&Envelope, &U)> {
        self.unexpected
            .iter()
            .find(|(e, _)| p.matches(e))
            .map(|(e, u)| (e, u))
    }

    /// Withdraws the posted receive `token` (cancelled, or its peer died). Returns whether it
    /// was posted.
    pub fn unpost(&mut self, token: P) -> bool {
        let before = self.posted.len();
        self.posted.retain(|(_, t)| *t != token);
        self.posted.len() != before
    }

    pub fn has_posted(&self) -> bool {
        !self.posted.is_empty()
    }

    pub fn has_unexpected(&self) -> bool {
        !self.unexpected.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(ctx: u64, src: u32, tag: i32) -> Envelope {
        Envelope { ctx, src, tag }
    }

    fn pat(ctx: u64, src: i32, tag: i32) -> Pattern {
        Pattern { ctx, src, tag }
    }

    type M = Matcher<u32, &'static str>;

    #[test]
    fn a_message_meets_a_posted_receive_and_is_not_kept() {
        let mut m = M::default();
        m.post(pat(8, 1, 5), 100);
        assert_eq!(m.take_posted(&env(8, 1, 5)), Some(100));
        assert!(!m.has_posted());
        assert_eq!(m.take_posted(&env(8, 1, 5)), None, "a receive matches once");
    }

    #[test]
    fn an_unexpected_message_waits_for_its_receive() {
        let mut m = M::default();
        assert_eq!(m.take_posted(&env(8, 1, 5)), None);
        m.hold(env(8, 1, 5), "hello");
        assert!(m.has_unexpected());
        assert_eq!(m.take_unexpected(&pat(8, 1, 6)), None, "another tag");
        assert_eq!(m.take_unexpected(&pat(8, 2, 5)), None, "another source");
        assert_eq!(
            m.take_unexpected(&pat(8, 1, 5)),
            Some((env(8, 1, 5), "hello"))
        );
        assert!(!m.has_unexpected());
    }

    #[test]
    fn any_source_and_any_tag_match_every_sender_and_tag() {
        let mut m = M::default();
        m.post(pat(8, ANY_SOURCE, 5), 1);
        m.post(pat(8, 3, ANY_TAG), 2);
        m.post(pat(8, ANY_SOURCE, ANY_TAG), 3);
        assert_eq!(
            m.take_posted(&env(8, 7, 9)),
            Some(3),
            "only the double wildcard"
        );
        assert_eq!(m.take_posted(&env(8, 3, 9)), Some(2));
        assert_eq!(m.take_posted(&env(8, 0, 5)), Some(1));
        m.hold(env(8, 4, 11), "a");
        m.hold(env(8, 6, 12), "b");
        assert_eq!(m.take_unexpected(&pat(8, ANY_SOURCE, 12)).unwrap().1, "b");
        assert_eq!(m.take_unexpected(&pat(8, 4, ANY_TAG)).unwrap().1, "a");
    }

    #[test]
    fn one_senders_messages_are_received_in_arrival_order() {
        let mut m = M::default();
        m.hold(env(8, 1, 5), "first");
        m.hold(env(8, 2, 5), "other sender");
        m.hold(env(8, 1, 5), "second");
        m.hold(env(8, 1, 6), "third, another tag");
        let p = pat(8, 1, ANY_TAG);
        assert_eq!(m.take_unexpected(&p).unwrap().1, "first");
        assert_eq!(m.take_unexpected(&p).unwrap().1, "second");
        assert_eq!(m.take_unexpected(&p).unwrap().1, "third, another tag");
        assert_eq!(m.take_unexpected(&p), None);
        // Posted receives are met oldest first too, wildcards or not.
        m.post(pat(8, ANY_SOURCE, ANY_TAG), 10);
        m.post(pat(8, 1, 5), 11);
        m.post(pat(8, 1, 5), 12);
        assert_eq!(m.take_posted(&env(8, 1, 5)), Some(10));
        assert_eq!(m.take_posted(&env(8, 1, 5)), Some(11));
        assert_eq!(m.take_posted(&env(8, 1, 5)), Some(12));
    }

    #[test]
    fn a_later_receive_can_match_before_an_earlier_one_that_does_not() {
        let mut m = M::default();
        m.post(pat(8, 1, 5), 1);
        m.post(pat(8, 2, 5), 2);
        assert_eq!(m.take_posted(&env(8, 2, 5)), Some(2));
        assert_eq!(m.take_posted(&env(8, 1, 5)), Some(1));
    }

    #[test]
    fn probe_reports_without_consuming() {
        let mut m = M::default();
        assert_eq!(m.probe(&pat(8, ANY_SOURCE, ANY_TAG)), None);
        m.hold(env(8, 1, 5), "x");
        m.hold(env(8, 1, 5), "y");
        for _ in 0..2 {
            let (e, body) = m.probe(&pat(8, ANY_SOURCE, 5)).expect("found");
            assert_eq!((*e, *body), (env(8, 1, 5), "x"));
        }
        assert_eq!(m.take_unexpected(&pat(8, 1, 5)).unwrap().1, "x");
        assert_eq!(*m.probe(&pat(8, 1, 5)).unwrap().1, "y");
    }

    #[test]
    fn contexts_are_isolated_even_under_wildcards() {
        let mut m = M::default();
        m.post(pat(8, ANY_SOURCE, ANY_TAG), 1);
        assert_eq!(
            m.take_posted(&env(9, 1, 5)),
            None,
            "point-to-point vs collective"
        );
        m.hold(env(9, 1, 5), "collective");
        assert_eq!(m.probe(&pat(8, ANY_SOURCE, ANY_TAG)), None);
        assert_eq!(m.take_unexpected(&pat(8, ANY_SOURCE, ANY_TAG)), None);
        assert_eq!(
            m.take_unexpected(&pat(9, ANY_SOURCE, ANY_TAG)).unwrap().1,
            "collective"
        );
        assert_eq!(m.take_posted(&env(8, 1, 5)), Some(1));
    }

    #[test]
    fn a_withdrawn_message_matches_nothing() {
        let mut m = M::default();
        m.hold(env(8, 1, 5), "first");
        m.hold(env(8, 1, 5), "second");
        assert_eq!(m.withdraw(|_, u| *u == "second").unwrap().1, "second");
        assert_eq!(m.withdraw(|_, u| *u == "second"), None, "withdrawn once");
        assert_eq!(m.take_unexpected(&pat(8, 1, 5)).unwrap().1, "first");
        assert_eq!(m.take_unexpected(&pat(8, 1, 5)), None);
    }

    #[test]
    fn unposted_receives_match_nothing() {
        let mut m = M::default();
        m.post(pat(8, 1, 5), 1);
        m.post(pat(8, 1, 5), 2);
        assert!(m.unpost(1));
        assert!(!m.unpost(1), "already withdrawn");
        assert_eq!(m.take_posted(&env(8, 1, 5)), Some(2));
        assert!(!m.has_posted());
    }
}
