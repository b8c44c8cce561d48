//! Byte layout of a receive segment, and its validation. Everything a reader takes from the
//! mapping to compute an address is checked here once and then kept in a private copy
//! (`Geometry`), so a header corrupted later can never steer an access out of the mapping.
//!
//! ```text
//! 0    magic u64 (written last, Release) | version u32 | header_bytes u32 (one u64 word)
//! 16   cells u64 | cell_stride u64 | cell_payload u64 | owner pid u64
//! 64   enqueue position (AtomicU64, producers only)
//! 128  doorbell futex word (AtomicU32) | receiver-sleeping state (AtomicU32, `SLEEP_*`)
//! 192  released position (AtomicU64, receiver only): cells before it are free for producers
//! 200  room waiters (AtomicU32, producers) | room futex word (AtomicU32, bumped by the receiver)
//! 256  cells: [sequence AtomicU64 | length u32 | producer pid AtomicU32 | payload ...] x cells,
//!      stride cell_stride
//! ```

use crate::config::{MAX_CELLS, MAX_PAYLOAD, MIN_CELLS, MIN_PAYLOAD};
use crate::{ShmConfig, ShmError};

pub(crate) const MAGIC: u64 = u64::from_le_bytes(*b"IBDYNSHM");
pub(crate) const VERSION: u32 = 4;
pub(crate) const HEADER_BYTES: usize = 256;

pub(crate) const OFF_MAGIC: usize = 0;
pub(crate) const OFF_VERSION: usize = 8;
pub(crate) const OFF_CELLS: usize = 16;
pub(crate) const OFF_STRIDE: usize = 24;
pub(crate) const OFF_PAYLOAD: usize = 32;
pub(crate) const OFF_OWNER: usize = 40;
pub(crate) const OFF_ENQUEUE: usize = 64;
pub(crate) const OFF_DOORBELL: usize = 128;
pub(crate) const OFF_SLEEPING: usize = 132;
pub(crate) const OFF_RELEASED: usize = 192;
pub(crate) const OFF_ROOM_WAITERS: usize = 200;
pub(crate) const OFF_ROOM: usize = 204;

/// The receiver's sleeping state: awake (senders make no system call) ...
pub(crate) const AWAKE: u32 = 0;
/// ... blocked on the doorbell futex (senders wake it) ...
pub(crate) const SLEEP_FUTEX: u32 = 1;
/// ... blocked in a poll that includes its bell socket (the first sender rings it) ...
pub(crate) const SLEEP_POLL: u32 = 2;
/// ... and rung already (later senders need not).
pub(crate) const SLEEP_POLL_RUNG: u32 = 3;

/// Cell header: sequence number, length, pid of the producer that claimed it; payload after.
pub(crate) const CELL_SEQ: usize = 0;
pub(crate) const CELL_LEN: usize = 8;
pub(crate) const CELL_PRODUCER: usize = 12;
/// Length of a cell the receiver reclaimed from a producer that died before publishing it.
pub(crate) const LEN_ABANDONED: u32 = u32::MAX;
pub(crate) const CELL_DATA: usize = 16;

const CACHE_LINE: usize = 64;

/// Validated shape of a segment, held privately by each side.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Geometry {
    pub cells: usize,
    pub stride: usize,
    pub payload: usize,
}

impl Geometry {
    pub fn from_config(cfg: &ShmConfig) -> Geometry {
        Geometry {
            cells: cfg.cells,
            stride: stride_for(cfg.cell_payload),
            payload: cfg.cell_payload,
        }
    }

    /// Total bytes of a segment with this geometry (bounded by the config limits, cannot overflow).
    pub fn segment_bytes(&self) -> usize {
        HEADER_BYTES + self.cells * self.stride
    }

    /// Checks header values read from a mapping of `map_len` bytes.
    pub fn validate(
        name: &str,
        cells: u64,
        stride: u64,
        payload: u64,
        map_len: usize,
    ) -> Result<Geometry, ShmError> {
        let bad = |what: String| ShmError::Malformed {
            name: name.to_string(),
            what,
        };
        let cells = usize::try_from(cells).map_err(|_| bad(format!("cell count {cells}")))?;
        let payload = usize::try_from(payload).map_err(|_| bad(format!("payload {payload}")))?;
        let stride = usize::try_from(stride).map_err(|_| bad(format!("stride {stride}")))?;
        if !(MIN_CELLS..=MAX_CELLS).contains(&cells) || !cells.is_power_of_two() {
            return Err(bad(format!("cell count {cells}")));
        }
        if !(MIN_PAYLOAD..=MAX_PAYLOAD).contains(&payload) || payload & 7 != 0 {
            return Err(bad(format!("cell payload {payload}")));
        }
        if stride != stride_for(payload) {
            return Err(bad(format!("cell stride {stride} for payload {payload}")));
        }
        let geo = Geometry {
            cells,
            stride,
            payload,
        };
        if geo.segment_bytes() != map_len {
            return Err(bad(format!(
                "size {map_len} bytes, header implies {}",
                geo.segment_bytes()
            )));
        }
        Ok(geo)
    }

    /// Offset of the cell that ring position `pos` uses; always inside the segment.
    #[inline]
    pub fn cell_offset(&self, pos: u64) -> usize {
        HEADER_BYTES + (pos as usize & (self.cells - 1)) * self.stride
    }
}

fn stride_for(payload: usize) -> usize {
    (CELL_DATA + payload).next_multiple_of(CACHE_LINE)
}
