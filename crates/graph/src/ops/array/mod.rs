//! Array ops: definitions (TensorFlow names, attrs, defaults), shape functions and one
//! builder function per op.

mod builders;
mod defs;
mod ext_builders;
mod ext_defs;
mod ext_shapes;
mod shapes;
mod slice_shapes;

pub use builders::*;
pub use ext_builders::*;

use crate::registry::OpRegistry;

/// Registers the array ops.
pub(crate) fn register(r: &mut OpRegistry) {
    defs::register(r);
    ext_defs::register(r);
}

#[cfg(test)]
mod ext_tests;
#[cfg(test)]
mod tests;
