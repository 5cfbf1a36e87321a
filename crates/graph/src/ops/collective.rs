//! TensorFlow's collective ops (`CollectiveReduceV2`, `CollectiveGatherV2`,
//! `CollectiveBcastSendV2`/`RecvV2` and their V1 forms with the keys as attrs), with
//! TensorFlow 2.21's definitions. All are stateful: each member of a group must run its
//! node, so none may be pruned, merged or folded.

use ferroflow_core::{attr, DataType, NodeAttrs, Status, Tensor};

use crate::op_def::op;
use crate::registry::OpRegistry;
use crate::scope::{OpBuilder, Output, Scope};
use crate::shape_fn::{unchanged, Dims, ShapeCtx};

type R = Result<Vec<Dims>, Status>;

const REDUCE_T: &str = "T: {bfloat16, float, float16, float64, int32, int64}";
const GATHER_T: &str = "T: {float, float16, float64, int32, int64}";
const BCAST_T: &str = "T: {bool, float, float16, float64, int32, int64}";

/// A gather's output: the input with an unknown first dimension.
fn gathered(c: &ShapeCtx) -> R {
    Ok(vec![c.input(0).map(|mut d| {
        if let Some(first) = d.first_mut() {
            *first = -1;
        }
        d
    })])
}

fn unknown(_: &ShapeCtx) -> R {
    Ok(vec![None])
}

/// A V1 receiver's shape: its `shape` attr.
fn shape_attr(c: &ShapeCtx) -> R {
    Ok(vec![c.node.attr_shape("shape").ok().flatten()])
}

pub(crate) fn register(r: &mut OpRegistry) {
    let common = |b: crate::op_def::OpDefBuilder| {
        b.attr("communication_hint: string = 'auto'").attr("timeout_seconds: float = 0").stateful()
    };
    let v1_keys =
        |b: crate::op_def::OpDefBuilder| b.attr("group_size: int").attr("group_key: int").attr("instance_key: int");
    let v2_keys = |b: crate::op_def::OpDefBuilder| {
        b.input("group_size: int32").input("group_key: int32").input("instance_key: int32")
    };
    r.add(
        common(v2_keys(op("CollectiveReduceV2").input("input: T")))
            .input("ordering_token: Nordering_token * resource")
            .output("data: T")
            .attr(REDUCE_T)
            .attr("merge_op: {'Min', 'Max', 'Mul', 'Add'}")
            .attr("final_op: {'Id', 'Div'}")
            .attr("is_stateless: bool = false")
            .attr("Nordering_token: int >= 0 = 0")
            .attr("max_subdivs_per_device: int = -1")
            .shape_fn(unchanged)
            .build(),
    );
    r.add(
        common(v2_keys(op("CollectiveGatherV2").input("input: T")))
            .input("ordering_token: Nordering_token * resource")
            .output("data: T")
            .attr(GATHER_T)
            .attr("is_stateless: bool = false")
            .attr("Nordering_token: int >= 0 = 0")
            .shape_fn(gathered)
            .build(),
    );
    r.add(
        common(v2_keys(op("CollectiveBcastSendV2").input("input: T")))
            .output("data: T")
            .attr(BCAST_T)
            .shape_fn(unchanged)
            .build(),
    );
    r.add(
        common(v2_keys(op("CollectiveBcastRecvV2")))
            .input("shape: Tshape")
            .output("data: T")
            .attr(BCAST_T)
            .attr("Tshape: {int32, int64} = DT_INT32")
            .shape_fn(unknown)
            .build(),
    );
    r.add(
        common(v1_keys(op("CollectiveReduce").input("input: T")))
            .output("data: T")
            .attr(REDUCE_T)
            .attr("merge_op: {'Min', 'Max', 'Mul', 'Add'}")
            .attr("final_op: {'Id', 'Div'}")
            .attr("subdiv_offsets: list(int)")
            .attr("wait_for: list(int) = []")
            .shape_fn(unchanged)
            .build(),
    );
    r.add(
        common(v1_keys(op("CollectiveGather").input("input: T")))
            .output("data: T")
            .attr(GATHER_T)
            .attr("shape: shape")
            .shape_fn(gathered)
            .build(),
    );
    r.add(
        common(v1_keys(op("CollectiveBcastSend").input("input: T")))
            .output("data: T")
            .attr(BCAST_T)
            .attr("shape: shape")
            .shape_fn(unchanged)
            .build(),
    );
    r.add(
        common(v1_keys(op("CollectiveBcastRecv")))
            .output("data: T")
            .attr(BCAST_T)
            .attr("shape: shape")
            .shape_fn(shape_attr)
            .build(),
    );
}

/// A collective's group: its size, key and this instance's key.
#[derive(Clone, Copy, Debug)]
pub struct CollectiveKeys {
    /// Members of the group.
    pub group_size: i32,
    /// The group.
    pub group_key: i32,
    /// The instance (one collective of the group).
    pub instance_key: i32,
}

/// `CollectiveReduceV2`: every member's `x` (of type `dtype`) merged by `merge` (`Add`,
/// `Mul`, `Min`, `Max`), divided by the group size when `final_op` is `Div`.
pub fn collective_reduce(
    s: &Scope,
    x: Output,
    dtype: DataType,
    k: CollectiveKeys,
    (merge, final_op): (&str, &str),
) -> Result<Output, Status> {
    let b = s.op("CollectiveReduceV2").input(x);
    let b = keyed_inputs(s, b, k).input_list(vec![]);
    Ok(b.attr("T", attr::ty(dtype))
        .attr("merge_op", attr::string(merge))
        .attr("final_op", attr::string(final_op))
        .attr("Nordering_token", attr::int(0))
        .try_build()?
        .output(0))
}

/// `CollectiveGatherV2`: the members' `x` concatenated along dimension 0 in rank order.
pub fn collective_gather(s: &Scope, x: Output, dtype: DataType, k: CollectiveKeys) -> Result<Output, Status> {
    let b = keyed_inputs(s, s.op("CollectiveGatherV2").input(x), k).input_list(vec![]);
    Ok(b.attr("T", attr::ty(dtype)).attr("Nordering_token", attr::int(0)).try_build()?.output(0))
}

/// `CollectiveBcastSendV2`: `x` to every member (the sender's output is `x`).
pub fn collective_bcast_send(s: &Scope, x: Output, dtype: DataType, k: CollectiveKeys) -> Result<Output, Status> {
    let b = keyed_inputs(s, s.op("CollectiveBcastSendV2").input(x), k);
    Ok(b.attr("T", attr::ty(dtype)).try_build()?.output(0))
}

/// `CollectiveBcastRecvV2`: the broadcast tensor of `dtype` and `shape`.
pub fn collective_bcast_recv(s: &Scope, dtype: DataType, shape: &[i64], k: CollectiveKeys) -> Result<Output, Status> {
    let shape = crate::ops::constant(s, Tensor::new(vec![shape.len()], shape.to_vec())?);
    let b = keyed_inputs(s, s.op("CollectiveBcastRecvV2"), k).input(shape);
    Ok(b.attr("T", attr::ty(dtype)).attr("Tshape", attr::ty(DataType::Int64)).try_build()?.output(0))
}

fn keyed_inputs(s: &Scope, b: OpBuilder, k: CollectiveKeys) -> OpBuilder {
    let c = |v: i32| crate::ops::constant(s, Tensor::scalar(v));
    b.input(c(k.group_size)).input(c(k.group_key)).input(c(k.instance_key))
}
