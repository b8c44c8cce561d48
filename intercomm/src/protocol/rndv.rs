//! The rendezvous: the sender exposes its buffer and sends a request to send; the receiver
//! pulls the data (CMA, RDMA read) and answers FIN; where CMA is refused it answers clear to
//! send and the sender pushes fragments through the receiver's queue.

use super::{Protocol, SendStart};
use crate::error::{CommError, Result};
use crate::gpid::Gpid;
use crate::packet::{Header, Kind, Reader, RtsBody};
use crate::reqs::{PostedRecv, ReqState, RndvSend, Status};
use crate::route::{Link, Pull, Pulled, Routes};
use ibdyn_verbs::RemoteBuf;

impl Protocol {
    #[allow(clippy::too_many_arguments)]
    #[inline(never)]
    pub(super) fn isend_rndv(
        &mut self,
        r: &mut Routes<'_>,
        ctx: u64,
        src_rank: u32,
        to: Gpid,
        tag: i32,
        buf: &[u8],
        status: Status,
    ) -> Result<SendStart> {
        let exposed = r.expose(&self.peer(to)?.link, buf)?;
        let send = RndvSend {
            ptr: buf.as_ptr(),
            len: buf.len(),
            to,
            status,
            exposed: exposed.as_ref().map(|e| (e.addr, e.len, e.rkey)),
            cancelling: false,
        };
        let id = self.reqs.insert(ReqState::SendRndv(send));
        let rts = RtsBody {
            len: buf.len() as u64,
            pid: self.card.pid,
            addr: exposed.as_ref().map_or(buf.as_ptr() as u64, |e| e.addr),
            rkey: exposed.as_ref().map_or(0, |e| e.rkey),
        };
        let h = Header {
            kind: Kind::Rts,
            tag,
            ctx,
            src: src_rank,
            from: self.me.to_u64(),
            word: id,
        };
        if let Err(e) = self.push(r, to, &[&h.encode()[..], &rts.encode()]) {
            if let Some(e) = &exposed {
                r.release(e);
            }
            self.reqs.remove(id);
            return Err(e);
        }
        Ok(SendStart::Pending(id))
    }

    pub(super) fn finish_send(&mut self, r: &mut Routes<'_>, id: u64, result: Result<Status>) {
        let exposed = match self.reqs.get_mut(id) {
            Some(ReqState::SendRndv(s)) | Some(ReqState::SendStream { send: s, .. }) => s.exposed,
            _ => return,
        };
        if let Some((addr, len, rkey)) = exposed {
            r.release(&RemoteBuf { addr, len, rkey });
        }
        if matches!(self.reqs.get_mut(id), Some(ReqState::SendStream { .. })) {
            self.streaming -= 1;
        }
        self.set(id, ReqState::Done(result));
    }

    /// Pushes fragments of streaming sends (CMA refused) while the receivers' queues take them.
    pub(super) fn stream_fragments(&mut self, r: &mut Routes<'_>) -> Result<bool> {
        let mut did = false;
        let ids: Vec<u64> = self
            .reqs
            .iter_mut()
            .filter(|(_, st)| matches!(st, ReqState::SendStream { .. }))
            .map(|(id, _)| id)
            .collect();
        for id in ids {
            let Some(ReqState::SendStream {
                send,
                recv_req,
                sent,
            }) = self.reqs.get_mut(id)
            else {
                continue;
            };
            let (send, recv_req, off) = (*send, *recv_req, *sent);
            let h = Header {
                kind: Kind::Frag,
                tag: 0,
                ctx: 0,
                src: 0,
                from: self.me.to_u64(),
                word: recv_req,
            };
            let Link::Shm(link) = &self.peer(send.to)?.link else {
                continue;
            };
            // SAFETY: the send buffer stays borrowed by the request until it completes.
            let data = unsafe { std::slice::from_raw_parts(send.ptr, send.len) };
            let reached = r.shm.stream(link, &h.encode()[..], data, off)?;
            did |= reached > off;
            if reached == send.len {
                self.finish_send(r, id, Ok(send.status));
            } else if let Some(ReqState::SendStream { sent, .. }) = self.reqs.get_mut(id) {
                *sent = reached;
            }
        }
        Ok(did)
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn start_pull(
        &mut self,
        r: &mut Routes<'_>,
        id: u64,
        recv: PostedRecv,
        src: u32,
        tag: i32,
        from: Gpid,
        sender_req: u64,
        rts: RtsBody,
    ) {
        let len = rts.len as usize;
        let status = Status {
            source: src as i32,
            tag,
            count: len,
        };
        if len > recv.cap {
            self.set(
                id,
                ReqState::Done(Err(CommError::Truncated {
                    message_len: len,
                    buffer_len: recv.cap,
                    sender: src as i32,
                    tag,
                    received: 0,
                })),
            );
            // The sender's part is done either way: release it.
            if let Err(e) = self.send_ctl(r, from, Kind::Fin, sender_req, &[]) {
                tracing::debug!("could not release the sender {from} after a truncation: {e}");
            }
            return;
        }
        let result = self.pull(r, id, recv.buf, status, from, sender_req, rts);
        if let Err(e) = result {
            self.set(id, ReqState::Done(Err(e)));
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn pull(
        &mut self,
        r: &mut Routes<'_>,
        id: u64,
        buf: *mut u8,
        status: Status,
        from: Gpid,
        sender_req: u64,
        rts: RtsBody,
    ) -> Result<()> {
        let pull = Pull {
            from,
            rts,
            dst: buf,
            len: status.count,
            token: id,
        };
        let link = &self.peer(from)?.link;
        // SAFETY: `buf` holds at least `status.count` bytes (checked against the posted
        // capacity) and stays borrowed by request `id` until it finishes, which is when the
        // pull has ended.
        match unsafe { r.pull(link, &pull)? } {
            Pulled::Started => {
                self.set(
                    id,
                    ReqState::RecvPulling {
                        status,
                        from,
                        sender_req,
                    },
                );
                Ok(())
            }
            Pulled::Done => {
                self.set(id, ReqState::Done(Ok(status)));
                self.send_ctl(r, from, Kind::Fin, sender_req, &[])
            }
            Pulled::Stream => {
                self.set(
                    id,
                    ReqState::RecvFrags {
                        buf,
                        got: 0,
                        status,
                        from,
                    },
                );
                self.send_ctl(r, from, Kind::Cts, sender_req, &id.to_le_bytes())
            }
        }
    }

    /// A fragment of a message pushed through the queue (CMA refused) for receive `id`.
    pub(super) fn handle_fragment(&mut self, id: u64, body: &[u8]) -> Result<()> {
        let mut rd = Reader::new(body);
        let offset = rd.u64()? as usize;
        let data = rd.rest();
        let done = match self.reqs.get_mut(id) {
            Some(ReqState::RecvFrags {
                buf, got, status, ..
            }) => {
                if offset
                    .checked_add(data.len())
                    .is_none_or(|end| end > status.count)
                {
                    return Err(CommError::Malformed(format!(
                        "fragment [{offset}, +{}) outside a {}-byte message",
                        data.len(),
                        status.count
                    )));
                }
                // SAFETY: the receive buffer holds status.count bytes (checked against the
                // posted capacity at match time); the range was checked above.
                unsafe {
                    std::ptr::copy_nonoverlapping(data.as_ptr(), buf.add(offset), data.len())
                };
                *got += data.len();
                (*got == status.count).then_some(*status)
            }
            _ => {
                return Err(CommError::Malformed(format!(
                    "fragment for unknown receive {id:#x}"
                )))
            }
        };
        if let Some(status) = done {
            self.set(id, ReqState::Done(Ok(status)));
        }
        Ok(())
    }

    /// The fabric's read for receive `token` has put every byte in place.
    pub(super) fn read_done(&mut self, r: &mut Routes<'_>, token: u64) {
        if let Some(ReqState::RecvPulling {
            status,
            from,
            sender_req,
        }) = self.reqs.get_mut(token)
        {
            let (status, from, sender_req) = (*status, *from, *sender_req);
            self.set(token, ReqState::Done(Ok(status)));
            if let Err(e) = self.send_ctl(r, from, Kind::Fin, sender_req, &[]) {
                tracing::debug!("could not send FIN to {from}: {e}");
            }
        }
    }
}
