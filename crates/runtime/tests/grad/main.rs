//! Numeric checks of every gradient function: the symbolic gradient of each op, built by
//! `ferroflow_graph::gradients`, against central differences of its forward kernel
//! (`util` is the checker). One test binary for all of them (one module per op family).

mod array;
mod array_ext;
mod array_gather;
mod array_slice;
mod ctc;
mod dilation;
mod embedding;
mod fake_quant;
mod image;
mod linalg;
mod linalg_more;
mod math;
mod math_ext;
mod nn;
mod nn_conv;
mod nn_fractional;
mod nn_norm;
mod nn_pool_argmax;
mod nn_volume;
mod qdq;
mod ragged;
mod sparse;
mod sparse_cwise;
mod special;
mod tensor_array;
mod util;
