//! TensorFlow data types.

use crate::wire_enum::wire_enum;
use crate::{Status, Storage};

wire_enum! {
    /// A TensorFlow element type. Values equal TensorFlow's `DataType` enum; reference types
    /// (`DT_FLOAT_REF` …) are the base type with [`DataType::is_ref`] handled by callers.
    pub enum DataType {
        Float = 1 => "float32",
        Double = 2 => "float64",
        Int32 = 3 => "int32",
        UInt8 = 4 => "uint8",
        Int16 = 5 => "int16",
        Int8 = 6 => "int8",
        String = 7 => "string",
        Complex64 = 8 => "complex64",
        Int64 = 9 => "int64",
        Bool = 10 => "bool",
        QInt8 = 11 => "qint8",
        QUInt8 = 12 => "quint8",
        QInt32 = 13 => "qint32",
        BFloat16 = 14 => "bfloat16",
        QInt16 = 15 => "qint16",
        QUInt16 = 16 => "quint16",
        UInt16 = 17 => "uint16",
        Complex128 = 18 => "complex128",
        Half = 19 => "float16",
        Resource = 20 => "resource",
        Variant = 21 => "variant",
        UInt32 = 22 => "uint32",
        UInt64 = 23 => "uint64",
    }
    /// TensorFlow's Python-side name (`float32`, `int64`, …).
    fn name;
}

impl DataType {
    /// Parses a wire value; `_REF` values (base + 100) map to their base type.
    /// Returns the type and whether it was a reference type.
    pub fn from_proto(v: i32) -> Result<(DataType, bool), Status> {
        let (base, is_ref) = if v > 100 { (v - 100, true) } else { (v, false) };
        DataType::from_wire(base)
            .map(|d| (d, is_ref))
            .ok_or_else(|| Status::invalid_argument(format!("unknown or unsupported DataType enum value {v}")))
    }

    /// Parses a non-reference wire value.
    pub fn from_i32(v: i32) -> Result<DataType, Status> {
        match DataType::from_proto(v)? {
            (d, false) => Ok(d),
            (d, true) => Err(Status::invalid_argument(format!("expected a non-reference type, got {}_ref", d.name()))),
        }
    }

    /// The wire value.
    pub fn as_i32(self) -> i32 {
        self as i32
    }

    /// The wire value of the reference variant.
    pub fn as_ref_i32(self) -> i32 {
        self as i32 + 100
    }

    /// TensorFlow's name in its messages (`float`, `double`, `half`, `int64`, …).
    pub fn tf_name(self) -> &'static str {
        match self {
            DataType::Float => "float",
            DataType::Double => "double",
            DataType::Half => "half",
            d => d.name(),
        }
    }

    /// Size of one element in `tensor_content`, or `None` for string/resource/variant.
    pub fn byte_size(self) -> Option<usize> {
        use DataType::*;
        Some(match self {
            Float | Int32 | UInt32 | QInt32 => 4,
            Double | Int64 | UInt64 | Complex64 => 8,
            UInt8 | Int8 | Bool | QInt8 | QUInt8 => 1,
            Int16 | UInt16 | BFloat16 | Half | QInt16 | QUInt16 => 2,
            Complex128 => 16,
            String | Resource | Variant => return None,
        })
    }

    /// Whether ferroflow tensors can hold this type (every type TensorProto carries).
    pub fn is_supported(self) -> bool {
        true
    }

    /// A quantized type (`qint8`, `quint8`, `qint16`, `quint16`, `qint32`).
    pub fn is_quantized(self) -> bool {
        use DataType::*;
        matches!(self, QInt8 | QUInt8 | QInt16 | QUInt16 | QInt32)
    }

    /// A complex type (`complex64`, `complex128`).
    pub fn is_complex(self) -> bool {
        matches!(self, DataType::Complex64 | DataType::Complex128)
    }

    /// Float or double.
    pub fn is_float(self) -> bool {
        matches!(self, DataType::Float | DataType::Double)
    }

    /// A numeric type (integer or float), excluding bool.
    pub fn is_numeric(self) -> bool {
        use DataType::*;
        matches!(self, Float | Double | Int32 | Int64 | UInt8 | Int16 | Int8 | UInt16 | UInt32 | UInt64)
    }
}

impl std::fmt::Display for DataType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Rust element types that a [`crate::Tensor`] can hold.
pub trait TensorType: Clone + Default + Send + Sync + std::fmt::Debug + 'static {
    /// The matching TensorFlow type.
    const DTYPE: DataType;
    /// Borrows the elements if the storage holds this type.
    fn slice(s: &Storage) -> Option<&[Self]>;
    /// Borrows the elements mutably if the storage holds this type.
    fn slice_mut(s: &mut Storage) -> Option<&mut Vec<Self>>;
    /// Wraps a vector as storage.
    fn wrap(v: Vec<Self>) -> Storage;
}

macro_rules! tensor_type {
    ($t:ty, $dt:ident, $var:ident) => {
        impl TensorType for $t {
            const DTYPE: DataType = DataType::$dt;
            fn slice(s: &Storage) -> Option<&[Self]> {
                match s {
                    Storage::$var(v) => Some(v),
                    _ => None,
                }
            }
            fn slice_mut(s: &mut Storage) -> Option<&mut Vec<Self>> {
                match s {
                    Storage::$var(v) => Some(v),
                    _ => None,
                }
            }
            fn wrap(v: Vec<Self>) -> Storage {
                Storage::$var(v)
            }
        }
    };
}

tensor_type!(f32, Float, F32);
tensor_type!(f64, Double, F64);
tensor_type!(i32, Int32, I32);
tensor_type!(i64, Int64, I64);
tensor_type!(u8, UInt8, U8);
tensor_type!(bool, Bool, Bool);
tensor_type!(Vec<u8>, String, Str);
tensor_type!(crate::ResourceHandle, Resource, Resource);
tensor_type!(crate::Variant, Variant, Variant);
tensor_type!(half::f16, Half, F16);
tensor_type!(half::bf16, BFloat16, BF16);
tensor_type!(i8, Int8, I8);
tensor_type!(i16, Int16, I16);
tensor_type!(u16, UInt16, U16);
tensor_type!(u32, UInt32, U32);
tensor_type!(u64, UInt64, U64);
tensor_type!(crate::C64, Complex64, C64);
tensor_type!(crate::C128, Complex128, C128);
tensor_type!(crate::QInt8, QInt8, QI8);
tensor_type!(crate::QUInt8, QUInt8, QU8);
tensor_type!(crate::QInt16, QInt16, QI16);
tensor_type!(crate::QUInt16, QUInt16, QU16);
tensor_type!(crate::QInt32, QInt32, QI32);

/// Evaluates `$body` with the type alias `$T` bound to the Rust element type of the
/// [`DataType`] `$dt`; every dtype has one, so the match is exhaustive.
///
/// ```
/// use ferroflow_core::{with_dtype, DataType};
/// let size = with_dtype!(DataType::Half, T => std::mem::size_of::<T>());
/// assert_eq!(size, 2);
/// ```
#[macro_export]
macro_rules! with_dtype {
    ($dt:expr, $T:ident => $body:expr) => {
        $crate::__with_dtype_arms!($dt, $T, $body;
            Float => f32,
            Double => f64,
            Int32 => i32,
            UInt8 => u8,
            Int16 => i16,
            Int8 => i8,
            String => Vec<u8>,
            Complex64 => $crate::C64,
            Int64 => i64,
            Bool => bool,
            QInt8 => $crate::QInt8,
            QUInt8 => $crate::QUInt8,
            QInt32 => $crate::QInt32,
            BFloat16 => $crate::half::bf16,
            QInt16 => $crate::QInt16,
            QUInt16 => $crate::QUInt16,
            UInt16 => u16,
            Complex128 => $crate::C128,
            Half => $crate::half::f16,
            Resource => $crate::ResourceHandle,
            Variant => $crate::Variant,
            UInt32 => u32,
            UInt64 => u64,
        )
    };
}

/// The match behind [`with_dtype!`]: one arm per `(dtype => element type)` row.
#[doc(hidden)]
#[macro_export]
macro_rules! __with_dtype_arms {
    ($dt:expr, $T:ident, $body:expr; $($variant:ident => $ty:ty,)*) => {
        match $dt {
            $($crate::DataType::$variant => {
                type $T = $ty;
                $body
            })*
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ref_types_parse() {
        assert_eq!(DataType::from_proto(101).unwrap(), (DataType::Float, true));
        assert_eq!(DataType::from_proto(9).unwrap(), (DataType::Int64, false));
        assert!(DataType::from_proto(0).is_err());
        assert!(DataType::from_proto(77).is_err());
        assert!(DataType::from_i32(103).is_err());
        assert_eq!(DataType::from_proto(111).unwrap(), (DataType::QInt8, true));
    }

    #[test]
    fn every_dtype_has_its_rust_type() {
        for d in DataType::ALL {
            let (dt, size) = with_dtype!(d, T => (T::DTYPE, std::mem::size_of::<T>()));
            assert_eq!(dt, d);
            if let Some(b) = d.byte_size() {
                assert_eq!(b, size, "{d}");
            }
        }
    }
}
