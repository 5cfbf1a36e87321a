//! Gradients of `Conv2D`, its two backprop ops, `MaxPool`, `MaxPoolGrad`, `MaxPoolGradGrad`,
//! `AvgPool`, `AvgPoolGrad` and the three argmax poolings
//! (TensorFlow's `nn_grad.py`). Every gradient op carries the forward op's window attrs.

use ferroflow_core::{DataType, Status};

use super::nn_grad::{copy_attrs, grad, input, output};
use super::registry::Grads;
use crate::gradients::GradOp;
use crate::ops;
use crate::scope::{Output, Scope};

/// The attrs shared by Conv2D, Conv2DBackpropInput and Conv2DBackpropFilter.
const CONV_ATTRS: [&str; 6] =
    ["strides", "padding", "explicit_paddings", "use_cudnn_on_gpu", "data_format", "dilations"];

/// A conv-family op with inputs `ins` and the forward node's conv attrs.
fn conv_op(s: &Scope, op_type: &str, op: &GradOp, ins: [Output; 3]) -> Output {
    let mut b = s.op(op_type);
    for i in ins {
        b = b.input(i);
    }
    copy_attrs(b, &op.node, &CONV_ATTRS).build().output(0)
}

/// `Conv2D` with the forward node's conv attrs.
fn conv(s: &Scope, op: &GradOp, x: Output, f: Output) -> Output {
    copy_attrs(s.op("Conv2D").input(x).input(f), &op.node, &CONV_ATTRS).build().output(0)
}

/// Conv2D(input, filter): `Conv2DBackpropInput(shape(input), filter, dy)` and
/// `Conv2DBackpropFilter(input, shape(filter), dy)`, both shapes from one `ShapeN`.
pub(super) fn conv2d_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    let (x, f, dy) = (input(op, 0)?, input(op, 1)?, grad(op, g, 0)?);
    let shapes = ops::shape_n(s, vec![x.clone(), f.clone()], DataType::Int32);
    let [sx, sf] = <[Output; 2]>::try_from(shapes)
        .map_err(|_| Status::internal("ShapeN of two tensors did not give two outputs"))?;
    let dx = conv_op(s, "Conv2DBackpropInput", op, [sx, f, dy.clone()]);
    let df = conv_op(s, "Conv2DBackpropFilter", op, [x, sf, dy]);
    Ok(vec![Some(dx), Some(df)])
}

/// Conv2DBackpropInput(input_sizes, filter, out_backprop) is linear in each of filter and
/// out_backprop: `Conv2DBackpropFilter(ddx, shape(filter), out_backprop)` and
/// `Conv2D(ddx, filter)`; none for the sizes.
pub(super) fn conv2d_backprop_input_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    let (f, dy, ddx) = (input(op, 1)?, input(op, 2)?, grad(op, g, 0)?);
    let sf = ops::shape(s, f.clone(), DataType::Int32);
    let df = conv_op(s, "Conv2DBackpropFilter", op, [ddx.clone(), sf, dy]);
    let ddy = conv(s, op, ddx, f);
    Ok(vec![None, Some(df), Some(ddy)])
}

/// Conv2DBackpropFilter(input, filter_sizes, out_backprop):
/// `Conv2DBackpropInput(shape(input), ddf, out_backprop)` and `Conv2D(input, ddf)`.
pub(super) fn conv2d_backprop_filter_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    let (x, dy, ddf) = (input(op, 0)?, input(op, 2)?, grad(op, g, 0)?);
    let sx = ops::shape(s, x.clone(), DataType::Int32);
    let dx = conv_op(s, "Conv2DBackpropInput", op, [sx, ddf.clone(), dy]);
    let ddy = conv(s, op, x, ddf);
    Ok(vec![Some(dx), None, Some(ddy)])
}

/// MaxPool: `MaxPoolGrad(input, output, dy)` routes each gradient to its window's maximum.
pub(super) fn max_pool_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    let b = s.op("MaxPoolGrad").input(input(op, 0)?).input(output(op, 0)?).input(grad(op, g, 0)?);
    let names = ["ksize", "strides", "padding", "explicit_paddings", "data_format"];
    Ok(vec![Some(copy_attrs(b, &op.node, &names).build().output(0))])
}

/// MaxPoolGrad(x, y, dy) is linear in `dy`; its adjoint picks the incoming gradient at each
/// window's maximum: `MaxPoolGradGrad(x, y, g)`. `x` and `y` only select positions, so
/// they get no gradient (TensorFlow returns zeros).
pub(super) fn max_pool_grad_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    let b = s.op("MaxPoolGradGrad").input(input(op, 0)?).input(input(op, 1)?).input(grad(op, g, 0)?);
    let names = ["ksize", "strides", "padding", "data_format"];
    Ok(vec![None, None, Some(copy_attrs(b, &op.node, &names).build().output(0))])
}

/// MaxPoolGradGrad(x, y, g) is linear in `g`, with adjoint `MaxPoolGrad(x, y, dy)`.
pub(super) fn max_pool_grad_grad_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    let b = s.op("MaxPoolGrad").input(input(op, 0)?).input(input(op, 1)?).input(grad(op, g, 0)?);
    let names = ["ksize", "strides", "padding", "data_format"];
    Ok(vec![None, None, Some(copy_attrs(b, &op.node, &names).build().output(0))])
}

const AVG_POOL_ATTRS: [&str; 4] = ["ksize", "strides", "padding", "data_format"];

/// AvgPool: `AvgPoolGrad(shape(input), dy)`.
pub(super) fn avg_pool_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    let shape = ops::shape(s, input(op, 0)?, DataType::Int32);
    let b = s.op("AvgPoolGrad").input(shape).input(grad(op, g, 0)?);
    Ok(vec![Some(copy_attrs(b, &op.node, &AVG_POOL_ATTRS).build().output(0))])
}

/// AvgPoolGrad is linear in `grad` with adjoint AvgPool; none for the shape input.
pub(super) fn avg_pool_grad_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    let b = s.op("AvgPool").input(grad(op, g, 0)?);
    Ok(vec![None, Some(copy_attrs(b, &op.node, &AVG_POOL_ATTRS).build().output(0))])
}

const ARGMAX_ATTRS: [&str; 5] = ["ksize", "strides", "padding", "include_batch_in_index", "Targmax"];

/// The argmax-pool op `op_type` of inputs `(x, g, argmax)` with the forward node's attrs.
fn argmax_pool(s: &Scope, op_type: &str, op: &GradOp, x: Output, g: Output, argmax: Output) -> Output {
    copy_attrs(s.op(op_type).input(x).input(g).input(argmax), &op.node, &ARGMAX_ATTRS).build().output(0)
}

/// MaxPoolWithArgmax: `MaxPoolGradWithArgmax(input, dy, argmax)` routes each gradient to the
/// position its argmax names; the argmax output carries none.
pub(super) fn max_pool_with_argmax_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    let dx = argmax_pool(s, "MaxPoolGradWithArgmax", op, input(op, 0)?, grad(op, g, 0)?, output(op, 1)?);
    Ok(vec![Some(dx)])
}

/// MaxPoolGradWithArgmax(x, dy, argmax) is linear in `dy`, with adjoint
/// `MaxPoolGradGradWithArgmax(x, g, argmax)`; `x` gets zeros (TensorFlow's) and `argmax`
/// none.
pub(super) fn max_pool_grad_with_argmax_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    let x = input(op, 0)?;
    let ddy = argmax_pool(s, "MaxPoolGradGradWithArgmax", op, x.clone(), grad(op, g, 0)?, input(op, 2)?);
    Ok(vec![Some(ops::zeros_like(s, x)), Some(ddy), None])
}

/// MaxPoolGradGradWithArgmax(x, g, argmax) is linear in `g`, with adjoint
/// `MaxPoolGradWithArgmax(x, dy, argmax)`.
pub(super) fn max_pool_grad_grad_with_argmax_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    let x = input(op, 0)?;
    let dg = argmax_pool(s, "MaxPoolGradWithArgmax", op, x.clone(), grad(op, g, 0)?, input(op, 2)?);
    Ok(vec![Some(ops::zeros_like(s, x)), Some(dg), None])
}

/// FractionalMaxPool: `FractionalMaxPoolGrad(x, y, dy, rows, cols)` routes each gradient to
/// its cell's maximum, over the sequences the forward run drew; the sequences carry none.
pub(super) fn fractional_max_pool_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    let b = s.op("FractionalMaxPoolGrad").input(input(op, 0)?).input(output(op, 0)?).input(grad(op, g, 0)?);
    let b = b.input(output(op, 1)?).input(output(op, 2)?);
    Ok(vec![Some(copy_attrs(b, &op.node, &["overlapping"]).build().output(0))])
}

/// FractionalAvgPool: `FractionalAvgPoolGrad(shape(x), dy, rows, cols)` spreads each
/// gradient evenly over its cell.
pub(super) fn fractional_avg_pool_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    let shape = ops::shape(s, input(op, 0)?, DataType::Int64);
    let b = s.op("FractionalAvgPoolGrad").input(shape).input(grad(op, g, 0)?);
    let b = b.input(output(op, 1)?).input(output(op, 2)?);
    Ok(vec![Some(copy_attrs(b, &op.node, &["overlapping"]).build().output(0))])
}

#[cfg(test)]
mod tests {
    use ferroflow_core::NodeAttrs;

    use super::*;
    use crate::gradients::gradients;
    use crate::ops::test_util::ph;

    fn def(s: &Scope, o: &Output) -> ferroflow_core::proto::NodeDef {
        s.graph().node(&o.node).unwrap().def
    }

    #[test]
    fn conv_grads_copy_attrs_and_shapes() {
        let s = Scope::new_root();
        let x = ph(&s, &[-1, 9, 9, 2]);
        let f = ph(&s, &[3, 3, 2, 4]);
        let y = ops::conv2d(&s, x.clone(), f.clone(), &[1, 2, 2, 1], "VALID");
        let g = gradients(&s, &[y], &[x, f], None).unwrap();
        let (dx, df) = (g[0].clone().unwrap(), g[1].clone().unwrap());
        let (nx, nf) = (def(&s, &dx), def(&s, &df));
        assert_eq!(nx.op, "Conv2DBackpropInput");
        assert_eq!(nf.op, "Conv2DBackpropFilter");
        for n in [&nx, &nf] {
            assert_eq!(n.attr_list_int("strides").unwrap(), vec![1, 2, 2, 1]);
            assert_eq!(n.attr_string("padding").unwrap(), "VALID");
            assert_eq!(n.attr_list_int("dilations").unwrap(), vec![1, 1, 1, 1]);
        }
        // Both sizes come from one ShapeN.
        assert_eq!(nx.input[0].split(':').next(), nf.input[1].split(':').next());
        assert_eq!(s.graph().operation(&nx.input[0]).unwrap().op_type, "ShapeN");
        s.status().unwrap();
    }

    #[test]
    fn backprop_ops_have_no_size_gradient() {
        let s = Scope::new_root();
        let sizes = ops::constant(&s, ferroflow_core::Tensor::vec(vec![2i32, 5, 5, 3]));
        let f = ph(&s, &[3, 3, 3, 4]);
        let dy = ph(&s, &[2, 5, 5, 4]);
        let dx = ops::conv2d_backprop_input(&s, sizes, f.clone(), dy.clone(), &[1, 1, 1, 1], "SAME");
        let g = gradients(&s, &[dx], &[f.clone(), dy.clone()], None).unwrap();
        assert_eq!(def(&s, g[0].as_ref().unwrap()).op, "Conv2DBackpropFilter");
        assert_eq!(def(&s, g[1].as_ref().unwrap()).op, "Conv2D");
        assert_eq!(s.graph().shape_of(g[1].as_ref().unwrap()), Some(vec![2, 5, 5, 4]));
        s.status().unwrap();
    }

    #[test]
    fn pool_grads() {
        let s = Scope::new_root();
        let x = ph(&s, &[2, 6, 6, 3]);
        let m = ops::max_pool(&s, x.clone(), &[1, 3, 3, 1], &[1, 2, 2, 1], "SAME");
        let a = ops::avg_pool(&s, x.clone(), &[1, 2, 2, 1], &[1, 2, 2, 1], "VALID");
        let g = gradients(&s, &[m.clone(), a], std::slice::from_ref(&x), None).unwrap()[0].clone().unwrap();
        assert_eq!(def(&s, &g).op, "AddN");
        let n = def(&s, &g);
        let ops_in: Vec<String> =
            n.input.iter().map(|i| s.graph().operation(i.split(':').next().unwrap()).unwrap().op_type).collect();
        assert!(ops_in.contains(&"MaxPoolGrad".to_string()) && ops_in.contains(&"AvgPoolGrad".to_string()));
        let gm = gradients(&s, &[m], &[x], None).unwrap()[0].clone().unwrap();
        let n = def(&s, &gm);
        assert_eq!(n.attr_list_int("ksize").unwrap(), vec![1, 3, 3, 1]);
        assert_eq!(n.attr_string("padding").unwrap(), "SAME");
        assert_eq!(s.graph().shape_of(&gm), Some(vec![2, 6, 6, 3]));
        s.status().unwrap();
    }
}
