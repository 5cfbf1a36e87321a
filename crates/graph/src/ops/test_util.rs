//! Helpers of the op and gradient unit tests.

use ferroflow_core::DataType;

use crate::ops::placeholder;
use crate::scope::{Output, Scope};

/// A float placeholder of shape `dims` (-1: unknown size) in `s`.
pub(crate) fn ph(s: &Scope, dims: &[i64]) -> Output {
    placeholder(s, DataType::Float, Some(dims))
}

/// Builds each case in a fresh scope and checks that building failed with
/// INVALID_ARGUMENT and a message containing the case's text.
pub(crate) fn assert_invalid_builds<F: Fn(&Scope)>(cases: impl IntoIterator<Item = (&'static str, F)>) {
    for (want, build) in cases {
        let s = Scope::new_root();
        build(&s);
        let e = s.status().unwrap_err();
        assert_eq!(e.code, ferroflow_core::Code::InvalidArgument, "{e}");
        assert!(e.message.contains(want), "{e} (want {want})");
    }
}
