//! Slot variables (`<var>/<Optimizer>`) and hyper-parameter constants.

use ferroflow_core::{DataType, Status, Tensor};
use ferroflow_graph::{ops, Output, Scope, Variable, VariableOptions};

/// A constant scalar of `dtype` (float32 or float64) named `name`.
pub fn hyper(s: &Scope, name: &str, v: f64, dtype: DataType) -> Output {
    match dtype {
        DataType::Double => ops::constant_named(s, name, v),
        _ => ops::constant_named(s, name, v as f32),
    }
}

/// A non-trainable slot variable for `var`, named `<var>/<suffix>`, filled with `init`,
/// colocated with `var`, of the same style (resource or ref).
pub fn slot(s: &Scope, var: &Variable, suffix: &str, init: f64) -> Result<Variable, Status> {
    let dims = var.shape().ok_or_else(|| {
        Status::invalid_argument(format!("variable {} needs a fully known shape for optimizer slots", var.name()))
    })?;
    let shape = ferroflow_core::Shape::from_i64(&dims)
        .map_err(|e| e.context(format!("variable {} needs a fully known shape for optimizer slots", var.name())))?;
    let n = shape.num_elements();
    let value = match var.dtype() {
        DataType::Float => Tensor::new(shape, vec![init as f32; n])?,
        DataType::Double => Tensor::new(shape, vec![init; n])?,
        d => {
            return Err(Status::invalid_argument(format!("optimizers support float variables, {} is {d}", var.name())))
        }
    };
    let s = s.root().colocate_with(&var.handle()).sub_exact(var.name());
    let init = ops::constant_named(&s.sub_exact(suffix), "Initializer", value);
    let opts = VariableOptions { trainable: false, use_resource: var.is_resource(), ..Default::default() };
    Ok(Variable::with_options(&s, suffix, init, &opts))
}
