//! Array ops: definitions (TensorFlow names, attrs, defaults), shape functions and one
//! builder function per op.

mod bitcast;
mod builders;
mod defs;
mod ext_builders;
mod ext_defs;
mod ext_shapes;
mod shapes;
mod slice_shapes;
mod space;

pub use bitcast::bitcast;
pub use builders::*;
pub use ext_builders::*;
pub(super) use shapes::{const_ints, segment_sum_shape, want_rank};
pub use space::*;

use crate::registry::OpRegistry;

/// Registers the array ops.
pub(crate) fn register(r: &mut OpRegistry) {
    bitcast::register(r);
    defs::register(r);
    ext_defs::register(r);
    space::register(r);
}

#[cfg(test)]
mod ext_tests;
#[cfg(test)]
mod tests;
