//! The [`Tensor`] value: a dtype, a shape and a shared, cheaply cloned buffer.

use std::sync::Arc;

use crate::storage::raw_bytes_of;
use crate::{DataType, Shape, Status, Storage, TensorType};

/// A dense tensor. Cloning is cheap (the buffer is reference counted); mutation through
/// [`Tensor::data_mut`] copies the buffer only when it is shared.
///
/// ```
/// use ferroflow_core::{Tensor, Shape};
/// let t = Tensor::new(Shape::new(vec![2, 2]), vec![1.0f32, 2.0, 3.0, 4.0]).unwrap();
/// assert_eq!(t.as_slice::<f32>().unwrap()[3], 4.0);
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Tensor {
    shape: Shape,
    data: Arc<Storage>,
}

impl Tensor {
    /// Builds a tensor; the vector length must match the shape.
    pub fn new<T: TensorType>(shape: impl Into<Shape>, data: Vec<T>) -> Result<Tensor, Status> {
        Tensor::from_storage(shape.into(), T::wrap(data))
    }

    /// Builds a tensor from storage; the storage length must match the shape.
    pub fn from_storage(shape: Shape, data: Storage) -> Result<Tensor, Status> {
        let n = shape.checked_num_elements()?;
        if n != data.len() {
            return Err(Status::invalid_argument(format!(
                "shape {shape} needs {n} elements of {}, got {}",
                data.dtype(),
                data.len()
            )));
        }
        Ok(Tensor { shape, data: Arc::new(data) })
    }

    /// A rank-0 tensor.
    pub fn scalar<T: TensorType>(v: T) -> Tensor {
        Tensor { shape: Shape::scalar(), data: Arc::new(T::wrap(vec![v])) }
    }

    /// A rank-1 tensor.
    pub fn vec<T: TensorType>(v: Vec<T>) -> Tensor {
        Tensor { shape: Shape(vec![v.len()]), data: Arc::new(T::wrap(v)) }
    }

    /// A zero-filled tensor.
    pub fn zeros(dtype: DataType, shape: impl Into<Shape>) -> Result<Tensor, Status> {
        let shape = shape.into();
        let storage = crate::with_dtype!(dtype, T => T::wrap(crate::alloc::zeroed::<T>(shape.dims())?));
        Ok(Tensor { shape, data: Arc::new(storage) })
    }

    /// The element type.
    pub fn dtype(&self) -> DataType {
        self.data.dtype()
    }

    /// The shape.
    pub fn shape(&self) -> &Shape {
        &self.shape
    }

    /// The dimensions.
    pub fn dims(&self) -> &[usize] {
        &self.shape.0
    }

    /// Number of dimensions.
    pub fn rank(&self) -> usize {
        self.shape.rank()
    }

    /// Number of elements.
    pub fn num_elements(&self) -> usize {
        self.data.len()
    }

    /// The storage.
    pub fn storage(&self) -> &Storage {
        &self.data
    }

    /// Shared storage handle (for zero-copy views).
    pub fn storage_arc(&self) -> &Arc<Storage> {
        &self.data
    }

    /// Borrows the elements as `T`, or InvalidArgument naming both dtypes.
    pub fn as_slice<T: TensorType>(&self) -> Result<&[T], Status> {
        T::slice(&self.data)
            .ok_or_else(|| Status::invalid_argument(format!("expected a {} tensor, got {}", T::DTYPE, self.dtype())))
    }

    /// Mutable elements; copies the buffer first if it is shared (through the memory
    /// budget: RESOURCE_EXHAUSTED, never an abort, when the copy does not fit).
    pub fn data_mut<T: TensorType>(&mut self) -> Result<&mut Vec<T>, Status> {
        let dt = self.dtype();
        if Arc::get_mut(&mut self.data).is_none() {
            self.data = Arc::new(self.data.try_clone(self.shape.dims())?);
        }
        T::slice_mut(Arc::make_mut(&mut self.data))
            .ok_or_else(|| Status::invalid_argument(format!("expected a {} tensor, got {dt}", T::DTYPE)))
    }

    /// Consumes the tensor and returns its elements, copying only if shared (through the
    /// memory budget, as [`Tensor::data_mut`]).
    pub fn into_vec<T: TensorType>(self) -> Result<Vec<T>, Status> {
        let dt = self.dtype();
        let dims = self.shape.dims().to_vec();
        let mut st = match Arc::try_unwrap(self.data) {
            Ok(st) => st,
            Err(shared) => shared.try_clone(&dims)?,
        };
        T::slice_mut(&mut st)
            .map(std::mem::take)
            .ok_or_else(|| Status::invalid_argument(format!("expected a {} tensor, got {dt}", T::DTYPE)))
    }

    /// The single element of a tensor with one element.
    pub fn scalar_value<T: TensorType>(&self) -> Result<T, Status> {
        let s = self.as_slice::<T>()?;
        if s.len() != 1 {
            return Err(Status::invalid_argument(format!("expected a scalar, got shape {}", self.shape)));
        }
        Ok(s[0].clone())
    }

    /// The same buffer with a new shape of equal element count.
    pub fn reshape(&self, shape: impl Into<Shape>) -> Result<Tensor, Status> {
        let shape = shape.into();
        let n = shape.checked_num_elements()?;
        if n != self.num_elements() {
            return Err(Status::invalid_argument(format!(
                "cannot reshape a tensor with {} elements to shape {shape} ({n} elements)",
                self.num_elements()
            )));
        }
        Ok(Tensor { shape, data: self.data.clone() })
    }

    /// Whether two tensors share one buffer.
    pub fn shares_buffer(&self, other: &Tensor) -> bool {
        Arc::ptr_eq(&self.data, &other.data)
    }

    /// Elements converted to f64 (real numeric, quantized and bool types), for tests and
    /// summaries.
    pub fn to_f64_vec(&self) -> Result<Vec<f64>, Status> {
        fn f<T: Copy>(v: &[T], g: impl Fn(T) -> f64) -> Vec<f64> {
            v.iter().map(|&x| g(x)).collect()
        }
        Ok(match &*self.data {
            Storage::F32(v) => f(v, f64::from),
            Storage::F64(v) => v.clone(),
            Storage::I32(v) => f(v, f64::from),
            Storage::I64(v) => f(v, |x| x as f64),
            Storage::U8(v) => f(v, f64::from),
            Storage::Bool(v) => f(v, |x| f64::from(u8::from(x))),
            Storage::F16(v) => f(v, f64::from),
            Storage::BF16(v) => f(v, f64::from),
            Storage::I8(v) => f(v, f64::from),
            Storage::I16(v) => f(v, f64::from),
            Storage::U16(v) => f(v, f64::from),
            Storage::U32(v) => f(v, f64::from),
            Storage::U64(v) => f(v, |x| x as f64),
            Storage::QI8(v) => f(v, |x| f64::from(x.0)),
            Storage::QU8(v) => f(v, |x| f64::from(x.0)),
            Storage::QI16(v) => f(v, |x| f64::from(x.0)),
            Storage::QU16(v) => f(v, |x| f64::from(x.0)),
            Storage::QI32(v) => f(v, |x| f64::from(x.0)),
            _ => return Err(Status::invalid_argument(format!("{} tensor is not real numeric", self.dtype()))),
        })
    }

    /// The raw little-endian bytes of a fixed-size dtype, without copying.
    pub fn raw_bytes(&self) -> Option<&[u8]> {
        raw_bytes_of(&self.data)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shape_checks() {
        assert!(Tensor::new(vec![2, 2], vec![1.0f32; 3]).is_err());
        let t = Tensor::new(vec![2, 3], vec![1i32; 6]).unwrap();
        assert_eq!(t.reshape(vec![3, 2]).unwrap().dims(), &[3, 2]);
        assert!(t.reshape(vec![4]).is_err());
        assert!(t.as_slice::<f32>().is_err());
    }

    #[test]
    fn copy_on_write() {
        let a = Tensor::vec(vec![1.0f32, 2.0]);
        let mut b = a.clone();
        assert!(a.shares_buffer(&b));
        b.data_mut::<f32>().unwrap()[0] = 5.0;
        assert_eq!(a.as_slice::<f32>().unwrap(), &[1.0, 2.0]);
        assert_eq!(b.as_slice::<f32>().unwrap(), &[5.0, 2.0]);
    }

    #[test]
    fn raw_bytes_view() {
        let t = Tensor::vec(vec![1.0f32]);
        assert_eq!(t.raw_bytes().unwrap(), &1.0f32.to_le_bytes());
    }
}

macro_rules! from_scalar {
    ($($t:ty),*) => {$(
        impl From<$t> for Tensor {
            fn from(v: $t) -> Tensor {
                Tensor::scalar(v)
            }
        }
        impl From<Vec<$t>> for Tensor {
            fn from(v: Vec<$t>) -> Tensor {
                Tensor::vec(v)
            }
        }
    )*};
}
from_scalar!(f32, f64, i32, i64, u8, bool, i8, i16, u16, u32, u64, half::f16, half::bf16, crate::C64, crate::C128);

impl From<&str> for Tensor {
    fn from(s: &str) -> Tensor {
        Tensor::scalar(s.as_bytes().to_vec())
    }
}
