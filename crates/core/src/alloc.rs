//! The one fallible path for tensor buffers whose size comes from remote input (a shape, a
//! broadcast, a repeat, a concatenation, a string's growth): each is checked against the
//! task's memory budget ([`crate::check_tensor_alloc`]) and then reserved with
//! `try_reserve`-style calls, so neither a request over the budget nor an allocator that
//! refuses (overcommit limits, a container's limit) can abort the process: both answer
//! RESOURCE_EXHAUSTED, naming the shape, the type and the bytes.
//!
//! Small buffers (under [`FALLIBLE_BYTES`]) take the ordinary infallible path after the
//! budget check: an allocator that refuses a few hundred KB cannot serve any step anyway,
//! and `vec![0; n]` keeps its zeroed-page fast path.

use std::alloc::Layout;
use std::cell::Cell;

use crate::memory::{check_alloc_bytes, tensor_desc};
use crate::{DataType, Status, TensorType};

/// Buffers from this many bytes on are reserved fallibly.
pub const FALLIBLE_BYTES: usize = 1 << 20;

thread_local! {
    /// The bytes this thread's allocation path is reserving right now (0: none).
    static ADMITTING: Cell<usize> = const { Cell::new(0) };
}

/// The bytes the allocation path is reserving on this thread at this moment (0 when it is
/// not): an auditing allocator in a test tells buffers that came through this path (after
/// the budget check) from those that did not.
pub fn admitting() -> usize {
    ADMITTING.try_with(Cell::get).unwrap_or(0)
}

/// What [`admitting`] answers while a reservation of unknown exact size is under way.
pub const ADMITTED_ANY: usize = usize::MAX;

/// Checks `bytes` (an estimate of a collection that is not a tensor's elements: a hash
/// table's buckets) against the budget, then runs `reserve` (the collection's
/// `try_reserve`), so neither can abort: RESOURCE_EXHAUSTED naming `what`.
pub fn try_reserve_other<E>(
    bytes: usize,
    what: impl Fn() -> String,
    reserve: impl FnOnce() -> Result<(), E>,
) -> Result<(), Status> {
    check_alloc_bytes(Some(bytes as u64), &what)?;
    reserving(ADMITTED_ANY, reserve).map_err(|_| {
        Status::resource_exhausted(format!("OOM when allocating {}: the allocator refused {bytes} bytes", what()))
    })
}

/// Runs a dependency's routine (the matrix product's packing) whose own scratch is sized by
/// the cache blocking, not by any input: [`admitting`] answers [`ADMITTED_ANY`] meanwhile, so an
/// auditing allocator tells that scratch from a kernel's own unchecked buffers.
pub fn dependency_scratch<R>(f: impl FnOnce() -> R) -> R {
    reserving(ADMITTED_ANY, f)
}

/// Marks `bytes` as admitted on this thread while `f` reserves them.
fn reserving<R>(bytes: usize, f: impl FnOnce() -> R) -> R {
    let _ = ADMITTING.try_with(|c| c.set(bytes));
    let r = f();
    let _ = ADMITTING.try_with(|c| c.set(0));
    r
}

/// Bytes of `n` elements of `T` after the budget check (`dims` and `dtype` name the tensor).
fn admit<T>(dims: &[usize], dtype: DataType) -> Result<(usize, usize), Status> {
    let n = dims.iter().try_fold(1usize, |a, &d| a.checked_mul(d));
    let bytes = n.and_then(|n| n.checked_mul(std::mem::size_of::<T>().max(1)));
    check_alloc_bytes(bytes.map(|b| b as u64), || tensor_desc(dims, dtype))?;
    // The check refused anything that overflows.
    Ok((n.unwrap_or(0), bytes.unwrap_or(0)))
}

fn refused(dims: &[usize], dtype: DataType, bytes: usize) -> Status {
    Status::resource_exhausted(format!(
        "OOM when allocating {}: the allocator refused {bytes} bytes",
        tensor_desc(dims, dtype)
    ))
}

/// An empty vector with room for the elements of a tensor of `dims` of `T`.
pub fn with_capacity<T: TensorType>(dims: &[usize]) -> Result<Vec<T>, Status> {
    let (n, bytes) = admit::<T>(dims, T::DTYPE)?;
    if bytes < FALLIBLE_BYTES {
        return Ok(Vec::with_capacity(n));
    }
    let mut v = Vec::new();
    reserving(bytes, || v.try_reserve_exact(n)).map_err(|_| refused(dims, T::DTYPE, bytes))?;
    Ok(v)
}

/// The elements of a tensor of `dims`, each `value`.
pub fn filled<T: TensorType>(dims: &[usize], value: T) -> Result<Vec<T>, Status> {
    let (n, bytes) = admit::<T>(dims, T::DTYPE)?;
    if bytes < FALLIBLE_BYTES {
        return Ok(vec![value; n]);
    }
    let mut v = Vec::new();
    reserving(bytes, || v.try_reserve_exact(n)).map_err(|_| refused(dims, T::DTYPE, bytes))?;
    v.resize(n, value);
    Ok(v)
}

/// The elements of a tensor of `dims`, each the type's default (zero, false, empty): for
/// numbers from zeroed pages, as `vec![0; n]` would.
pub fn zeroed<T: TensorType>(dims: &[usize]) -> Result<Vec<T>, Status> {
    let (n, bytes) = admit::<T>(dims, T::DTYPE)?;
    if bytes < FALLIBLE_BYTES {
        return Ok(vec![T::default(); n]);
    }
    if zero_bits_are_default::<T>() {
        // SAFETY: `T` is one of the number types (or bool), whose all-zero bit pattern is a
        // valid value and their default.
        return reserving(bytes, || unsafe { zeroed_vec::<T>(n) }).ok_or_else(|| refused(dims, T::DTYPE, bytes));
    }
    let mut v = Vec::new();
    reserving(bytes, || v.try_reserve_exact(n)).map_err(|_| refused(dims, T::DTYPE, bytes))?;
    v.resize(n, T::default());
    Ok(v)
}

/// Whether `T` is a number type (or bool): all-zero bits are a valid value, its default.
fn zero_bits_are_default<T: 'static>() -> bool {
    use crate::{QInt16, QInt32, QInt8, QUInt16, QUInt8, C128, C64};
    use half::{bf16, f16};
    use std::any::TypeId;
    let t = TypeId::of::<T>();
    [
        TypeId::of::<f32>(),
        TypeId::of::<f64>(),
        TypeId::of::<i32>(),
        TypeId::of::<i64>(),
        TypeId::of::<u8>(),
        TypeId::of::<bool>(),
        TypeId::of::<f16>(),
        TypeId::of::<bf16>(),
        TypeId::of::<i8>(),
        TypeId::of::<i16>(),
        TypeId::of::<u16>(),
        TypeId::of::<u32>(),
        TypeId::of::<u64>(),
        TypeId::of::<C64>(),
        TypeId::of::<C128>(),
        TypeId::of::<QInt8>(),
        TypeId::of::<QUInt8>(),
        TypeId::of::<QInt16>(),
        TypeId::of::<QUInt16>(),
        TypeId::of::<QInt32>(),
    ]
    .contains(&t)
}

/// `n` elements of `T`, every byte zero, or None when the allocator refuses.
///
/// # Safety
/// The all-zero bit pattern must be a valid `T`.
unsafe fn zeroed_vec<T>(n: usize) -> Option<Vec<T>> {
    if n == 0 || std::mem::size_of::<T>() == 0 {
        return Some(Vec::new());
    }
    let layout = Layout::array::<T>(n).ok()?;
    // SAFETY: the layout has a non-zero size (n > 0 and T is not zero-sized).
    let p = unsafe { std::alloc::alloc_zeroed(layout) } as *mut T;
    if p.is_null() {
        return None;
    }
    // SAFETY: `p` comes from the global allocator with the layout of `n` `T`s (capacity n),
    // and its `n` elements are initialized (zero bits are a valid `T` by the contract).
    Some(unsafe { Vec::from_raw_parts(p, n, n) })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Code;

    #[test]
    fn buffers_within_the_budget_and_refusals_beyond_it() {
        assert_eq!(zeroed::<f32>(&[2, 3]).unwrap(), vec![0.0; 6]);
        let big = zeroed::<i64>(&[1 << 18]).unwrap();
        assert!(big.len() == 1 << 18 && big.iter().all(|&x| x == 0));
        assert_eq!(zeroed::<Vec<u8>>(&[1 << 16]).unwrap().len(), 1 << 16);
        assert_eq!(filled(&[1 << 19], 7u16).unwrap().iter().filter(|&&x| x == 7).count(), 1 << 19);
        assert_eq!(filled(&[2], b"ab".to_vec()).unwrap(), vec![b"ab".to_vec(); 2]);
        assert!(with_capacity::<f64>(&[1 << 20]).unwrap().capacity() >= 1 << 20);
        assert!(zeroed::<bool>(&[0]).unwrap().is_empty());
        for e in [
            zeroed::<f32>(&[1 << 31, 1 << 31]).unwrap_err(),
            filled(&[usize::MAX, 2], 1u8).unwrap_err(),
            with_capacity::<Vec<u8>>(&[1 << 40]).unwrap_err(),
        ] {
            assert_eq!(e.code, Code::ResourceExhausted, "{e}");
            assert!(e.message.contains("OOM when allocating tensor with shape["), "{e}");
        }
        let e = zeroed::<f32>(&[1 << 31, 1 << 31]).unwrap_err();
        assert!(e.message.contains("shape[2147483648,2147483648] and type float"), "{e}");
    }
}
