//! Every op ferroflow registers that TensorFlow 2.21 marks stateful is stateful here too:
//! graph rewrites (constant folding, the dependency optimizer's NoOp conversion,
//! deduplication) leave stateful ops alone, so a wrong flag would drop a random draw or a
//! queue operation. The list (`data/tf_stateful_ops.txt`) was written once from TensorFlow's
//! own op registry (`OpDef.is_stateful` of every `tf.raw_ops` name).

use ferroflow_graph::op_registry;

#[test]
fn tensorflow_stateful_ops_are_stateful() {
    let list = include_str!("data/tf_stateful_ops.txt");
    let names: Vec<&str> = list.lines().filter(|l| !l.is_empty() && !l.starts_with('#')).collect();
    assert!(names.len() > 400, "the list has {} names", names.len());
    let reg = op_registry();
    let wrong: Vec<&str> = names.iter().copied().filter(|n| reg.get(n).is_some_and(|d| !d.stateful)).collect();
    assert!(wrong.is_empty(), "registered as stateless, stateful in TensorFlow: {wrong:?}");
    // Spot checks that the lookup itself works.
    assert!(reg.get("RandomUniform").is_some_and(|d| d.stateful));
    assert!(reg.get("MatMul").is_some_and(|d| !d.stateful));
}
