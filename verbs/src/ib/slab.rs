//! One registered buffer for every receive and send the provider copies through: UD receive
//! buffers (GRH + datagram), shared-receive buffers (one RC piece each), then send slots.

use super::mr::MemoryRegion;
use super::pd::ProtectionDomain;
use crate::error::Result;
use rdma_sys::*;
use std::sync::Arc;

/// Where each buffer sits in the slab (pure).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SlabLayout {
    pub(crate) ud_payload: usize,
    pub(crate) grh: usize,
    pub(crate) ud_recvs: usize,
    pub(crate) piece: usize,
    pub(crate) srq_recvs: usize,
    pub(crate) send_slots: usize,
}

impl SlabLayout {
    /// Bytes of one UD receive buffer (the GRH lands in front of the datagram).
    pub(crate) fn ud_slot(&self) -> usize {
        self.grh + self.ud_payload
    }

    /// Bytes of one send slot: an RC piece or a UD datagram.
    pub(crate) fn send_slot(&self) -> usize {
        self.piece.max(self.ud_payload)
    }

    pub(crate) fn ud_off(&self, i: usize) -> usize {
        i * self.ud_slot()
    }

    pub(crate) fn srq_off(&self, i: usize) -> usize {
        self.ud_slot() * self.ud_recvs + i * self.piece
    }

    pub(crate) fn send_off(&self, i: usize) -> usize {
        self.srq_off(self.srq_recvs) + i * self.send_slot()
    }

    pub(crate) fn len(&self) -> usize {
        self.send_off(self.send_slots)
    }
}

/// The slab and its registration.
pub(crate) struct Slab {
    // Declared (so dropped) before `bytes`: deregistered before the memory is freed.
    mr: MemoryRegion,
    bytes: Box<[u8]>,
    layout: SlabLayout,
}

impl Slab {
    pub(crate) fn new(pd: Arc<ProtectionDomain>, layout: SlabLayout) -> Result<Slab> {
        let mut bytes = vec![0u8; layout.len()].into_boxed_slice();
        let access = ibv_access_flags::IBV_ACCESS_LOCAL_WRITE.0 as i32;
        // SAFETY: the boxed slice's heap memory never moves or changes size, and it is freed
        // only after the region (field order above).
        let mr = unsafe {
            MemoryRegion::register(
                pd,
                bytes.as_mut_ptr(),
                bytes.len(),
                access,
                "ibv_reg_mr(slab)",
            )?
        };
        Ok(Slab { mr, bytes, layout })
    }

    pub(crate) fn layout(&self) -> &SlabLayout {
        &self.layout
    }

    /// The scatter entry for `len` bytes at `off`.
    pub(crate) fn sge(&self, off: usize, len: usize) -> ibv_sge {
        let b = &self.bytes[off..off + len];
        ibv_sge {
            addr: b.as_ptr() as u64,
            length: len as u32,
            lkey: self.mr.lkey(),
        }
    }

    pub(crate) fn bytes(&self, off: usize, len: usize) -> &[u8] {
        &self.bytes[off..off + len]
    }

    pub(crate) fn write(&mut self, off: usize, data: &[u8]) {
        self.bytes[off..off + data.len()].copy_from_slice(data);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regions_follow_each_other_without_overlap() {
        let l = SlabLayout {
            ud_payload: 2048,
            grh: 40,
            ud_recvs: 3,
            piece: 8192,
            srq_recvs: 2,
            send_slots: 4,
        };
        assert_eq!((l.ud_slot(), l.send_slot()), (2088, 8192));
        assert_eq!((l.ud_off(0), l.ud_off(2)), (0, 2 * 2088));
        assert_eq!(l.srq_off(0), 3 * 2088);
        assert_eq!(l.srq_off(1), 3 * 2088 + 8192);
        assert_eq!(l.send_off(0), 3 * 2088 + 2 * 8192);
        assert_eq!(l.send_off(3) + l.send_slot(), l.len());
        let big = SlabLayout {
            ud_payload: 16384,
            ..l
        };
        assert_eq!(big.send_slot(), 16384, "a send slot holds a whole datagram");
    }
}
