//! Element types for the typed helpers, and zero-copy views of typed slices as bytes.

use crate::op::ElemType;

mod sealed {
    pub trait Sealed {}
}

/// A plain numeric element: every bit pattern is a valid value and there is no padding.
/// Implemented for u8..u64, i8..i64, f32 and f64 only.
pub trait Element: Copy + Default + Send + Sync + 'static + sealed::Sealed {
    const TYPE: ElemType;
    /// Reads one element from exactly `size_of::<Self>()` native-endian bytes.
    fn read(b: &[u8]) -> Self;
    /// Writes one element into exactly `size_of::<Self>()` bytes.
    fn write(self, b: &mut [u8]);
}

macro_rules! element {
    ($($t:ty => $e:ident),*) => {$(
        impl sealed::Sealed for $t {}
        impl Element for $t {
            const TYPE: ElemType = ElemType::$e;
            fn read(b: &[u8]) -> Self {
                let mut a = [0u8; std::mem::size_of::<$t>()];
                a.copy_from_slice(b);
                <$t>::from_ne_bytes(a)
            }
            fn write(self, b: &mut [u8]) {
                b.copy_from_slice(&self.to_ne_bytes());
            }
        }
    )*};
}

element!(u8 => U8, u16 => U16, u32 => U32, u64 => U64, i8 => I8, i16 => I16, i32 => I32, i64 => I64, f32 => F32, f64 => F64);

/// The bytes of a typed slice.
pub fn as_bytes<T: Element>(s: &[T]) -> &[u8] {
    // SAFETY: Element is sealed and implemented only for padding-free primitive numbers; the
    // byte view covers exactly the slice's memory and borrows it for the same lifetime.
    unsafe { std::slice::from_raw_parts(s.as_ptr().cast::<u8>(), std::mem::size_of_val(s)) }
}

/// The bytes of a mutable typed slice; any bytes written form valid elements.
pub fn as_bytes_mut<T: Element>(s: &mut [T]) -> &mut [u8] {
    // SAFETY: as in `as_bytes`; in addition every bit pattern is a valid value of these
    // primitive numeric types, so writes through the byte view cannot create invalid values.
    unsafe { std::slice::from_raw_parts_mut(s.as_mut_ptr().cast::<u8>(), std::mem::size_of_val(s)) }
}
