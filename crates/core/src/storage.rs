//! [`Storage`]: the typed element buffer of a tensor, one variant per TensorFlow dtype, and
//! the macros that visit it generically.

use half::{bf16, f16};

use crate::{DataType, QInt16, QInt32, QInt8, QUInt16, QUInt8, ResourceHandle, Status, TensorType, C128, C64};

/// Typed element storage of a tensor.
#[derive(Clone, Debug, PartialEq)]
pub enum Storage {
    /// DT_FLOAT
    F32(Vec<f32>),
    /// DT_DOUBLE
    F64(Vec<f64>),
    /// DT_INT32
    I32(Vec<i32>),
    /// DT_INT64
    I64(Vec<i64>),
    /// DT_UINT8
    U8(Vec<u8>),
    /// DT_BOOL
    Bool(Vec<bool>),
    /// DT_STRING (byte strings)
    Str(Vec<Vec<u8>>),
    /// DT_RESOURCE
    Resource(Vec<ResourceHandle>),
    /// DT_VARIANT
    Variant(Vec<crate::Variant>),
    /// DT_HALF
    F16(Vec<f16>),
    /// DT_BFLOAT16
    BF16(Vec<bf16>),
    /// DT_INT8
    I8(Vec<i8>),
    /// DT_INT16
    I16(Vec<i16>),
    /// DT_UINT16
    U16(Vec<u16>),
    /// DT_UINT32
    U32(Vec<u32>),
    /// DT_UINT64
    U64(Vec<u64>),
    /// DT_COMPLEX64
    C64(Vec<C64>),
    /// DT_COMPLEX128
    C128(Vec<C128>),
    /// DT_QINT8
    QI8(Vec<QInt8>),
    /// DT_QUINT8
    QU8(Vec<QUInt8>),
    /// DT_QINT16
    QI16(Vec<QInt16>),
    /// DT_QUINT16
    QU16(Vec<QUInt16>),
    /// DT_QINT32
    QI32(Vec<QInt32>),
}

/// Evaluates `$body` with `$v` bound to the element vector of whichever variant `$s` (a
/// `Storage`, `&Storage` or `&mut Storage`) holds; `$body` must compile for every element type.
#[macro_export]
macro_rules! storage_match {
    ($s:expr, $v:ident => $body:expr) => {
        match $s {
            $crate::Storage::F32($v) => $body,
            $crate::Storage::F64($v) => $body,
            $crate::Storage::I32($v) => $body,
            $crate::Storage::I64($v) => $body,
            $crate::Storage::U8($v) => $body,
            $crate::Storage::Bool($v) => $body,
            $crate::Storage::Str($v) => $body,
            $crate::Storage::Resource($v) => $body,
            $crate::Storage::Variant($v) => $body,
            $crate::Storage::F16($v) => $body,
            $crate::Storage::BF16($v) => $body,
            $crate::Storage::I8($v) => $body,
            $crate::Storage::I16($v) => $body,
            $crate::Storage::U16($v) => $body,
            $crate::Storage::U32($v) => $body,
            $crate::Storage::U64($v) => $body,
            $crate::Storage::C64($v) => $body,
            $crate::Storage::C128($v) => $body,
            $crate::Storage::QI8($v) => $body,
            $crate::Storage::QU8($v) => $body,
            $crate::Storage::QI16($v) => $body,
            $crate::Storage::QU16($v) => $body,
            $crate::Storage::QI32($v) => $body,
        }
    };
}

/// Like [`storage_match!`], wrapping the result back into the same variant.
#[macro_export]
macro_rules! storage_map {
    ($s:expr, $v:ident => $body:expr) => {
        match $s {
            $crate::Storage::F32($v) => $crate::Storage::F32($body),
            $crate::Storage::F64($v) => $crate::Storage::F64($body),
            $crate::Storage::I32($v) => $crate::Storage::I32($body),
            $crate::Storage::I64($v) => $crate::Storage::I64($body),
            $crate::Storage::U8($v) => $crate::Storage::U8($body),
            $crate::Storage::Bool($v) => $crate::Storage::Bool($body),
            $crate::Storage::Str($v) => $crate::Storage::Str($body),
            $crate::Storage::Resource($v) => $crate::Storage::Resource($body),
            $crate::Storage::Variant($v) => $crate::Storage::Variant($body),
            $crate::Storage::F16($v) => $crate::Storage::F16($body),
            $crate::Storage::BF16($v) => $crate::Storage::BF16($body),
            $crate::Storage::I8($v) => $crate::Storage::I8($body),
            $crate::Storage::I16($v) => $crate::Storage::I16($body),
            $crate::Storage::U16($v) => $crate::Storage::U16($body),
            $crate::Storage::U32($v) => $crate::Storage::U32($body),
            $crate::Storage::U64($v) => $crate::Storage::U64($body),
            $crate::Storage::C64($v) => $crate::Storage::C64($body),
            $crate::Storage::C128($v) => $crate::Storage::C128($body),
            $crate::Storage::QI8($v) => $crate::Storage::QI8($body),
            $crate::Storage::QU8($v) => $crate::Storage::QU8($body),
            $crate::Storage::QI16($v) => $crate::Storage::QI16($body),
            $crate::Storage::QU16($v) => $crate::Storage::QU16($body),
            $crate::Storage::QI32($v) => $crate::Storage::QI32($body),
        }
    };
}

fn dtype_of<T: TensorType>(_: &[T]) -> DataType {
    T::DTYPE
}

impl Storage {
    /// Number of elements.
    pub fn len(&self) -> usize {
        crate::storage_match!(self, v => v.len())
    }

    /// Whether there are no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The element type.
    pub fn dtype(&self) -> DataType {
        crate::storage_match!(self, v => dtype_of(v))
    }

    /// A copy of the elements from the fallible allocation path ([`crate::alloc`]): a copy
    /// that does not fit the budget answers RESOURCE_EXHAUSTED naming `dims`. String
    /// elements are cloned one by one.
    pub fn try_clone(&self, dims: &[usize]) -> Result<Storage, Status> {
        Ok(crate::storage_map!(self, v => {
            let mut out = crate::alloc::with_capacity(dims)?;
            out.extend_from_slice(v);
            out
        }))
    }

    /// Zero-filled (default-valued) storage of any dtype: RESOURCE_EXHAUSTED, never an
    /// abort, when it does not fit ([`crate::alloc`]).
    pub fn zeros(dtype: DataType, n: usize) -> Result<Storage, Status> {
        Ok(crate::with_dtype!(dtype, T => T::wrap(crate::alloc::zeroed::<T>(&[n])?)))
    }
}

/// Element types whose every bit pattern is a valid value and that have no padding, so a
/// buffer of them is exactly its little-endian bytes.
///
/// # Safety
/// Implementors must be plain numbers (or `#[repr(C)]`/`#[repr(transparent)]` wrappers of
/// them) with no padding and no invalid bit patterns.
pub(crate) unsafe trait Pod: TensorType + Copy {}
macro_rules! pod {
    ($($t:ty),*) => {$(
        // SAFETY: a primitive number or a transparent/`repr(C)` wrapper of primitive numbers.
        unsafe impl Pod for $t {}
    )*};
}
pod!(f32, f64, i32, i64, u8, f16, bf16, i8, i16, u16, u32, u64, C64, C128, QInt8, QUInt8, QInt16, QUInt16, QInt32);

/// Views a fixed-size storage as bytes (little-endian hosts only, checked at compile time).
pub(crate) fn raw_bytes_of(s: &Storage) -> Option<&[u8]> {
    #[cfg(not(target_endian = "little"))]
    compile_error!("ferroflow's zero-copy tensor encoding assumes a little-endian host");
    fn view<T: Copy>(v: &[T]) -> &[u8] {
        // SAFETY: T is a plain-old-data numeric type ([`Pod`]) or bool, with no padding;
        // every byte is initialized and the length is exact.
        unsafe { std::slice::from_raw_parts(v.as_ptr() as *const u8, std::mem::size_of_val(v)) }
    }
    Some(match s {
        Storage::F32(v) => view(v),
        Storage::F64(v) => view(v),
        Storage::I32(v) => view(v),
        Storage::I64(v) => view(v),
        Storage::U8(v) => view(v),
        Storage::Bool(v) => view(v),
        Storage::F16(v) => view(v),
        Storage::BF16(v) => view(v),
        Storage::I8(v) => view(v),
        Storage::I16(v) => view(v),
        Storage::U16(v) => view(v),
        Storage::U32(v) => view(v),
        Storage::U64(v) => view(v),
        Storage::C64(v) => view(v),
        Storage::C128(v) => view(v),
        Storage::QI8(v) => view(v),
        Storage::QU8(v) => view(v),
        Storage::QI16(v) => view(v),
        Storage::QU16(v) => view(v),
        Storage::QI32(v) => view(v),
        Storage::Str(_) | Storage::Resource(_) | Storage::Variant(_) => return None,
    })
}

/// Decodes little-endian elements of a [`Pod`] type (`b.len()` is a multiple of its size).
pub(crate) fn pod_from_le<T: Pod>(b: &[u8]) -> Result<Vec<T>, Status> {
    let w = std::mem::size_of::<T>();
    let n = b.len() / w;
    let mut v: Vec<T> = crate::alloc::with_capacity(&[n])?;
    // SAFETY: `v` has room for `n` elements of `w` bytes each, `b` holds at least `n * w`
    // bytes and cannot overlap a fresh allocation, and any bit pattern is a valid `T`
    // (`Pod`), so the `n` elements are initialized after the copy. Hosts are little-endian
    // (checked at compile time in `raw_bytes_of`).
    unsafe {
        std::ptr::copy_nonoverlapping(b.as_ptr(), v.as_mut_ptr().cast::<u8>(), n * w);
        v.set_len(n);
    }
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zeros_and_dtype_of_every_type() {
        for d in DataType::ALL {
            let s = Storage::zeros(d, 3).unwrap();
            assert_eq!((s.dtype(), s.len()), (d, 3));
            assert_eq!(raw_bytes_of(&s).map(|b| b.len()), d.byte_size().map(|b| 3 * b), "{d}");
        }
    }

    #[test]
    fn pod_bytes_round_trip() {
        let v = vec![C64::new(1.5, -2.0), C64::new(0.0, 3.25)];
        let b = raw_bytes_of(&Storage::C64(v.clone())).unwrap().to_vec();
        assert_eq!(&b[..8], &[1.5f32.to_le_bytes(), (-2.0f32).to_le_bytes()].concat()[..]);
        assert_eq!(pod_from_le::<C64>(&b).unwrap(), v);
    }
}
