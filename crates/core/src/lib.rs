//! Core types of ferroflow: [`Tensor`], [`DataType`], [`Shape`], [`Status`] (TensorFlow's
//! error codes) and [`DeviceName`] parsing and matching.

pub mod alloc;
mod char_boundary;
mod device;
mod dtype;
mod file_root;
mod hash;
mod memory;
mod node_attrs;
mod quantized;
mod ragged_variant;
mod resource;
mod rng;
mod shape;
mod status;
pub mod status_payload;
mod storage;
mod tensor;
mod tensor_proto;
mod variant;
pub mod varint;
mod watched_alloc;
mod wire_enum;

pub use char_boundary::floor_char_boundary;
pub use device::{rendezvous_key, DeviceName};
pub use dtype::{DataType, TensorType};
pub use file_root::{check_file_path, file_root, set_file_root};
pub use hash::{child_frame_id, tf_hash64, tf_hash64_combine};
pub use memory::{
    check_alloc_bytes, check_tensor_alloc, memory_limit, parse_size, resident_bytes, set_memory_limit,
    RESIDENT_CHECK_BYTES,
};
pub use node_attrs::{attr, shape_proto_dims, NodeAttrs};
pub use quantized::{QInt16, QInt32, QInt8, QUInt16, QUInt8};
pub use ragged_variant::{RaggedVariant, RAGGED_TYPE_NAME};
pub use resource::ResourceHandle;
pub use rng::SplitMix64;
pub use shape::Shape;
pub use status::{Code, Result, Status};
pub use storage::Storage;
pub use tensor::Tensor;
pub use tensor_proto::{decode_string_list, encode_string_list};
pub use variant::{Opaque, TensorList, Variant, TENSOR_LIST_TYPE_NAME, TENSOR_TYPE_NAME};
pub use watched_alloc::WatchedAlloc;

/// TensorFlow's `complex64`: two f32 (real, imaginary).
pub type C64 = num_complex::Complex<f32>;
/// TensorFlow's `complex128`: two f64 (real, imaginary).
pub type C128 = num_complex::Complex<f64>;

/// The `half` crate (`f16` is TensorFlow's `half`/`float16`, `bf16` its `bfloat16`).
pub use half;
/// The `num-complex` crate.
pub use num_complex;

/// Re-export of the generated protobuf types.
pub use ferroflow_proto as proto;

/// Calls `<module>::register(r)` for each module named: how an op or kernel family
/// registers its files' ops (`register_modules! { r: concat, fill, gather }`).
#[macro_export]
macro_rules! register_modules {
    ($r:ident: $($module:ident),+ $(,)?) => {
        $($module::register($r);)+
    };
}
