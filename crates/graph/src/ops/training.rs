//! Optimizer apply ops, TensorFlow's names, inputs and attrs: `ApplyGradientDescent`,
//! `ApplyMomentum`, `ApplyAdagrad`, `ApplyAdagradV2`, `ApplyAdam`, `ApplyRMSProp`,
//! `ApplyCenteredRMSProp`, `ApplyAdadelta`, `ApplyFtrl`, `ApplyFtrlV2`,
//! `ApplyProximalGradientDescent`, `ApplyProximalAdagrad`, `ApplyAdagradDA` (update a reference
//! variable in place and output it) and their `ResourceApply*` forms (update a resource
//! variable, no outputs); for all but gradient descent and Adam also the sparse forms
//! `SparseApply*` / `ResourceSparseApply*`, which take `indices` after the gradient.

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
}

const LAYOUTS: &[Layout] = &[
    Layout { name: "GradientDescent", slots: &["var"], args: &["alpha", "*delta"], attrs: &[], sparse: false },
    Layout {
        name: "Momentum",
        slots: &["var", "accum"],
        args: &["lr", "*grad", "momentum"],
        attrs: &["use_nesterov: bool = false"],
        sparse: true,
    },
    Layout {
        name: "Adagrad",
        slots: &["var", "accum"],
        args: &["lr", "*grad"],
        attrs: &["update_slots: bool = true"],
        sparse: true,
    },
    Layout {
        name: "AdagradV2",
        slots: &["var", "accum"],
        args: &["lr", "epsilon", "*grad"],
        attrs: &["update_slots: bool = true"],
        sparse: true,
    },
    Layout {
        name: "Adam",
        slots: &["var", "m", "v"],
        args: &["beta1_power", "beta2_power", "lr", "beta1", "beta2", "epsilon", "*grad"],
        attrs: &["use_nesterov: bool = false"],
        sparse: false,
    },
    Layout {
        name: "RMSProp",
        slots: &["var", "ms", "mom"],
        args: &["lr", "rho", "momentum", "epsilon", "*grad"],
        attrs: &[],
        sparse: true,
    },
    Layout {
        name: "CenteredRMSProp",
        slots: &["var", "mg", "ms", "mom"],
        args: &["lr", "rho", "momentum", "epsilon", "*grad"],
        attrs: &[],
        sparse: true,
    },
    Layout {
        name: "Adadelta",
        slots: &["var", "accum", "accum_update"],
        args: &["lr", "rho", "epsilon", "*grad"],
        attrs: &[],
        sparse: true,
    },
    Layout {
        name: "Ftrl",
        slots: &["var", "accum", "linear"],
        args: &["*grad", "lr", "l1", "l2", "lr_power"],
        attrs: &["multiply_linear_by_lr: bool = false"],
        sparse: true,
    },
    Layout {
        name: "FtrlV2",
        slots: &["var", "accum", "linear"],
        args: &["*grad", "lr", "l1", "l2", "l2_shrinkage", "lr_power"],
        attrs: &["multiply_linear_by_lr: bool = false"],
        sparse: true,
    },
    Layout {
        name: "ProximalGradientDescent",
        slots: &["var"],
        args: &["alpha", "l1", "l2", "*delta"],
        attrs: &[],
        sparse: true,
    },
    Layout {
        name: "ProximalAdagrad",
        slots: &["var", "accum"],
        args: &["lr", "l1", "l2", "*grad"],
        attrs: &[],
        sparse: true,
    },
    Layout {
        name: "AdagradDA",
        slots: &["var", "gradient_accumulator", "gradient_squared_accumulator"],
        args: &["*grad", "lr", "l1", "l2", "global_step:int64"],
        attrs: &[],
        sparse: true,
    },
];

/// The layout of `[Resource][Sparse]Apply<name>` and whether the op is sparse.
fn layout_of(op_name: &str) -> Option<(&'static Layout, bool)> {
    let rest = op_name.strip_prefix("Resource").unwrap_or(op_name);
    let (rest, sparse) = match rest.strip_prefix("Sparse") {
        Some(r) => (r, true),
        None => (rest, false),
    };
    let base = rest.strip_prefix("Apply")?;
    LAYOUTS.iter().find(|l| l.name == base && (l.sparse || !sparse)).map(|l| (l, sparse))
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
            if sparse && !l.sparse {
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

fn apply(s: &Scope, op_name: &str, inputs: Vec<Output>, attrs: &[(&str, bool)]) -> Operation {
    let mut b = s.op(op_name);
    for i in inputs {
        b = b.input(i);
    }
    for (k, v) in attrs {
        b = b.attr(k, attr::bool(*v));
    }
    b.build()
}

/// `ApplyGradientDescent`: `var -= alpha * delta`; outputs the reference.
pub fn apply_gradient_descent(s: &Scope, var: Output, alpha: Output, delta: Output, use_locking: bool) -> Output {
    apply(s, "ApplyGradientDescent", vec![var, alpha, delta], &[("use_locking", use_locking)]).output(0)
}

/// `ResourceApplyGradientDescent`.
pub fn resource_apply_gradient_descent(
    s: &Scope,
    var: Output,
    alpha: Output,
    delta: Output,
    use_locking: bool,
) -> Operation {
    apply(s, "ResourceApplyGradientDescent", vec![var, alpha, delta], &[("use_locking", use_locking)])
}

/// `ApplyMomentum`: `accum = accum * momentum + grad; var -= lr * accum` (Nesterov:
/// `var -= grad * lr + accum * momentum * lr`).
#[allow(clippy::too_many_arguments)]
pub fn apply_momentum(
    s: &Scope,
    var: Output,
    accum: Output,
    lr: Output,
    grad: Output,
    momentum: Output,
    use_locking: bool,
    use_nesterov: bool,
) -> Output {
    let attrs = [("use_locking", use_locking), ("use_nesterov", use_nesterov)];
    apply(s, "ApplyMomentum", vec![var, accum, lr, grad, momentum], &attrs).output(0)
}

/// `ResourceApplyMomentum`.
#[allow(clippy::too_many_arguments)]
pub fn resource_apply_momentum(
    s: &Scope,
    var: Output,
    accum: Output,
    lr: Output,
    grad: Output,
    momentum: Output,
    use_locking: bool,
    use_nesterov: bool,
) -> Operation {
    let attrs = [("use_locking", use_locking), ("use_nesterov", use_nesterov)];
    apply(s, "ResourceApplyMomentum", vec![var, accum, lr, grad, momentum], &attrs)
}

/// `ApplyAdagrad`: `accum += grad²` (if `update_slots`); `var -= lr * grad / sqrt(accum)`.
pub fn apply_adagrad(
    s: &Scope,
    var: Output,
    accum: Output,
    lr: Output,
    grad: Output,
    use_locking: bool,
    update_slots: bool,
) -> Output {
    let attrs = [("use_locking", use_locking), ("update_slots", update_slots)];
    apply(s, "ApplyAdagrad", vec![var, accum, lr, grad], &attrs).output(0)
}

/// `ResourceApplyAdagrad`.
pub fn resource_apply_adagrad(
    s: &Scope,
    var: Output,
    accum: Output,
    lr: Output,
    grad: Output,
    use_locking: bool,
    update_slots: bool,
) -> Operation {
    let attrs = [("use_locking", use_locking), ("update_slots", update_slots)];
    apply(s, "ResourceApplyAdagrad", vec![var, accum, lr, grad], &attrs)
}

/// `ApplyAdagradV2`: Adagrad with `var -= lr * grad / (sqrt(accum) + epsilon)`.
#[allow(clippy::too_many_arguments)]
pub fn apply_adagrad_v2(
    s: &Scope,
    var: Output,
    accum: Output,
    lr: Output,
    epsilon: Output,
    grad: Output,
    use_locking: bool,
    update_slots: bool,
) -> Output {
    let attrs = [("use_locking", use_locking), ("update_slots", update_slots)];
    apply(s, "ApplyAdagradV2", vec![var, accum, lr, epsilon, grad], &attrs).output(0)
}

/// `ResourceApplyAdagradV2`.
#[allow(clippy::too_many_arguments)]
pub fn resource_apply_adagrad_v2(
    s: &Scope,
    var: Output,
    accum: Output,
    lr: Output,
    epsilon: Output,
    grad: Output,
    use_locking: bool,
    update_slots: bool,
) -> Operation {
    let attrs = [("use_locking", use_locking), ("update_slots", update_slots)];
    apply(s, "ResourceApplyAdagradV2", vec![var, accum, lr, epsilon, grad], &attrs)
}

/// `ApplyAdam`: `m += (grad - m)(1 - beta1); v += (grad² - v)(1 - beta2);
/// var -= lr * sqrt(1 - beta2_power) / (1 - beta1_power) * m / (sqrt(v) + epsilon)`.
#[allow(clippy::too_many_arguments)]
pub fn apply_adam(
    s: &Scope,
    var: Output,
    m: Output,
    v: Output,
    beta1_power: Output,
    beta2_power: Output,
    lr: Output,
    beta1: Output,
    beta2: Output,
    epsilon: Output,
    grad: Output,
    use_locking: bool,
    use_nesterov: bool,
) -> Output {
    let attrs = [("use_locking", use_locking), ("use_nesterov", use_nesterov)];
    let inputs = vec![var, m, v, beta1_power, beta2_power, lr, beta1, beta2, epsilon, grad];
    apply(s, "ApplyAdam", inputs, &attrs).output(0)
}

/// `ResourceApplyAdam`.
#[allow(clippy::too_many_arguments)]
pub fn resource_apply_adam(
    s: &Scope,
    var: Output,
    m: Output,
    v: Output,
    beta1_power: Output,
    beta2_power: Output,
    lr: Output,
    beta1: Output,
    beta2: Output,
    epsilon: Output,
    grad: Output,
    use_locking: bool,
    use_nesterov: bool,
) -> Operation {
    let attrs = [("use_locking", use_locking), ("use_nesterov", use_nesterov)];
    let inputs = vec![var, m, v, beta1_power, beta2_power, lr, beta1, beta2, epsilon, grad];
    apply(s, "ResourceApplyAdam", inputs, &attrs)
}

/// `ApplyRMSProp`: `ms += (grad² - ms)(1 - rho); mom = mom * momentum + lr * grad /
/// sqrt(ms + epsilon); var -= mom`.
#[allow(clippy::too_many_arguments)]
pub fn apply_rms_prop(
    s: &Scope,
    var: Output,
    ms: Output,
    mom: Output,
    lr: Output,
    rho: Output,
    momentum: Output,
    epsilon: Output,
    grad: Output,
    use_locking: bool,
) -> Output {
    let inputs = vec![var, ms, mom, lr, rho, momentum, epsilon, grad];
    apply(s, "ApplyRMSProp", inputs, &[("use_locking", use_locking)]).output(0)
}

/// `ResourceApplyRMSProp`.
#[allow(clippy::too_many_arguments)]
pub fn resource_apply_rms_prop(
    s: &Scope,
    var: Output,
    ms: Output,
    mom: Output,
    lr: Output,
    rho: Output,
    momentum: Output,
    epsilon: Output,
    grad: Output,
    use_locking: bool,
) -> Operation {
    let inputs = vec![var, ms, mom, lr, rho, momentum, epsilon, grad];
    apply(s, "ResourceApplyRMSProp", inputs, &[("use_locking", use_locking)])
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
        let out = apply_momentum(&s, v.clone(), acc, lr.clone(), g.clone(), lr.clone(), false, true);
        assert_eq!(s.graph().shape_of(&out), Some(vec![2]));
        let n = s.graph().node(&out.node).unwrap().def;
        assert_eq!(n.attr_type("T").unwrap(), DataType::Float);
        assert!(n.attr_bool("use_nesterov").unwrap());
        let h = var_handle_op(&s, DataType::Float, Some(&[2]), "", "w");
        let op = resource_apply_gradient_descent(&s, h, lr.clone(), g.clone(), false);
        assert!(op.output_types.is_empty());
        s.status().unwrap();
        // Gradient of the wrong shape.
        apply_gradient_descent(&s, v.clone(), lr.clone(), constant(&s, vec![1.0f32; 3]), false);
        assert!(s.status().unwrap_err().message.contains("var and delta"));
        // A non-scalar learning rate.
        let s = Scope::new_root();
        let v = variable_v2(&s, DataType::Float, Some(&[2]), "", "");
        apply_gradient_descent(&s, v, constant(&s, vec![0.1f32]), constant(&s, vec![1.0f32; 2]), false);
        assert!(s.status().unwrap_err().message.contains("rank 0 but is rank 1 for alpha"));
    }
}
