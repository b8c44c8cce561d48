//! Requests the root daemon holds until their answer is there: `get_pset_data` with a wait
//! (until every key is set) and `finalize_pset_op` of a change that waits for its retired
//! processes to exit. Each is served again after every event of the daemon and answered
//! once its answer is final, or with what there is at its bound (the asker reports that as
//! a timeout), so no process polls the registry.

use super::registry::Reply;
use crate::daemon::ConnId;
use ibdyn_pmi::pset_ops::{Member, PsetReply, PsetRequest};
use std::time::{Duration, Instant};

/// Extra time a held finalize waits beyond the retire limit (whose timer ends the change).
const FINALIZE_SLACK: Duration = Duration::from_secs(2);

/// Where the answer of a held request goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ReplyTo {
    /// A rank connected to the root daemon.
    Local(ConnId),
    /// A request forwarded from below: back to daemon `origin`, under its id.
    Below { origin: u32, id: u64 },
}

/// One held request.
#[derive(Debug)]
pub(crate) struct Held {
    pub(crate) to: ReplyTo,
    pub(crate) who: Member,
    pub(crate) req: PsetRequest,
    pub(crate) until: Instant,
}

/// Whether `reply` to `req` is not final yet: then how long the request may be held from
/// its arrival.
pub(crate) fn bound(req: &PsetRequest, reply: &Reply, retire_limit: Duration) -> Option<Duration> {
    match (req, reply) {
        (PsetRequest::GetData { keys, wait_ms, .. }, Ok(PsetReply::Data(kv)))
            if *wait_ms > 0 && kv.len() < keys.len() =>
        {
            Some(Duration::from_millis(*wait_ms))
        }
        (PsetRequest::Finalize { .. }, Ok(PsetReply::Change(Some(_)))) => {
            Some(retire_limit + FINALIZE_SLACK)
        }
        _ => None,
    }
}

/// The held requests.
#[derive(Debug, Default)]
pub(crate) struct HeldRequests {
    held: Vec<Held>,
}

impl HeldRequests {
    pub(crate) fn hold(&mut self, h: Held) {
        self.held.push(h);
    }

    /// Every held request, to be served again (those still not final are held again).
    pub(crate) fn take(&mut self) -> Vec<Held> {
        std::mem::take(&mut self.held)
    }

    pub(crate) fn next_deadline(&self) -> Option<Instant> {
        self.held.iter().map(|h| h.until).min()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ibdyn_pmi::pset_ops::{Change, ChangeState, PsetDesc, PsetOp, SetRef};

    #[test]
    fn only_unfinished_waits_are_held() {
        let limit = Duration::from_secs(10);
        let get = |wait_ms| PsetRequest::GetData {
            set: SetRef::named("mpi://WORLD"),
            keys: vec!["a".into(), "b".into()],
            wait_ms,
        };
        let partial: Reply = Ok(PsetReply::Data(vec![("a".into(), "1".into())]));
        let full: Reply = Ok(PsetReply::Data(vec![
            ("a".into(), "1".into()),
            ("b".into(), "2".into()),
        ]));
        assert_eq!(
            bound(&get(500), &partial, limit),
            Some(Duration::from_millis(500))
        );
        assert_eq!(bound(&get(0), &partial, limit), None);
        assert_eq!(bound(&get(500), &full, limit), None);
        assert_eq!(bound(&get(500), &Err("dead".into()), limit), None);
        let fin = PsetRequest::Finalize {
            set: SetRef::named("mpi://WORLD"),
        };
        let desc = PsetDesc {
            name: "ibdyn://op1/shrink".into(),
            members: vec![],
            origin: None,
        };
        let pending: Reply = Ok(PsetReply::Change(Some(Change {
            op: PsetOp::Shrink,
            state: ChangeState::Pending,
            input: "mpi://WORLD".into(),
            delta: desc.clone(),
            new_main: desc,
        })));
        assert_eq!(bound(&fin, &pending, limit), Some(limit + FINALIZE_SLACK));
        assert_eq!(bound(&fin, &Ok(PsetReply::Done), limit), None);
        let mut h = HeldRequests::default();
        assert_eq!(h.next_deadline(), None);
        let now = Instant::now();
        for (i, s) in [3u64, 1, 2].into_iter().enumerate() {
            h.hold(Held {
                to: ReplyTo::Below {
                    origin: 1,
                    id: i as u64,
                },
                who: (1, 0),
                req: fin.clone(),
                until: now + Duration::from_secs(s),
            });
        }
        assert_eq!(h.next_deadline(), Some(now + Duration::from_secs(1)));
        assert_eq!(h.take().len(), 3);
        assert!(h.take().is_empty());
    }
}
