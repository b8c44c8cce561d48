//! Posting queued RC work (message pieces, RDMA reads and writes) as the send queue and the send
//! slots allow.

use super::attrs::{wr_id, WrKind};
use super::rc::{Op, Pending};
use super::slots::Sender;
use super::{IbProvider, SQ_DEPTH};
use crate::error::Result;
use crate::provider::RcEvent;
use rdma_sys::*;

/// A signalled work request of one scatter entry.
pub(super) fn blank_wr(id: u64, sge: &mut ibv_sge, opcode: ibv_wr_opcode::Type) -> ibv_send_wr {
    // SAFETY: ibv_send_wr is plain C data (pointers, integers, unions thereof); zero is valid.
    let mut wr: ibv_send_wr = unsafe { std::mem::zeroed() };
    wr.wr_id = id;
    wr.sg_list = sge;
    wr.num_sge = 1;
    wr.opcode = opcode;
    wr.send_flags = ibv_send_flags::IBV_SEND_SIGNALED.0;
    wr
}

impl IbProvider {
    /// Post what the queue pair's send queue and the slot pool allow, in order.
    pub(super) fn try_post(&mut self, qpn: u32) -> Result<()> {
        loop {
            let Some(q) = self.qps.get_mut(&qpn) else {
                return Ok(());
            };
            if !q.connected || q.outstanding >= SQ_DEPTH {
                return Ok(());
            }
            let Some(front) = q.pending.pop_front() else {
                return Ok(());
            };
            match front {
                Pending::Chunk(bytes) => {
                    let Some(slot) = self.slots.take(Sender::Rc(qpn)) else {
                        q.pending.push_front(Pending::Chunk(bytes));
                        return Ok(());
                    };
                    let off = self.slab.layout().send_off(slot as usize);
                    self.slab.write(off, &bytes);
                    let mut sge = self.slab.sge(off, bytes.len());
                    let mut wr = blank_wr(
                        wr_id(WrKind::RcSend, slot as u64),
                        &mut sge,
                        ibv_wr_opcode::IBV_WR_SEND,
                    );
                    // SAFETY: the piece is in a send slot of the registered slab, lent to this
                    // queue pair until the send completes or the queue pair is destroyed.
                    if let Err(e) = unsafe { q.qp.post_send(&mut wr) } {
                        self.slots.give_back(Sender::Rc(qpn), slot);
                        return Err(e);
                    }
                    q.outstanding += 1;
                }
                Pending::Read {
                    remote,
                    local,
                    len,
                    token,
                }
                | Pending::Write {
                    remote,
                    local,
                    len,
                    token,
                } => {
                    let write = matches!(front, Pending::Write { .. });
                    let (lkey, rkey_local) = match self.register(local as u64, len as u64) {
                        Ok(k) => k,
                        Err(error) => {
                            self.rc_out.push(if write {
                                RcEvent::WriteFailed { token, error }
                            } else {
                                RcEvent::ReadFailed { token, error }
                            });
                            continue;
                        }
                    };
                    let op = self.next_op;
                    self.next_op += 1;
                    let mut sge = ibv_sge {
                        addr: local as u64,
                        length: len as u32,
                        lkey,
                    };
                    let (kind, opcode) = if write {
                        (WrKind::Write, ibv_wr_opcode::IBV_WR_RDMA_WRITE)
                    } else {
                        (WrKind::Read, ibv_wr_opcode::IBV_WR_RDMA_READ)
                    };
                    let mut wr = blank_wr(wr_id(kind, op), &mut sge, opcode);
                    wr.wr.rdma = rdma_t {
                        remote_addr: remote.addr,
                        rkey: remote.rkey,
                    };
                    let Some(q) = self.qps.get_mut(&qpn) else {
                        self.unregister(rkey_local);
                        return Ok(());
                    };
                    // SAFETY: the local buffer is registered above and valid until completion
                    // (contract of rc_read/rc_write).
                    if let Err(e) = unsafe { q.qp.post_send(&mut wr) } {
                        self.unregister(rkey_local);
                        return Err(e);
                    }
                    q.outstanding += 1;
                    self.ops.insert(
                        op,
                        Op {
                            qpn,
                            token,
                            rkey_local,
                            write,
                        },
                    );
                }
            }
        }
    }
}
