//! The `ib` provider on libibverbs (`rdma-sys`): one device port, a protection domain, one
//! completion queue with a completion channel, a UD queue pair with cached address handles, RC
//! queue pairs on a shared receive queue, a registration cache, SEND/RECV, RDMA READ and WRITE.
//!
//! Messages over RC are cut into `CHUNK`-byte sends (one flag byte marks the last piece) from a
//! pre-registered slab; the receiver reassembles in order (RC is ordered).
//!
//! Written against the verbs API; on this project's machines there is no HCA, so it has only been
//! compiled and unit-tested in its pure parts (see `attrs`, `layout`, `crate::regcache`).

pub mod attrs;
mod device;
mod dl;
#[cfg(test)]
mod layout;

pub use device::devices;

use crate::card::{AddressCard, IbAddr};
use crate::config::{FabricConfig, ProviderKind};
use crate::error::{Result, VerbsError};
use crate::provider::{Provider, RcEndpoint, RcEvent};
use crate::regcache::RegCache;
use crate::RemoteBuf;
use attrs::*;
use device::{query_device, query_gid, query_port, verb_err, verb_rc, DeviceList};
use dl::verbs;
use rdma_sys::*;
use std::collections::{HashMap, VecDeque};
use std::ptr::null_mut;
use std::time::Duration;

const UD_RECVS: usize = 128;
const SRQ_RECVS: usize = 256;
const SEND_SLOTS: usize = 256;
const CHUNK: usize = 8192;
const SQ_DEPTH: u32 = 128;
const CQ_DEPTH: i32 = 4096;
const REG_CACHE_UNUSED: usize = 32;

struct Mr {
    mr: *mut ibv_mr,
    lkey: u32,
    rkey: u32,
}

enum Pending {
    Chunk(Vec<u8>),
    Read {
        remote: RemoteBuf,
        local: usize,
        len: usize,
        token: u64,
    },
    Write {
        remote: RemoteBuf,
        local: usize,
        len: usize,
        token: u64,
    },
}

struct RcQp {
    qp: *mut ibv_qp,
    psn: u32,
    connected: bool,
    outstanding: u32,
    pending: VecDeque<Pending>,
    reasm: Vec<u8>,
    send_slots: Vec<u32>,
}

struct Op {
    qpn: u32,
    token: u64,
    rkey_local: u32,
    write: bool,
}

pub struct IbProvider {
    ctx: *mut ibv_context,
    pd: *mut ibv_pd,
    channel: *mut ibv_comp_channel,
    cq: *mut ibv_cq,
    srq: *mut ibv_srq,
    ud_qp: *mut ibv_qp,
    port: u8,
    sgid_index: u8,
    active_mtu: ibv_mtu::Type,
    rc: RcParams,
    card: IbAddr,
    ud_payload: usize,
    slab: Vec<u8>,
    slab_mr: *mut ibv_mr,
    free_send: Vec<u32>,
    ud_outstanding: u32,
    ahs: HashMap<(u16, [u8; 16], bool), *mut ibv_ah>,
    qps: HashMap<u32, RcQp>,
    regs: RegCache<Mr>,
    ops: HashMap<u64, Op>,
    next_op: u64,
    ud_in: Vec<Vec<u8>>,
    rc_out: Vec<RcEvent>,
    armed: bool,
    rng: u64,
}

// SAFETY: the verbs objects are only used through `&mut self`; libibverbs objects may be used from
// any thread as long as calls on one QP/CQ are not concurrent, which `&mut` guarantees.
unsafe impl Send for IbProvider {}

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
            // SAFETY: device pointer from the live list.
            let ctx = unsafe { (verbs().ibv_open_device)(list.device(i)) };
            if ctx.is_null() {
                continue;
            }
            let ports = query_device(ctx).map(|d| d.phys_port_cnt).unwrap_or(0);
            let active = (1..=ports)
                .filter(|p| !matches!(want_port, Some(w) if w != *p))
                .find(|p| {
                    query_port(ctx, *p)
                        .map(|a| a.state == ibv_port_state::IBV_PORT_ACTIVE)
                        .unwrap_or(false)
                });
            match active {
                Some(port) => return Self::on_port(cfg, ctx, port),
                None => {
                    // SAFETY: opened above, closed once.
                    unsafe { (verbs().ibv_close_device)(ctx) };
                }
            }
        }
        Err(VerbsError::Verb {
            verb: "ibv_open_device",
            detail: "no device with an active port".into(),
        })
    }

    fn on_port(cfg: &FabricConfig, ctx: *mut ibv_context, port: u8) -> Result<IbProvider> {
        let pattr = query_port(ctx, port)?;
        let dattr = query_device(ctx)?;
        let roce = pattr.link_layer == LINK_LAYER_ETHERNET;
        let gids: Vec<[u8; 16]> = (0..pattr.gid_tbl_len.clamp(0, 256))
            .map_while(|i| query_gid(ctx, port, i).ok())
            .collect();
        let sgid_index = choose_gid_index(&gids, roce);
        let gid = gids.get(sgid_index).copied().unwrap_or([0; 16]);
        let ud_payload = mtu_bytes(pattr.active_mtu).clamp(256, 4096).min(cfg.ud_mtu);
        let rd_atomic = dattr.max_qp_rd_atom.clamp(1, 16) as u8;
        let seed = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(1);
        let mut p = IbProvider {
            ctx,
            pd: null_mut(),
            channel: null_mut(),
            cq: null_mut(),
            srq: null_mut(),
            ud_qp: null_mut(),
            port,
            sgid_index: sgid_index as u8,
            active_mtu: pattr.active_mtu,
            rc: RcParams {
                rd_atomic,
                ..RcParams::default()
            },
            card: IbAddr {
                lid: pattr.lid,
                gid,
                qpn: 1,
                global: roce,
            },
            ud_payload,
            slab: Vec::new(),
            slab_mr: null_mut(),
            free_send: (0..SEND_SLOTS as u32).collect(),
            ud_outstanding: 0,
            ahs: HashMap::new(),
            qps: HashMap::new(),
            regs: RegCache::new(REG_CACHE_UNUSED),
            ops: HashMap::new(),
            next_op: 1,
            ud_in: Vec::new(),
            rc_out: Vec::new(),
            armed: false,
            rng: seed ^ (std::process::id() as u64) << 32 | 1,
        };
        // From here on Drop releases whatever was created.
        p.setup()?;
        tracing::debug!(
            "ib provider on port {port}: {} (link {})",
            AddressCard::Ib(p.card),
            device::link_layer_name(pattr.link_layer)
        );
        Ok(p)
    }

    fn setup(&mut self) -> Result<()> {
        // SAFETY (block): each call gets live objects created just before; results are checked.
        unsafe {
            self.pd = (verbs().ibv_alloc_pd)(self.ctx);
            if self.pd.is_null() {
                return Err(verb_err("ibv_alloc_pd"));
            }
            self.channel = (verbs().ibv_create_comp_channel)(self.ctx);
            if self.channel.is_null() {
                return Err(verb_err("ibv_create_comp_channel"));
            }
            self.cq = (verbs().ibv_create_cq)(self.ctx, CQ_DEPTH, null_mut(), self.channel, 0);
            if self.cq.is_null() {
                return Err(verb_err("ibv_create_cq"));
            }
            let mut sattr = ibv_srq_init_attr {
                srq_context: null_mut(),
                attr: ibv_srq_attr {
                    max_wr: SRQ_RECVS as u32,
                    max_sge: 1,
                    srq_limit: 0,
                },
            };
            self.srq = (verbs().ibv_create_srq)(self.pd, &mut sattr);
            if self.srq.is_null() {
                return Err(verb_err("ibv_create_srq"));
            }
            let mut init = ibv_qp_init_attr {
                qp_context: null_mut(),
                send_cq: self.cq,
                recv_cq: self.cq,
                srq: null_mut(),
                cap: ibv_qp_cap {
                    max_send_wr: SQ_DEPTH,
                    max_recv_wr: UD_RECVS as u32,
                    max_send_sge: 1,
                    max_recv_sge: 1,
                    max_inline_data: 0,
                },
                qp_type: ibv_qp_type::IBV_QPT_UD,
                sq_sig_all: 1,
            };
            self.ud_qp = (verbs().ibv_create_qp)(self.pd, &mut init);
            if self.ud_qp.is_null() {
                return Err(verb_err("ibv_create_qp(UD)"));
            }
            for (mut a, m) in ud_steps(self.port, 0) {
                verb_rc(
                    "ibv_modify_qp(UD)",
                    (verbs().ibv_modify_qp)(self.ud_qp, &mut a, m),
                )?;
            }
            self.card.qpn = (*self.ud_qp).qp_num;
        }
        self.slab =
            vec![
                0u8;
                self.ud_slot() * UD_RECVS + CHUNK * SRQ_RECVS + self.send_slot() * SEND_SLOTS
            ];
        let access = ibv_access_flags::IBV_ACCESS_LOCAL_WRITE.0 as i32;
        // SAFETY: the slab is never resized, so its memory stays put until dereg in Drop.
        self.slab_mr = unsafe {
            (verbs().ibv_reg_mr)(
                self.pd,
                self.slab.as_mut_ptr().cast(),
                self.slab.len(),
                access,
            )
        };
        if self.slab_mr.is_null() {
            return Err(verb_err("ibv_reg_mr(slab)"));
        }
        for i in 0..UD_RECVS {
            self.post_ud_recv(i)?;
        }
        for i in 0..SRQ_RECVS {
            self.post_srq_recv(i)?;
        }
        Ok(())
    }

    fn ud_slot(&self) -> usize {
        GRH_BYTES + self.ud_payload
    }
    fn send_slot(&self) -> usize {
        CHUNK.max(self.ud_payload)
    }
    fn ud_off(&self, i: usize) -> usize {
        i * self.ud_slot()
    }
    fn srq_off(&self, i: usize) -> usize {
        self.ud_slot() * UD_RECVS + i * CHUNK
    }
    fn send_off(&self, i: usize) -> usize {
        self.ud_slot() * UD_RECVS + CHUNK * SRQ_RECVS + i * self.send_slot()
    }
    fn lkey(&self) -> u32 {
        // SAFETY: slab_mr is a live registration.
        unsafe { (*self.slab_mr).lkey }
    }

    fn post_ud_recv(&mut self, i: usize) -> Result<()> {
        let mut sge = ibv_sge {
            addr: self.slab[self.ud_off(i)..].as_ptr() as u64,
            length: self.ud_slot() as u32,
            lkey: self.lkey(),
        };
        let mut wr = ibv_recv_wr {
            wr_id: wr_id(WrKind::UdRecv, i as u64),
            next: null_mut(),
            sg_list: &mut sge,
            num_sge: 1,
        };
        let mut bad = null_mut();
        // SAFETY: the sge points into the registered slab; wr lives for the call.
        verb_rc("ibv_post_recv(UD)", unsafe {
            ibv_post_recv(self.ud_qp, &mut wr, &mut bad)
        })
    }

    fn post_srq_recv(&mut self, i: usize) -> Result<()> {
        let mut sge = ibv_sge {
            addr: self.slab[self.srq_off(i)..].as_ptr() as u64,
            length: CHUNK as u32,
            lkey: self.lkey(),
        };
        let mut wr = ibv_recv_wr {
            wr_id: wr_id(WrKind::RcRecv, i as u64),
            next: null_mut(),
            sg_list: &mut sge,
            num_sge: 1,
        };
        let mut bad = null_mut();
        // SAFETY: as above, on the shared receive queue.
        verb_rc("ibv_post_srq_recv", unsafe {
            ibv_post_srq_recv(self.srq, &mut wr, &mut bad)
        })
    }

    fn ah_for(&mut self, a: &IbAddr) -> Result<*mut ibv_ah> {
        let global = a.global || self.card.global;
        if let Some(ah) = self.ahs.get(&(a.lid, a.gid, global)) {
            return Ok(*ah);
        }
        let path = Path {
            dlid: a.lid,
            dgid: a.gid,
            global,
            sgid_index: self.sgid_index,
            port: self.port,
        };
        let mut attr = ah_attr(&path);
        // SAFETY: pd is live; attr valid for the call.
        let ah = unsafe { (verbs().ibv_create_ah)(self.pd, &mut attr) };
        if ah.is_null() {
            return Err(verb_err("ibv_create_ah"));
        }
        self.ahs.insert((a.lid, a.gid, global), ah);
        Ok(ah)
    }

    fn register(&mut self, addr: u64, len: u64) -> Result<(u32, u32)> {
        let pd = self.pd;
        let access = (ibv_access_flags::IBV_ACCESS_LOCAL_WRITE
            | ibv_access_flags::IBV_ACCESS_REMOTE_READ
            | ibv_access_flags::IBV_ACCESS_REMOTE_WRITE)
            .0 as i32;
        let mr = self.regs.acquire(addr, len.max(1), |a, l| {
            // SAFETY: the caller guarantees [addr, addr+len) is mapped memory that stays valid
            // while registered (contract of expose/read/write).
            let mr =
                unsafe { (verbs().ibv_reg_mr)(pd, a as *mut libc::c_void, l as usize, access) };
            if mr.is_null() {
                return Err(verb_err("ibv_reg_mr"));
            }
            // SAFETY: mr is a fresh valid registration.
            let (lkey, rkey) = unsafe { ((*mr).lkey, (*mr).rkey) };
            Ok(Mr { mr, lkey, rkey })
        })?;
        Ok((mr.lkey, mr.rkey))
    }

    fn unregister(&mut self, rkey: u32) {
        for m in self.regs.release(|h| h.rkey == rkey) {
            // SAFETY: evicted registrations are no longer referenced.
            unsafe { (verbs().ibv_dereg_mr)(m.mr) };
        }
    }

    fn post_send_wr(qp: *mut ibv_qp, wr: &mut ibv_send_wr) -> Result<()> {
        let mut bad = null_mut();
        // SAFETY: wr and its sge are valid for the call; buffers are registered.
        verb_rc("ibv_post_send", unsafe { ibv_post_send(qp, wr, &mut bad) })
    }

    fn blank_wr(id: u64, sge: &mut ibv_sge, opcode: ibv_wr_opcode::Type) -> ibv_send_wr {
        // SAFETY: ibv_send_wr is plain C data (pointers, integers, unions thereof); zero is valid.
        let mut wr: ibv_send_wr = unsafe { std::mem::zeroed() };
        wr.wr_id = id;
        wr.sg_list = sge;
        wr.num_sge = 1;
        wr.opcode = opcode;
        wr.send_flags = ibv_send_flags::IBV_SEND_SIGNALED.0;
        wr
    }

    /// Post what the queue pair's send queue and the slot pool allow, in order.
    fn try_post(&mut self, qpn: u32) -> Result<()> {
        loop {
            let Some(q) = self.qps.get(&qpn) else {
                return Ok(());
            };
            if !q.connected || q.outstanding >= SQ_DEPTH {
                return Ok(());
            }
            let qp = q.qp;
            let Some(front) = self.qps.get_mut(&qpn).and_then(|q| q.pending.pop_front()) else {
                return Ok(());
            };
            match front {
                Pending::Chunk(bytes) => {
                    let Some(slot) = self.free_send.pop() else {
                        self.qps
                            .get_mut(&qpn)
                            .expect("checked")
                            .pending
                            .push_front(Pending::Chunk(bytes));
                        return Ok(());
                    };
                    let off = self.send_off(slot as usize);
                    self.slab[off..off + bytes.len()].copy_from_slice(&bytes);
                    let mut sge = ibv_sge {
                        addr: self.slab[off..].as_ptr() as u64,
                        length: bytes.len() as u32,
                        lkey: self.lkey(),
                    };
                    let mut wr = Self::blank_wr(
                        wr_id(WrKind::RcSend, slot as u64),
                        &mut sge,
                        ibv_wr_opcode::IBV_WR_SEND,
                    );
                    if let Err(e) = Self::post_send_wr(qp, &mut wr) {
                        self.free_send.push(slot);
                        return Err(e);
                    }
                    let q = self.qps.get_mut(&qpn).expect("checked");
                    q.send_slots.push(slot);
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
                        Err(e) => {
                            let ev = if write {
                                RcEvent::WriteFailed { token, error: e }
                            } else {
                                RcEvent::ReadFailed { token, error: e }
                            };
                            self.rc_out.push(ev);
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
                    let mut wr = Self::blank_wr(wr_id(kind, op), &mut sge, opcode);
                    wr.wr.rdma = rdma_t {
                        remote_addr: remote.addr,
                        rkey: remote.rkey,
                    };
                    if let Err(e) = Self::post_send_wr(qp, &mut wr) {
                        self.unregister(rkey_local);
                        return Err(e);
                    }
                    self.ops.insert(
                        op,
                        Op {
                            qpn,
                            token,
                            rkey_local,
                            write,
                        },
                    );
                    self.qps.get_mut(&qpn).expect("checked").outstanding += 1;
                }
            }
        }
    }

    /// Move completions into `ud_in` / `rc_out`; returns how many were handled.
    fn drain_cq(&mut self) -> usize {
        let mut total = 0;
        // SAFETY: ibv_wc is plain C data; zero is valid.
        let mut wcs: [ibv_wc; 32] = unsafe { std::mem::zeroed() };
        loop {
            // SAFETY: cq is live; wcs has room for 32 entries.
            let n = unsafe { ibv_poll_cq(self.cq, wcs.len() as i32, wcs.as_mut_ptr()) };
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

    fn break_qp(&mut self, qpn: u32, error: VerbsError) {
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
                    let off = self.ud_off(idx);
                    let end = off + (wc.byte_len as usize).min(self.ud_slot());
                    if end >= off + GRH_BYTES {
                        self.ud_in.push(self.slab[off + GRH_BYTES..end].to_vec());
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
                    let off = self.srq_off(idx);
                    let n = (wc.byte_len as usize).min(CHUNK);
                    if n >= 1 {
                        let last = self.slab[off] == 1;
                        let body = self.slab[off + 1..off + n].to_vec();
                        if let Some(q) = self.qps.get_mut(&wc.qp_num) {
                            q.reasm.extend_from_slice(&body);
                            if last {
                                let data = std::mem::take(&mut q.reasm);
                                self.rc_out.push(RcEvent::Recv {
                                    qp: wc.qp_num,
                                    data,
                                });
                            }
                        }
                    }
                }
                if let Err(e) = self.post_srq_recv(idx) {
                    tracing::debug!("repost SRQ receive: {e}");
                }
            }
            WrKind::UdSend => {
                self.ud_outstanding = self.ud_outstanding.saturating_sub(1);
                self.free_send.push(idx as u32);
                if !ok {
                    tracing::debug!("UD send completion: {}", wc_status(wc.status));
                }
            }
            WrKind::RcSend => {
                // Slots of destroyed queue pairs were already returned in rc_destroy.
                if let Some(q) = self.qps.get_mut(&wc.qp_num) {
                    q.outstanding = q.outstanding.saturating_sub(1);
                    if let Some(p) = q.send_slots.iter().position(|s| *s as usize == idx) {
                        q.send_slots.swap_remove(p);
                        self.free_send.push(idx as u32);
                    }
                    if !ok {
                        let e = VerbsError::Verb {
                            verb: "RC send completion",
                            detail: wc_status(wc.status),
                        };
                        self.break_qp(wc.qp_num, e);
                    }
                }
            }
            WrKind::Read | WrKind::Write => {
                let Some(op) = self.ops.remove(&(idx as u64)) else {
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
    }

    fn random_psn(&mut self) -> u32 {
        self.rng ^= self.rng << 13;
        self.rng ^= self.rng >> 7;
        self.rng ^= self.rng << 17;
        psn24(self.rng as u32)
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
            return Err(VerbsError::ProviderMismatch {
                card: to.provider().to_string(),
                local: "ib".into(),
            });
        };
        if datagram.len() > self.ud_payload {
            return Err(VerbsError::TooLarge {
                len: datagram.len(),
                max: self.ud_payload,
            });
        }
        let ah = self.ah_for(a)?;
        if self.ud_outstanding >= SQ_DEPTH {
            return Ok(()); // unreliable by contract: the channel retransmits
        }
        let Some(slot) = self.free_send.pop() else {
            return Ok(());
        };
        let off = self.send_off(slot as usize);
        self.slab[off..off + datagram.len()].copy_from_slice(datagram);
        let mut sge = ibv_sge {
            addr: self.slab[off..].as_ptr() as u64,
            length: datagram.len() as u32,
            lkey: self.lkey(),
        };
        let mut wr = Self::blank_wr(
            wr_id(WrKind::UdSend, slot as u64),
            &mut sge,
            ibv_wr_opcode::IBV_WR_SEND,
        );
        wr.wr.ud = ud_t {
            ah,
            remote_qpn: a.qpn,
            remote_qkey: QKEY,
        };
        if let Err(e) = Self::post_send_wr(self.ud_qp, &mut wr) {
            self.free_send.push(slot);
            return Err(e);
        }
        self.ud_outstanding += 1;
        Ok(())
    }

    fn ud_poll(&mut self, out: &mut Vec<Vec<u8>>) -> Result<()> {
        self.drain_cq();
        out.append(&mut self.ud_in);
        Ok(())
    }

    fn rc_create(&mut self) -> Result<RcEndpoint> {
        let mut init = ibv_qp_init_attr {
            qp_context: null_mut(),
            send_cq: self.cq,
            recv_cq: self.cq,
            srq: self.srq,
            cap: ibv_qp_cap {
                max_send_wr: SQ_DEPTH,
                max_recv_wr: 0,
                max_send_sge: 1,
                max_recv_sge: 1,
                max_inline_data: 0,
            },
            qp_type: ibv_qp_type::IBV_QPT_RC,
            sq_sig_all: 1,
        };
        // SAFETY: pd, cq and srq are live; init is valid for the call.
        let qp = unsafe { (verbs().ibv_create_qp)(self.pd, &mut init) };
        if qp.is_null() {
            return Err(verb_err("ibv_create_qp(RC)"));
        }
        let (mut a, m) = rc_init(self.port);
        // SAFETY: qp was just created.
        if let Err(e) = verb_rc("ibv_modify_qp(INIT)", unsafe {
            (verbs().ibv_modify_qp)(qp, &mut a, m)
        }) {
            // SAFETY: destroy the QP we created and nobody else knows.
            unsafe { (verbs().ibv_destroy_qp)(qp) };
            return Err(e);
        }
        // SAFETY: qp is live.
        let qpn = unsafe { (*qp).qp_num };
        let psn = self.random_psn();
        self.qps.insert(
            qpn,
            RcQp {
                qp,
                psn,
                connected: false,
                outstanding: 0,
                pending: VecDeque::new(),
                reasm: Vec::new(),
                send_slots: Vec::new(),
            },
        );
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
            return Err(VerbsError::ProviderMismatch {
                card: remote_card.provider().to_string(),
                local: "ib".into(),
            });
        };
        let q = self
            .qps
            .get(&qpn)
            .ok_or_else(|| VerbsError::InvalidArgument(format!("no RC queue pair {qpn}")))?;
        let path = Path {
            dlid: ra.lid,
            dgid: ra.gid,
            global: ra.global || self.card.global,
            sgid_index: self.sgid_index,
            port: self.port,
        };
        let (mut rtr, rm) = rc_rtr(&path, self.active_mtu, remote.qpn, remote.psn, &self.rc);
        let (mut rts, sm) = rc_rts(q.psn, &self.rc);
        // SAFETY: q.qp is a live queue pair in INIT.
        unsafe {
            verb_rc(
                "ibv_modify_qp(RTR)",
                (verbs().ibv_modify_qp)(q.qp, &mut rtr, rm),
            )?;
            verb_rc(
                "ibv_modify_qp(RTS)",
                (verbs().ibv_modify_qp)(q.qp, &mut rts, sm),
            )?;
        }
        self.qps.get_mut(&qpn).expect("checked").connected = true;
        self.try_post(qpn)
    }

    fn rc_destroy(&mut self, qpn: u32) {
        if let Some(q) = self.qps.remove(&qpn) {
            self.free_send.extend(q.send_slots);
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
            for p in q.pending {
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
            // SAFETY: the queue pair is removed from our tables and destroyed once.
            unsafe { (verbs().ibv_destroy_qp)(q.qp) };
        }
    }

    fn rc_send(&mut self, qpn: u32, parts: &[&[u8]]) -> Result<()> {
        let data: Vec<u8> = parts.concat();
        let q = self
            .qps
            .get_mut(&qpn)
            .ok_or_else(|| VerbsError::InvalidArgument(format!("no RC queue pair {qpn}")))?;
        let mut chunks = data.chunks(CHUNK - 1).peekable();
        if data.is_empty() {
            q.pending.push_back(Pending::Chunk(vec![1]));
        }
        while let Some(c) = chunks.next() {
            let mut b = Vec::with_capacity(c.len() + 1);
            b.push(chunks.peek().is_none() as u8);
            b.extend_from_slice(c);
            q.pending.push_back(Pending::Chunk(b));
        }
        self.try_post(qpn)
    }

    fn rc_poll(&mut self, out: &mut Vec<RcEvent>) -> Result<()> {
        self.drain_cq();
        out.append(&mut self.rc_out);
        Ok(())
    }

    fn rc_flushed(&self) -> bool {
        self.qps
            .values()
            .all(|q| q.pending.is_empty() && q.outstanding == 0)
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
        if len > u32::MAX as usize {
            return Err(VerbsError::TooLarge {
                len,
                max: u32::MAX as usize,
            });
        }
        let q = self
            .qps
            .get_mut(&qpn)
            .ok_or_else(|| VerbsError::InvalidArgument(format!("no RC queue pair {qpn}")))?;
        q.pending.push_back(Pending::Read {
            remote,
            local: local as usize,
            len,
            token,
        });
        self.try_post(qpn)
    }

    unsafe fn rc_write(
        &mut self,
        qpn: u32,
        remote: RemoteBuf,
        local: *const u8,
        len: usize,
        token: u64,
    ) -> Result<()> {
        if len > u32::MAX as usize {
            return Err(VerbsError::TooLarge {
                len,
                max: u32::MAX as usize,
            });
        }
        let q = self
            .qps
            .get_mut(&qpn)
            .ok_or_else(|| VerbsError::InvalidArgument(format!("no RC queue pair {qpn}")))?;
        q.pending.push_back(Pending::Write {
            remote,
            local: local as usize,
            len,
            token,
        });
        self.try_post(qpn)
    }

    fn wait(&mut self, timeout: Duration) {
        if !self.armed {
            // SAFETY: cq is live.
            if unsafe { ibv_req_notify_cq(self.cq, 0) } != 0 {
                std::thread::sleep(timeout.min(Duration::from_millis(1)));
                return;
            }
            self.armed = true;
        }
        // Completions that arrived before arming raise no event: look once more.
        if self.drain_cq() > 0 || !self.ud_in.is_empty() || !self.rc_out.is_empty() {
            return;
        }
        // SAFETY: channel is live; its fd is valid.
        let mut pfd = libc::pollfd {
            fd: unsafe { (*self.channel).fd },
            events: libc::POLLIN,
            revents: 0,
        };
        let ms = timeout
            .as_millis()
            .clamp(if timeout.is_zero() { 0 } else { 1 }, i32::MAX as u128) as i32;
        // SAFETY: one valid pollfd.
        if unsafe { libc::poll(&mut pfd, 1, ms) } > 0 {
            let mut cq = null_mut();
            let mut ctx = null_mut();
            // SAFETY: the channel is readable, so this does not block; the event is acked once.
            if unsafe { (verbs().ibv_get_cq_event)(self.channel, &mut cq, &mut ctx) } == 0 {
                unsafe { (verbs().ibv_ack_cq_events)(cq, 1) };
                self.armed = false;
            }
        }
    }
}

impl Drop for IbProvider {
    fn drop(&mut self) {
        // SAFETY: every object was created by this provider and is destroyed once, dependants first.
        unsafe {
            for (_, q) in self.qps.drain() {
                (verbs().ibv_destroy_qp)(q.qp);
            }
            if !self.ud_qp.is_null() {
                (verbs().ibv_destroy_qp)(self.ud_qp);
            }
            for (_, ah) in self.ahs.drain() {
                (verbs().ibv_destroy_ah)(ah);
            }
            if !self.srq.is_null() {
                (verbs().ibv_destroy_srq)(self.srq);
            }
            if !self.cq.is_null() {
                (verbs().ibv_destroy_cq)(self.cq);
            }
            if !self.channel.is_null() {
                (verbs().ibv_destroy_comp_channel)(self.channel);
            }
            for m in self.regs.drain() {
                (verbs().ibv_dereg_mr)(m.mr);
            }
            if !self.slab_mr.is_null() {
                (verbs().ibv_dereg_mr)(self.slab_mr);
            }
            if !self.pd.is_null() {
                (verbs().ibv_dealloc_pd)(self.pd);
            }
            (verbs().ibv_close_device)(self.ctx);
        }
    }
}

#[cfg(test)]
mod device_tests {
    use super::*;

    /// Needs an HCA (or soft-RoCE); skips with a message when there is none.
    #[test]
    fn device_loopback_send_and_read() {
        let devs = devices().expect("device query itself must not fail");
        if devs.is_empty() {
            eprintln!("SKIPPED device_loopback_send_and_read: no InfiniBand device (ibv_get_device_list found none)");
            return;
        }
        let cfg = |k| FabricConfig {
            provider: Some(ProviderKind::Ib),
            job_secret: 7,
            local_key: k,
            ..FabricConfig::default()
        };
        let mut a = crate::Fabric::open(cfg(1)).unwrap();
        let mut b = crate::Fabric::open(cfg(2)).unwrap();
        let cb = b.card();
        let src: Vec<u8> = (0..100_000u32).map(|i| i as u8).collect();
        let rb = b.expose(src.as_ptr(), src.len()).unwrap();
        let mut dst = vec![0u8; src.len()];
        a.send(2, &cb, &[b"hello over ib"]).unwrap();
        // SAFETY: dst outlives the read, which completes before the loop ends.
        unsafe { a.read(2, &cb, rb, dst.as_mut_ptr(), dst.len(), 9).unwrap() };
        let (mut ea, mut eb) = (Vec::new(), Vec::new());
        let end = std::time::Instant::now() + Duration::from_secs(20);
        while !(ea
            .iter()
            .any(|e| matches!(e, crate::Event::ReadDone { token: 9 }))
            && eb.iter().any(|e| matches!(e, crate::Event::Message { .. })))
        {
            assert!(std::time::Instant::now() < end, "a {ea:?} b {eb:?}");
            a.progress(&mut ea).unwrap();
            b.progress(&mut eb).unwrap();
        }
        assert!(dst == src);
    }

    #[test]
    fn forcing_ib_without_device_is_a_clear_error() {
        if !devices().unwrap().is_empty() {
            eprintln!("SKIPPED forcing_ib_without_device_is_a_clear_error: a device is present");
            return;
        }
        let cfg = FabricConfig {
            provider: Some(ProviderKind::Ib),
            ..FabricConfig::default()
        };
        let e = crate::Fabric::open(cfg)
            .err()
            .expect("must fail without a device");
        assert_eq!(e, VerbsError::NoDevice);
        assert!(e.to_string().contains("no InfiniBand device"));
    }
}
