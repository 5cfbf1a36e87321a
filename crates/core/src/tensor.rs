//! The [`Tensor`] value: a dtype, a shape and a shared, cheaply cloned buffer.

use std::sync::Arc;

use crate::{DataType, ResourceHandle, Shape, Status, TensorType};

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
}

impl Storage {
    fn len(&self) -> usize {
        match self {
            Storage::F32(v) => v.len(),
            Storage::F64(v) => v.len(),
            Storage::I32(v) => v.len(),
            Storage::I64(v) => v.len(),
            Storage::U8(v) => v.len(),
            Storage::Bool(v) => v.len(),
            Storage::Str(v) => v.len(),
            Storage::Resource(v) => v.len(),
            Storage::Variant(v) => v.len(),
        }
    }

    fn dtype(&self) -> DataType {
        match self {
            Storage::F32(_) => DataType::Float,
            Storage::F64(_) => DataType::Double,
            Storage::I32(_) => DataType::Int32,
            Storage::I64(_) => DataType::Int64,
            Storage::U8(_) => DataType::UInt8,
            Storage::Bool(_) => DataType::Bool,
            Storage::Str(_) => DataType::String,
            Storage::Resource(_) => DataType::Resource,
            Storage::Variant(_) => DataType::Variant,
        }
    }

    /// Zero-filled storage of a supported dtype.
    pub fn zeros(dtype: DataType, n: usize) -> Result<Storage, Status> {
        Ok(match dtype {
            DataType::Float => Storage::F32(vec![0.0; n]),
            DataType::Double => Storage::F64(vec![0.0; n]),
            DataType::Int32 => Storage::I32(vec![0; n]),
            DataType::Int64 => Storage::I64(vec![0; n]),
            DataType::UInt8 => Storage::U8(vec![0; n]),
            DataType::Bool => Storage::Bool(vec![false; n]),
            DataType::String => Storage::Str(vec![Vec::new(); n]),
            DataType::Resource => Storage::Resource(vec![ResourceHandle::default(); n]),
            DataType::Variant => Storage::Variant(vec![crate::Variant::Empty; n]),
            d => return Err(Status::unimplemented(format!("dtype {d} is not supported by ferroflow tensors yet"))),
        })
    }
}

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
        let n = shape.checked_num_elements()?;
        Ok(Tensor { shape, data: Arc::new(Storage::zeros(dtype, n)?) })
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

    /// Mutable elements; copies the buffer first if it is shared.
    pub fn data_mut<T: TensorType>(&mut self) -> Result<&mut Vec<T>, Status> {
        let dt = self.dtype();
        T::slice_mut(Arc::make_mut(&mut self.data))
            .ok_or_else(|| Status::invalid_argument(format!("expected a {} tensor, got {dt}", T::DTYPE)))
    }

    /// Consumes the tensor and returns its elements, copying only if shared.
    pub fn into_vec<T: TensorType>(self) -> Result<Vec<T>, Status> {
        let dt = self.dtype();
        let st = Arc::try_unwrap(self.data).unwrap_or_else(|a| (*a).clone());
        let mut st = st;
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

    /// Elements converted to f64 (numeric and bool types), for tests and summaries.
    pub fn to_f64_vec(&self) -> Result<Vec<f64>, Status> {
        Ok(match &*self.data {
            Storage::F32(v) => v.iter().map(|&x| x as f64).collect(),
            Storage::F64(v) => v.clone(),
            Storage::I32(v) => v.iter().map(|&x| x as f64).collect(),
            Storage::I64(v) => v.iter().map(|&x| x as f64).collect(),
            Storage::U8(v) => v.iter().map(|&x| x as f64).collect(),
            Storage::Bool(v) => v.iter().map(|&x| x as u8 as f64).collect(),
            _ => return Err(Status::invalid_argument(format!("{} tensor is not numeric", self.dtype()))),
        })
    }

    /// The raw little-endian bytes of a fixed-size dtype, without copying.
    pub fn raw_bytes(&self) -> Option<&[u8]> {
        raw_bytes_of(&self.data)
    }
}

/// Views a fixed-size storage as bytes (little-endian hosts only, checked at compile time).
pub(crate) fn raw_bytes_of(s: &Storage) -> Option<&[u8]> {
    #[cfg(not(target_endian = "little"))]
    compile_error!("ferroflow's zero-copy tensor encoding assumes a little-endian host");
    fn view<T>(v: &[T]) -> &[u8] {
        // SAFETY: T is a plain-old-data numeric type (f32/f64/i32/i64/u8/bool) with no
        // padding; every byte is initialized and the length is exact.
        unsafe { std::slice::from_raw_parts(v.as_ptr() as *const u8, std::mem::size_of_val(v)) }
    }
    Some(match s {
        Storage::F32(v) => view(v),
        Storage::F64(v) => view(v),
        Storage::I32(v) => view(v),
        Storage::I64(v) => view(v),
        Storage::U8(v) => v,
        Storage::Bool(v) => view(v),
        Storage::Str(_) | Storage::Resource(_) | Storage::Variant(_) => return None,
    })
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
from_scalar!(f32, f64, i32, i64, u8, bool);

impl From<&str> for Tensor {
    fn from(s: &str) -> Tensor {
        Tensor::scalar(s.as_bytes().to_vec())
    }
}
