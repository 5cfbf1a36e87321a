//! `MatMul` and `BatchMatMulV2`.

use ferroflow_core::{attr, NodeAttrs, Status};

use super::window::with_rank;
use crate::op_def::op;
use crate::registry::OpRegistry;
use crate::scope::{Output, Scope};
use crate::shape_fn::{broadcast_dims, Dims, ShapeCtx};

fn fmt(d: &[i64]) -> String {
    let v: Vec<String> = d.iter().map(|x| if *x < 0 { "?".into() } else { x.to_string() }).collect();
    format!("[{}]", v.join(","))
}

/// Checks a contraction dim pair; -1 is unknown.
fn inner(c: &ShapeCtx, k1: i64, k2: i64, a: &[i64], b: &[i64]) -> Result<(), Status> {
    if k1 >= 0 && k2 >= 0 && k1 != k2 {
        return Err(c.error(format!(
            "Dimensions must be equal, but are {k1} and {k2}; Matrix size-incompatible: In[0]: {}, In[1]: {}",
            fmt(a),
            fmt(b)
        )));
    }
    Ok(())
}

fn matmul_shape(c: &ShapeCtx) -> Result<Vec<Dims>, Status> {
    let a = with_rank(c, &c.input(0), 2, "In[0]")?;
    let b = with_rank(c, &c.input(1), 2, "In[1]")?;
    let (ta, tb) = (c.node.attr_bool("transpose_a")?, c.node.attr_bool("transpose_b")?);
    let (m, k1) = if ta { (a[1], a[0]) } else { (a[0], a[1]) };
    let (k2, n) = if tb { (b[1], b[0]) } else { (b[0], b[1]) };
    inner(c, k1, k2, &a, &b)?;
    Ok(vec![Some(vec![m, n])])
}

fn batch_matmul_shape(c: &ShapeCtx) -> Result<Vec<Dims>, Status> {
    let (Some(x), Some(y)) = (c.input(0), c.input(1)) else { return Ok(vec![None]) };
    for (i, d) in [&x, &y].into_iter().enumerate() {
        if d.len() < 2 {
            return Err(c.error(format!("In[{i}] ndims must be >= 2: {}", d.len())));
        }
    }
    let (adj_x, adj_y) = (c.node.attr_bool("adj_x")?, c.node.attr_bool("adj_y")?);
    let (xr, yr) = (x.len(), y.len());
    let (m, k1) = if adj_x { (x[xr - 1], x[xr - 2]) } else { (x[xr - 2], x[xr - 1]) };
    let (k2, n) = if adj_y { (y[yr - 1], y[yr - 2]) } else { (y[yr - 2], y[yr - 1]) };
    inner(c, k1, k2, &x, &y)?;
    let batch = broadcast_dims(c, &Some(x[..xr - 2].to_vec()), &Some(y[..yr - 2].to_vec()))?;
    Ok(vec![batch.map(|mut b| {
        b.extend([m, n]);
        b
    })])
}

pub(super) fn register(r: &mut OpRegistry) {
    r.add(
        op("MatMul")
            .input("a: T")
            .input("b: T")
            .output("product: T")
            .attr("transpose_a: bool = false")
            .attr("transpose_b: bool = false")
            .attr("grad_a: bool = false")
            .attr("grad_b: bool = false")
            .attr(
                "T: {bfloat16, half, float, double, int32, int64, uint8, uint16, uint32, uint64, int8, int16, \
                 complex64, complex128}",
            )
            .shape_fn(matmul_shape)
            .build(),
    );
    // Grappler's fused form (MatMul + BiasAdd [+ Relu]); ferroflow builds it when it
    // prepares a graph to run, never in the graph a user sees.
    r.add(
        op("_FusedMatMul")
            .input("a: T")
            .input("b: T")
            .input("args: num_args * T")
            .output("product: T")
            .attr("transpose_a: bool = false")
            .attr("transpose_b: bool = false")
            .attr("T: {bfloat16, half, float}")
            .attr("num_args: int >= 0")
            .attr("fused_ops: list(string) = []")
            .attr("epsilon: float = 0.0001")
            .attr("leakyrelu_alpha: float = 0.2")
            .shape_fn(matmul_shape)
            .build(),
    );
    r.add(
        op("BatchMatMulV2")
            .input("x: T")
            .input("y: T")
            .output("output: T")
            .attr(
                "T: {bfloat16, half, float, double, int16, int32, int64, uint8, uint16, uint32, uint64, \
                 complex64, complex128}",
            )
            .attr("adj_x: bool = false")
            .attr("adj_y: bool = false")
            .attr("grad_x: bool = false")
            .attr("grad_y: bool = false")
            .shape_fn(batch_matmul_shape)
            .build(),
    );
}

/// `MatMul`: `a · b`, with either operand transposed first.
///
/// ```
/// use ferroflow_graph::{ops, Scope};
/// let s = Scope::new_root();
/// let a = ops::constant(&s, ferroflow_core::Tensor::new(vec![2, 3], vec![1.0f32; 6]).unwrap());
/// let b = ops::constant(&s, ferroflow_core::Tensor::new(vec![2, 3], vec![1.0f32; 6]).unwrap());
/// let c = ops::mat_mul(&s, a, b, false, true);
/// assert_eq!(s.graph().shape_of(&c), Some(vec![2, 2]));
/// ```
pub fn mat_mul(s: &Scope, a: Output, b: Output, transpose_a: bool, transpose_b: bool) -> Output {
    product(s, "MatMul", [a, b], [("transpose_a", transpose_a), ("transpose_b", transpose_b)])
}

/// A product op of two operands, with a flag per operand that transposes it first.
fn product(s: &Scope, op_type: &str, operands: [Output; 2], flags: [(&str, bool); 2]) -> Output {
    flags.into_iter().fold(s.op(op_type).inputs(operands), |b, (name, v)| b.attr(name, attr::bool(v))).build().output(0)
}

/// `BatchMatMulV2`: batched `x · y` over the (broadcast) leading dims; `adj_x`/`adj_y`
/// transpose the last two dims first.
pub fn batch_mat_mul_v2(s: &Scope, x: Output, y: Output, adj_x: bool, adj_y: bool) -> Output {
    product(s, "BatchMatMulV2", [x, y], [("adj_x", adj_x), ("adj_y", adj_y)])
}
