//! Pure attribute building for queue pairs and address handles (tested without a device).

use rdma_sys::*;

/// Q_Key shared by every UD queue pair of ibdyn.
pub const QKEY: u32 = 0x1bd1_0001;
/// Bytes of Global Route Header in front of every UD receive buffer.
pub const GRH_BYTES: usize = 40;
/// Link layers reported by `ibv_port_attr::link_layer`.
pub const LINK_LAYER_INFINIBAND: u8 = 1;
pub const LINK_LAYER_ETHERNET: u8 = 2;

/// RC transport settings: ~67 ms local ACK timeout (4.096 us * 2^14), 7 transport retries,
/// RNR retry "infinite" (the receiver reposts buffers as it progresses), 12 = 0.64 ms RNR delay.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RcParams {
    pub timeout: u8,
    pub retry_cnt: u8,
    pub rnr_retry: u8,
    pub min_rnr_timer: u8,
    pub rd_atomic: u8,
}

impl Default for RcParams {
    fn default() -> Self {
        RcParams {
            timeout: 14,
            retry_cnt: 7,
            rnr_retry: 7,
            min_rnr_timer: 12,
            rd_atomic: 16,
        }
    }
}

/// Where a remote port is: enough to build an address handle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Path {
    pub dlid: u16,
    pub dgid: [u8; 16],
    /// Use a GRH (RoCE, or routed IB).
    pub global: bool,
    pub sgid_index: u8,
    pub port: u8,
}

/// Bytes of an `ibv_mtu` value (0 for an unknown value).
pub fn mtu_bytes(mtu: ibv_mtu::Type) -> usize {
    match mtu {
        1..=5 => 128 << mtu,
        _ => 0,
    }
}

/// Path MTU for RC: the port's active MTU, 1024 if the port reports something unknown.
pub fn path_mtu(active: ibv_mtu::Type) -> ibv_mtu::Type {
    if (ibv_mtu::IBV_MTU_256..=ibv_mtu::IBV_MTU_4096).contains(&active) {
        active
    } else {
        ibv_mtu::IBV_MTU_1024
    }
}

/// Packet sequence numbers are 24 bits.
pub fn psn24(x: u32) -> u32 {
    x & 0x00ff_ffff
}

/// GID index to use: on RoCE prefer an IPv4-mapped GID (routable, what RoCE v2 peers use);
/// otherwise index 0 (the port GID on IB, link-local on RoCE).
pub fn choose_gid_index(gids: &[[u8; 16]], roce: bool) -> usize {
    if roce {
        let mapped =
            |g: &[u8; 16]| g[..10].iter().all(|&b| b == 0) && g[10] == 0xff && g[11] == 0xff;
        if let Some(i) = gids.iter().position(mapped) {
            return i;
        }
    }
    0
}

fn zeroed_qp_attr() -> ibv_qp_attr {
    // SAFETY: ibv_qp_attr is plain C data (integers, and a GID union of bytes); all-zero is valid.
    unsafe { std::mem::zeroed() }
}

pub fn ah_attr(p: &Path) -> ibv_ah_attr {
    ibv_ah_attr {
        grh: ibv_global_route {
            dgid: ibv_gid { raw: p.dgid },
            flow_label: 0,
            sgid_index: p.sgid_index,
            hop_limit: if p.global { 64 } else { 0 },
            traffic_class: 0,
        },
        dlid: p.dlid,
        sl: 0,
        src_path_bits: 0,
        static_rate: 0,
        is_global: p.global as u8,
        port_num: p.port,
    }
}

/// RESET -> INIT for an RC queue pair (remote read and write allowed; access is still gated by
/// the rkeys of exposed regions).
pub fn rc_init(port: u8) -> (ibv_qp_attr, i32) {
    let mut a = zeroed_qp_attr();
    a.qp_state = ibv_qp_state::IBV_QPS_INIT;
    a.pkey_index = 0;
    a.port_num = port;
    a.qp_access_flags = (ibv_access_flags::IBV_ACCESS_LOCAL_WRITE
        | ibv_access_flags::IBV_ACCESS_REMOTE_READ
        | ibv_access_flags::IBV_ACCESS_REMOTE_WRITE)
        .0;
    let m = ibv_qp_attr_mask::IBV_QP_STATE
        | ibv_qp_attr_mask::IBV_QP_PKEY_INDEX
        | ibv_qp_attr_mask::IBV_QP_PORT
        | ibv_qp_attr_mask::IBV_QP_ACCESS_FLAGS;
    (a, m.0 as i32)
}

/// INIT -> RTR: bind to the remote queue pair.
pub fn rc_rtr(
    path: &Path,
    mtu: ibv_mtu::Type,
    remote_qpn: u32,
    remote_psn: u32,
    p: &RcParams,
) -> (ibv_qp_attr, i32) {
    let mut a = zeroed_qp_attr();
    a.qp_state = ibv_qp_state::IBV_QPS_RTR;
    a.path_mtu = path_mtu(mtu);
    a.dest_qp_num = remote_qpn;
    a.rq_psn = psn24(remote_psn);
    a.max_dest_rd_atomic = p.rd_atomic;
    a.min_rnr_timer = p.min_rnr_timer;
    a.ah_attr = ah_attr(path);
    let m = ibv_qp_attr_mask::IBV_QP_STATE
        | ibv_qp_attr_mask::IBV_QP_AV
        | ibv_qp_attr_mask::IBV_QP_PATH_MTU
        | ibv_qp_attr_mask::IBV_QP_DEST_QPN
        | ibv_qp_attr_mask::IBV_QP_RQ_PSN
        | ibv_qp_attr_mask::IBV_QP_MAX_DEST_RD_ATOMIC
        | ibv_qp_attr_mask::IBV_QP_MIN_RNR_TIMER;
    (a, m.0 as i32)
}

/// RTR -> RTS: start sending.
pub fn rc_rts(local_psn: u32, p: &RcParams) -> (ibv_qp_attr, i32) {
    let mut a = zeroed_qp_attr();
    a.qp_state = ibv_qp_state::IBV_QPS_RTS;
    a.sq_psn = psn24(local_psn);
    a.timeout = p.timeout;
    a.retry_cnt = p.retry_cnt;
    a.rnr_retry = p.rnr_retry;
    a.max_rd_atomic = p.rd_atomic;
    let m = ibv_qp_attr_mask::IBV_QP_STATE
        | ibv_qp_attr_mask::IBV_QP_TIMEOUT
        | ibv_qp_attr_mask::IBV_QP_RETRY_CNT
        | ibv_qp_attr_mask::IBV_QP_RNR_RETRY
        | ibv_qp_attr_mask::IBV_QP_SQ_PSN
        | ibv_qp_attr_mask::IBV_QP_MAX_QP_RD_ATOMIC;
    (a, m.0 as i32)
}

/// The three transitions of a UD queue pair: INIT (with Q_Key), RTR, RTS.
pub fn ud_steps(port: u8, psn: u32) -> [(ibv_qp_attr, i32); 3] {
    let mut init = zeroed_qp_attr();
    init.qp_state = ibv_qp_state::IBV_QPS_INIT;
    init.pkey_index = 0;
    init.port_num = port;
    init.qkey = QKEY;
    let im = ibv_qp_attr_mask::IBV_QP_STATE
        | ibv_qp_attr_mask::IBV_QP_PKEY_INDEX
        | ibv_qp_attr_mask::IBV_QP_PORT
        | ibv_qp_attr_mask::IBV_QP_QKEY;
    let mut rtr = zeroed_qp_attr();
    rtr.qp_state = ibv_qp_state::IBV_QPS_RTR;
    let mut rts = zeroed_qp_attr();
    rts.qp_state = ibv_qp_state::IBV_QPS_RTS;
    rts.sq_psn = psn24(psn);
    let sm = ibv_qp_attr_mask::IBV_QP_STATE | ibv_qp_attr_mask::IBV_QP_SQ_PSN;
    [
        (init, im.0 as i32),
        (rtr, ibv_qp_attr_mask::IBV_QP_STATE.0 as i32),
        (rts, sm.0 as i32),
    ]
}

/// Work request ids: kind in the top byte, an index below.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WrKind {
    UdRecv = 1,
    RcRecv = 2,
    UdSend = 3,
    RcSend = 4,
    Read = 5,
    Write = 6,
}

pub fn wr_id(kind: WrKind, index: u64) -> u64 {
    ((kind as u64) << 56) | (index & 0x00ff_ffff_ffff_ffff)
}

pub fn wr_decode(id: u64) -> Option<(WrKind, u64)> {
    let kind = match id >> 56 {
        1 => WrKind::UdRecv,
        2 => WrKind::RcRecv,
        3 => WrKind::UdSend,
        4 => WrKind::RcSend,
        5 => WrKind::Read,
        6 => WrKind::Write,
        _ => return None,
    };
    Some((kind, id & 0x00ff_ffff_ffff_ffff))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path(global: bool) -> Path {
        Path {
            dlid: 0x12,
            dgid: [0xaa; 16],
            global,
            sgid_index: 3,
            port: 1,
        }
    }

    #[test]
    fn mtu_and_psn() {
        assert_eq!(mtu_bytes(ibv_mtu::IBV_MTU_256), 256);
        assert_eq!(mtu_bytes(ibv_mtu::IBV_MTU_4096), 4096);
        assert_eq!(mtu_bytes(0), 0);
        assert_eq!(path_mtu(ibv_mtu::IBV_MTU_2048), ibv_mtu::IBV_MTU_2048);
        assert_eq!(path_mtu(9), ibv_mtu::IBV_MTU_1024);
        assert_eq!(psn24(0xffff_ffff), 0xff_ffff);
    }

    #[test]
    fn rtr_binds_remote_and_sets_grh_only_when_global() {
        let (a, m) = rc_rtr(
            &path(false),
            ibv_mtu::IBV_MTU_4096,
            0x77,
            0x1234_5678,
            &RcParams::default(),
        );
        assert_eq!(a.qp_state, ibv_qp_state::IBV_QPS_RTR);
        assert_eq!((a.dest_qp_num, a.rq_psn), (0x77, 0x34_5678));
        assert_eq!(a.ah_attr.dlid, 0x12);
        assert_eq!((a.ah_attr.is_global, a.ah_attr.port_num), (0, 1));
        assert_eq!((a.max_dest_rd_atomic, a.min_rnr_timer), (16, 12));
        assert_ne!(m & ibv_qp_attr_mask::IBV_QP_AV.0 as i32, 0);
        assert_ne!(m & ibv_qp_attr_mask::IBV_QP_DEST_QPN.0 as i32, 0);
        let (g, _) = rc_rtr(
            &path(true),
            ibv_mtu::IBV_MTU_1024,
            1,
            1,
            &RcParams::default(),
        );
        assert_eq!(g.ah_attr.is_global, 1);
        assert_eq!(g.ah_attr.grh.sgid_index, 3);
        assert_eq!(g.ah_attr.grh.hop_limit, 64);
        // SAFETY: reading the byte view of the GID union.
        assert_eq!(unsafe { g.ah_attr.grh.dgid.raw }, [0xaa; 16]);
    }

    #[test]
    fn init_and_rts_settings() {
        let (i, im) = rc_init(2);
        assert_eq!((i.qp_state, i.port_num), (ibv_qp_state::IBV_QPS_INIT, 2));
        assert_eq!(i.qp_access_flags, 1 | 2 | 4);
        assert_eq!(im, (1 | 16 | 32 | 8)); // STATE | PKEY_INDEX | PORT | ACCESS_FLAGS
        let (r, rm) = rc_rts(0x0100_0001, &RcParams::default());
        assert_eq!(
            (r.sq_psn, r.timeout, r.retry_cnt, r.rnr_retry),
            (1, 14, 7, 7)
        );
        assert_ne!(rm & ibv_qp_attr_mask::IBV_QP_SQ_PSN.0 as i32, 0);
        let [(u, um), _, (s, _)] = ud_steps(1, 5);
        assert_eq!((u.qkey, s.sq_psn), (QKEY, 5));
        assert_ne!(um & ibv_qp_attr_mask::IBV_QP_QKEY.0 as i32, 0);
    }

    #[test]
    fn gid_choice_and_wr_ids() {
        let mut mapped = [0u8; 16];
        mapped[10] = 0xff;
        mapped[11] = 0xff;
        mapped[12..].copy_from_slice(&[10, 0, 0, 1]);
        let link_local = {
            let mut g = [0u8; 16];
            g[0] = 0xfe;
            g[1] = 0x80;
            g
        };
        assert_eq!(choose_gid_index(&[link_local, mapped], true), 1);
        assert_eq!(choose_gid_index(&[link_local, mapped], false), 0);
        assert_eq!(choose_gid_index(&[link_local], true), 0);
        for k in [
            WrKind::UdRecv,
            WrKind::RcRecv,
            WrKind::UdSend,
            WrKind::RcSend,
            WrKind::Read,
            WrKind::Write,
        ] {
            assert_eq!(wr_decode(wr_id(k, 12345)), Some((k, 12345)));
        }
        assert_eq!(wr_decode(0), None);
    }
}
