//! The provider interface on the verbs objects.

use super::attrs::*;
use super::chunks;
use super::post::blank_wr;
use super::qp::{QpKind, QueuePair};
use super::rc::{Pending, RcQp};
use super::slots::Sender;
use super::{IbProvider, CHUNK, SQ_DEPTH};
use crate::card::AddressCard;
use crate::config::ProviderKind;
use crate::error::{Result, VerbsError};
use crate::provider::{Provider, RcEndpoint, RcEvent};
use crate::RemoteBuf;
use rdma_sys::*;
use std::collections::VecDeque;
use std::os::fd::{AsRawFd, BorrowedFd, RawFd};
use std::time::Duration;

fn no_qp(qpn: u32) -> VerbsError {
    VerbsError::InvalidArgument(format!("no RC queue pair {qpn}"))
}

fn mismatch(card: &AddressCard) -> VerbsError {
    VerbsError::ProviderMismatch {
        card: card.provider().to_string(),
        local: "ib".into(),
    }
}

impl IbProvider {
    fn queue_rdma(&mut self, qpn: u32, len: usize, work: Pending) -> Result<()> {
        if len > u32::MAX as usize {
            return Err(VerbsError::TooLarge {
                len,
                max: u32::MAX as usize,
            });
        }
        let q = self.qps.get_mut(&qpn).ok_or_else(|| no_qp(qpn))?;
        q.pending.push_back(work);
        self.try_post(qpn)
    }

    /// Fails what a destroyed queue pair still owed: RDMA posted, and RDMA never started.
    fn abort_rdma(&mut self, qpn: u32, pending: VecDeque<Pending>) {
        let stale: Vec<u64> = self
            .ops
            .iter()
            .filter(|(_, o)| o.qpn == qpn)
            .map(|(k, _)| *k)
            .collect();
        for k in stale {
            if let Some(o) = self.ops.remove(&k) {
                self.unregister(o.rkey_local);
                let error = VerbsError::RemoteAccess(format!(
                    "RDMA on queue pair {qpn} aborted: queue pair destroyed"
                ));
                self.rc_out.push(if o.write {
                    RcEvent::WriteFailed {
                        token: o.token,
                        error,
                    }
                } else {
                    RcEvent::ReadFailed {
                        token: o.token,
                        error,
                    }
                });
            }
        }
        for p in pending {
            let error = VerbsError::RemoteAccess(format!(
                "RDMA on queue pair {qpn} never started: queue pair destroyed"
            ));
            match p {
                Pending::Read { token, .. } => {
                    self.rc_out.push(RcEvent::ReadFailed { token, error })
                }
                Pending::Write { token, .. } => {
                    self.rc_out.push(RcEvent::WriteFailed { token, error })
                }
                Pending::Chunk(_) => {}
            }
        }
    }
}

impl Provider for IbProvider {
    fn kind(&self) -> ProviderKind {
        ProviderKind::Ib
    }

    fn card(&self) -> AddressCard {
        AddressCard::Ib(self.card)
    }

    fn ud_mtu(&self) -> usize {
        self.ud_payload
    }

    fn ud_send(&mut self, to: &AddressCard, datagram: &[u8]) -> Result<()> {
        let AddressCard::Ib(a) = to else {
            return Err(mismatch(to));
        };
        if datagram.len() > self.ud_payload {
            return Err(VerbsError::TooLarge {
                len: datagram.len(),
                max: self.ud_payload,
            });
        }
        let ah = self.ah_for(a)?.as_ptr();
        if self.slots.ud_in_flight() >= SQ_DEPTH {
            return Ok(()); // unreliable by contract: the channel retransmits
        }
        let Some(slot) = self.slots.take(Sender::Ud) else {
            return Ok(());
        };
        let off = self.slab.layout().send_off(slot as usize);
        self.slab.write(off, datagram);
        let mut sge = self.slab.sge(off, datagram.len());
        let mut wr = blank_wr(
            wr_id(WrKind::UdSend, slot as u64),
            &mut sge,
            ibv_wr_opcode::IBV_WR_SEND,
        );
        wr.wr.ud = ud_t {
            ah,
            remote_qpn: a.qpn,
            remote_qkey: QKEY,
        };
        // SAFETY: the datagram is in a send slot of the registered slab, lent until the send
        // completes; the address handle stays cached for the provider's life, and the UD queue
        // pair is dropped before the handles.
        if let Err(e) = unsafe { self.ud_qp.post_send(&mut wr) } {
            self.slots.give_back(Sender::Ud, slot);
            return Err(e);
        }
        Ok(())
    }

    fn ud_poll(&mut self, out: &mut Vec<Vec<u8>>) -> Result<()> {
        self.drain_cq();
        out.append(&mut self.ud_in);
        Ok(())
    }

    fn rc_create(&mut self) -> Result<RcEndpoint> {
        let mut qp = QueuePair::new(
            self.pd.clone(),
            self.cq.clone(),
            QpKind::Rc(self.srq.clone()),
            SQ_DEPTH,
        )?;
        // On failure the new queue pair is dropped, so destroyed.
        qp.modify("ibv_modify_qp(INIT)", rc_init(self.port))?;
        let qpn = qp.qp_num();
        let psn = self.random_psn();
        self.qps.insert(qpn, RcQp::new(qp, psn));
        Ok(RcEndpoint { qpn, psn })
    }

    fn rc_psn(&self, qp: u32) -> u32 {
        self.qps.get(&qp).map(|q| q.psn).unwrap_or(0)
    }

    fn rc_connect(
        &mut self,
        qpn: u32,
        remote_card: &AddressCard,
        remote: RcEndpoint,
    ) -> Result<()> {
        let AddressCard::Ib(ra) = *remote_card else {
            return Err(mismatch(remote_card));
        };
        let path = Path {
            dlid: ra.lid,
            dgid: ra.gid,
            global: ra.global || self.card.global,
            sgid_index: self.sgid_index,
            port: self.port,
        };
        let rtr = rc_rtr(&path, self.active_mtu, remote.qpn, remote.psn, &self.rc);
        let q = self.qps.get_mut(&qpn).ok_or_else(|| no_qp(qpn))?;
        let rts = rc_rts(q.psn, &self.rc);
        q.qp.modify("ibv_modify_qp(RTR)", rtr)?;
        q.qp.modify("ibv_modify_qp(RTS)", rts)?;
        q.connected = true;
        self.try_post(qpn)
    }

    fn rc_destroy(&mut self, qpn: u32) {
        if let Some(RcQp { qp, pending, .. }) = self.qps.remove(&qpn) {
            // Destroyed first: the adapter is done with its slots and registrations after this.
            drop(qp);
            self.slots.release_qp(qpn);
            self.abort_rdma(qpn, pending);
        }
    }

    fn rc_send(&mut self, qpn: u32, parts: &[&[u8]]) -> Result<()> {
        let q = self.qps.get_mut(&qpn).ok_or_else(|| no_qp(qpn))?;
        q.pending.extend(
            chunks::split(&parts.concat(), CHUNK)
                .into_iter()
                .map(Pending::Chunk),
        );
        self.try_post(qpn)
    }

    fn rc_poll(&mut self, out: &mut Vec<RcEvent>) -> Result<()> {
        self.drain_cq();
        out.append(&mut self.rc_out);
        Ok(())
    }

    fn rc_flushed(&self) -> bool {
        self.qps.values().all(RcQp::flushed)
    }

    fn rc_sent(&self, qp: u32) -> bool {
        self.qps.get(&qp).is_none_or(RcQp::posted)
    }

    fn expose(&mut self, ptr: *const u8, len: usize) -> Result<RemoteBuf> {
        let (_, rkey) = self.register(ptr as u64, len as u64)?;
        Ok(RemoteBuf {
            addr: ptr as u64,
            len: len as u64,
            rkey,
        })
    }

    fn release(&mut self, buf: &RemoteBuf) {
        self.unregister(buf.rkey);
    }

    unsafe fn rc_read(
        &mut self,
        qpn: u32,
        remote: RemoteBuf,
        local: *mut u8,
        len: usize,
        token: u64,
    ) -> Result<()> {
        let work = Pending::Read {
            remote,
            local: local as usize,
            len,
            token,
        };
        self.queue_rdma(qpn, len, work)
    }

    unsafe fn rc_write(
        &mut self,
        qpn: u32,
        remote: RemoteBuf,
        local: *const u8,
        len: usize,
        token: u64,
    ) -> Result<()> {
        let work = Pending::Write {
            remote,
            local: local as usize,
            len,
            token,
        };
        self.queue_rdma(qpn, len, work)
    }

    fn wait(&mut self, timeout: Duration, bell: Option<BorrowedFd<'_>>) {
        if !self.armed {
            if self.cq.arm().is_err() {
                crate::provider::sleep_or_bell(timeout.min(Duration::from_millis(1)), bell);
                return;
            }
            self.armed = true;
        }
        // Completions that arrived before arming raise no event: look once more.
        if self.drain_cq() > 0 || !self.ud_in.is_empty() || !self.rc_out.is_empty() {
            return;
        }
        let pfd = |fd: RawFd| libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        };
        let mut fds = [pfd(self.cq.channel().fd()), pfd(-1)];
        if let Some(b) = bell {
            fds[1] = pfd(b.as_raw_fd());
        }
        let ms = crate::provider::poll_ms(timeout);
        // SAFETY: a valid array of two pollfd (a negative fd is ignored by poll).
        let n = unsafe { libc::poll(fds.as_mut_ptr(), 2, ms) };
        if n > 0 && fds[0].revents != 0 && self.cq.channel().take_event() {
            self.armed = false;
        }
    }
}
