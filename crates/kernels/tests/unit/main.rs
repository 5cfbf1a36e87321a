//! Unit tests of the kernels, one module per source module (mirroring `src/`), in one
//! binary so that the library is compiled once (its own test harness is off).

mod array;
mod common;
mod data_flow;
mod decode;
mod image;
mod io;
mod isa;
mod linalg;
mod math;
mod nn;
mod ragged;
mod random;
mod registry;
mod rendezvous;
mod resource;
mod state;
mod step_trace;
mod string;
mod summary;
mod timer;
