//! Geometry of a receive segment: how many cells, how many payload bytes each.

use crate::ShmError;

/// Cell payload and count of a receive queue. The default comes from measurement (see the
/// crate's `shm_pingpong` example); `IBDYN_SHM_CELL` (bytes, `k`/`m` suffix allowed) and
/// `IBDYN_SHM_CELLS` override it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ShmConfig {
    /// Largest packet a cell holds, in bytes (multiple of 8).
    pub cell_payload: usize,
    /// Number of cells in the ring (power of two).
    pub cells: usize,
}

pub(crate) const MIN_PAYLOAD: usize = 8;
pub(crate) const MAX_PAYLOAD: usize = 16 << 20;
pub(crate) const MIN_CELLS: usize = 2;
pub(crate) const MAX_CELLS: usize = 1 << 16;

impl ShmConfig {
    pub const DEFAULT: ShmConfig = ShmConfig {
        cell_payload: 16 << 10,
        cells: 64,
    };

    /// The default, with the environment overrides applied.
    pub fn from_env() -> Result<ShmConfig, ShmError> {
        let mut cfg = ShmConfig::DEFAULT;
        if let Ok(v) = std::env::var("IBDYN_SHM_CELL") {
            cfg.cell_payload = parse_size(&v)
                .ok_or_else(|| ShmError::Config(format!("IBDYN_SHM_CELL={v:?} is not a size")))?;
        }
        if let Ok(v) = std::env::var("IBDYN_SHM_CELLS") {
            cfg.cells = parse_size(&v)
                .ok_or_else(|| ShmError::Config(format!("IBDYN_SHM_CELLS={v:?} is not a count")))?;
        }
        cfg.validate()?;
        Ok(cfg)
    }

    /// Bytes of `/dev/shm` one receive queue of this geometry may take once all of it is used.
    pub fn queue_bytes(&self) -> usize {
        crate::layout::Geometry::from_config(self).segment_bytes()
    }

    pub fn validate(&self) -> Result<(), ShmError> {
        let p = self.cell_payload;
        if !(MIN_PAYLOAD..=MAX_PAYLOAD).contains(&p) || p & 7 != 0 {
            return Err(ShmError::Config(format!(
                "cell payload {p} must be a multiple of 8 in {MIN_PAYLOAD}..={MAX_PAYLOAD}"
            )));
        }
        let c = self.cells;
        if !(MIN_CELLS..=MAX_CELLS).contains(&c) || !c.is_power_of_two() {
            return Err(ShmError::Config(format!(
                "cell count {c} must be a power of two in {MIN_CELLS}..={MAX_CELLS}"
            )));
        }
        Ok(())
    }
}

impl Default for ShmConfig {
    /// `from_env()`, or the built-in default (with a warning) when the environment is malformed.
    fn default() -> Self {
        ShmConfig::from_env().unwrap_or_else(|e| {
            tracing::warn!("{e}; using the default shared-memory geometry");
            ShmConfig::DEFAULT
        })
    }
}

fn parse_size(s: &str) -> Option<usize> {
    let s = s.trim();
    let (digits, shift) = match s.as_bytes().last()? {
        b'k' | b'K' => (&s[..s.len() - 1], 10),
        b'm' | b'M' => (&s[..s.len() - 1], 20),
        _ => (s, 0),
    };
    digits.parse::<usize>().ok()?.checked_mul(1 << shift)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse() {
        assert_eq!(parse_size("64"), Some(64));
        assert_eq!(parse_size("16k"), Some(16384));
        assert_eq!(parse_size("1M"), Some(1 << 20));
        assert_eq!(parse_size("x"), None);
        assert_eq!(parse_size(""), None);
    }

    #[test]
    fn validation_rejects_bad_geometry() {
        assert!(ShmConfig::DEFAULT.validate().is_ok());
        let bad = [
            (12, 64),
            (0, 64),
            (4096, 3),
            (4096, 1),
            (MAX_PAYLOAD * 2, 4),
        ];
        for (p, c) in bad {
            let cfg = ShmConfig {
                cell_payload: p,
                cells: c,
            };
            assert!(cfg.validate().is_err(), "{cfg:?}");
        }
    }
}
