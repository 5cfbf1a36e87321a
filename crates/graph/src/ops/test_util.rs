//! Helpers of the op and gradient unit tests.

use ferroflow_core::DataType;

use crate::ops::placeholder;
use crate::scope::{Output, Scope};

/// A float placeholder of shape `dims` (-1: unknown size) in `s`.
pub(crate) fn ph(s: &Scope, dims: &[i64]) -> Output {
    placeholder(s, DataType::Float, Some(dims))
}
