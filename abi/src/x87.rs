//! C's `long double` and `long double complex` arithmetic on x86-64, where `long double` is
//! the x87 unit's 80-bit extended format in the first 10 of 16 bytes: done on the x87 unit as
//! C does it, each step rounded to the extended format's 64-bit mantissa.

use std::arch::asm;

/// Bytes of one `long double`.
pub const REAL: usize = 16;

/// Bytes of one `long double complex`: the real part's 16, then the imaginary part's.
pub const COMPLEX: usize = 2 * REAL;

/// `y = x + y` for one `long double complex` each: part by part.
pub fn complex_add(x: &[u8; COMPLEX], y: &mut [u8; COMPLEX]) {
    let (xr, xi) = x.split_at(REAL);
    let (yr, yi) = y.split_at_mut(REAL);
    add(
        xr.try_into().expect("one part"),
        yr.try_into().expect("one part"),
    );
    add(
        xi.try_into().expect("one part"),
        yi.try_into().expect("one part"),
    );
}

/// `y = x * y` for one `long double complex` each: (xr yr - xi yi) + (xr yi + xi yr) i, as
/// C's `*` computes it for finite values (the subtraction as the addition of the negated
/// product, which IEEE arithmetic rounds the same).
pub fn complex_mul(x: &[u8; COMPLEX], y: &mut [u8; COMPLEX]) {
    // SAFETY: 10-byte loads and stores at offsets 0 and 16 of the two 32-byte arrays; the
    // x87 register stack is empty before and after (every push is popped), as the ABI
    // wants, and every register it uses (at most three at once) is declared clobbered.
    unsafe {
        asm!(
            "fld tbyte ptr [{x}]",
            "fld tbyte ptr [{y}]",
            "fmulp",
            "fld tbyte ptr [{x} + 16]",
            "fld tbyte ptr [{y} + 16]",
            "fmulp",
            "fchs",
            "faddp",
            "fld tbyte ptr [{x}]",
            "fld tbyte ptr [{y} + 16]",
            "fmulp",
            "fld tbyte ptr [{x} + 16]",
            "fld tbyte ptr [{y}]",
            "fmulp",
            "faddp",
            "fstp tbyte ptr [{y} + 16]",
            "fstp tbyte ptr [{y}]",
            x = in(reg) x.as_ptr(),
            y = in(reg) y.as_mut_ptr(),
            out("st(0)") _,
            out("st(1)") _,
            out("st(2)") _,
            options(nostack),
        );
    }
}

/// `y = x OP y` for one `long double` each, OP the x87 instruction that pops.
macro_rules! binary {
    ($(#[$doc:meta])* $name:ident, $op:literal) => {
        $(#[$doc])*
        pub fn $name(x: &[u8; REAL], y: &mut [u8; REAL]) {
            // SAFETY: 10-byte loads and a store at the start of the two 16-byte arrays; the
            // x87 register stack is empty before and after (every push is popped), as the
            // ABI wants, and the registers used are declared clobbered.
            unsafe {
                asm!(
                    "fld tbyte ptr [{x}]",
                    "fld tbyte ptr [{y}]",
                    $op,
                    "fstp tbyte ptr [{y}]",
                    x = in(reg) x.as_ptr(),
                    y = in(reg) y.as_mut_ptr(),
                    out("st(0)") _,
                    out("st(1)") _,
                    options(nostack),
                );
            }
        }
    };
}

binary!(
    /// `y = x + y` for one `long double` each.
    add,
    "faddp"
);
binary!(
    /// `y = x * y` for one `long double` each.
    mul,
    "fmulp"
);

/// Whether `x < y` for one `long double` each (false when either is a NaN).
pub fn less(x: &[u8; REAL], y: &[u8; REAL]) -> bool {
    let (below, ordered): (u8, u8);
    // SAFETY: 10-byte loads from the two 16-byte arrays; both values are popped again
    // (`fcomip` pops one, `fstp st(0)` the other), so the stack is empty afterwards.
    unsafe {
        asm!(
            "fld tbyte ptr [{y}]",
            "fld tbyte ptr [{x}]",
            "fcomip st, st(1)",
            "fstp st(0)",
            "setb {below}",
            "setnp {ordered}",
            x = in(reg) x.as_ptr(),
            y = in(reg) y.as_ptr(),
            below = out(reg_byte) below,
            ordered = out(reg_byte) ordered,
            out("st(0)") _,
            out("st(1)") _,
            options(nostack),
        );
    }
    below != 0 && ordered != 0
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The 80-bit extended encoding of `v` (exact for every f64), in 16 bytes.
    fn ext(v: f64) -> [u8; 16] {
        let mut out = [0u8; 16];
        // SAFETY: an 8-byte load and a 10-byte store into the 16-byte array.
        unsafe {
            asm!(
                "fld qword ptr [{v}]",
                "fstp tbyte ptr [{o}]",
                v = in(reg) &v,
                o = in(reg) out.as_mut_ptr(),
                out("st(0)") _,
                options(nostack),
            );
        }
        out
    }

    fn complex(re: f64, im: f64) -> [u8; COMPLEX] {
        let mut c = [0u8; COMPLEX];
        c[..16].copy_from_slice(&ext(re));
        c[16..].copy_from_slice(&ext(im));
        c
    }

    #[test]
    fn sums_and_products_are_exact_where_the_extended_format_holds_them() {
        let mut y = complex(2.0, -1.0);
        complex_add(&complex(1.0, 2.0), &mut y);
        assert_eq!(y, complex(3.0, 1.0));
        // (1 + 2i)(3 - i) = 5 + 5i
        let mut y = complex(3.0, -1.0);
        complex_mul(&complex(1.0, 2.0), &mut y);
        assert_eq!(y, complex(5.0, 5.0));
        // (1 + 2^-30)^2 = 1 + 2^-29 + 2^-60 needs 61 bits: a double would drop 2^-60.
        let a = 1.0 + 2f64.powi(-30);
        let mut y = complex(a, 0.0);
        complex_mul(&complex(a, 0.0), &mut y);
        let mut want = complex(1.0 + 2f64.powi(-29), 0.0);
        complex_add(&complex(2f64.powi(-60), 0.0), &mut want);
        assert_eq!(y, want);
        assert_ne!(y, complex(1.0 + 2f64.powi(-29), 0.0));
    }

    #[test]
    fn real_arithmetic_and_order_in_extended_precision() {
        let a = ext(1.0 + 2f64.powi(-30));
        let mut y = a;
        mul(&a, &mut y);
        let mut want = ext(1.0 + 2f64.powi(-29));
        add(&ext(2f64.powi(-60)), &mut want);
        assert_eq!(y, want);
        assert!(less(&ext(1.0), &ext(2.0)) && !less(&ext(2.0), &ext(1.0)));
        assert!(!less(&ext(1.0), &ext(1.0)));
        assert!(!less(&ext(f64::NAN), &ext(1.0)) && !less(&ext(1.0), &ext(f64::NAN)));
        let mut big = ext(1.0);
        add(&ext(2f64.powi(-60)), &mut big);
        assert!(
            less(&ext(1.0), &big),
            "a difference only the extended format holds"
        );
    }
}
