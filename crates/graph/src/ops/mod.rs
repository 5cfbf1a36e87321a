//! Op definitions (TensorFlow names, inputs, attrs, defaults, shape functions) and one
//! builder function per op, by family.

mod array;
mod base;
mod control_flow;
mod data_flow;
mod dataset;
mod functional;
mod io;
mod iterator;
mod list;
mod lookup;
mod math;
mod nn;
mod random;
mod sparse;
mod state;
mod string;
mod tensor_array;
mod training;

pub use array::*;
pub use base::*;
pub use data_flow::*;
pub use functional::remote_call;
pub use io::*;
pub use math::*;
pub use nn::*;
pub use random::*;
pub use state::*;
pub use training::*;

use crate::registry::OpRegistry;

/// Registers every op family.
pub(crate) fn register_all(r: &mut OpRegistry) {
    array::register(r);
    base::register(r);
    control_flow::register(r);
    data_flow::register(r);
    dataset::register(r);
    functional::register(r);
    io::register(r);
    iterator::register(r);
    list::register(r);
    lookup::register(r);
    math::register(r);
    nn::register(r);
    random::register(r);
    sparse::register(r);
    state::register(r);
    string::register(r);
    tensor_array::register(r);
    training::register(r);
}

/// Registers every family's gradient functions (see `crate::gradients`).
pub(crate) fn register_gradients(_r: &mut crate::gradients::GradRegistry) {}
