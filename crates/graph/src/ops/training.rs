//! Optimizer apply ops, TensorFlow's names, inputs and attrs: `ApplyGradientDescent`,
//! `ApplyMomentum`, `ApplyAdagrad`, `ApplyAdagradV2`, `ApplyAdam`, `ApplyAdaMax`, `ApplyRMSProp`,
//! `ApplyCenteredRMSProp`, `ApplyAdadelta`, `ApplyFtrl`, `ApplyFtrlV2`,
//! `ApplyProximalGradientDescent`, `ApplyProximalAdagrad`, `ApplyAdagradDA` (update a reference
//! variable in place and output it) and their `ResourceApply*` forms (update a resource
//! variable, no outputs); for all but gradient descent, Adam and AdaMax also the sparse forms
//! `SparseApply*` / `ResourceSparseApply*`, which take `indices` after the gradient. Also
//! `ApplyAddSign` and `ApplyPowerSign` (both forms) and tf_keras's resource-only
//! `ResourceApplyKerasMomentum`, `ResourceSparseApplyKerasMomentum` and
//! `ResourceApplyAdamWithAmsgrad`.

use ferroflow_core::{attr, Status};

use super::state::{merge_dims, NUMBER_TYPES};
use crate::op_def::op;
use crate::registry::OpRegistry;
use crate::scope::{Operation, Output, Scope};
use crate::shape_fn::{Dims, ShapeCtx};

/// One optimizer's input layout: variable inputs, then the others (`*` marks the gradient,
/// which has the variable's shape, and is called `grad` in the sparse forms; the rest are
/// scalars of type `T`, or of the type after a `:`).
struct Layout {
    name: &'static str,
    slots: &'static [&'static str],
    args: &'static [&'static str],
    attrs: &'static [&'static str],
    /// Whether TensorFlow has `SparseApply<name>` and `ResourceSparseApply<name>`.
    sparse: bool,
    /// Whether TensorFlow has only the `Resource*` forms (tf_keras's own optimizers).
    resource_only: bool,
}

/// The attrs several optimizers share.
const NESTEROV: &[&str] = &["use_nesterov: bool = false"];
const UPDATE_SLOTS: &[&str] = &["update_slots: bool = true"];
const LINEAR_BY_LR: &[&str] = &["multiply_linear_by_lr: bool = false"];

impl Layout {
    /// A layout without attrs and with dense forms only, both ref and resource.
    const fn new(name: &'static str, slots: &'static [&'static str], args: &'static [&'static str]) -> Layout {
        Layout { name, slots, args, attrs: &[], sparse: false, resource_only: false }
    }
    const fn attrs(self, attrs: &'static [&'static str]) -> Layout {
        Layout { attrs, ..self }
    }
    const fn sparse(self) -> Layout {
        Layout { sparse: true, ..self }
    }
    const fn resource_only(self) -> Layout {
        Layout { resource_only: true, ..self }
    }
}

const LAYOUTS: &[Layout] = &[
    Layout::new("GradientDescent", &["var"], &["alpha", "*delta"]),
    Layout::new("Momentum", &["var", "accum"], &["lr", "*grad", "momentum"]).attrs(NESTEROV).sparse(),
    Layout::new("Adagrad", &["var", "accum"], &["lr", "*grad"]).attrs(UPDATE_SLOTS).sparse(),
    Layout::new("AdagradV2", &["var", "accum"], &["lr", "epsilon", "*grad"]).attrs(UPDATE_SLOTS).sparse(),
    Layout::new(
        "Adam",
        &["var", "m", "v"],
        &["beta1_power", "beta2_power", "lr", "beta1", "beta2", "epsilon", "*grad"],
    )
    .attrs(NESTEROV),
    Layout::new("AdaMax", &["var", "m", "v"], &["beta1_power", "lr", "beta1", "beta2", "epsilon", "*grad"]),
    Layout::new("RMSProp", &["var", "ms", "mom"], &["lr", "rho", "momentum", "epsilon", "*grad"]).sparse(),
    Layout::new("CenteredRMSProp", &["var", "mg", "ms", "mom"], &["lr", "rho", "momentum", "epsilon", "*grad"])
        .sparse(),
    Layout::new("Adadelta", &["var", "accum", "accum_update"], &["lr", "rho", "epsilon", "*grad"]).sparse(),
    Layout::new("Ftrl", &["var", "accum", "linear"], &["*grad", "lr", "l1", "l2", "lr_power"])
        .attrs(LINEAR_BY_LR)
        .sparse(),
    Layout::new("FtrlV2", &["var", "accum", "linear"], &["*grad", "lr", "l1", "l2", "l2_shrinkage", "lr_power"])
        .attrs(LINEAR_BY_LR)
        .sparse(),
    Layout::new("ProximalGradientDescent", &["var"], &["alpha", "l1", "l2", "*delta"]).sparse(),
    Layout::new("ProximalAdagrad", &["var", "accum"], &["lr", "l1", "l2", "*grad"]).sparse(),
    Layout::new(
        "AdagradDA",
        &["var", "gradient_accumulator", "gradient_squared_accumulator"],
        &["*grad", "lr", "l1", "l2", "global_step:int64"],
    )
    .sparse(),
    Layout::new("KerasMomentum", &["var", "accum"], &["lr", "*grad", "momentum"])
        .attrs(NESTEROV)
        .sparse()
        .resource_only(),
    Layout::new(
        "AdamWithAmsgrad",
        &["var", "m", "v", "vhat"],
        &["beta1_power", "beta2_power", "lr", "beta1", "beta2", "epsilon", "*grad"],
    )
    .resource_only(),
    Layout::new("AddSign", &["var", "m"], &["lr", "alpha", "sign_decay", "beta", "*grad"]),
    Layout::new("PowerSign", &["var", "m"], &["lr", "logbase", "sign_decay", "beta", "*grad"]),
];

/// The layout of `[Resource][Sparse]Apply<name>` and whether the op is sparse.
fn layout_of(op_name: &str) -> Option<(&'static Layout, bool)> {
    let rest = op_name.strip_prefix("Resource").unwrap_or(op_name);
    let (rest, sparse) = match rest.strip_prefix("Sparse") {
        Some(r) => (r, true),
        None => (rest, false),
    };
    let base = rest.strip_prefix("Apply")?;
    let resource = op_name.starts_with("Resource");
    LAYOUTS
        .iter()
        .find(|l| l.name == base && (l.sparse || !sparse) && (resource || !l.resource_only))
        .map(|l| (l, sparse))
}

/// Scalars must be scalars; for ref variables, slots and gradient must agree with `var`,
/// whose shape is the output's.
fn apply_shape(c: &ShapeCtx) -> Result<Vec<Dims>, Status> {
    let Some((l, sparse)) = layout_of(&c.node.op) else { return Ok(vec![None]) };
    let resource = c.node.op.starts_with("Resource");
    let n = l.slots.len();
    let mut var = if resource { None } else { c.input(0) };
    let mut after_grad = 0;
    for (j, arg) in l.args.iter().enumerate() {
        let dims = c.input(n + j + after_grad);
        if let Some(grad) = arg.strip_prefix('*') {
            if sparse {
                after_grad = 1;
                if let Some(ix) = c.input(n + j + 1) {
                    if ix.len() != 1 {
                        return Err(c.error(format!("Shape must be rank 1 but is rank {} for indices", ix.len())));
                    }
                }
            } else if !resource {
                var = merge_dims(c, &var, &dims).map_err(|e| e.context(format!("var and {grad}")))?;
            }
        } else if let Some(d) = &dims {
            if !d.is_empty() {
                let name = arg.split(':').next().unwrap_or(arg);
                return Err(c.error(format!("Shape must be rank 0 but is rank {} for {name}", d.len())));
            }
        }
    }
    if resource {
        return Ok(vec![]);
    }
    for (i, slot) in l.slots.iter().enumerate().skip(1) {
        var = merge_dims(c, &var, &c.input(i)).map_err(|e| e.context(format!("var and {slot}")))?;
    }
    Ok(vec![var])
}

pub(crate) fn register(r: &mut OpRegistry) {
    for l in LAYOUTS {
        for (resource, sparse) in [(false, false), (true, false), (false, true), (true, true)] {
            if (sparse && !l.sparse) || (!resource && l.resource_only) {
                continue;
            }
            let name = format!(
                "{}{}Apply{}",
                if resource { "Resource" } else { "" },
                if sparse { "Sparse" } else { "" },
                l.name
            );
            let mut b = op(&name);
            for s in l.slots {
                b = b.input(&if resource { format!("{s}: resource") } else { format!("{s}: Ref(T)") });
            }
            for a in l.args {
                if sparse && a.starts_with('*') {
                    b = b.input("grad: T").input("indices: Tindices");
                } else {
                    let (name, ty) =
                        a.trim_start_matches('*').split_once(':').unwrap_or((a.trim_start_matches('*'), "T"));
                    b = b.input(&format!("{name}: {ty}"));
                }
            }
            if resource {
                b = b.stateful();
            } else {
                b = b.output("out: Ref(T)");
            }
            b = b.attr(&format!("T: {NUMBER_TYPES}"));
            if sparse {
                b = b.attr("Tindices: {int32, int64}");
            }
            b = b.attr("use_locking: bool = false");
            for a in l.attrs {
                b = b.attr(a);
            }
            r.add(b.shape_fn(apply_shape).build());
        }
    }
}

/// Builds the apply op `op_name` (any op this module registers) with `inputs` in
/// TensorFlow's order, the variable (reference or resource handle) first, and its bool
/// attrs (`use_locking`, `use_nesterov`, `update_slots`, …); `T` and `Tindices` are
/// inferred from the inputs, and the registered shape function checks them.
pub fn apply_training_op(s: &Scope, op_name: &str, inputs: Vec<Output>, attrs: &[(&str, bool)]) -> Operation {
    let mut b = s.op(op_name);
    for i in inputs {
        b = b.input(i);
    }
    for (k, v) in attrs {
        b = b.attr(k, attr::bool(*v));
    }
    b.build()
}

#[cfg(test)]
mod tests {
    use ferroflow_core::{DataType, NodeAttrs, Tensor};

    use super::*;
    use crate::ops::{constant, var_handle_op, variable_v2};

    #[test]
    fn op_defs_match_tensorflow() {
        let r = crate::op_registry();
        let adam = r.get("ApplyAdam").unwrap();
        let names: Vec<&str> = adam.inputs.iter().map(|a| a.name.as_str()).collect();
        assert_eq!(names, ["var", "m", "v", "beta1_power", "beta2_power", "lr", "beta1", "beta2", "epsilon", "grad"]);
        assert!(adam.inputs[0].is_ref && adam.outputs[0].is_ref && !adam.stateful);
        let ra = r.get("ResourceApplyMomentum").unwrap();
        assert!(ra.outputs.is_empty() && ra.stateful);
        assert_eq!(ra.attrs.iter().map(|a| a.name.as_str()).collect::<Vec<_>>(), ["T", "use_locking", "use_nesterov"]);
        assert!(r.get("ApplyRMSProp").is_some() && r.get("ResourceApplyAdagradV2").is_some());
        let names = |op: &str| r.get(op).unwrap().inputs.iter().map(|a| a.name.clone()).collect::<Vec<_>>();
        assert_eq!(names("ResourceSparseApplyMomentum"), ["var", "accum", "lr", "grad", "indices", "momentum"]);
        assert_eq!(
            names("SparseApplyFtrlV2"),
            ["var", "accum", "linear", "grad", "indices", "lr", "l1", "l2", "l2_shrinkage", "lr_power"]
        );
        assert_eq!(
            names("ResourceSparseApplyCenteredRMSProp"),
            ["var", "mg", "ms", "mom", "lr", "rho", "momentum", "epsilon", "grad", "indices"]
        );
        let sa = r.get("SparseApplyAdadelta").unwrap();
        assert!(sa.inputs[0].is_ref && sa.outputs[0].is_ref);
        let attrs: Vec<&str> = sa.attrs.iter().map(|a| a.name.as_str()).collect();
        assert_eq!(attrs, ["T", "Tindices", "use_locking"]);
        assert!(r.get("SparseApplyAdam").is_none() && r.get("SparseApplyGradientDescent").is_none());
        // tf_keras's optimizers: resource forms only; the sign optimizers: both dense forms.
        assert_eq!(names("ResourceSparseApplyKerasMomentum"), ["var", "accum", "lr", "grad", "indices", "momentum"]);
        let km = r.get("ResourceApplyKerasMomentum").unwrap();
        assert_eq!(km.attrs.iter().map(|a| a.name.as_str()).collect::<Vec<_>>(), ["T", "use_locking", "use_nesterov"]);
        assert_eq!(
            names("ResourceApplyAdamWithAmsgrad"),
            ["var", "m", "v", "vhat", "beta1_power", "beta2_power", "lr", "beta1", "beta2", "epsilon", "grad"]
        );
        assert!(r.get("ApplyKerasMomentum").is_none() && r.get("ApplyAdamWithAmsgrad").is_none());
        assert!(r.get("SparseApplyKerasMomentum").is_none() && r.get("SparseApplyAddSign").is_none());
        assert_eq!(names("ApplyAddSign"), ["var", "m", "lr", "alpha", "sign_decay", "beta", "grad"]);
        assert_eq!(names("ResourceApplyPowerSign"), ["var", "m", "lr", "logbase", "sign_decay", "beta", "grad"]);
        assert!(r.get("ApplyPowerSign").unwrap().outputs[0].is_ref);
    }

    #[test]
    fn sparse_shapes_check_indices_and_scalars() {
        let s = Scope::new_root();
        let v = variable_v2(&s, DataType::Float, Some(&[4, 3]), "", "");
        let acc = variable_v2(&s, DataType::Float, Some(&[4, 3]), "", "");
        let lr = constant(&s, 0.1f32);
        let g = constant(&s, Tensor::new(vec![2, 3], vec![1.0f32; 6]).unwrap());
        let ix = constant(&s, vec![0i32, 3]);
        let op = |ix: Output, lr: Output| {
            s.op("SparseApplyMomentum")
                .input(v.clone())
                .input(acc.clone())
                .input(lr)
                .input(g.clone())
                .input(ix)
                .input(constant(&s, 0.9f32))
                .build()
                .output(0)
        };
        let out = op(ix.clone(), lr.clone());
        assert_eq!(s.graph().shape_of(&out), Some(vec![4, 3]));
        s.status().unwrap();
        op(constant(&s, Tensor::new(vec![1, 2], vec![0i32, 3]).unwrap()), lr.clone());
        assert!(s.status().unwrap_err().message.contains("rank 1 but is rank 2 for indices"));
    }

    #[test]
    fn builders_infer_t_and_check_shapes() {
        let s = Scope::new_root();
        let v = variable_v2(&s, DataType::Float, Some(&[2]), "", "");
        let acc = variable_v2(&s, DataType::Float, Some(&[2]), "", "");
        let lr = constant(&s, 0.1f32);
        let g = constant(&s, vec![1.0f32, 2.0]);
        let attrs = [("use_locking", false), ("use_nesterov", true)];
        let out =
            apply_training_op(&s, "ApplyMomentum", vec![v.clone(), acc, lr.clone(), g.clone(), lr.clone()], &attrs)
                .output(0);
        assert_eq!(s.graph().shape_of(&out), Some(vec![2]));
        let n = s.graph().node(&out.node).unwrap().def;
        assert_eq!(n.attr_type("T").unwrap(), DataType::Float);
        assert!(n.attr_bool("use_nesterov").unwrap());
        let h = var_handle_op(&s, DataType::Float, Some(&[2]), "", "w");
        let op = apply_training_op(
            &s,
            "ResourceApplyGradientDescent",
            vec![h, lr.clone(), g.clone()],
            &[("use_locking", false)],
        );
        assert!(op.output_types.is_empty());
        s.status().unwrap();
        // Gradient of the wrong shape.
        let gd = |s: &Scope, inputs| apply_training_op(s, "ApplyGradientDescent", inputs, &[("use_locking", false)]);
        gd(&s, vec![v.clone(), lr.clone(), constant(&s, vec![1.0f32; 3])]);
        assert!(s.status().unwrap_err().message.contains("var and delta"));
        // A non-scalar learning rate.
        let s = Scope::new_root();
        let v = variable_v2(&s, DataType::Float, Some(&[2]), "", "");
        gd(&s, vec![v, constant(&s, vec![0.1f32]), constant(&s, vec![1.0f32; 2])]);
        assert!(s.status().unwrap_err().message.contains("rank 0 but is rank 1 for alpha"));
    }
}
