//! Optional values (TensorFlow's definitions): `OptionalFromValue`, `OptionalNone`,
//! `OptionalHasValue`, `OptionalGetValue`. `tf.cond`'s gradients carry the forward branch's
//! intermediates in them.

use ferroflow_core::{NodeAttrs, Status};

use crate::op_def::op;
use crate::registry::OpRegistry;
use crate::shape_fn::{Dims, ShapeCtx};

fn scalar(_: &ShapeCtx) -> Result<Vec<Dims>, Status> {
    Ok(vec![Some(vec![])])
}

fn get_value_shape(c: &ShapeCtx) -> Result<Vec<Dims>, Status> {
    let n = c.node.attr_list_type("output_types")?.len();
    let shapes = match c.node.attr_value("output_shapes").ok().and_then(|a| match &a.value {
        Some(ferroflow_core::proto::attr_value::Value::List(l)) => Some(l.shape.clone()),
        _ => None,
    }) {
        Some(s) if s.len() == n => {
            s.iter().map(|p| if p.unknown_rank { None } else { Some(p.dim.iter().map(|d| d.size).collect()) }).collect()
        }
        Some(s) if !s.is_empty() => {
            return Err(c.error(format!("output_shapes has {} shapes but output_types has {n} types", s.len())))
        }
        _ => vec![None; n],
    };
    Ok(shapes)
}

pub(crate) fn register(r: &mut OpRegistry) {
    r.add(
        op("OptionalFromValue")
            .input("components: Toutput_types")
            .output("optional: variant")
            .attr("Toutput_types: list(type) >= 1")
            .shape_fn(scalar)
            .build(),
    );
    r.add(op("OptionalNone").output("optional: variant").shape_fn(scalar).build());
    r.add(op("OptionalHasValue").input("optional: variant").output("has_value: bool").shape_fn(scalar).build());
    r.add(
        op("OptionalGetValue")
            .input("optional: variant")
            .output("components: output_types")
            .attr("output_types: list(type) >= 1")
            .attr("output_shapes: list(shape) >= 1")
            .shape_fn(get_value_shape)
            .build(),
    );
}
