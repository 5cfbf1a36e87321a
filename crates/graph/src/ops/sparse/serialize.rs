//! Sparse tensors boxed into one dense tensor and back (`tf.data` elements and batches that
//! are `SparseTensor`s): `SerializeSparse`, `SerializeManySparse`, `DeserializeSparse`,
//! `DeserializeManySparse`.

use ferroflow_core::Status;

use crate::op_def::op;
use crate::ops::array::want_rank;
use crate::registry::OpRegistry;
use crate::shape_fn::{Dims, ShapeCtx};

type R = Result<Vec<Dims>, Status>;

fn check_sparse(c: &ShapeCtx) -> Result<(), Status> {
    want_rank(c, 0, 2)?;
    want_rank(c, 1, 1)?;
    want_rank(c, 2, 1)
}

fn serialize_shape(c: &ShapeCtx) -> R {
    check_sparse(c)?;
    Ok(vec![Some(vec![3])])
}

fn serialize_many_shape(c: &ShapeCtx) -> R {
    check_sparse(c)?;
    Ok(vec![Some(vec![-1, 3])])
}

/// Rank unknown unless the input's rank is known and its last dim is 3.
fn deserialize_shape(c: &ShapeCtx) -> R {
    if let Some(d) = c.input(0) {
        match d.last() {
            None => return Err(c.error("Serialized sparse should have non-zero rank")),
            Some(&n) if n >= 0 && n != 3 => {
                return Err(c.error(format!("Serialized sparse should have 3 as the last dimension, got {d:?}")))
            }
            _ => {}
        }
    }
    Ok(vec![Some(vec![-1, -1]), Some(vec![-1]), Some(vec![-1])])
}

pub(crate) fn register(r: &mut OpRegistry) {
    for (name, shape) in
        [("SerializeSparse", serialize_shape as fn(&ShapeCtx) -> R), ("SerializeManySparse", serialize_many_shape)]
    {
        r.add(
            op(name)
                .input("sparse_indices: int64")
                .input("sparse_values: T")
                .input("sparse_shape: int64")
                .output("serialized_sparse: out_type")
                .attr("T: type")
                .attr("out_type: {string, variant} = DT_STRING")
                .shape_fn(shape)
                .build(),
        );
    }
    r.add(
        op("DeserializeSparse")
            .input("serialized_sparse: Tserialized")
            .output("sparse_indices: int64")
            .output("sparse_values: dtype")
            .output("sparse_shape: int64")
            .attr("dtype: type")
            .attr("Tserialized: {string, variant} = DT_STRING")
            .shape_fn(deserialize_shape)
            .build(),
    );
    r.add(
        op("DeserializeManySparse")
            .input("serialized_sparse: string")
            .output("sparse_indices: int64")
            .output("sparse_values: dtype")
            .output("sparse_shape: int64")
            .attr("dtype: type")
            .shape_fn(deserialize_shape)
            .build(),
    );
}
