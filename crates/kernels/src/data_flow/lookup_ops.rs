//! Lookup table kernels, in the resource-handle (`V2`) and ref-handle forms: the table
//! creators (`HashTable`, `MutableHashTable`, `MutableHashTableOfTensors`,
//! `MutableDenseHashTable`, each with `V2`), `LookupTableFind`, `Insert`, `Remove` (V2
//! only), `Size`, `Export`, `Import` and `InitializeTable`; `InitializeTableFromTextFile`
//! is in `lookup_text_init`. Tables live in the task's resource manager, shared by name.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{DataType, NodeAttrs, Status, Tensor};

use super::handles::{container_and_name, exists_differently, named_resource, node_err, set_handle_output};
use super::lookup_table::{keys_of, LookupTable, TableKind};
use crate::array::util::tf_type_name;
use crate::{KernelRegistry, OpContext, OpKernel};

/// TensorFlow's type name of lookup tables in resource handles.
const TYPE_NAME: &str = "N10tensorflow6lookup15LookupInterfaceE";

static PRIVATE: AtomicU64 = AtomicU64::new(0);

/// The table named by input 0.
pub(super) fn table(ctx: &OpContext) -> Result<Arc<LookupTable>, Status> {
    named_resource(ctx, "lookup table")
}

/// The table of input 0 with the keys (input 1) and values (input 2: a default when
/// `has_output`) of a find, insert or initialization, which must match its signature.
fn table_keys_values(ctx: &OpContext, has_output: bool) -> Result<(Arc<LookupTable>, Tensor, Tensor), Status> {
    let t = table(ctx)?;
    let (keys, values) = (ctx.input(1)?, ctx.input(2)?);
    t.check_signature(keys.dtype(), values.dtype(), has_output).map_err(|e| node_err(ctx, e))?;
    Ok((t, keys, values))
}

/// The key/value dtypes TensorFlow's CPU kernels register for each kind of table.
fn registered(kind: &str, k: DataType, v: DataType) -> bool {
    use DataType::*;
    match kind {
        "HashTable" => matches!(
            (k, v),
            (Int32, Double | Float | Int32 | String)
                | (Int64, Double | Float | Int32 | Int64 | String)
                | (String, Bool | Double | Float | Int32 | Int64 | String)
        ),
        "MutableHashTable" | "MutableHashTableOfTensors" => matches!(
            (k, v),
            (Int32, Double | Float | Int32)
                | (Int64, Double | Float | Int32 | Int64 | String)
                | (String, Bool | Double | Float | Int32 | Int64 | String)
        ),
        _ => matches!(
            (k, v),
            (Int32, Double | Float | Int32)
                | (Int64, Bool | Double | Float | Int32 | Int64)
                | (String, Bool | Double | Float | Int32 | Int64 | String)
        ),
    }
}

struct Create {
    container: String,
    name: String,
    kind: &'static str,
    key_dtype: DataType,
    value_dtype: DataType,
    value_shape: Vec<usize>,
    as_ref: bool,
    dense: Option<(i64, f32)>,
}

impl Create {
    fn make(&self, ctx: &OpContext) -> Result<LookupTable, Status> {
        let kind = match self.dense {
            None if self.kind == "HashTable" => TableKind::Static,
            None => TableKind::Mutable,
            Some((buckets, load)) => {
                let (e, d) = (ctx.input(0)?, ctx.input(1)?);
                for (what, t) in [("empty_key", &e), ("deleted_key", &d)] {
                    if t.dtype() != self.key_dtype {
                        return Err(ctx.error(format!(
                            "{what} is {} but key_dtype is {}",
                            tf_type_name(t.dtype()),
                            tf_type_name(self.key_dtype)
                        )));
                    }
                    if t.rank() != 0 {
                        return Err(node_err(
                            ctx,
                            Status::unimplemented(format!(
                                "ferroflow's MutableDenseHashTable takes scalar keys; {what} has shape {}",
                                t.shape()
                            )),
                        ));
                    }
                }
                if buckets < 4 || (buckets & (buckets - 1)) != 0 {
                    return Err(
                        ctx.error(format!("Number of buckets must be at least 4 and a power of 2, got: {buckets}"))
                    );
                }
                if !(load > 0.0 && load < 1.0) {
                    return Err(ctx.error(format!("max_load_factor must be between 0 and 1, got: {load}")));
                }
                let (empty, deleted) = (keys_of(&e)?.remove(0), keys_of(&d)?.remove(0));
                if empty == deleted {
                    return Err(ctx.error("Empty and deleted keys cannot be equal"));
                }
                TableKind::Dense { empty, deleted }
            }
        };
        Ok(LookupTable::new(kind, self.key_dtype, self.value_dtype, self.value_shape.clone()))
    }
}

impl OpKernel for Create {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let t = ctx.resources().lookup_or_create(&self.container, &self.name, || self.make(ctx))?;
        if t.key_dtype != self.key_dtype || t.value_dtype != self.value_dtype {
            let dtypes = |k, v| format!("{}/{}", tf_type_name(k), tf_type_name(v));
            let (have, want) = (dtypes(t.key_dtype, t.value_dtype), dtypes(self.key_dtype, self.value_dtype));
            return Err(exists_differently(ctx, "table", &self.name, "key/value dtypes", have, want));
        }
        set_handle_output(ctx, &self.container, &self.name, TYPE_NAME, self.as_ref)
    }
}

fn create(n: &NodeDef, kind: &'static str, as_ref: bool) -> Result<Box<dyn OpKernel>, Status> {
    let key_dtype = n.attr_type("key_dtype")?;
    let value_dtype = n.attr_type("value_dtype")?;
    if !registered(kind, key_dtype, value_dtype) {
        return Err(Status::invalid_argument(format!(
            "No OpKernel was registered to support Op '{}' used by node {} with these attrs: [key_dtype={}, \
             value_dtype={}]",
            n.op,
            n.name,
            tf_type_name(key_dtype),
            tf_type_name(value_dtype)
        )));
    }
    let (container, mut name) = container_and_name(n)?;
    if n.attr_string("shared_name")?.is_empty() && !n.attr_bool("use_node_name_sharing")? {
        // TensorFlow gives such a table a name private to the kernel; one kernel per node.
        name = format!("_{}_{}", PRIVATE.fetch_add(1, Ordering::Relaxed), n.name);
    }
    let value_shape = if n.has_attr("value_shape") {
        let s = n.attr_shape("value_shape")?.unwrap_or_default();
        if s.iter().any(|&d| d < 0) {
            return Err(n.node_error(format!("value_shape must be fully defined, got {s:?}")));
        }
        s.iter().map(|&d| d as usize).collect()
    } else {
        vec![]
    };
    let dense = if kind == "MutableDenseHashTable" {
        Some((n.attr_int("initial_num_buckets")?, n.attr_float("max_load_factor")?))
    } else {
        None
    };
    Ok(Box::new(Create { container, name, kind, key_dtype, value_dtype, value_shape, as_ref, dense }))
}

op_kernel! {
    struct Find;
    fn compute(&self, ctx) {
        let (t, keys, default) = table_keys_values(ctx, true)?;
        let out = t.find(&keys, &default).map_err(|e| node_err(ctx, e))?;
        ctx.set_output(0, out)
    }
}

op_kernel! {
    struct Insert { import: bool }
    fn compute(&self, ctx) {
        let (t, keys, values) = table_keys_values(ctx, false)?;
        let r = if self.import { t.import(&keys, &values) } else { t.insert(&keys, &values) };
        r.map_err(|e| node_err(ctx, e))
    }
}

op_kernel! {
    struct Remove;
    fn compute(&self, ctx) {
        let t = table(ctx)?;
        let keys = ctx.input(1)?;
        if keys.dtype() != t.key_dtype {
            return Err(ctx.error(format!(
                "Signature mismatch, have: resource, {} expected: resource, {}",
                tf_type_name(keys.dtype()),
                tf_type_name(t.key_dtype)
            )));
        }
        t.remove(&keys).map_err(|e| node_err(ctx, e))
    }
}

op_kernel! {
    struct Size;
    fn compute(&self, ctx) {
        let n = table(ctx)?.size();
        ctx.set_output(0, Tensor::scalar(n as i64))
    }
}

op_kernel! {
    struct Export { key_dtype: DataType, value_dtype: DataType }
    fn compute(&self, ctx) {
        let t = table(ctx)?;
        t.check_signature(self.key_dtype, self.value_dtype, false).map_err(|e| node_err(ctx, e))?;
        let (k, v) = t.export().map_err(|e| node_err(ctx, e))?;
        ctx.set_output(0, k)?;
        ctx.set_output(1, v)
    }
}

op_kernel! {
    struct Init;
    fn compute(&self, ctx) {
        let (t, keys, values) = table_keys_values(ctx, false)?;
        t.initialize(&keys, &values).map_err(|e| node_err(ctx, e))
    }
}

pub(crate) fn register(r: &mut KernelRegistry) {
    r.add_cheap("HashTableV2", |n| create(n, "HashTable", false));
    r.add_cheap("HashTable", |n| create(n, "HashTable", true));
    r.add_cheap("MutableHashTableV2", |n| create(n, "MutableHashTable", false));
    r.add_cheap("MutableHashTable", |n| create(n, "MutableHashTable", true));
    r.add_cheap("MutableHashTableOfTensorsV2", |n| create(n, "MutableHashTableOfTensors", false));
    r.add_cheap("MutableHashTableOfTensors", |n| create(n, "MutableHashTableOfTensors", true));
    r.add_cheap("MutableDenseHashTableV2", |n| create(n, "MutableDenseHashTable", false));
    r.add_cheap("MutableDenseHashTable", |n| create(n, "MutableDenseHashTable", true));
    for op in ["LookupTableFindV2", "LookupTableFind"] {
        r.add(op, |_| Ok(Box::new(Find)));
    }
    for op in ["LookupTableInsertV2", "LookupTableInsert"] {
        r.add(op, |_| Ok(Box::new(Insert { import: false })));
    }
    for op in ["LookupTableImportV2", "LookupTableImport"] {
        r.add(op, |_| Ok(Box::new(Insert { import: true })));
    }
    r.add("LookupTableRemoveV2", |_| Ok(Box::new(Remove)));
    for op in ["LookupTableSizeV2", "LookupTableSize"] {
        r.add_cheap(op, |_| Ok(Box::new(Size)));
    }
    for op in ["LookupTableExportV2", "LookupTableExport"] {
        r.add(op, |n| Ok(Box::new(Export { key_dtype: n.attr_type("Tkeys")?, value_dtype: n.attr_type("Tvalues")? })));
    }
    for op in ["InitializeTableV2", "InitializeTable"] {
        r.add(op, |_| Ok(Box::new(Init)));
    }
    super::lookup_text_init::register(r);
}
