//! Op definitions (TensorFlow names, inputs, attrs, defaults, shape functions) and one
//! builder function per op, by family.

/// Builders of ops with single-tensor inputs and two outputs: `pub fn f(s, args…) ->
/// (Output, Output)` for each documented `f => "Op"(args…);`, the node's outputs 0 and 1.
macro_rules! two_output_builders {
    ($($(#[$doc:meta])* $f:ident => $op:literal($($arg:ident),*);)*) => {$(
        $(#[$doc])*
        pub fn $f(s: &Scope, $($arg: Output),*) -> (Output, Output) {
            let o = s.op($op)$(.input($arg))*.build();
            (o.output(0), o.output(1))
        }
    )*};
}

/// Builders of ops with single-tensor inputs and one output: `pub fn f(s, args…) -> Output`
/// for each documented `f => "Op"(args…);`, the node's output 0.
macro_rules! one_output_builders {
    ($($(#[$doc:meta])* $f:ident => $op:literal($($arg:ident),*);)*) => {$(
        $(#[$doc])*
        pub fn $f(s: &Scope, $($arg: Output),*) -> Output {
            s.op($op)$(.input($arg))*.build().output(0)
        }
    )*};
}

mod array;
mod audio;
mod base;
mod build;
mod candidate_sampling;
mod checkpoint_v1;
mod collective;
mod complex;
mod control_flow;
mod critical_section;
mod ctc;
mod data_flow;
mod dataset;
mod fake_quant;
mod functional;
mod image;
mod input_pipeline;
mod io;
mod iterator;
mod linalg;
mod linalg_more;
mod linalg_spectral;
mod list;
mod lookup;
mod math;
mod multinomial;
mod nn;
mod optional;
mod quantize_dequantize;
mod ragged;
mod random;
mod random_dists;
mod random_stateful;
mod random_stateless;
mod random_truncated;
mod signal;
mod sparse;
mod state;
mod string;
mod summary_writer;
mod tensor_array;
#[cfg(test)]
pub(crate) mod test_util;
mod training;

pub use array::*;
pub use audio::*;
pub use base::*;
pub use build::op_output;
pub use candidate_sampling::*;
pub use collective::{
    collective_bcast_recv, collective_bcast_send, collective_gather, collective_reduce, CollectiveKeys,
};
pub use complex::*;
pub use ctc::*;
pub use data_flow::*;
pub use fake_quant::*;
pub use functional::remote_call;
pub use image::*;
pub use io::*;
pub use linalg::*;
pub use linalg_more::*;
pub use linalg_spectral::*;
pub(crate) use math::COMPARISON_AND_LOGIC_OPS;
pub use math::*;
pub use multinomial::*;
pub use nn::*;
pub use quantize_dequantize::*;
pub use ragged::ragged_tensor_to_tensor;
pub use random::*;
pub use random_dists::*;
pub use random_stateful::*;
pub use random_stateless::*;
pub use random_truncated::*;
pub use signal::*;
pub use sparse::*;
pub use state::*;
pub use string::*;
pub use training::*;

use crate::registry::OpRegistry;

/// Registers every op family.
pub(crate) fn register_all(r: &mut OpRegistry) {
    ferroflow_core::register_modules! {
        r: array, audio, base, checkpoint_v1, candidate_sampling, collective, complex, control_flow, ctc, data_flow, dataset, fake_quant, functional, image, io, iterator, linalg, linalg_more, linalg_spectral, list, lookup, math,
        input_pipeline, critical_section, multinomial, nn, optional, quantize_dequantize, ragged, random, random_dists, random_stateful, random_stateless, random_truncated, signal, sparse, state, string, summary_writer, tensor_array, training
    }
}
