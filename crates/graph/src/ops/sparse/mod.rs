//! Ops for sparse access to (partitioned) variables, as `tf.nn.embedding_lookup` and the
//! sparse optimizer updates build them: `DynamicPartition` (`ParallelDynamicStitch` is
//! defined beside `DynamicStitch`), `Unique`, `ResourceGather`, `DisableCopyOnRead`, `Scatter{Add,Sub,Update}`,
//! `ResourceScatter{Add,Sub,Update}`. The sparse optimizer updates (`SparseApplyAdagrad`, …)
//! are defined with their dense forms in `training.rs`. The segment reductions are in
//! `segment.rs`, the sparse-tensor ops in `sparse_tensor.rs` and `combine.rs`, their
//! (de)serialization in `serialize.rs`.

mod combine;
mod count;
mod edit_distance;
mod segment;
mod serialize;
mod sets;
mod sparse_tensor;

pub use combine::*;
pub use segment::*;
pub use sparse_tensor::*;

use ferroflow_core::{NodeAttrs, Status};

use super::state::NUMBER_TYPES;
use crate::op_def::{op, OpDef};
use crate::registry::OpRegistry;
use crate::shape_fn::{Dims, ShapeCtx};

type R = Result<Vec<Dims>, Status>;

/// Output i: `[-1] + data.shape[rank(partitions):]`.
fn partition_shape(c: &ShapeCtx) -> R {
    let n = c.node.attr_int("num_partitions")?.max(0) as usize;
    let out = match (c.input(0), c.input(1)) {
        (Some(d), Some(p)) if d.len() >= p.len() => {
            let mut o = vec![-1];
            o.extend_from_slice(&d[p.len()..]);
            Some(o)
        }
        (Some(d), Some(p)) => {
            return Err(c.error(format!("data rank {} is less than partitions rank {}", d.len(), p.len())))
        }
        _ => None,
    };
    Ok(vec![out; n])
}

fn unique_shape(c: &ShapeCtx) -> R {
    let counts = if c.node.op == "UniqueWithCounts" { vec![Some(vec![-1])] } else { vec![] };
    Ok([vec![Some(vec![-1]), Some(vec![-1])], counts].concat())
}

/// The variable's shape is not known here (a handle carries none): unknown.
fn resource_gather_shape(_: &ShapeCtx) -> R {
    Ok(vec![None])
}

fn no_outputs(_: &ShapeCtx) -> R {
    Ok(vec![])
}

/// `ResourceScatter{kind}`: `updates` applied at `indices` of a resource variable whose
/// `dtype` has the constraint of the type attr spec `t` ("T: {…}").
pub(crate) fn resource_scatter(kind: &str, t: &str) -> OpDef {
    op(&format!("ResourceScatter{kind}"))
        .input("resource: resource")
        .input("indices: Tindices")
        .input("updates: dtype")
        .attr(&t.replacen("T:", "dtype:", 1))
        .attr("Tindices: {int32, int64}")
        .stateful()
        .shape_fn(no_outputs)
        .build()
}

fn first_input(c: &ShapeCtx) -> R {
    Ok(vec![c.input(0)])
}

pub(crate) fn register(r: &mut OpRegistry) {
    ferroflow_core::register_modules! { r: combine, segment, sparse_tensor, serialize, count, sets, edit_distance }
    r.add(
        op("DynamicPartition")
            .input("data: T")
            .input("partitions: int32")
            .output("outputs: num_partitions * T")
            .attr("num_partitions: int >= 1")
            .attr("T: type")
            .shape_fn(partition_shape)
            .build(),
    );
    r.add(
        op("Unique")
            .input("x: T")
            .output("y: T")
            .output("idx: out_idx")
            .attr("T: type")
            .attr("out_idx: {int32, int64} = DT_INT32")
            .shape_fn(unique_shape)
            .build(),
    );
    r.add(
        op("UniqueWithCounts")
            .input("x: T")
            .output("y: T")
            .output("idx: out_idx")
            .output("count: out_idx")
            .attr("T: type")
            .attr("out_idx: {int32, int64} = DT_INT32")
            .shape_fn(unique_shape)
            .build(),
    );
    r.add(
        op("ListDiff")
            .input("x: T")
            .input("y: T")
            .output("out: T")
            .output("idx: out_idx")
            .attr("T: type")
            .attr("out_idx: {int32, int64} = DT_INT32")
            .shape_fn(|_| Ok(vec![Some(vec![-1]), Some(vec![-1])]))
            .build(),
    );
    r.add(
        op("ResourceGather")
            .input("resource: resource")
            .input("indices: Tindices")
            .output("output: dtype")
            .attr("batch_dims: int = 0")
            .attr("validate_indices: bool = true")
            .attr("dtype: type")
            .attr("Tindices: {int32, int64}")
            .stateful()
            .shape_fn(resource_gather_shape)
            .build(),
    );
    r.add(op("DisableCopyOnRead").input("resource: resource").stateful().shape_fn(no_outputs).build());
    for kind in ["Add", "Sub", "Update", "Mul", "Div", "Min", "Max"] {
        let t = match kind {
            "Update" => "T: type".to_string(),
            "Min" | "Max" => {
                "T: {float, double, int32, uint8, int16, int8, int64, bfloat16, uint16, half, uint32, uint64}"
                    .to_string()
            }
            _ => format!("T: {NUMBER_TYPES}"),
        };
        r.add(
            op(&format!("Scatter{kind}"))
                .input("ref: Ref(T)")
                .input("indices: Tindices")
                .input("updates: T")
                .output("output_ref: Ref(T)")
                .attr(&t)
                .attr("Tindices: {int32, int64}")
                .attr(&format!("use_locking: bool = {}", kind == "Update"))
                .shape_fn(first_input)
                .build(),
        );
        // The resource forms of Mul/Div/Min/Max are defined with the ND scatters.
        if matches!(kind, "Add" | "Sub" | "Update") {
            r.add(resource_scatter(kind, &t));
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::registry::op_registry;

    #[test]
    fn registered_with_tensorflow_signatures() {
        let r = op_registry();
        for name in [
            "DynamicPartition",
            "ParallelDynamicStitch",
            "Unique",
            "UniqueWithCounts",
            "ListDiff",
            "ResourceGather",
            "DisableCopyOnRead",
            "ScatterAdd",
            "ResourceScatterUpdate",
            "SparseApplyAdagrad",
            "ResourceSparseApplyAdagrad",
        ] {
            assert!(r.get(name).is_some(), "{name}");
        }
        let d = r.get("ResourceSparseApplyAdagrad").unwrap();
        let inputs: Vec<&str> = d.inputs.iter().map(|a| a.name.as_str()).collect();
        assert_eq!(inputs, ["var", "accum", "lr", "grad", "indices"]);
        assert!(d.outputs.is_empty() && d.stateful);
        assert!(r.get("SparseApplyAdagrad").unwrap().inputs[0].is_ref);
    }

    #[test]
    fn segment_and_sparse_ops_have_tensorflow_signatures() {
        let r = op_registry();
        let names = |d: &crate::op_def::OpDef| -> Vec<String> { d.inputs.iter().map(|a| a.name.clone()).collect() };
        let d = r.get("SparseSegmentMeanWithNumSegments").unwrap();
        assert_eq!(names(d), ["data", "indices", "segment_ids", "num_segments"]);
        let attrs: Vec<&str> = d.attrs.iter().map(|a| a.name.as_str()).collect();
        assert_eq!(attrs, ["T", "Tidx", "Tnumsegments", "Tsegmentids", "sparse_gradient"]);
        assert_eq!(names(r.get("SparseSegmentSqrtNGrad").unwrap()), ["grad", "indices", "segment_ids", "output_dim0"]);
        assert_eq!(r.get("SparseSegmentSumGradV2").unwrap().outputs.len(), 2);
        assert_eq!(names(r.get("SparseFillEmptyRows").unwrap()), ["indices", "values", "dense_shape", "default_value"]);
        assert_eq!(r.get("SparseFillEmptyRows").unwrap().outputs.len(), 4);
        for op in [
            "SegmentSum",
            "SegmentProd",
            "UnsortedSegmentMin",
            "SparseToDense",
            "SparseReshape",
            "SparseReorder",
            "SparseTensorDenseMatMul",
            "SparseTensorDenseAdd",
            "SparseConcat",
            "SparseSlice",
            "SparseAdd",
            "SparseReduceSum",
            "SparseSoftmax",
            "SparseCross",
            "SparseCrossV2",
            "SparseCrossHashed",
            "Bincount",
            "DenseBincount",
            "SparseBincount",
            "StringToHashBucketFast",
            "StringSplitV2",
            "Substr",
            "AsString",
            "DecodeCSV",
            "ParseExampleV2",
            "ParseExample",
            "ParseSingleExample",
        ] {
            assert!(r.get(op).is_some(), "{op}");
        }
    }
}
