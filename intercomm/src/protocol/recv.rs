//! Receiving: posting receives, matching what arrives, and handling every packet kind.

use super::Protocol;
use crate::error::{CommError, Result};
use crate::gpid::Gpid;
use crate::matching::Envelope;
use crate::packet::{Header, Kind, Reader, RtsBody};
use crate::reqs::{PostedRecv, ReqState, Status};
use crate::route::Routes;

/// A message that arrived before its receive was posted.
pub(super) enum Unexpected {
    Eager(Vec<u8>),
    Rts {
        from: Gpid,
        sender_req: u64,
        rts: RtsBody,
    },
}

impl Unexpected {
    pub(super) fn len(&self) -> usize {
        match self {
            Unexpected::Eager(d) => d.len(),
            Unexpected::Rts { rts, .. } => rts.len as usize,
        }
    }
}

/// Copies an eager message into the receive's buffer.
#[inline]
pub(crate) fn copy_eager(r: &PostedRecv, src: u32, tag: i32, data: &[u8]) -> Result<Status> {
    if data.len() > r.cap {
        // SAFETY: `r.buf` is a live buffer of `r.cap` bytes lent to the receive, and
        // `r.cap < data.len()`: the start of the message that fits.
        unsafe { ibdyn_shm::copy_bytes(data.as_ptr(), r.buf, r.cap) };
        return Err(CommError::Truncated {
            message_len: data.len(),
            buffer_len: r.cap,
            sender: src as i32,
            tag,
            received: r.cap,
        });
    }
    // SAFETY: `r.buf` points to a live buffer of `r.cap` bytes, lent to the receive until it
    // completes (the request's borrow, or the blocking call's); data.len() <= r.cap.
    unsafe { ibdyn_shm::copy_bytes(data.as_ptr(), r.buf, data.len()) };
    Ok(Status {
        source: src as i32,
        tag,
        count: data.len(),
    })
}

impl Protocol {
    /// Posts a receive into `buf[..cap]`; matches the unexpected queue first.
    pub fn irecv(&mut self, r: &mut Routes<'_>, recv: PostedRecv) -> Result<u64> {
        let id = self.reqs.insert(ReqState::RecvPosted(recv));
        match self.matcher.take_unexpected(&recv.pattern()) {
            Some((env, body)) => self.deliver(r, id, recv, env, body),
            None => self.matcher.post(recv.pattern(), id),
        }
        Ok(id)
    }

    /// Looks for a matching message without receiving it.
    pub fn iprobe(&self, ctx: u64, src: i32, tag: i32) -> Option<Status> {
        let pattern = crate::matching::Pattern { ctx, src, tag };
        self.matcher.probe(&pattern).map(|(e, u)| Status {
            source: e.src as i32,
            tag: e.tag,
            count: u.len(),
        })
    }

    /// Takes the oldest message matching (`ctx`, `src`, `tag`) out of matching (MPI_Improbe):
    /// no receive posted later can take it; only `imrecv` with the returned id receives it.
    pub fn improbe(&mut self, ctx: u64, src: i32, tag: i32) -> Option<(Status, u64)> {
        let (e, body) =
            self.matcher
                .take_unexpected(&crate::matching::Pattern { ctx, src, tag })?;
        let status = Status {
            source: e.src as i32,
            tag: e.tag,
            count: body.len(),
        };
        let id = self.next_claim;
        self.next_claim += 1;
        self.claimed.insert(id, (e, body));
        Some((status, id))
    }

    /// Receives the message `improbe` claimed as `msg` into `recv` (MPI_Imrecv).
    pub fn imrecv(&mut self, r: &mut Routes<'_>, msg: u64, recv: PostedRecv) -> Result<u64> {
        let (e, body) = self.claimed.remove(&msg).ok_or_else(|| {
            CommError::InvalidArgument(format!(
                "matched message {msg} was received already; receive each probed message once"
            ))
        })?;
        let id = self.reqs.insert(ReqState::RecvPosted(recv));
        self.deliver(r, id, recv, e, body);
        Ok(id)
    }

    /// The oldest posted receive `e` matches, taken off the posted queue.
    #[inline]
    fn match_posted(&mut self, e: &Envelope) -> Option<(u64, PostedRecv)> {
        let id = self.matcher.take_posted(e)?;
        match self.reqs.get_mut(id) {
            Some(ReqState::RecvPosted(r)) => Some((id, *r)),
            _ => None,
        }
    }

    /// A matched message meets its receive.
    fn deliver(
        &mut self,
        r: &mut Routes<'_>,
        id: u64,
        recv: PostedRecv,
        e: Envelope,
        body: Unexpected,
    ) {
        match body {
            Unexpected::Eager(data) => self.deliver_eager(id, recv, e.src, e.tag, &data),
            Unexpected::Rts {
                from,
                sender_req,
                rts,
            } => self.start_pull(r, id, recv, e.src, e.tag, from, sender_req, rts),
        }
    }

    #[inline]
    fn deliver_eager(&mut self, id: u64, recv: PostedRecv, src: u32, tag: i32, data: &[u8]) {
        let result = copy_eager(&recv, src, tag, data);
        self.set(id, ReqState::Done(result));
    }

    /// Handles one packet; a malformed one is counted and logged. Returns whether it was good.
    #[inline]
    pub fn handle_logged(&mut self, r: &mut Routes<'_>, p: &[u8]) -> bool {
        match self.handle_packet(r, p) {
            Ok(()) => true,
            Err(e) => {
                self.malformed += 1;
                tracing::warn!("dropped a packet ({} so far): {e}", self.malformed);
                false
            }
        }
    }

    /// Handles one packet, in place. Only malformed packets are errors here; every other
    /// failure lands on the request it concerns.
    #[inline]
    pub(super) fn handle_packet(&mut self, r: &mut Routes<'_>, p: &[u8]) -> Result<()> {
        if let Some((ctx, src, tag, body)) = Header::decode_eager(p) {
            self.handle_eager(Envelope { ctx, src, tag }, body);
            return Ok(());
        }
        self.handle_control(r, p)
    }

    #[inline]
    fn handle_eager(&mut self, e: Envelope, body: &[u8]) {
        if let Some((id, recv)) = self.match_posted(&e) {
            self.deliver_eager(id, recv, e.src, e.tag, body);
        } else {
            self.matcher.hold(e, Unexpected::Eager(body.to_vec()));
        }
    }

    /// Every packet but eager ones.
    #[inline(never)]
    fn handle_control(&mut self, r: &mut Routes<'_>, p: &[u8]) -> Result<()> {
        let (h, body) = Header::decode(p)?;
        let e = Envelope {
            ctx: h.ctx,
            src: h.src,
            tag: h.tag,
        };
        match h.kind {
            Kind::Eager => self.handle_eager(e, body),
            Kind::Rts => {
                let rts = RtsBody::decode(body)?;
                let from = Gpid::from_u64(h.from);
                if let Some((id, recv)) = self.match_posted(&e) {
                    self.start_pull(r, id, recv, h.src, h.tag, from, h.word, rts);
                } else {
                    self.matcher.hold(
                        e,
                        Unexpected::Rts {
                            from,
                            sender_req: h.word,
                            rts,
                        },
                    );
                }
            }
            Kind::Fin => match self.reqs.get_mut(h.word) {
                Some(ReqState::SendRndv(s)) => {
                    let status = s.status;
                    self.finish_send(r, h.word, Ok(status));
                }
                _ => {
                    return Err(CommError::Malformed(format!(
                        "FIN for unknown send {:#x}",
                        h.word
                    )))
                }
            },
            Kind::Cts => {
                let recv_req = Reader::new(body).u64()?;
                match self.reqs.get_mut(h.word) {
                    Some(ReqState::SendRndv(s)) => {
                        let send = *s;
                        self.set(
                            h.word,
                            ReqState::SendStream {
                                send,
                                recv_req,
                                sent: 0,
                            },
                        );
                        self.streaming += 1;
                    }
                    _ => {
                        return Err(CommError::Malformed(format!(
                            "CTS for unknown send {:#x}",
                            h.word
                        )))
                    }
                }
            }
            Kind::Frag => self.handle_fragment(h.word, body)?,
            Kind::Hello => {}
            Kind::CancelSend => self.handle_cancel_send(r, Gpid::from_u64(h.from), h.word)?,
            Kind::CancelReply => self.handle_cancel_reply(r, h.word, body)?,
        }
        Ok(())
    }
}
