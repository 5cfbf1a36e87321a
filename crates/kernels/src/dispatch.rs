//! The kernels' dtype dispatch: from a tensor's runtime [`DataType`](ferroflow_core::DataType)
//! to the Rust element type a generic kernel body is compiled for.
//!
//! Every dtype has a Rust type ([`ferroflow_core::with_dtype!`] covers them all); a kernel
//! compiled for a few of them uses [`dispatch!`].

/// Runs `$body` with the type alias `$T` bound to the Rust type of dtype `$ty`, for each
/// listed type; any other dtype is an InvalidArgument naming the node of `$ctx`.
///
/// Kernel creation already rejects the dtypes a kernel has no body for, so the last arm
/// answers only a caller that skipped that check.
macro_rules! dispatch {
    ($ty:expr, $ctx:expr, [$($t:ty),+], |$T:ident| $body:expr) => {{
        match $ty {
            $(d if d == <$t as ferroflow_core::TensorType>::DTYPE => {
                #[allow(dead_code)]
                type $T = $t;
                $body
            })+
            d => Err($ctx.error(format!("no CPU kernel for dtype {d}"))),
        }
    }};
}
pub(crate) use dispatch;
