//! TensorFlow's protocol buffers (the subset ferroflow uses), with TensorFlow's field
//! numbers, in package `tensorflow`. Generated at build time by protox + tonic-prost-build.

#![allow(clippy::all, clippy::pedantic, missing_docs)]

/// Messages and services of package `tensorflow`.
pub mod tensorflow {
    include!(concat!(env!("OUT_DIR"), "/tensorflow.rs"));
}

pub use prost::Message;
pub use tensorflow::*;
