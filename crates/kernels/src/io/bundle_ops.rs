//! Checkpoint kernels: `SaveV2`, `RestoreV2` and `MergeV2Checkpoints`, whole tensors and
//! slices of partitioned ones (`shape_and_slices`).

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{DataType, NodeAttrs, Status, Tensor};

use super::bundle_reader::BundleReader;
use super::bundle_writer::{data_path, index_path, BundleWriter};
use super::checkpoint_v1_ops::restore_v1;
use super::checkpoint_v1_reader::V1Reader;
use super::tensor_slice::{parse_shape_and_slice, TensorSlice};
use crate::array::util::node_context;
use crate::{KernelRegistry, OpContext};

/// Input `i` as strings (`what` names it in errors).
pub(super) fn strings(ctx: &OpContext, i: usize, what: &str) -> Result<Vec<String>, Status> {
    let t = ctx.input(i)?;
    let v = t.as_slice::<Vec<u8>>().map_err(|_| ctx.error(format!("{what} must be a string tensor")))?;
    v.iter()
        .map(|s| String::from_utf8(s.clone()).map_err(|_| ctx.error(format!("{what} holds a non-UTF-8 string"))))
        .collect()
}

fn scalar_string(ctx: &OpContext, i: usize, what: &str) -> Result<String, Status> {
    let t = ctx.input(i)?;
    if t.num_elements() != 1 {
        return Err(ctx.error(format!("{what} must hold exactly one string, got shape {}", t.shape())));
    }
    Ok(strings(ctx, i, what)?.remove(0))
}

/// Names and their parsed shape-and-slice specs (`None` for a whole tensor).
fn names_and_slices(ctx: &OpContext, n: usize) -> Result<Vec<(String, Option<ShapeAndSlice>)>, Status> {
    let names = strings(ctx, 1, "tensor_names")?;
    let slices = strings(ctx, 2, "shape_and_slices")?;
    if names.len() != n || slices.len() != n {
        return Err(ctx.error(format!(
            "expected {n} tensor names and shape_and_slices, got {} and {}",
            names.len(),
            slices.len()
        )));
    }
    names
        .into_iter()
        .zip(&slices)
        .map(|(name, spec)| {
            if spec.is_empty() {
                return Ok((name, None));
            }
            let parsed =
                parse_shape_and_slice(spec).map_err(|e| ctx.error(format!("tensor '{name}': {}", e.message)))?;
            Ok((name, Some(parsed)))
        })
        .collect()
}

type ShapeAndSlice = (Vec<usize>, TensorSlice);

op_kernel! {
    struct SaveV2;
    fn compute(&self, ctx) {
        let prefix = scalar_string(ctx, 0, "prefix")?;
        let n = ctx.num_inputs().saturating_sub(3);
        let names = names_and_slices(ctx, n)?;
        let node = ctx.node().name.clone();
        check_prefix(&node, &prefix)?;
        let mut w = BundleWriter::new(&prefix).map_err(|e| node_context(&node, e))?;
        for (i, (name, slice)) in names.iter().enumerate() {
            let t = ctx.input(3 + i)?;
            match slice {
                None => w.add(name, &t),
                Some((full, slice)) => w.add_slice(name, full, slice, &t),
            }
            .map_err(|e| node_context(&node, e))?;
        }
        w.finish().map_err(|e| node_context(&node, e))
    }
}

op_kernel! {
    struct RestoreV2 { dtypes: Vec<DataType> }
    fn compute(&self, ctx) {
        let prefix = scalar_string(ctx, 0, "prefix")?;
        let names = names_and_slices(ctx, self.dtypes.len())?;
        let node = ctx.node().name.clone();
        check_prefix(&node, &prefix)?;
        if !index_path(&prefix).exists() {
            // As TensorFlow: without a V2 index the prefix is read as a V1 file pattern.
            let specs = strings(ctx, 2, "shape_and_slices")?;
            let reader = V1Reader::open(&prefix).map_err(|e| node_context(&node, e))?;
            for (i, (((name, _), spec), &want)) in names.iter().zip(&specs).zip(&self.dtypes).enumerate() {
                let t = restore_v1(&reader, &prefix, name, spec, want).map_err(|e| node_context(&node, e))?;
                ctx.set_output(i, t)?;
            }
            return Ok(());
        }
        let reader = BundleReader::open(&prefix).map_err(|e| node_context(&node, e))?;
        for (i, ((name, slice), &want)) in names.iter().zip(&self.dtypes).enumerate() {
            let t = match slice {
                None => reader.read(name),
                Some((full, slice)) => {
                    let stored = reader.entry(name).map_err(|e| node_context(&node, e))?;
                    if stored.shape.dims() != full.as_slice() {
                        return Err(node_context(
                            &node,
                            Status::invalid_argument(format!(
                                "tensor_name = {name}; shape in shape_and_slice spec {full:?} does not match the \
                                 shape stored in checkpoint {prefix}: {}",
                                stored.shape
                            )),
                        ));
                    }
                    reader.read_slice(name, slice)
                }
            }
            .map_err(|e| node_context(&node, e))?;
            if t.dtype() != want {
                return Err(node_context(
                    &node,
                    Status::invalid_argument(format!(
                        "tensor '{name}' in checkpoint {prefix} is {}, but the graph expects {want}",
                        t.dtype()
                    )),
                ));
            }
            ctx.set_output(i, t)?;
        }
        Ok(())
    }
}

/// Merges the checkpoints at `sources` into one at `dest` and deletes the sources' files
/// (and, with `delete_old_dirs`, their directories once empty).
pub fn merge_checkpoints(
    sources: &[String],
    dest: &str,
    delete_old_dirs: bool,
    allow_missing_files: bool,
) -> Result<(), Status> {
    let mut readers = Vec::new();
    for p in sources {
        match BundleReader::open(p) {
            Ok(r) => readers.push(r),
            Err(e) if allow_missing_files && e.code == ferroflow_core::Code::NotFound => continue,
            Err(e) => return Err(e),
        }
    }
    let mut w = BundleWriter::new(dest)?;
    let mut seen = std::collections::BTreeSet::new();
    for r in &readers {
        for name in r.names() {
            let e = r.entry(&name)?;
            if e.proto.slices.is_empty() {
                if !seen.insert(name.clone()) {
                    return Err(Status::invalid_argument(format!(
                        "tensor '{name}' appears in more than one checkpoint to merge (second: {})",
                        r.prefix()
                    )));
                }
                let t: Tensor = r.read(&name)?;
                w.add(&name, &t)?;
                continue;
            }
            // Slices of one partitioned tensor may come from several shards.
            for s in r.stored_slices(&name)? {
                let t = r.read_slice(&name, &s)?;
                w.add_slice(&name, e.shape.dims(), &s, &t)
                    .map_err(|err| err.context(format!("merging {}", r.prefix())))?;
            }
        }
    }
    w.finish()?;
    for r in &readers {
        if r.prefix() == dest {
            continue;
        }
        let _ = std::fs::remove_file(index_path(r.prefix()));
        let _ = std::fs::remove_file(data_path(r.prefix(), 0, 1));
        if delete_old_dirs {
            if let Some(dir) = std::path::Path::new(r.prefix()).parent().filter(|d| !d.as_os_str().is_empty()) {
                // Only removes the directory when it is empty.
                let _ = std::fs::remove_dir(dir);
            }
        }
    }
    Ok(())
}

op_kernel! {
    struct MergeV2Checkpoints { delete_old_dirs: bool, allow_missing_files: bool }
    fn compute(&self, ctx) {
        let sources = strings(ctx, 0, "checkpoint_prefixes")?;
        let dest = scalar_string(ctx, 1, "destination_prefix")?;
        let node = ctx.node().name.clone();
        for p in sources.iter().chain(std::iter::once(&dest)) {
            check_prefix(&node, p)?;
        }
        merge_checkpoints(&sources, &dest, self.delete_old_dirs, self.allow_missing_files)
            .map_err(|e| node_context(&node, e))
    }
}

/// PermissionDenied unless checkpoint prefix `p` of node `node` is inside the task's
/// `--file_root`.
fn check_prefix(node: &str, p: &str) -> Result<(), Status> {
    ferroflow_core::check_file_path(p, &format!("node '{node}': checkpoint prefix")).map_err(|e| e.with_node(node))
}

fn bool_attr(n: &NodeDef, name: &str, default: bool) -> Result<bool, Status> {
    if n.has_attr(name) {
        n.attr_bool(name)
    } else {
        Ok(default)
    }
}

pub(crate) fn register(r: &mut KernelRegistry) {
    r.add("SaveV2", |_| Ok(Box::new(SaveV2)));
    r.add("RestoreV2", |n| Ok(Box::new(RestoreV2 { dtypes: n.attr_list_type("dtypes")? })));
    r.add("MergeV2Checkpoints", |n| {
        Ok(Box::new(MergeV2Checkpoints {
            delete_old_dirs: bool_attr(n, "delete_old_dirs", true)?,
            allow_missing_files: bool_attr(n, "allow_missing_files", false)?,
        }))
    });
}
