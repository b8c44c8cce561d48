//! Plain-old-data element types that travel as raw bytes (rsmpi's `Equivalence`).

/// A type whose values can be sent as their bytes and rebuilt from any received bytes:
/// `Copy`, no padding, no pointers, every bit pattern valid.
///
/// # Safety
/// Implement it only for `#[repr(C)]` types made of `Equivalence` fields with no padding.
/// [`equivalence!`](crate::equivalence) does it for such a struct.
pub unsafe trait Equivalence: Copy + 'static {}

macro_rules! pod {
    ($($t:ty),*) => { $(
        // SAFETY: primitive numeric types have no padding and every bit pattern is valid.
        unsafe impl Equivalence for $t {}
    )* };
}
pod!(u8, i8, u16, i16, u32, i32, u64, i64, u128, i128, usize, isize, f32, f64);

// SAFETY: an array of padding-free, any-bit-pattern elements is itself such a type.
unsafe impl<T: Equivalence, const N: usize> Equivalence for [T; N] {}

/// Declares a `#[repr(C)]`, padding-free struct of `Equivalence` fields as `Equivalence`.
/// The size check rejects structs with padding at compile time.
#[macro_export]
macro_rules! equivalence {
    ($t:ty { $($f:ident : $ft:ty),* $(,)? }) => {
        const _: () = assert!(
            ::std::mem::size_of::<$t>() == 0 $(+ ::std::mem::size_of::<$ft>())*,
            "an Equivalence struct must have no padding: add a field that fills the gap \
             (e.g. `_pad: [u8; 4]` after a last `i32` that follows `f64`s) or order the \
             fields from the largest to the smallest"
        );
        // SAFETY: the assertion above proves there is no padding, and every field is Equivalence.
        unsafe impl $crate::Equivalence for $t {}
    };
}

/// Something that can be sent: one value, a slice or a vector of `Equivalence` values.
pub trait Buffer {
    /// The bytes to send.
    fn as_bytes(&self) -> &[u8];
}

/// Something that can be received into.
pub trait BufferMut {
    /// The bytes to receive into.
    fn as_bytes_mut(&mut self) -> &mut [u8];
}

impl<T: Equivalence> Buffer for T {
    fn as_bytes(&self) -> &[u8] {
        // SAFETY: T is padding-free plain data; the slice covers exactly this value.
        unsafe { std::slice::from_raw_parts((self as *const T).cast(), std::mem::size_of::<T>()) }
    }
}

impl<T: Equivalence> Buffer for [T] {
    fn as_bytes(&self) -> &[u8] {
        // SAFETY: as above, for the whole slice.
        unsafe { std::slice::from_raw_parts(self.as_ptr().cast(), std::mem::size_of_val(self)) }
    }
}

impl<T: Equivalence> Buffer for Vec<T> {
    fn as_bytes(&self) -> &[u8] {
        self[..].as_bytes()
    }
}

impl<T: Equivalence> BufferMut for T {
    fn as_bytes_mut(&mut self) -> &mut [u8] {
        // SAFETY: T accepts any bit pattern, so writing arbitrary bytes keeps it valid.
        unsafe { std::slice::from_raw_parts_mut((self as *mut T).cast(), std::mem::size_of::<T>()) }
    }
}

impl<T: Equivalence> BufferMut for [T] {
    fn as_bytes_mut(&mut self) -> &mut [u8] {
        // SAFETY: as above, for the whole slice.
        unsafe {
            std::slice::from_raw_parts_mut(self.as_mut_ptr().cast(), std::mem::size_of_val(self))
        }
    }
}

impl<T: Equivalence> BufferMut for Vec<T> {
    fn as_bytes_mut(&mut self) -> &mut [u8] {
        self[..].as_bytes_mut()
    }
}

/// Rebuilds a vector of `T` from received bytes; an error if they are not a whole number of `T`.
pub fn vec_from_bytes<T: Equivalence>(bytes: &[u8]) -> crate::Result<Vec<T>> {
    let sz = std::mem::size_of::<T>().max(1);
    if !bytes.len().is_multiple_of(sz) {
        return Err(crate::CommError::InvalidArgument(format!(
            "received {} bytes, not a whole number of {}-byte elements",
            bytes.len(),
            sz
        )));
    }
    let mut v: Vec<T> = Vec::with_capacity(bytes.len() / sz);
    // SAFETY: capacity holds bytes.len()/sz elements; T accepts any bit pattern; set_len
    // follows the copy of exactly that many elements.
    unsafe {
        std::ptr::copy_nonoverlapping(bytes.as_ptr(), v.as_mut_ptr().cast::<u8>(), bytes.len());
        v.set_len(bytes.len() / sz);
    }
    Ok(v)
}
