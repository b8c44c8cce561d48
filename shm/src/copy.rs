//! Copies for small packets: a call to `memcpy` costs more than the copy itself when a whole
//! packet is a few words, and small messages are where latency is decided.

/// Copies `n` bytes from `src` to `dst`: inline word moves up to 32 bytes, `memcpy` beyond.
///
/// # Safety
/// As for [`std::ptr::copy_nonoverlapping`]: `src` readable and `dst` writable for `n` bytes,
/// the two ranges disjoint. No alignment is needed.
#[inline(always)]
pub unsafe fn copy_bytes(src: *const u8, dst: *mut u8, n: usize) {
    // SAFETY (all arms): every access lies in [src, src + n) or [dst, dst + n) (the two
    // overlapping moves of a range cover it from both ends), unaligned reads and writes.
    unsafe {
        match n {
            0..=3 => {
                for i in 0..n {
                    *dst.add(i) = *src.add(i);
                }
            }
            4..=7 => {
                let a = (src as *const u32).read_unaligned();
                let b = (src.add(n - 4) as *const u32).read_unaligned();
                (dst as *mut u32).write_unaligned(a);
                (dst.add(n - 4) as *mut u32).write_unaligned(b);
            }
            8..=15 => {
                let a = (src as *const u64).read_unaligned();
                let b = (src.add(n - 8) as *const u64).read_unaligned();
                (dst as *mut u64).write_unaligned(a);
                (dst.add(n - 8) as *mut u64).write_unaligned(b);
            }
            16..=32 => {
                let a = (src as *const u128).read_unaligned();
                let b = (src.add(n - 16) as *const u128).read_unaligned();
                (dst as *mut u128).write_unaligned(a);
                (dst.add(n - 16) as *mut u128).write_unaligned(b);
            }
            _ => std::ptr::copy_nonoverlapping(src, dst, n),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::copy_bytes;

    #[test]
    fn every_small_length_copies_exactly() {
        let src: Vec<u8> = (0..100u8).map(|i| i.wrapping_mul(7) ^ 0x5a).collect();
        for n in 0..=80 {
            for off in 0..3 {
                let mut dst = vec![0xeeu8; 90];
                // SAFETY: both ranges are in bounds of their vectors and distinct allocations.
                unsafe { copy_bytes(src.as_ptr().add(off), dst.as_mut_ptr().add(1), n) };
                assert_eq!(&dst[1..1 + n], &src[off..off + n], "n {n} off {off}");
                assert_eq!(dst[0], 0xee);
                assert!(
                    dst[1 + n..].iter().all(|&b| b == 0xee),
                    "n {n}: wrote past the end"
                );
            }
        }
    }
}
