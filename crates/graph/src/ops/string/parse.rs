//! Parsing ops of input pipelines: `ParseExampleV2`, `ParseExample` (V1), `ParseSingleExample` (tf.train.Example
//! protos), `DecodeCSV`, and `SerializeTensor`/`ParseTensor` (a tensor as a serialized
//! `TensorProto`).

use ferroflow_core::proto::attr_value::Value as AV;
use ferroflow_core::{shape_proto_dims, NodeAttrs, Status};

use crate::op_def::op;
use crate::registry::OpRegistry;
use crate::shape_fn::{Dims, ShapeCtx};

type R = Result<Vec<Dims>, Status>;

/// The `dense_shapes` attr.
fn dense_shapes(c: &ShapeCtx) -> Vec<Dims> {
    match c.node.attr_value("dense_shapes").ok().and_then(|v| v.value.as_ref()) {
        Some(AV::List(l)) => l.shape.iter().map(shape_proto_dims).collect(),
        _ => vec![],
    }
}

/// Sparse outputs `[-1, r]`, `[-1]`, `[r]` and dense outputs `batch + dense_shape`.
fn parse_shape(c: &ShapeCtx, batch: Option<Dims>) -> R {
    let ns = c.node.attr_int("num_sparse").or_else(|_| c.node.attr_int("Nsparse")).unwrap_or(0).max(0) as usize;
    let r = match &batch {
        Some(Some(b)) if b.is_empty() => 1,
        Some(Some(_)) => 2,
        _ => -1,
    };
    let mut out = vec![Some(vec![-1, r]); ns];
    out.extend(vec![Some(vec![-1]); ns]);
    out.extend(vec![Some(vec![r]); ns]);
    for d in dense_shapes(c) {
        out.push(match (&batch, d) {
            (Some(Some(b)), Some(d)) => Some(b.iter().copied().chain(d).collect()),
            _ => None,
        });
    }
    let nr = c.node.attr_list_type("ragged_value_types").map_or(0, |v| v.len());
    out.extend(vec![Some(vec![-1]); 2 * nr]);
    Ok(out)
}

fn parse_v2_shape(c: &ShapeCtx) -> R {
    parse_shape(c, Some(c.input(0)))
}

fn parse_single_shape(c: &ShapeCtx) -> R {
    parse_shape(c, Some(Some(vec![])))
}

fn csv_shape(c: &ShapeCtx) -> R {
    let n = c.node.attr_list_type("OUT_TYPE").map_or(0, |v| v.len());
    Ok(vec![c.input(0); n])
}

pub(crate) fn register(r: &mut OpRegistry) {
    r.add(
        op("SerializeTensor")
            .input("tensor: T")
            .output("serialized: string")
            .attr("T: type")
            .shape_fn(|_| Ok(vec![Some(vec![])]))
            .build(),
    );
    r.add(
        op("ParseTensor")
            .input("serialized: string")
            .output("output: out_type")
            .attr("out_type: type")
            .shape_fn(|_| Ok(vec![None]))
            .build(),
    );
    r.add(
        op("ParseExampleV2")
            .input("serialized: string")
            .input("names: string")
            .input("sparse_keys: string")
            .input("dense_keys: string")
            .input("ragged_keys: string")
            .input("dense_defaults: Tdense")
            .output("sparse_indices: num_sparse * int64")
            .output("sparse_values: sparse_types")
            .output("sparse_shapes: num_sparse * int64")
            .output("dense_values: Tdense")
            .output("ragged_values: ragged_value_types")
            .output("ragged_row_splits: ragged_split_types")
            .attr("Tdense: list(type) >= 0")
            .attr("num_sparse: int >= 0")
            .attr("sparse_types: list(type) >= 0")
            .attr("ragged_value_types: list(type) >= 0")
            .attr("ragged_split_types: list(type) >= 0")
            .attr("dense_shapes: list(shape) >= 0")
            .shape_fn(parse_v2_shape)
            .build(),
    );
    r.add(
        op("ParseExample")
            .input("serialized: string")
            .input("names: string")
            .input("sparse_keys: Nsparse * string")
            .input("dense_keys: Ndense * string")
            .input("dense_defaults: Tdense")
            .output("sparse_indices: Nsparse * int64")
            .output("sparse_values: sparse_types")
            .output("sparse_shapes: Nsparse * int64")
            .output("dense_values: Tdense")
            .attr("Nsparse: int >= 0")
            .attr("Ndense: int >= 0")
            .attr("sparse_types: list(type) >= 0")
            .attr("Tdense: list(type) >= 0")
            .attr("dense_shapes: list(shape) >= 0")
            .shape_fn(parse_v2_shape)
            .build(),
    );
    r.add(
        op("ParseSingleExample")
            .input("serialized: string")
            .input("dense_defaults: Tdense")
            .output("sparse_indices: num_sparse * int64")
            .output("sparse_values: sparse_types")
            .output("sparse_shapes: num_sparse * int64")
            .output("dense_values: Tdense")
            .attr("num_sparse: int >= 0")
            .attr("sparse_keys: list(string) >= 0")
            .attr("dense_keys: list(string) >= 0")
            .attr("sparse_types: list(type) >= 0")
            .attr("Tdense: list(type) >= 0")
            .attr("dense_shapes: list(shape) >= 0")
            .shape_fn(parse_single_shape)
            .build(),
    );
    r.add(
        op("DecodeCSV")
            .input("records: string")
            .input("record_defaults: OUT_TYPE")
            .output("output: OUT_TYPE")
            .attr("OUT_TYPE: list(type) >= 1")
            .attr("field_delim: string = ','")
            .attr("use_quote_delim: bool = true")
            .attr("na_value: string = ''")
            .attr("select_cols: list(int) = []")
            .shape_fn(csv_shape)
            .build(),
    );
}
