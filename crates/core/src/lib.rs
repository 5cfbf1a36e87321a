//! Core types of ferroflow: [`Tensor`], [`DataType`], [`Shape`], [`Status`] (TensorFlow's
//! error codes) and [`DeviceName`] parsing and matching.

mod device;
mod dtype;
mod node_attrs;
mod resource;
mod shape;
mod status;
mod tensor;
mod tensor_proto;
mod variant;

pub use device::DeviceName;
pub use dtype::{DataType, TensorType};
pub use node_attrs::{attr, shape_proto_dims, NodeAttrs};
pub use resource::ResourceHandle;
pub use shape::Shape;
pub use status::{Code, Result, Status};
pub use tensor::{Storage, Tensor};
pub use tensor_proto::{decode_string_list, encode_string_list};
pub use variant::{TensorList, Variant, TENSOR_LIST_TYPE_NAME};

/// Re-export of the generated protobuf types.
pub use ferroflow_proto as proto;
