//! TensorFlow 1.x control-flow primitives, with TensorFlow's definitions: `Switch`,
//! `Merge`, `Enter`, `Exit`, `NextIteration` (and their `Ref` forms), `LoopCond` and
//! `ControlTrigger`. `tf.compat.v1` builds `tf.cond` and `tf.while_loop` from them when
//! TensorFlow 2 behaviour is off; the runtime's executor gives them their meaning (dead
//! tensors, frames and iterations).

use ferroflow_core::Status;

use crate::op_def::{op, OpDefBuilder};
use crate::registry::OpRegistry;
use crate::shape_fn::{unchanged, Dims, ShapeCtx};

fn switch_shapes(c: &ShapeCtx) -> Result<Vec<Dims>, Status> {
    Ok(vec![c.input(0), c.input(0)])
}

/// The output of a `Merge` has a shape only when every input has the same known shape.
fn merge_shapes(c: &ShapeCtx) -> Result<Vec<Dims>, Status> {
    let first = c.input(0);
    let same = (1..c.inputs.len()).all(|i| c.input(i) == first);
    Ok(vec![if same { first } else { None }, Some(vec![])])
}

/// Registers the op `name` and its `Ref{name}` variant (the same op on reference tensors):
/// each has the type attr `T` first, then what `def` adds given its data type `arg` (`T` or
/// `Ref(T)`).
fn with_ref(r: &mut OpRegistry, name: &str, def: impl Fn(OpDefBuilder, &str) -> OpDefBuilder) {
    for (prefix, arg) in [("", "T"), ("Ref", "Ref(T)")] {
        r.add(def(op(&format!("{prefix}{name}")).attr("T: type"), arg).build());
    }
}

pub(crate) fn register(r: &mut OpRegistry) {
    with_ref(r, "Switch", |b, arg| {
        b.input(&format!("data: {arg}"))
            .input("pred: bool")
            .output(&format!("output_false: {arg}"))
            .output(&format!("output_true: {arg}"))
            .shape_fn(switch_shapes)
    });
    with_ref(r, "Merge", |b, arg| {
        b.input(&format!("inputs: N * {arg}"))
            .output(&format!("output: {arg}"))
            .output("value_index: int32")
            .attr("N: int >= 1")
            .shape_fn(merge_shapes)
    });
    // The frame ops pass `data` on as `output`.
    let pass = |b: OpDefBuilder, arg: &str| {
        b.input(&format!("data: {arg}")).output(&format!("output: {arg}")).shape_fn(unchanged)
    };
    with_ref(r, "Enter", |b, arg| {
        pass(b, arg).attr("frame_name: string").attr("is_constant: bool = false").attr("parallel_iterations: int = 10")
    });
    for name in ["Exit", "NextIteration"] {
        with_ref(r, name, pass);
    }
    r.add(op("LoopCond").input("input: bool").output("output: bool").shape_fn(unchanged).build());
    r.add(op("ControlTrigger").build());
}

#[cfg(test)]
mod tests {
    use ferroflow_core::{attr, DataType};

    use crate::graph_util::test_node as node;
    use crate::resolve_node;

    #[test]
    fn signatures_are_tensorflows() {
        let mut m = node("Merge", &["a", "b"], &[("T", attr::ty(DataType::Float)), ("N", attr::int(2))]);
        let sig = resolve_node(&mut m).unwrap();
        assert_eq!(sig.inputs.len(), 2);
        assert_eq!(sig.outputs, vec![(DataType::Float, false), (DataType::Int32, false)]);
        let mut s = node("RefSwitch", &["v", "p"], &[("T", attr::ty(DataType::Float))]);
        let sig = resolve_node(&mut s).unwrap();
        assert_eq!(sig.inputs, vec![(DataType::Float, true), (DataType::Bool, false)]);
        assert_eq!(sig.outputs, vec![(DataType::Float, true), (DataType::Float, true)]);
        let mut e = node("Enter", &["x"], &[("T", attr::ty(DataType::Int32)), ("frame_name", attr::string("w"))]);
        resolve_node(&mut e).unwrap();
        assert_eq!(e.attr["parallel_iterations"], attr::int(10));
        assert_eq!(e.attr["is_constant"], attr::bool(false));
    }
}
