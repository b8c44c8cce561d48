//! Completions: received datagrams and pieces, finished sends, RDMA results.

use super::attrs::{wr_decode, WrKind, GRH_BYTES};
use super::slots::Sender;
use super::{wc_status, IbProvider, CHUNK};
use crate::error::VerbsError;
use crate::provider::RcEvent;
use rdma_sys::*;

impl IbProvider {
    /// Move completions into `ud_in` / `rc_out`; returns how many were handled.
    pub(super) fn drain_cq(&mut self) -> usize {
        let mut total = 0;
        // SAFETY: ibv_wc is plain C data; zero is valid.
        let mut wcs: [ibv_wc; 32] = unsafe { std::mem::zeroed() };
        loop {
            let n = self.cq.poll(&mut wcs);
            if n <= 0 {
                if n < 0 {
                    tracing::debug!("ibv_poll_cq failed: {n}");
                }
                break;
            }
            for wc in &wcs[..n as usize] {
                self.on_completion(wc);
            }
            total += n as usize;
        }
        let busy: Vec<u32> = self
            .qps
            .iter()
            .filter(|(_, q)| !q.pending.is_empty())
            .map(|(k, _)| *k)
            .collect();
        for qpn in busy {
            if let Err(e) = self.try_post(qpn) {
                self.break_qp(qpn, e);
            }
        }
        total
    }

    pub(super) fn break_qp(&mut self, qpn: u32, error: VerbsError) {
        if self.qps.contains_key(&qpn) {
            self.rc_out.push(RcEvent::Broken { qp: qpn, error });
        }
    }

    fn on_completion(&mut self, wc: &ibv_wc) {
        let ok = wc.status == ibv_wc_status::IBV_WC_SUCCESS;
        let Some((kind, idx)) = wr_decode(wc.wr_id) else {
            return;
        };
        let idx = idx as usize;
        match kind {
            WrKind::UdRecv => {
                if ok {
                    let l = *self.slab.layout();
                    let n = (wc.byte_len as usize).min(l.ud_slot());
                    if n >= GRH_BYTES {
                        let datagram = self.slab.bytes(l.ud_off(idx) + GRH_BYTES, n - GRH_BYTES);
                        self.ud_in.push(datagram.to_vec());
                    }
                }
                if wc.status != ibv_wc_status::IBV_WC_WR_FLUSH_ERR {
                    if let Err(e) = self.post_ud_recv(idx) {
                        tracing::debug!("repost UD receive: {e}");
                    }
                }
            }
            WrKind::RcRecv => {
                if ok {
                    let off = self.slab.layout().srq_off(idx);
                    let n = (wc.byte_len as usize).min(CHUNK);
                    if let Some(q) = self.qps.get_mut(&wc.qp_num) {
                        if let Some(data) = q.reasm.push(self.slab.bytes(off, n)) {
                            self.rc_out.push(RcEvent::Recv {
                                qp: wc.qp_num,
                                data,
                            });
                        }
                    }
                }
                if let Err(e) = self.post_srq_recv(idx) {
                    tracing::debug!("repost SRQ receive: {e}");
                }
            }
            WrKind::UdSend => {
                self.slots.give_back(Sender::Ud, idx as u32);
                if !ok {
                    tracing::debug!("UD send completion: {}", wc_status(wc.status));
                }
            }
            WrKind::RcSend => {
                // Slots of destroyed queue pairs were already returned in rc_destroy.
                if let Some(q) = self.qps.get_mut(&wc.qp_num) {
                    q.outstanding = q.outstanding.saturating_sub(1);
                    self.slots.give_back(Sender::Rc(wc.qp_num), idx as u32);
                    if !ok {
                        let e = VerbsError::Verb {
                            verb: "RC send completion",
                            detail: wc_status(wc.status),
                        };
                        self.break_qp(wc.qp_num, e);
                    }
                }
            }
            WrKind::Read | WrKind::Write => self.on_rdma_completion(wc, idx as u64, ok),
        }
    }

    fn on_rdma_completion(&mut self, wc: &ibv_wc, op: u64, ok: bool) {
        let Some(op) = self.ops.remove(&op) else {
            return;
        };
        self.unregister(op.rkey_local);
        if let Some(q) = self.qps.get_mut(&op.qpn) {
            q.outstanding = q.outstanding.saturating_sub(1);
        }
        let ev = match (ok, op.write) {
            (true, false) => RcEvent::ReadDone { token: op.token },
            (true, true) => RcEvent::WriteDone { token: op.token },
            (false, w) => {
                let error = VerbsError::RemoteAccess(wc_status(wc.status));
                if w {
                    RcEvent::WriteFailed {
                        token: op.token,
                        error,
                    }
                } else {
                    RcEvent::ReadFailed {
                        token: op.token,
                        error,
                    }
                }
            }
        };
        self.rc_out.push(ev);
        if !ok {
            // An RC error moves the queue pair to the error state: it is unusable now.
            let e = VerbsError::Verb {
                verb: "RDMA completion",
                detail: wc_status(wc.status),
            };
            self.break_qp(op.qpn, e);
        }
    }
}
