//! Grayscale morphology (TensorFlow's `nn_ops.cc` definitions and builders): `Dilation2D`,
//! its gradients `Dilation2DBackpropInput` and `Dilation2DBackpropFilter`, and erosion
//! (`tf.nn.erosion2d`: `-dilation2d(-x, reversed filter)`).

use ferroflow_core::{attr, NodeAttrs, Status};

use super::with_rank;
use crate::op_def::op;
use crate::ops;
use crate::registry::OpRegistry;
use crate::scope::{Output, Scope};
use crate::shape_fn::{Dims, ShapeCtx};

const REAL_TYPES: &str = "{float, double, int32, uint8, int16, int8, int64, bfloat16, uint16, half, uint32, uint64}";

/// A 4-element attr, as the (rows, cols) entries.
fn spatial(c: &ShapeCtx, name: &str, what: &str) -> Result<(i64, i64), Status> {
    let v = c.node.attr_list_int(name)?;
    if v.len() != 4 {
        return Err(
            c.error(format!("Dilation2D requires the {what} attribute to contain 4 values, but got: {}", v.len()))
        );
    }
    Ok((v[1], v[2]))
}

/// TensorFlow's `GetWindowedOutputSize` for one dimension.
fn out_size(c: &ShapeCtx, input: i64, k: i64, stride: i64, same: bool) -> Result<i64, Status> {
    if stride <= 0 {
        return Err(c.error(format!("Stride must be > 0, but got {stride}")));
    }
    let out = if same { (input + stride - 1) / stride } else { (input - k + stride) / stride };
    if out < 0 {
        return Err(c.error(format!(
            "Computed output size would be negative: {out} [input_size: {input}, effective_filter_size: {k}, stride: \
             {stride}]"
        )));
    }
    Ok(out)
}

fn dilation_shape(c: &ShapeCtx) -> Result<Vec<Dims>, Status> {
    let x = with_rank(c, &c.input(0), 4, "input")?;
    let f = with_rank(c, &c.input(1), 3, "filter")?;
    let strides = spatial(c, "strides", "stride")?;
    let rates = spatial(c, "rates", "rates")?;
    if x[1] < 0 || x[2] < 0 || f[0] < 0 || f[1] < 0 {
        return Ok(vec![Some(vec![x[0], -1, -1, f[2]])]);
    }
    let same = match c.node.attr_string("padding")?.as_str() {
        "SAME" => true,
        "VALID" => false,
        p => return Err(c.error(format!("padding must be SAME or VALID, got '{p}'"))),
    };
    let eff = |k: i64, r: i64| k + (k - 1) * (r - 1);
    let rows = out_size(c, x[1], eff(f[0], rates.0), strides.0, same)?;
    let cols = out_size(c, x[2], eff(f[1], rates.1), strides.1, same)?;
    Ok(vec![Some(vec![x[0], rows, cols, f[2]])])
}

pub(super) fn register(r: &mut OpRegistry) {
    for name in ["Dilation2D", "Dilation2DBackpropInput", "Dilation2DBackpropFilter"] {
        let b = op(name).input("input: T").input("filter: T");
        let (b, shape): (_, crate::shape_fn::ShapeFn) = match name {
            "Dilation2D" => (b.output("output: T"), dilation_shape),
            "Dilation2DBackpropInput" => {
                (b.input("out_backprop: T").output("in_backprop: T"), |c| Ok(vec![c.input(0)]))
            }
            _ => (b.input("out_backprop: T").output("filter_backprop: T"), |c| Ok(vec![c.input(1)])),
        };
        let b = b
            .attr(&format!("T: {REAL_TYPES}"))
            .attr("strides: list(int) >= 4")
            .attr("rates: list(int) >= 4")
            .attr("padding: {'SAME', 'VALID'}");
        r.add(b.shape_fn(shape).build());
    }
}

/// The window attrs of the dilation ops: NHWC `strides` and `rates` (`[1, h, w, 1]`) and
/// `padding` ("SAME" or "VALID").
#[derive(Clone, Debug)]
pub struct Dilation2dAttrs {
    /// `[1, stride_rows, stride_cols, 1]`.
    pub strides: [i64; 4],
    /// `[1, rate_rows, rate_cols, 1]`.
    pub rates: [i64; 4],
    /// "SAME" or "VALID".
    pub padding: String,
}

impl Dilation2dAttrs {
    /// Copies these attrs from a dilation node.
    pub fn of(node: &ferroflow_core::proto::NodeDef) -> Result<Dilation2dAttrs, Status> {
        let four = |name: &str| -> Result<[i64; 4], Status> {
            let v = node.attr_list_int(name)?;
            v.try_into().map_err(|_| node.node_error(format!("{name} must have 4 entries")))
        };
        Ok(Dilation2dAttrs { strides: four("strides")?, rates: four("rates")?, padding: node.attr_string("padding")? })
    }

    fn build(&self, s: &Scope, op_type: &str, inputs: Vec<Output>) -> Output {
        let mut b = s.op(op_type);
        for x in inputs {
            b = b.input(x);
        }
        b.attr("strides", attr::list_int(&self.strides))
            .attr("rates", attr::list_int(&self.rates))
            .attr("padding", attr::string(&self.padding))
            .build()
            .output(0)
    }
}

/// `Dilation2D`: `max over (i, j) of input[b, y·s + i·r, x·s + j·r, c] + filter[i, j, c]`.
pub fn dilation2d(s: &Scope, input: Output, filter: Output, a: &Dilation2dAttrs) -> Output {
    a.build(s, "Dilation2D", vec![input, filter])
}

/// `Dilation2DBackpropInput`: the gradient of [`dilation2d`] with respect to its input.
pub fn dilation2d_backprop_input(s: &Scope, input: Output, filter: Output, dy: Output, a: &Dilation2dAttrs) -> Output {
    a.build(s, "Dilation2DBackpropInput", vec![input, filter, dy])
}

/// `Dilation2DBackpropFilter`: the gradient of [`dilation2d`] with respect to its filter.
pub fn dilation2d_backprop_filter(s: &Scope, input: Output, filter: Output, dy: Output, a: &Dilation2dAttrs) -> Output {
    a.build(s, "Dilation2DBackpropFilter", vec![input, filter, dy])
}

/// `tf.nn.erosion2d`: `-dilation2d(-input, filter reversed in rows and columns)`.
pub fn erosion2d(s: &Scope, input: Output, filter: Output, a: &Dilation2dAttrs) -> Output {
    let reversed = ops::reverse_v2(s, filter, ops::constant(s, vec![0i32, 1]));
    ops::neg(s, dilation2d(s, ops::neg(s, input), reversed, a))
}
