//! TensorFlow 1's V1 checkpoint kernels: `Save` (whole tensors), `SaveSlices` (what
//! `tf.compat.v1.train.Saver(write_version=V1)` emits; slices of partitioned variables),
//! `Restore` and `RestoreSlice` (a file pattern, one tensor each). `RestoreV2` reads V1
//! files too, through [`restore_v1`], when its prefix has no V2 index.

use ferroflow_core::{DataType, NodeAttrs, Status};

use super::bundle_ops::strings;
use super::checkpoint_v1_reader::V1Reader;
use super::checkpoint_v1_writer::V1Writer;
use super::tensor_slice::{parse_shape_and_slice, TensorSlice};
use crate::array::util::node_context;
use crate::{KernelRegistry, OpContext, OpKernel};

/// Input `i`, which must hold one string (TensorFlow's wording).
fn one_string(ctx: &OpContext, i: usize, what: &str) -> Result<String, Status> {
    let mut v = strings(ctx, i, what)?;
    if v.len() != 1 {
        return Err(
            ctx.error(format!("Input {i} ({what}) must be a string scalar; got a tensor of {} elements", v.len()))
        );
    }
    Ok(v.remove(0))
}

/// `Save` (`slices == false`) and `SaveSlices`.
struct Save {
    slices: bool,
}

impl OpKernel for Save {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let node = ctx.node().name.clone();
        let filename = one_string(ctx, 0, "filename")?;
        let fixed = if self.slices { 3 } else { 2 };
        let names = strings(ctx, 1, "tensor_names")?;
        let n = names.len();
        let specs = if self.slices { strings(ctx, 2, "shapes_and_slices")? } else { vec![String::new(); n] };
        if specs.len() != n {
            return Err(
                ctx.error(format!("Expected {n} elements for the tensor shapes and slices but got {}", specs.len()))
            );
        }
        if ctx.num_inputs() != n + fixed {
            return Err(ctx.error(format!(
                "Expected totally {} inputs as input #1 (which is a string tensor of saved names) contains {n} \
                 names, but received {} inputs",
                n + fixed,
                ctx.num_inputs()
            )));
        }
        ferroflow_core::check_file_path(&filename, &format!("node '{node}': checkpoint file"))
            .map_err(|e| e.with_node(&node))?;
        let mut w = V1Writer::new(&filename);
        for (i, (name, spec)) in names.iter().zip(&specs).enumerate() {
            let t = ctx.input(fixed + i)?;
            let (full, slice) = if spec.is_empty() {
                (t.dims().to_vec(), TensorSlice::full(t.rank()))
            } else {
                parse_shape_and_slice(spec).map_err(|e| ctx.error(format!("tensor '{name}': {}", e.message)))?
            };
            w.add(name, &full, &slice, &t).map_err(|e| node_context(&node, e))?;
        }
        w.finish().map_err(|e| node_context(&node, e))
    }
}

/// `Restore` (`slices == false`) and `RestoreSlice`.
struct Restore {
    slices: bool,
    dtype: DataType,
}

impl OpKernel for Restore {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let node = ctx.node().name.clone();
        let pattern = one_string(ctx, 0, "file_pattern")?;
        let name = one_string(ctx, 1, "tensor_name")?;
        let spec = if self.slices { one_string(ctx, 2, "shape_and_slice")? } else { String::new() };
        ferroflow_core::check_file_path(&pattern, &format!("node '{node}': checkpoint file pattern"))
            .map_err(|e| e.with_node(&node))?;
        let reader = V1Reader::open(&pattern).map_err(|e| node_context(&node, e))?;
        let t = restore_v1(&reader, &pattern, &name, &spec, self.dtype).map_err(|e| node_context(&node, e))?;
        ctx.set_output(0, t)
    }
}

/// Tensor `name` (of `spec`'s slice when not empty) from a V1 checkpoint, checked to be
/// `want` and to have the full shape `spec` names.
pub(crate) fn restore_v1(
    reader: &V1Reader,
    pattern: &str,
    name: &str,
    spec: &str,
    want: DataType,
) -> Result<ferroflow_core::Tensor, Status> {
    let stored = reader.tensor(name)?;
    if stored.dtype != want {
        return Err(Status::invalid_argument(format!(
            "Expected to restore a tensor of type {}, got a tensor of type {} instead: tensor_name = {name}",
            want.tf_name(),
            stored.dtype.tf_name()
        )));
    }
    if spec.is_empty() {
        return reader.read(name, None);
    }
    let (full, slice) = parse_shape_and_slice(spec).map_err(|e| e.context(format!("tensor_name = {name}")))?;
    if full != stored.shape {
        return Err(Status::invalid_argument(format!(
            "tensor_name = {name}; shape in shape_and_slice spec {full:?} does not match the shape stored in \
             checkpoint {pattern}: {:?}",
            stored.shape
        )));
    }
    reader.read(name, Some(&slice))
}

pub(crate) fn register(r: &mut KernelRegistry) {
    r.add("Save", |_| Ok(Box::new(Save { slices: false })));
    r.add("SaveSlices", |_| Ok(Box::new(Save { slices: true })));
    r.add("Restore", |n| Ok(Box::new(Restore { slices: false, dtype: n.attr_type("dt")? })));
    r.add("RestoreSlice", |n| Ok(Box::new(Restore { slices: true, dtype: n.attr_type("dt")? })));
}
