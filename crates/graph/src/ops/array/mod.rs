//! Array ops: definitions (TensorFlow names, attrs, defaults), shape functions and one
//! builder function per op.

mod builders;
mod defs;
mod shapes;
mod slice_shapes;

pub use builders::*;

pub(crate) use defs::register;

#[cfg(test)]
mod tests;
