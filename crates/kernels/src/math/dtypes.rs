//! The dtype sets the math kernels are registered for on CPU, as TensorFlow registers them.

use ferroflow_core::DataType::{self, *};

/// float32, float64, int32, int64, uint8.
pub(crate) const NUMERIC: &[DataType] = &[Float, Double, Int32, Int64, UInt8];

/// AddN: [`NUMERIC`] and complex64, complex128.
pub(crate) const NUMERIC_AND_COMPLEX: &[DataType] = &[Float, Double, Int32, Int64, UInt8, Complex64, Complex128];

/// float32, float64, int32, int64.
pub(crate) const SIGNED: &[DataType] = &[Float, Double, Int32, Int64];

/// float32, float64.
pub(crate) const FLOATS: &[DataType] = &[Float, Double];

/// float32, float64, complex64, complex128.
pub(crate) const FLOATS_AND_COMPLEX: &[DataType] = &[Float, Double, Complex64, Complex128];

/// Sign, Reciprocal: float32, float64, int32, int64 and complex.
pub(crate) const SIGNED_AND_COMPLEX: &[DataType] = &[Float, Double, Int32, Int64, Complex64, Complex128];

/// TensorFlow's real number types on CPU: floats of every width, integers of every width.
pub(crate) const REAL: &[DataType] =
    &[Float, Double, Int32, Int64, UInt8, Half, BFloat16, Int8, Int16, UInt16, UInt32, UInt64];

/// [`REAL`] and complex64, complex128 (TensorFlow's number types).
pub(crate) const NUMBER: &[DataType] =
    &[Float, Double, Int32, Int64, UInt8, Half, BFloat16, Int8, Int16, UInt16, UInt32, UInt64, Complex64, Complex128];

/// The floating and complex types.
pub(crate) const FLOAT_COMPLEX: &[DataType] = &[Float, Double, Half, BFloat16, Complex64, Complex128];

/// The signed real types (floats and signed integers).
pub(crate) const SIGNED_REAL: &[DataType] = &[Float, Double, Int32, Int64, Half, BFloat16, Int8, Int16];

/// Add (v1): TensorFlow registers no unsigned types but uint8 for it.
pub(crate) const ADD_V1: &[DataType] =
    &[Float, Double, Int32, Int64, UInt8, Half, BFloat16, Int8, Int16, Complex64, Complex128];

/// Equal/NotEqual: every number, bool, string and the quantized types (TensorFlow's CPU
/// registrations).
pub(crate) const EQ_TYPES: &[DataType] = &[
    Float, Double, Int32, Int64, UInt8, Bool, String, Half, BFloat16, Int8, Int16, UInt16, UInt32, UInt64, Complex64,
    Complex128, QInt8, QUInt8, QInt16, QUInt16, QInt32,
];

/// Every type Cast converts (TensorFlow's CPU CastOp: numeric, bool and quantized types).
pub(crate) const CAST_TYPES: &[DataType] = &[
    Float, Double, Int32, Int64, UInt8, Bool, Half, BFloat16, Int8, Int16, UInt16, UInt32, UInt64, Complex64,
    Complex128, QInt8, QUInt8, QInt16, QUInt16, QInt32,
];

/// Select and SelectV2: the numeric types, bool and string.
pub(crate) const SELECT_TYPES: &[DataType] = &[Float, Double, Int32, Int64, UInt8, Bool, String];

/// Neg: the signed real types and complex.
pub(crate) const NEG_TYPES: &[DataType] =
    &[Float, Double, Int32, Int64, Half, BFloat16, Int8, Int16, Complex64, Complex128];
