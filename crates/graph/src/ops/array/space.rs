//! Block moves between space and batch or depth: SpaceToBatchND, BatchToSpaceND,
//! SpaceToBatch, BatchToSpace, SpaceToDepth, DepthToSpace; and ReverseSequence.
//! Definitions, shape functions and builders.

use ferroflow_core::{attr, NodeAttrs, Status};

use super::shapes::const_ints;
use crate::op_def::op;
use crate::ops::op_output;
use crate::registry::OpRegistry;
use crate::scope::{Output, Scope};
use crate::shape_fn::{unchanged, Dims, ShapeCtx};

type R = Result<Vec<Dims>, Status>;

/// Output dims of the ND ops: input `0`, block at `block` (or `[b, b]` from the
/// `block_size` attr), paddings/crops at `pads`; `grow` for SpaceToBatch.
fn nd_shape(c: &ShapeCtx, block: Option<usize>, pads: usize, grow: bool) -> R {
    let Some(d) = c.input(0) else { return Ok(vec![None]) };
    let b = match block {
        Some(i) => const_ints(c, i),
        None => {
            let b = c.node.attr_int("block_size")?;
            Some(vec![b, b])
        }
    };
    let (Some(b), Some(p)) = (b, const_ints(c, pads)) else { return Ok(vec![Some(vec![-1; d.len()])]) };
    let m = b.len();
    if d.len() < 1 + m || p.len() != 2 * m || b.iter().any(|&x| x < 1) || p.iter().any(|&x| x < 0) {
        return Err(c.error(format!("block_shape {b:?} and paddings/crops {p:?} do not fit input shape {d:?}")));
    }
    let too_big = || c.error(format!("block_shape {b:?} and paddings/crops {p:?} overflow the shape of input {d:?}"));
    let prod = b.iter().try_fold(1i64, |a, &x| a.checked_mul(x)).ok_or_else(too_big)?;
    let mut out = d.clone();
    out[0] = match d[0] {
        x if x < 0 => -1,
        x if grow => x.checked_mul(prod).ok_or_else(too_big)?,
        x if x % prod != 0 => {
            return Err(
                c.error(format!("Input batch dimension ({x}) is not divisible by product of block sizes ({prod})"))
            )
        }
        x => x / prod,
    };
    for i in 0..m {
        let x = d[1 + i];
        let (lo, hi) = (p[2 * i], p[2 * i + 1]);
        out[1 + i] = if x < 0 {
            -1
        } else if grow {
            let padded = x.checked_add(lo).and_then(|v| v.checked_add(hi)).ok_or_else(too_big)?;
            if padded % b[i] != 0 {
                return Err(
                    c.error(format!("padded_shape[{i}]={padded} is not divisible by block_shape[{i}]={}", b[i]))
                );
            }
            padded / b[i]
        } else {
            let full = x.checked_mul(b[i]).ok_or_else(too_big)?;
            match full.checked_sub(lo).and_then(|v| v.checked_sub(hi)) {
                Some(v) if v >= 0 => v,
                _ => {
                    return Err(c.error(format!(
                        "Negative output dimension size caused by crops [{lo}, {hi}] of dimension {} (block {})",
                        1 + i,
                        b[i]
                    )))
                }
            }
        };
    }
    Ok(vec![Some(out)])
}

fn depth_space_shape(c: &ShapeCtx) -> R {
    let b = c.node.attr_int("block_size")?;
    let Some(d) = c.input(0) else { return Ok(vec![Some(vec![-1; 4])]) };
    if d.len() != 4 {
        return Err(c.error(format!("Shape must be rank 4 but is rank {}", d.len())));
    }
    let bb = b.checked_mul(b).filter(|_| b >= 2);
    let Some(bb) = bb else {
        return Err(c.error(format!("block_size must be at least 2 and its square must fit in int64, got {b}")));
    };
    let too_big = || c.error(format!("block_size {b} overflows the shape of input {d:?}"));
    let known = |x: i64, f: &dyn Fn(i64) -> Option<i64>| if x < 0 { Some(-1) } else { f(x) };
    let out = if c.node.op == "SpaceToDepth" {
        [known(d[1], &|x| Some(x / b)), known(d[2], &|x| Some(x / b)), known(d[3], &|x| x.checked_mul(bb))]
    } else {
        [known(d[1], &|x| x.checked_mul(b)), known(d[2], &|x| x.checked_mul(b)), known(d[3], &|x| Some(x / bb))]
    };
    let [h, w, ch] = out;
    Ok(vec![Some(vec![d[0], h.ok_or_else(too_big)?, w.ok_or_else(too_big)?, ch.ok_or_else(too_big)?])])
}

pub(crate) fn register(r: &mut OpRegistry) {
    r.add(
        op("SpaceToBatchND")
            .input("input: T")
            .input("block_shape: Tblock_shape")
            .input("paddings: Tpaddings")
            .output("output: T")
            .attr("T: type")
            .attr("Tblock_shape: {int32, int64} = DT_INT32")
            .attr("Tpaddings: {int32, int64} = DT_INT32")
            .shape_fn(|c| nd_shape(c, Some(1), 2, true))
            .build(),
    );
    r.add(
        op("BatchToSpaceND")
            .input("input: T")
            .input("block_shape: Tblock_shape")
            .input("crops: Tcrops")
            .output("output: T")
            .attr("T: type")
            .attr("Tblock_shape: {int32, int64} = DT_INT32")
            .attr("Tcrops: {int32, int64} = DT_INT32")
            .shape_fn(|c| nd_shape(c, Some(1), 2, false))
            .build(),
    );
    r.add(
        op("SpaceToBatch")
            .input("input: T")
            .input("paddings: Tpaddings")
            .output("output: T")
            .attr("T: type")
            .attr("Tpaddings: {int32, int64} = DT_INT32")
            .attr("block_size: int >= 2")
            .shape_fn(|c| nd_shape(c, None, 1, true))
            .build(),
    );
    r.add(
        op("BatchToSpace")
            .input("input: T")
            .input("crops: Tidx")
            .output("output: T")
            .attr("T: type")
            .attr("block_size: int >= 2")
            .attr("Tidx: {int32, int64} = DT_INT32")
            .shape_fn(|c| nd_shape(c, None, 1, false))
            .build(),
    );
    for name in ["SpaceToDepth", "DepthToSpace"] {
        r.add(
            op(name)
                .input("input: T")
                .output("output: T")
                .attr("T: type")
                .attr("block_size: int >= 2")
                .attr("data_format: {'NHWC', 'NCHW', 'NCHW_VECT_C'} = 'NHWC'")
                .shape_fn(depth_space_shape)
                .build(),
        );
    }
    r.add(
        op("ReverseSequence")
            .input("input: T")
            .input("seq_lengths: Tlen")
            .output("output: T")
            .attr("seq_dim: int")
            .attr("batch_dim: int = 0")
            .attr("T: type")
            .attr("Tlen: {int32, int64} = DT_INT64")
            .shape_fn(unchanged)
            .build(),
    );
}

/// `SpaceToBatchND`: spatial blocks of `x` moved into the batch, after zero padding.
pub fn space_to_batch_nd(s: &Scope, x: Output, block_shape: Output, paddings: Output) -> Output {
    s.op("SpaceToBatchND").input(x).input(block_shape).input(paddings).build().output(0)
}

/// `BatchToSpaceND`: the inverse of [`space_to_batch_nd`], cropping by `crops`.
pub fn batch_to_space_nd(s: &Scope, x: Output, block_shape: Output, crops: Output) -> Output {
    s.op("BatchToSpaceND").input(x).input(block_shape).input(crops).build().output(0)
}

/// `SpaceToDepth`: `block_size` x `block_size` spatial blocks of NHWC `x` moved into depth.
pub fn space_to_depth(s: &Scope, x: Output, block_size: i64) -> Output {
    s.op("SpaceToDepth").input(x).attr("block_size", attr::int(block_size)).build().output(0)
}

/// `DepthToSpace`: the inverse of [`space_to_depth`].
pub fn depth_to_space(s: &Scope, x: Output, block_size: i64) -> Output {
    s.op("DepthToSpace").input(x).attr("block_size", attr::int(block_size)).build().output(0)
}

/// `ReverseSequence`: the first `seq_lengths[b]` slices along `seq_dim` of every batch
/// entry `b` (along `batch_dim`) reversed.
pub fn reverse_sequence(s: &Scope, x: Output, seq_lengths: Output, seq_dim: i64, batch_dim: i64) -> Output {
    let attrs = [("seq_dim", attr::int(seq_dim)), ("batch_dim", attr::int(batch_dim))];
    op_output(s, "ReverseSequence", [x, seq_lengths], attrs)
}
