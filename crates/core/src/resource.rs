//! Resource handles (the element type of DT_RESOURCE tensors).

use crate::proto;

/// Names a resource (a variable, queue, accumulator …) in a task's resource manager.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct ResourceHandle {
    /// Device holding the resource, e.g. `/job:ps/replica:0/task:0/device:CPU:0`.
    pub device: String,
    /// Resource container (empty = default container).
    pub container: String,
    /// Shared name within the container.
    pub name: String,
    /// Hash of the resource type.
    pub hash_code: u64,
    /// Type name, e.g. `N10tensorflow3VarE` in TensorFlow.
    pub maybe_type_name: String,
    /// (dtype enum value, dims) of what the resource holds, when known.
    pub dtypes_and_shapes: Vec<(i32, Vec<i64>)>,
}

impl ResourceHandle {
    /// A handle to the resource `container/name` of type `type_name` on `device`, with no
    /// hash and nothing known of what it holds.
    pub fn new(device: &str, container: &str, name: &str, type_name: &str) -> ResourceHandle {
        ResourceHandle {
            device: device.to_string(),
            container: container.to_string(),
            name: name.to_string(),
            hash_code: 0,
            maybe_type_name: type_name.to_string(),
            dtypes_and_shapes: vec![],
        }
    }

    /// Converts to the wire form.
    pub fn to_proto(&self) -> proto::ResourceHandleProto {
        proto::ResourceHandleProto {
            device: self.device.clone(),
            container: self.container.clone(),
            name: self.name.clone(),
            hash_code: self.hash_code,
            maybe_type_name: self.maybe_type_name.clone(),
            dtypes_and_shapes: self
                .dtypes_and_shapes
                .iter()
                .map(|(d, s)| proto::resource_handle_proto::DtypeAndShape {
                    dtype: *d,
                    shape: Some(proto::TensorShapeProto {
                        dim: s
                            .iter()
                            .map(|&size| proto::tensor_shape_proto::Dim { size, name: String::new() })
                            .collect(),
                        unknown_rank: false,
                    }),
                })
                .collect(),
        }
    }

    /// Converts from the wire form.
    pub fn from_proto(p: &proto::ResourceHandleProto) -> ResourceHandle {
        ResourceHandle {
            device: p.device.clone(),
            container: p.container.clone(),
            name: p.name.clone(),
            hash_code: p.hash_code,
            maybe_type_name: p.maybe_type_name.clone(),
            dtypes_and_shapes: p
                .dtypes_and_shapes
                .iter()
                .map(|ds| {
                    let dims = ds.shape.as_ref().map(|s| s.dim.iter().map(|d| d.size).collect()).unwrap_or_default();
                    (ds.dtype, dims)
                })
                .collect(),
        }
    }
}
