//! The `ib` provider on libibverbs (`rdma-sys`): one device port, a protection domain, one
//! completion queue with a completion channel, a UD queue pair with cached address handles, RC
//! queue pairs on a shared receive queue, a registration cache, SEND/RECV, RDMA READ and WRITE.
//!
//! Every verbs object has an owning type (`context`, `pd`, `cq`, `srq`, `qp`, `mr`, `ah`) whose
//! `Drop` destroys it and which holds an `Arc` of the objects it was made from, so nothing is
//! destroyed before what depends on it.
//!
//! Messages over RC are cut into `CHUNK`-byte sends (`chunks`) copied into send slots (`slots`)
//! of one pre-registered slab (`slab`); the receiver reassembles in order (RC is ordered).
//!
//! Written against the verbs API; on this project's machines there is no HCA, so it has only been
//! compiled and unit-tested in its pure parts (`attrs`, `chunks`, `slots`, `slab`'s layout,
//! `fail`, `layout`, `crate::regcache`).

mod ah;
pub mod attrs;
mod chunks;
mod completion;
mod context;
mod cq;
mod device;
#[cfg(test)]
mod device_tests;
mod dl;
mod fail;
#[cfg(test)]
mod layout;
mod mr;
mod pd;
mod post;
mod provider_impl;
mod qp;
mod rc;
mod slab;
mod slots;
mod srq;

pub use device::devices;

use crate::card::{AddressCard, IbAddr};
use crate::config::FabricConfig;
use crate::error::{Result, VerbsError};
use crate::provider::RcEvent;
use crate::regcache::RegCache;
use ah::AddressHandle;
use attrs::*;
use context::Context;
use cq::{CompletionChannel, CompletionQueue};
use device::DeviceList;
use dl::verbs;
use mr::MemoryRegion;
use pd::ProtectionDomain;
use qp::{QpKind, QueuePair};
use rc::{Op, RcQp};
use rdma_sys::*;
use slab::{Slab, SlabLayout};
use slots::SendSlots;
use srq::SharedReceiveQueue;
use std::collections::HashMap;
use std::ptr::null_mut;
use std::sync::Arc;

const UD_RECVS: usize = 128;
const SRQ_RECVS: usize = 256;
const SEND_SLOTS: usize = 256;
/// Bytes of one shared-receive buffer, so of one RC piece (flag byte included).
const CHUNK: usize = 8192;
const SQ_DEPTH: u32 = 128;
const CQ_DEPTH: i32 = 4096;
const REG_CACHE_UNUSED: usize = 32;

/// The provider. The verbs objects drop in field order, queue pairs first; the Arcs they hold
/// keep the shared receive queue, completion queue, channel, protection domain and context
/// alive until the last user is gone, whatever the order.
pub struct IbProvider {
    qps: HashMap<u32, RcQp>,
    ud_qp: QueuePair,
    ahs: HashMap<(u16, [u8; 16], bool), AddressHandle>,
    srq: Arc<SharedReceiveQueue>,
    cq: Arc<CompletionQueue>,
    pd: Arc<ProtectionDomain>,
    // Registrations of user memory and the slab outlive the queue pairs that may still use them.
    regs: RegCache<MemoryRegion>,
    slab: Slab,
    slots: SendSlots,
    port: u8,
    sgid_index: u8,
    active_mtu: ibv_mtu::Type,
    rc: RcParams,
    card: IbAddr,
    ud_payload: usize,
    ops: HashMap<u64, Op>,
    next_op: u64,
    ud_in: Vec<Vec<u8>>,
    rc_out: Vec<RcEvent>,
    armed: bool,
    rng: u64,
}

fn wc_status(s: ibv_wc_status::Type) -> String {
    // SAFETY: ibv_wc_status_str returns a static NUL-terminated string for any value.
    unsafe { std::ffi::CStr::from_ptr((verbs().ibv_wc_status_str)(s)) }
        .to_string_lossy()
        .into_owned()
}

impl IbProvider {
    pub fn open(cfg: &FabricConfig) -> Result<IbProvider> {
        let list = DeviceList::get()?;
        if list.len() == 0 {
            return Err(VerbsError::NoDevice);
        }
        let want = std::env::var("IBDYN_IB_DEVICE").ok();
        let want_port: Option<u8> = std::env::var("IBDYN_IB_PORT")
            .ok()
            .and_then(|p| p.parse().ok());
        for i in 0..list.len() {
            if want.as_deref().is_some_and(|w| w != list.name(i)) {
                continue;
            }
            let Ok(ctx) = list.open(i) else {
                continue;
            };
            let ports = ctx.query_device().map(|d| d.phys_port_cnt).unwrap_or(0);
            let active = (1..=ports)
                .filter(|p| !matches!(want_port, Some(w) if w != *p))
                .find(|p| {
                    ctx.query_port(*p)
                        .map(|a| a.state == ibv_port_state::IBV_PORT_ACTIVE)
                        .unwrap_or(false)
                });
            if let Some(port) = active {
                return Self::on_port(cfg, Arc::new(ctx), port);
            }
        }
        Err(VerbsError::Verb {
            verb: "ibv_open_device",
            detail: "no device with an active port (`ibv_devinfo` shows the port states; \
                     IBDYN_IB_DEVICE and IBDYN_IB_PORT choose one)"
                .into(),
        })
    }

    fn on_port(cfg: &FabricConfig, ctx: Arc<Context>, port: u8) -> Result<IbProvider> {
        let pattr = ctx.query_port(port)?;
        let dattr = ctx.query_device()?;
        let roce = pattr.link_layer == LINK_LAYER_ETHERNET;
        let gids: Vec<[u8; 16]> = (0..pattr.gid_tbl_len.clamp(0, 256))
            .map_while(|i| ctx.query_gid(port, i).ok())
            .collect();
        let sgid_index = choose_gid_index(&gids, roce);
        let gid = gids.get(sgid_index).copied().unwrap_or([0; 16]);
        let ud_payload = mtu_bytes(pattr.active_mtu).clamp(256, 4096).min(cfg.ud_mtu);
        let rd_atomic = dattr.max_qp_rd_atom.clamp(1, 16) as u8;
        let seed = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(1);

        // On an error below, what was made so far is dropped, dependants first.
        let pd = Arc::new(ProtectionDomain::new(ctx.clone())?);
        let channel = Arc::new(CompletionChannel::new(ctx)?);
        let cq = Arc::new(CompletionQueue::new(channel, CQ_DEPTH)?);
        let srq = Arc::new(SharedReceiveQueue::new(pd.clone(), SRQ_RECVS as u32)?);
        let mut ud_qp = QueuePair::new(
            pd.clone(),
            cq.clone(),
            QpKind::Ud {
                recv_depth: UD_RECVS as u32,
            },
            SQ_DEPTH,
        )?;
        for step in ud_steps(port, 0) {
            ud_qp.modify("ibv_modify_qp(UD)", step)?;
        }
        let layout = SlabLayout {
            ud_payload,
            grh: GRH_BYTES,
            ud_recvs: UD_RECVS,
            piece: CHUNK,
            srq_recvs: SRQ_RECVS,
            send_slots: SEND_SLOTS,
        };
        let slab = Slab::new(pd.clone(), layout)?;
        let mut p = IbProvider {
            qps: HashMap::new(),
            card: IbAddr {
                lid: pattr.lid,
                gid,
                qpn: ud_qp.qp_num(),
                global: roce,
            },
            ud_qp,
            ahs: HashMap::new(),
            srq,
            cq,
            pd,
            regs: RegCache::new(REG_CACHE_UNUSED),
            slab,
            slots: SendSlots::new(SEND_SLOTS as u32),
            port,
            sgid_index: sgid_index as u8,
            active_mtu: pattr.active_mtu,
            rc: RcParams {
                rd_atomic,
                ..RcParams::default()
            },
            ud_payload,
            ops: HashMap::new(),
            next_op: 1,
            ud_in: Vec::new(),
            rc_out: Vec::new(),
            armed: false,
            rng: seed ^ (std::process::id() as u64) << 32 | 1,
        };
        for i in 0..UD_RECVS {
            p.post_ud_recv(i)?;
        }
        for i in 0..SRQ_RECVS {
            p.post_srq_recv(i)?;
        }
        tracing::debug!(
            "ib provider on port {port}: {} (link {})",
            AddressCard::Ib(p.card),
            device::link_layer_name(pattr.link_layer)
        );
        Ok(p)
    }

    fn post_ud_recv(&mut self, i: usize) -> Result<()> {
        let l = self.slab.layout();
        let mut sge = self.slab.sge(l.ud_off(i), l.ud_slot());
        let mut wr = ibv_recv_wr {
            wr_id: wr_id(WrKind::UdRecv, i as u64),
            next: null_mut(),
            sg_list: &mut sge,
            num_sge: 1,
        };
        // SAFETY: the buffer is in the registered slab, which outlives the queue pair.
        unsafe { self.ud_qp.post_recv(&mut wr) }
    }

    fn post_srq_recv(&mut self, i: usize) -> Result<()> {
        let l = self.slab.layout();
        let mut sge = self.slab.sge(l.srq_off(i), CHUNK);
        let mut wr = ibv_recv_wr {
            wr_id: wr_id(WrKind::RcRecv, i as u64),
            next: null_mut(),
            sg_list: &mut sge,
            num_sge: 1,
        };
        // SAFETY: as in post_ud_recv, on the shared receive queue.
        unsafe { self.srq.post_recv(&mut wr) }
    }

    /// The cached address handle to `a`'s port.
    fn ah_for(&mut self, a: &IbAddr) -> Result<&AddressHandle> {
        let global = a.global || self.card.global;
        let key = (a.lid, a.gid, global);
        if !self.ahs.contains_key(&key) {
            let path = Path {
                dlid: a.lid,
                dgid: a.gid,
                global,
                sgid_index: self.sgid_index,
                port: self.port,
            };
            let ah = AddressHandle::new(self.pd.clone(), &path)?;
            self.ahs.insert(key, ah);
        }
        Ok(&self.ahs[&key])
    }

    /// Registers (or finds registered) `[addr, addr+len)`; returns its (lkey, rkey).
    fn register(&mut self, addr: u64, len: u64) -> Result<(u32, u32)> {
        let pd = &self.pd;
        let access = (ibv_access_flags::IBV_ACCESS_LOCAL_WRITE
            | ibv_access_flags::IBV_ACCESS_REMOTE_READ
            | ibv_access_flags::IBV_ACCESS_REMOTE_WRITE)
            .0 as i32;
        let mr = self.regs.acquire(addr, len.max(1), |a, l| {
            // SAFETY: the caller guarantees [addr, addr+len) is mapped memory that stays valid
            // while registered (contract of expose/read/write).
            unsafe {
                MemoryRegion::register(pd.clone(), a as *mut u8, l as usize, access, "ibv_reg_mr")
            }
        })?;
        Ok((mr.lkey(), mr.rkey()))
    }

    /// Drops one use of the registration with `rkey`; evicted registrations are deregistered.
    fn unregister(&mut self, rkey: u32) {
        drop(self.regs.release(|m| m.rkey() == rkey));
    }

    fn random_psn(&mut self) -> u32 {
        self.rng ^= self.rng << 13;
        self.rng ^= self.rng >> 7;
        self.rng ^= self.rng << 17;
        psn24(self.rng as u32)
    }
}
