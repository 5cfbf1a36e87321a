//! Lookup table ops with TensorFlow's definitions: the table creators (`HashTable`,
//! `MutableHashTable`, `MutableHashTableOfTensors`, `MutableDenseHashTable`, each also as
//! `V2` with a resource handle), `LookupTableFind`, `Insert`, `Remove` (V2 only), `Size`,
//! `Export`, `Import`, `InitializeTable` and `InitializeTableFromTextFile`.

use ferroflow_core::Status;

use crate::op_def::{op, OpDefBuilder};
use crate::registry::OpRegistry;
use crate::shape_fn::{scalar, Dims, ShapeCtx};

fn none(_: &ShapeCtx) -> Result<Vec<Dims>, Status> {
    Ok(vec![])
}

/// Find: the keys' shape when the default is a scalar (scalar values), else unknown.
fn find_shape(c: &ShapeCtx) -> Result<Vec<Dims>, Status> {
    Ok(vec![if c.input(2) == Some(vec![]) { c.input(1) } else { None }])
}

fn export_shape(_: &ShapeCtx) -> Result<Vec<Dims>, Status> {
    Ok(vec![Some(vec![-1]), None])
}

fn creator(name: &str, ref_form: bool) -> OpDefBuilder {
    op(name)
        .handle_output("table_handle", ref_form)
        .attr("container: string = ''")
        .attr("shared_name: string = ''")
        .attr("use_node_name_sharing: bool = false")
        .attr("key_dtype: type")
        .attr("value_dtype: type")
        .stateful()
}

pub(crate) fn register(r: &mut OpRegistry) {
    for (suffix, ref_form, h) in [("", true, "table_handle: Ref(string)"), ("V2", false, "table_handle: resource")] {
        r.add(creator(&format!("HashTable{suffix}"), ref_form).build());
        r.add(creator(&format!("MutableHashTable{suffix}"), ref_form).build());
        r.add(creator(&format!("MutableHashTableOfTensors{suffix}"), ref_form).attr("value_shape: shape = []").build());
        r.add(
            creator(&format!("MutableDenseHashTable{suffix}"), ref_form)
                .input("empty_key: key_dtype")
                .input("deleted_key: key_dtype")
                .attr("value_shape: shape = []")
                .attr("initial_num_buckets: int = 131072")
                .attr("max_load_factor: float = 0.8")
                .build(),
        );
        r.add(
            op(&format!("LookupTableFind{suffix}"))
                .input(h)
                .input("keys: Tin")
                .input("default_value: Tout")
                .output("values: Tout")
                .attr("Tin: type")
                .attr("Tout: type")
                .stateful()
                .shape_fn(find_shape)
                .build(),
        );
        for base in ["LookupTableInsert", "LookupTableImport"] {
            r.add(
                op(&format!("{base}{suffix}"))
                    .input(h)
                    .input("keys: Tin")
                    .input("values: Tout")
                    .attr("Tin: type")
                    .attr("Tout: type")
                    .stateful()
                    .shape_fn(none)
                    .build(),
            );
        }
        r.add(
            op(&format!("LookupTableSize{suffix}")).input(h).output("size: int64").stateful().shape_fn(scalar).build(),
        );
        r.add(
            op(&format!("LookupTableExport{suffix}"))
                .input(h)
                .output("keys: Tkeys")
                .output("values: Tvalues")
                .attr("Tkeys: type")
                .attr("Tvalues: type")
                .stateful()
                .shape_fn(export_shape)
                .build(),
        );
        r.add(
            op(&format!("InitializeTable{suffix}"))
                .input(h)
                .input("keys: Tkey")
                .input("values: Tval")
                .attr("Tkey: type")
                .attr("Tval: type")
                .stateful()
                .shape_fn(none)
                .build(),
        );
        r.add(
            op(&format!("InitializeTableFromTextFile{suffix}"))
                .input(h)
                .input("filename: string")
                .attr("key_index: int >= -2")
                .attr("value_index: int >= -2")
                .attr("vocab_size: int >= -1 = -1")
                .attr("delimiter: string = '\t'")
                .attr("offset: int = 0")
                .stateful()
                .shape_fn(none)
                .build(),
        );
    }
    r.add(
        op("LookupTableRemoveV2")
            .input("table_handle: resource")
            .input("keys: Tin")
            .attr("Tin: type")
            .stateful()
            .shape_fn(none)
            .build(),
    );
}
