//! Buffers cut into per-rank blocks for the varcount collectives (rsmpi's `Partition` and
//! `PartitionMut`): block i is `counts[i]` elements at element `displs[i]`.
//! The layout is checked here, on the calling rank, before any transfer starts.

use crate::datatype::{Buffer, BufferMut, Equivalence};
use crate::{CommError, Result};

/// A buffer read as per-rank blocks (the send side of scatterv and alltoallv).
pub struct Partition<'a, T: Equivalence> {
    buf: &'a [T],
    counts: Vec<usize>,
    displs: Vec<usize>,
}

/// A buffer written as per-rank blocks (the receive side of gatherv, allgatherv, alltoallv).
pub struct PartitionMut<'a, T: Equivalence> {
    buf: &'a mut [T],
    counts: Vec<usize>,
    displs: Vec<usize>,
}

impl<'a, T: Equivalence> Partition<'a, T> {
    /// Block i is `counts[i]` elements starting at element `displs[i]` of `buf`.
    pub fn new(buf: &'a [T], counts: impl Into<Vec<usize>>, displs: impl Into<Vec<usize>>) -> Self {
        Partition {
            buf,
            counts: counts.into(),
            displs: displs.into(),
        }
    }
    /// Blocks of `counts[i]` elements laid end to end from the start of `buf`.
    pub fn packed(buf: &'a [T], counts: impl Into<Vec<usize>>) -> Self {
        let counts = counts.into();
        let displs = packed_displs(&counts);
        Partition::new(buf, counts, displs)
    }
    /// The number of elements of each block (MPI's counts).
    pub fn counts(&self) -> &[usize] {
        &self.counts
    }
    /// Where each block starts, in elements (MPI's displacements).
    pub fn displs(&self) -> &[usize] {
        &self.displs
    }
    pub(crate) fn bytes(&self) -> &'a [u8] {
        self.buf.as_bytes()
    }
    /// The blocks in bytes, checked against the buffer, for `p` ranks.
    pub(crate) fn layout(&self, what: &'static str, p: usize) -> Result<Layout> {
        Layout::of::<T>(what, &self.counts, &self.displs, p, self.buf.len(), false)
    }
}

impl<'a, T: Equivalence> PartitionMut<'a, T> {
    /// Block i is `counts[i]` elements starting at element `displs[i]` of `buf`.
    pub fn new(
        buf: &'a mut [T],
        counts: impl Into<Vec<usize>>,
        displs: impl Into<Vec<usize>>,
    ) -> Self {
        PartitionMut {
            buf,
            counts: counts.into(),
            displs: displs.into(),
        }
    }
    /// Blocks of `counts[i]` elements laid end to end from the start of `buf`.
    pub fn packed(buf: &'a mut [T], counts: impl Into<Vec<usize>>) -> Self {
        let counts = counts.into();
        let displs = packed_displs(&counts);
        PartitionMut::new(buf, counts, displs)
    }
    /// The number of elements of each block (MPI's counts).
    pub fn counts(&self) -> &[usize] {
        &self.counts
    }
    /// Where each block starts, in elements (MPI's displacements).
    pub fn displs(&self) -> &[usize] {
        &self.displs
    }
    pub(crate) fn bytes_mut(&mut self) -> &mut [u8] {
        self.buf.as_bytes_mut()
    }
    /// The blocks in bytes, checked against the buffer and against each other (a location
    /// written by two blocks is refused), for `p` ranks.
    pub(crate) fn layout(&self, what: &'static str, p: usize) -> Result<Layout> {
        Layout::of::<T>(what, &self.counts, &self.displs, p, self.buf.len(), true)
    }
}

fn packed_displs(counts: &[usize]) -> Vec<usize> {
    counts
        .iter()
        .scan(0usize, |at, &c| {
            let d = *at;
            *at = at.saturating_add(c);
            Some(d)
        })
        .collect()
}

/// Per-rank block counts and displacements in bytes, known to lie inside their buffer.
pub(crate) struct Layout {
    pub counts: Vec<usize>,
    pub displs: Vec<usize>,
}

pub(crate) fn invalid(what: &str, detail: impl std::fmt::Display) -> CommError {
    CommError::InvalidArgument(format!("{what}: {detail}"))
}

impl Layout {
    /// The all-empty layout: what a rank whose own arguments are wrong still runs, so that
    /// the others find its transfers (and see a size mismatch) instead of waiting for ever.
    pub fn empty(p: usize) -> Layout {
        Layout {
            counts: vec![0; p],
            displs: vec![0; p],
        }
    }

    fn of<T>(
        what: &'static str,
        counts: &[usize],
        displs: &[usize],
        p: usize,
        len: usize,
        written: bool,
    ) -> Result<Layout> {
        if counts.len() != p || displs.len() != p {
            return Err(invalid(
                what,
                format!(
                    "{} counts and {} displacements for {p} ranks",
                    counts.len(),
                    displs.len()
                ),
            ));
        }
        for (i, (&c, &d)) in counts.iter().zip(displs).enumerate() {
            if d.checked_add(c).is_none_or(|end| end > len) {
                return Err(invalid(
                    what,
                    format!(
                        "block {i} ({c} elements at {d}) lies outside the {len}-element buffer"
                    ),
                ));
            }
        }
        if written {
            let mut blocks: Vec<(usize, usize, usize)> = (0..p)
                .filter(|&i| counts[i] > 0)
                .map(|i| (displs[i], counts[i], i))
                .collect();
            blocks.sort_unstable();
            for w in blocks.windows(2) {
                let ((d, c, i), (d2, _, j)) = (w[0], w[1]);
                if d + c > d2 {
                    return Err(invalid(what, format!("receive blocks {i} and {j} overlap")));
                }
            }
        }
        // In bounds, so the byte figures fit: (d + c) * size <= the buffer's byte length.
        let sz = std::mem::size_of::<T>();
        Ok(Layout {
            counts: counts.iter().map(|c| c * sz).collect(),
            displs: displs.iter().map(|d| d * sz).collect(),
        })
    }
}
