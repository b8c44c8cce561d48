//! The buffers a user reduction function (MPI_Op_create) gets: `len` elements laid out as
//! the datatype describes, one every extent bytes with the type's gaps, as MPI specifies
//! and MPICH does. Reductions carry packed data (each element's bytes in type-map order,
//! no gaps); for a type that is not contiguous the two operands are spread into such
//! buffers before the call and the result is packed back after it.

use crate::derived::Ty;

/// Alignment of the buffers' start (what `malloc` gives): the start is where element 0
/// begins, so a type whose data lie below it (a negative lower bound) gets room there.
const ALIGN: usize = 16;

/// Where one element's data lie, and how far apart elements are.
pub struct Layout {
    /// One element's byte blocks: (offset from the element's start, length), in the order
    /// packing writes them.
    blocks: Vec<(isize, usize)>,
    extent: isize,
    /// The lowest and one past the highest byte of one element's data, from its start.
    low: isize,
    high: isize,
    /// Bytes of one packed element.
    size: usize,
}

impl Layout {
    /// The layout of `ty`, or None when `count` elements are `count * size` bytes at the
    /// buffer's start (packed data already are that layout).
    pub fn of(ty: &Ty) -> Option<Layout> {
        if ty.contiguous() {
            return None;
        }
        let mut blocks = Vec::new();
        ty.for_each_block_of(1, |o, l| blocks.push((o, l)));
        let low = blocks.iter().map(|b| b.0).min().unwrap_or(0);
        let high = blocks.iter().map(|b| b.0 + b.1 as isize).max().unwrap_or(0);
        Some(Layout {
            blocks,
            extent: ty.extent,
            low,
            high,
            size: ty.size,
        })
    }

    /// Calls `f(invec, inoutvec)` on `n` elements laid out as the type describes, holding
    /// the packed elements of `input` and `inout`; `inout` gets the result, packed.
    pub fn call(&self, input: &[u8], inout: &mut [u8], n: usize, f: impl FnOnce(*mut u8, *mut u8)) {
        let packed = n * self.size;
        assert!(
            input.len() >= packed && inout.len() >= packed,
            "a user operation got {} and {} bytes for {n} elements of {} bytes",
            input.len(),
            inout.len(),
            self.size
        );
        let last = (n.max(1) - 1) as isize * self.extent;
        let lo = self.low.min(last + self.low);
        let hi = self.high.max(last + self.high).max(0);
        // Element 0 starts `shift` bytes into the buffer, aligned, with room for data below.
        let shift = (lo.min(0).unsigned_abs()).next_multiple_of(ALIGN);
        let words = (shift + hi as usize).div_ceil(ALIGN);
        let mut a = vec![0u128; words];
        let mut b = vec![0u128; words];
        // SAFETY: `shift` is inside (or one past) each buffer.
        let (pa, pb) = unsafe {
            (
                a.as_mut_ptr().cast::<u8>().add(shift),
                b.as_mut_ptr().cast::<u8>().add(shift),
            )
        };
        self.spread(input, pa, n);
        self.spread(inout, pb, n);
        f(pa, pb);
        self.gather(pb, inout, n);
    }

    /// Copies the packed elements of `data` to their places after `base`.
    fn spread(&self, data: &[u8], base: *mut u8, n: usize) {
        let mut at = 0;
        self.each_block(n, |o, l| {
            // SAFETY: every block of the `n` elements lies in the buffer `call` made for
            // them (from `lo` to `hi` bytes after `base`); `data` holds `n` packed elements.
            unsafe { std::ptr::copy_nonoverlapping(data.as_ptr().add(at), base.offset(o), l) };
            at += l;
        });
    }

    /// Packs the `n` elements after `base` into `out`.
    fn gather(&self, base: *const u8, out: &mut [u8], n: usize) {
        let mut at = 0;
        self.each_block(n, |o, l| {
            // SAFETY: as in `spread`.
            unsafe { std::ptr::copy_nonoverlapping(base.offset(o), out.as_mut_ptr().add(at), l) };
            at += l;
        });
    }

    fn each_block(&self, n: usize, mut f: impl FnMut(isize, usize)) {
        for i in 0..n {
            let start = i as isize * self.extent;
            for &(o, l) in &self.blocks {
                f(start + o, l);
            }
        }
    }
}
