//! Builders of TensorFlow 1.x control flow: [`cond_v1`] (`Switch`/`Merge`) and
//! [`while_loop_v1`] (an `Enter`/`Merge`/`Switch`/`LoopCond`/`NextIteration`/`Exit` frame),
//! the graphs `tf.compat.v1` builds with TensorFlow 2 behaviour off. (`tf.cond` and
//! `tf.while_loop` under TensorFlow 2 behaviour are `If`/`While` function calls, which a
//! ferroflow graph runs when TensorFlow writes them.)
//!
//! Unlike Python, a Rust closure cannot be traced for the outer tensors it captures, so the
//! tensors a branch or loop body uses from outside are passed in explicitly: `inputs` of a
//! conditional are switched on the predicate, `invariants` of a loop enter its frame as
//! constants. Using another outer tensor directly inside is an error when the step runs
//! ("inputs from different frames") for a loop, and makes a conditional's untaken branch
//! compute it anyway. Symbolic gradients of these graphs are not supported yet.

use ferroflow_core::{attr, Status};

use crate::scope::{Output, Scope};

/// `tf.cond(pred, then_fn, else_fn)` as TensorFlow 1.x builds it: each of `inputs` goes
/// through a `Switch` on `pred`; `then_fn` sees their true outputs, `else_fn` their false
/// ones, each under a scope whose ops depend on the branch's pivot (so they run only when
/// their branch is taken); each pair of results meets in a `Merge`. The two branches must
/// return as many tensors, of the same types.
///
/// ```
/// use ferroflow_graph::{cond_v1, ops, Scope};
/// let s = Scope::new_root();
/// let p = ops::placeholder(&s, ferroflow_core::DataType::Bool, None);
/// let x = ops::constant(&s, 3.0f32);
/// let y = cond_v1(&s, p, &[x], |s, a| vec![ops::mul(s, a[0].clone(), a[0].clone())], |_, a| vec![a[0].clone()])
///     .unwrap();
/// assert_eq!(y.len(), 1);
/// ```
pub fn cond_v1(
    s: &Scope,
    pred: Output,
    inputs: &[Output],
    then_fn: impl FnOnce(&Scope, &[Output]) -> Vec<Output>,
    else_fn: impl FnOnce(&Scope, &[Output]) -> Vec<Output>,
) -> Result<Vec<Output>, Status> {
    let c = s.sub("cond");
    let sw = c.op("Switch").input(pred.clone()).input(pred.clone()).try_build()?;
    let pivot_t = c.op("Identity").name("switch_t").input(sw.output(1)).try_build()?;
    let pivot_f = c.op("Identity").name("switch_f").input(sw.output(0)).try_build()?;
    let mut on_true = Vec::new();
    let mut on_false = Vec::new();
    for x in inputs {
        let sx = c.op("Switch").input(x.clone()).input(pred.clone()).try_build()?;
        on_false.push(sx.output(0));
        on_true.push(sx.output(1));
    }
    let branch_scope =
        |name: &str, pivot: &crate::scope::Operation| c.sub_exact(name).with_control_deps(&[pivot.name.as_str()]);
    // An outer tensor returned as is would be live in both branches: pass it through the
    // branch's pivot dependency.
    let pass = |b: &Scope, outs: Vec<Output>| {
        outs.into_iter()
            .map(|o| b.op("Identity").input(o).try_build().map(|op| op.output(0)))
            .collect::<Result<Vec<_>, Status>>()
    };
    let bt = branch_scope("true", &pivot_t);
    let t = pass(&bt, then_fn(&bt, &on_true))?;
    let bf = branch_scope("false", &pivot_f);
    let f = pass(&bf, else_fn(&bf, &on_false))?;
    check_count(s, t.len(), f.len(), || {
        format!("cond '{}': the true branch returns {} tensors but the false branch {}", c.prefix(), t.len(), f.len())
    })?;
    t.into_iter()
        .zip(f)
        .map(|(t, f)| {
            if t.dtype != f.dtype {
                return Err(Status::invalid_argument(format!(
                    "cond '{}': the branches return {} ('{t}') and {} ('{f}') at one position",
                    c.prefix(),
                    t.dtype,
                    f.dtype
                )));
            }
            Ok(c.op("Merge").input_list(vec![f, t]).try_build()?.output(0))
        })
        .collect()
}

/// `tf.while_loop(cond, body, loop_vars)` as TensorFlow 1.x builds it: one frame (named
/// after the loop's scope) that the loop variables `Enter` and the `invariants` enter as
/// constants; `cond(scope, vars, invariants)` gives the boolean that continues the loop and
/// `body(scope, vars, invariants)` the next values (as many as `loop_vars`, same types).
/// Returns the values after the last iteration. Up to `parallel_iterations` iterations run
/// at once.
///
/// ```
/// use ferroflow_graph::{ops, while_loop_v1, Scope};
/// let s = Scope::new_root();
/// let n = ops::constant(&s, 10i32);
/// let zero = ops::constant(&s, 0i32);
/// let out = while_loop_v1(
///     &s,
///     &[zero],
///     &[n],
///     |s, v, inv| ops::less(s, v[0].clone(), inv[0].clone()),
///     |s, v, _| vec![ops::add(s, v[0].clone(), ops::constant(s, 1i32))],
///     10,
/// )
/// .unwrap();
/// assert_eq!(out.len(), 1);
/// ```
pub fn while_loop_v1(
    s: &Scope,
    loop_vars: &[Output],
    invariants: &[Output],
    cond: impl FnOnce(&Scope, &[Output], &[Output]) -> Output,
    body: impl FnOnce(&Scope, &[Output], &[Output]) -> Vec<Output>,
    parallel_iterations: i64,
) -> Result<Vec<Output>, Status> {
    if loop_vars.is_empty() {
        return Err(Status::invalid_argument("while_loop_v1 needs at least one loop variable"));
    }
    if parallel_iterations <= 0 {
        return Err(Status::invalid_argument(format!(
            "parallel_iterations must be positive, got {parallel_iterations}"
        )));
    }
    let w = s.sub("while");
    let frame = format!("{}/while_context", w.prefix());
    let enter = |x: &Output, constant: bool| {
        w.op("Enter")
            .input(x.clone())
            .attr("frame_name", attr::string(&frame))
            .attr("is_constant", attr::bool(constant))
            .attr("parallel_iterations", attr::int(parallel_iterations))
            .try_build()
            .map(|op| op.output(0))
    };
    let entered = loop_vars.iter().map(|x| enter(x, false)).collect::<Result<Vec<_>, _>>()?;
    let inv = invariants.iter().map(|x| enter(x, true)).collect::<Result<Vec<_>, _>>()?;
    // The enclosing scope's control dependencies hold for the Enter nodes; inside the
    // frame only the loop's own pivots order things.
    let w = w.without_control_deps();
    let merges = entered
        .iter()
        .map(|e| w.op("Merge").input_list(vec![e.clone(), e.clone()]).try_build())
        .collect::<Result<Vec<_>, _>>()?;
    let vars: Vec<Output> = merges.iter().map(|m| m.output(0)).collect();
    let pred = cond(&w.with_control_deps(&[merges[0].name.as_str()]), &vars, &inv);
    s.graph().status()?;
    let lc = w.op("LoopCond").input(pred).try_build()?;
    let mut exits = Vec::new();
    let mut inside = Vec::new();
    for v in &vars {
        let sw = w.op("Switch").input(v.clone()).input(lc.output(0)).try_build()?;
        exits.push(w.op("Exit").input(sw.output(0)).try_build()?.output(0));
        inside.push(w.op("Identity").input(sw.output(1)).try_build()?.output(0));
    }
    let next = body(&w.with_control_deps(&[inside[0].node.as_str()]), &inside, &inv);
    check_count(s, next.len(), vars.len(), || {
        format!(
            "while loop '{}': the body returns {} tensors for {} loop variables",
            w.prefix(),
            next.len(),
            vars.len()
        )
    })?;
    for (m, n) in merges.iter().zip(next) {
        let ni = w.op("NextIteration").input(n).try_build()?;
        s.graph().update_input(&m.name, 1, &ni.output(0).input_string())?;
    }
    Ok(exits)
}

/// After user code built a branch or a loop body: the graph's first error if any, else the
/// invalid-argument error `message` unless it returned `got` tensors where `want` were due.
fn check_count(s: &Scope, got: usize, want: usize, message: impl FnOnce() -> String) -> Result<(), Status> {
    s.graph().status()?;
    if got != want {
        return Err(Status::invalid_argument(message()));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use ferroflow_core::{Code, DataType};

    use super::*;
    use crate::ops;

    #[test]
    fn builds_tensorflows_ops() {
        let s = Scope::new_root();
        let p = ops::placeholder(&s, DataType::Bool, None);
        let x = ops::constant(&s, 2.0f32);
        cond_v1(&s, p, std::slice::from_ref(&x), |s, a| vec![ops::neg(s, a[0].clone())], |_, a| vec![a[0].clone()])
            .unwrap();
        let zero = ops::constant(&s, 0i32);
        let ten = ops::constant(&s, 10i32);
        while_loop_v1(
            &s,
            &[zero],
            &[ten],
            |s, v, inv| ops::less(s, v[0].clone(), inv[0].clone()),
            |s, v, _| vec![ops::add(s, v[0].clone(), ops::constant(s, 1i32))],
            10,
        )
        .unwrap();
        let gd = s.graph().to_graph_def();
        let ops: std::collections::BTreeSet<&str> = gd.node.iter().map(|n| n.op.as_str()).collect();
        for op in ["Switch", "Merge", "Enter", "Exit", "NextIteration", "LoopCond"] {
            assert!(ops.contains(op), "{op} missing from {ops:?}");
        }
        let merge = gd.node.iter().find(|n| n.name == "while/Merge").unwrap();
        assert_eq!(merge.input[1], "while/NextIteration", "{:?}", merge.input);
        // The GraphDef, with its back edge, imports again.
        crate::Graph::import(&gd).unwrap();
    }

    #[test]
    fn mismatched_branches_and_bodies_are_errors() {
        let s = Scope::new_root();
        let p = ops::placeholder(&s, DataType::Bool, None);
        let x = ops::constant(&s, 2.0f32);
        let e = cond_v1(
            &s,
            p,
            std::slice::from_ref(&x),
            |_, a| vec![a[0].clone(), a[0].clone()],
            |_, a| vec![a[0].clone()],
        )
        .unwrap_err();
        assert_eq!(e.code, Code::InvalidArgument);
        assert!(e.message.contains("returns 2 tensors"), "{e}");
        let s = Scope::new_root();
        let zero = ops::constant(&s, 0i32);
        let e = while_loop_v1(
            &s,
            &[zero],
            &[],
            |s, v, _| ops::less(s, v[0].clone(), ops::constant(s, 3i32)),
            |s, _, _| vec![ops::constant(s, 1.0f32)],
            1,
        )
        .unwrap_err();
        assert!(e.message.contains("float") && e.message.contains("int32"), "{e}");
    }
}
