//! Services: handlers the engine runs on messages of one tag on one communicator as they
//! arrive, in whatever call of this process progresses the engine (a wait, a test, a
//! collective, a probe). A handler answers with messages the engine sends back. This is how
//! a process acts for its peers while it is busy with something else, with no thread of its
//! own: the target of one-sided operations from another node is one.

use crate::error::Result;
use crate::gpid::Gpid;
use crate::protocol::{Protocol, SendStart};
use crate::reqs::PostedRecv;
use crate::route::Routes;

/// A message a handler sends in answer: `body` to rank `to` of the communicator with `tag`.
pub struct Answer {
    pub to: i32,
    pub tag: i32,
    pub body: Vec<u8>,
}

/// The handler of a service. It runs inside the engine, so it must not call the engine (or
/// anything that does): it only looks at its own state and returns its answers.
pub trait Service {
    /// Handles message `body` from rank `from`.
    fn handle(&mut self, from: i32, body: &[u8]) -> Vec<Answer>;
    /// Whether it put work off (a lock that was held) that `retry` should try again.
    fn deferred(&self) -> bool {
        false
    }
    /// Tries the work it put off again; called on every progress pass while `deferred`.
    fn retry(&mut self) -> Vec<Answer> {
        Vec::new()
    }
    /// Rank `rank` of the communicator died: it sends nothing more, and what the service
    /// holds for it (a lock) should go. Called once per rank.
    fn gone(&mut self, _rank: i32) -> Vec<Answer> {
        Vec::new()
    }
}

/// A service registered with the engine, with its messages in flight.
pub(crate) struct Served {
    /// The context id its messages carry, and their tag.
    ctx: u64,
    tag: i32,
    my_rank: u32,
    /// Per rank of the communicator: the process, and the context id packets to it carry.
    peers: Vec<(Gpid, u64)>,
    handler: Box<dyn Service>,
    /// Receives of messages taken for it: (request, buffer, sender).
    receiving: Vec<(u64, Vec<u8>, i32)>,
    /// Answers on their way (rendezvous): (request, buffer kept alive until done).
    sending: Vec<(u64, Vec<u8>)>,
    /// The unexpected messages the engine had kept when this service last looked.
    seen: Option<u64>,
    /// The peers the engine had found dead when this service last looked.
    deaths_seen: u64,
    /// Ranks the handler was told are gone.
    gone: Vec<i32>,
}

impl Served {
    pub fn new(
        ctx: u64,
        tag: i32,
        my_rank: u32,
        peers: Vec<(Gpid, u64)>,
        handler: Box<dyn Service>,
    ) -> Served {
        Served {
            ctx,
            tag,
            my_rank,
            peers,
            handler,
            receiving: Vec::new(),
            sending: Vec::new(),
            seen: None,
            deaths_seen: 0,
            gone: Vec::new(),
        }
    }

    pub fn is(&self, ctx: u64, tag: i32) -> bool {
        self.ctx == ctx && self.tag == tag
    }

    /// Whether it has nothing in flight (its answers have all left).
    pub fn idle(&self) -> bool {
        self.receiving.is_empty() && self.sending.is_empty()
    }

    /// Takes the messages that have arrived for it, runs the handler on those received, and
    /// sends its answers. Whether anything happened.
    pub fn run(&mut self, proto: &mut Protocol, r: &mut Routes<'_>) -> Result<bool> {
        let mut did = false;
        let held = proto.unexpected_held();
        if self.seen != Some(held) {
            self.seen = Some(held);
            while let Some((st, msg)) = proto.improbe(self.ctx, crate::ANY_SOURCE, self.tag) {
                let mut buf = vec![0u8; st.count];
                let recv = PostedRecv {
                    buf: buf.as_mut_ptr(),
                    cap: buf.len(),
                    ctx: self.ctx,
                    src: st.source,
                    tag: self.tag,
                    peer: self.peers.get(st.source as usize).map(|p| p.0),
                };
                let id = proto.imrecv(r, msg, recv)?;
                // The buffer's heap block stays where it is when the vector moves.
                self.receiving.push((id, buf, st.source));
                did = true;
            }
        }
        // Each sender's messages are handled in the order they were sent, though a later
        // one (eager) may be complete before an earlier one (a rendezvous).
        let mut behind: Vec<i32> = Vec::new();
        let mut i = 0;
        while i < self.receiving.len() {
            let from = self.receiving[i].2;
            let got = if behind.contains(&from) {
                None
            } else {
                proto.take_done(self.receiving[i].0)
            };
            let Some(got) = got else {
                behind.push(from);
                i += 1;
                continue;
            };
            let (_, body, _) = self.receiving.remove(i);
            did = true;
            match got {
                Ok(_) => {
                    let answers = self.handler.handle(from, &body);
                    self.answer(proto, r, answers);
                }
                // The sender died mid-message: there is nobody to answer.
                Err(e) => tracing::debug!("service message from rank {from}: {e}"),
            }
        }
        if proto.deaths() != self.deaths_seen {
            self.deaths_seen = proto.deaths();
            did |= self.tell_gone(proto, r);
        }
        if self.handler.deferred() {
            let answers = self.handler.retry();
            did |= !answers.is_empty();
            self.answer(proto, r, answers);
        }
        self.sending.retain(|(id, _)| match proto.take_done(*id) {
            None => true,
            Some(Ok(_)) => false,
            Some(Err(e)) => {
                tracing::debug!("service answer: {e}");
                false
            }
        });
        Ok(did)
    }

    /// Tells the handler of each rank newly found dead; whether there was one.
    fn tell_gone(&mut self, proto: &mut Protocol, r: &mut Routes<'_>) -> bool {
        let mut told = false;
        for rank in 0..self.peers.len() {
            let rank = rank as i32;
            if self.gone.contains(&rank) || !proto.is_dead(self.peers[rank as usize].0) {
                continue;
            }
            self.gone.push(rank);
            let answers = self.handler.gone(rank);
            self.answer(proto, r, answers);
            told = true;
        }
        told
    }

    /// Sends `answers`; one that cannot go (its peer is dead) is dropped, as that peer's own
    /// waits find out.
    fn answer(&mut self, proto: &mut Protocol, r: &mut Routes<'_>, answers: Vec<Answer>) {
        for a in answers {
            let Some(&(to, ctx)) = self.peers.get(a.to as usize) else {
                tracing::debug!("service answer to rank {} outside the communicator", a.to);
                continue;
            };
            match proto.isend(r, ctx, self.my_rank, to, a.to, a.tag, &a.body) {
                Ok(SendStart::Done(_)) => {}
                Ok(SendStart::Pending(id)) => self.sending.push((id, a.body)),
                Err(e) => tracing::debug!("service answer to rank {}: {e}", a.to),
            }
        }
    }
}
