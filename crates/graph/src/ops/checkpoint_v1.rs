//! TensorFlow 1's V1 checkpoint ops (`Save`, `SaveSlices`, `Restore`, `RestoreSlice`),
//! with TensorFlow's signatures.

use ferroflow_core::Status;

use crate::op_def::op;
use crate::registry::OpRegistry;
use crate::shape_fn::{Dims, ShapeCtx};

fn no_outputs(_: &ShapeCtx) -> Result<Vec<Dims>, Status> {
    Ok(vec![])
}

/// A restored tensor's shape is only known when the file is read.
fn unknown(_: &ShapeCtx) -> Result<Vec<Dims>, Status> {
    Ok(vec![None])
}

pub(crate) fn register(r: &mut OpRegistry) {
    let save = op("Save").input("filename: string").input("tensor_names: string").input("data: T");
    r.add(save.attr("T: list(type)").stateful().shape_fn(no_outputs).build());
    let save = op("SaveSlices").input("filename: string").input("tensor_names: string");
    let save = save.input("shapes_and_slices: string").input("data: T").attr("T: list(type)");
    r.add(save.stateful().shape_fn(no_outputs).build());
    let restore = op("Restore").input("file_pattern: string").input("tensor_name: string").output("tensor: dt");
    r.add(restore.attr("dt: type").attr("preferred_shard: int = -1").stateful().shape_fn(unknown).build());
    let restore = op("RestoreSlice").input("file_pattern: string").input("tensor_name: string");
    let restore = restore.input("shape_and_slice: string").output("tensor: dt").attr("dt: type");
    r.add(restore.attr("preferred_shard: int = -1").stateful().shape_fn(unknown).build());
}
