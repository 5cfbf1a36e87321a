//! `op_kernel!`: a kernel struct and its [`OpKernel::compute`](crate::OpKernel::compute) in
//! one item, for the many kernels whose `OpKernel` impl is `compute` alone.

/// Declares the kernel struct and implements [`OpKernel`](crate::OpKernel) for it with the
/// given `compute` body; `self` and the context are named by the caller:
///
/// ```ignore
/// op_kernel! {
///     struct Split { num: usize }
///     fn compute(&self, ctx) {
///         let [dim, x] = ctx.inputs()?;
///         ...
///     }
/// }
/// ```
///
/// A kernel without fields is `struct X;`.
macro_rules! op_kernel {
    (
        $(#[$meta:meta])*
        struct $name:ident;
        fn compute(&$s:ident, $ctx:ident) $body:block
    ) => {
        $(#[$meta])*
        struct $name;

        impl $crate::OpKernel for $name {
            fn compute(&$s, $ctx: &mut $crate::OpContext) -> Result<(), ferroflow_core::Status> $body
        }
    };
    (
        $(#[$meta:meta])*
        struct $name:ident { $($(#[$fmeta:meta])* $field:ident: $ty:ty),* $(,)? }
        fn compute(&$s:ident, $ctx:ident) $body:block
    ) => {
        $(#[$meta])*
        struct $name {
            $($(#[$fmeta])* $field: $ty),*
        }

        impl $crate::OpKernel for $name {
            fn compute(&$s, $ctx: &mut $crate::OpContext) -> Result<(), ferroflow_core::Status> $body
        }
    };
}
