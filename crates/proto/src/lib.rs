//! TensorFlow's protocol buffers (the subset ferroflow uses), with TensorFlow's field
//! numbers, in packages `tensorflow` and `tensorflow.eager`. Generated at build time by protox + tonic-prost-build.

#![allow(clippy::all, clippy::pedantic, missing_docs)]

/// Messages and services of package `tensorflow`.
pub mod tensorflow {
    include!(concat!(env!("OUT_DIR"), "/tensorflow.rs"));

    /// TensorFlow's remote eager service (package `tensorflow.eager`).
    pub mod eager {
        include!(concat!(env!("OUT_DIR"), "/tensorflow.eager.rs"));
    }
}

pub use prost::Message;
pub use tensorflow::*;
