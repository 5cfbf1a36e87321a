//! Gradients of `FusedBatchNorm{,V2,V3}` and of `DepthwiseConv2dNative` and its two
//! backprop ops (TensorFlow's `nn_grad.py`).

use ferroflow_core::{DataType, NodeAttrs, Status};

use super::nn_grad::{copy_attrs, grad, input, output};
use super::registry::Grads;
use crate::gradients::GradOp;
use crate::ops;
use crate::scope::{Output, Scope};

/// FusedBatchNorm{,V2,V3}(x, scale, offset, mean, variance): one `FusedBatchNormGrad*` of
/// the same version gives the gradients of x, scale and offset; mean and variance get none.
/// Training passes the forward op's reserve spaces; inference passes the population mean
/// and variance (input 3 and 4) as TensorFlow does. (TensorFlow transposes NCHW inference
/// gradients to NHWC because its CPU kernel only takes NHWC there; ferroflow's takes both.)
pub(super) fn fused_batch_norm_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    let grad_op = match op.node.op.as_str() {
        "FusedBatchNorm" => "FusedBatchNormGrad",
        "FusedBatchNormV2" => "FusedBatchNormGradV2",
        _ => "FusedBatchNormGradV3",
    };
    let training = !op.node.has_attr("is_training") || op.node.attr_bool("is_training")?;
    let (r1, r2) = if training { (output(op, 3)?, output(op, 4)?) } else { (input(op, 3)?, input(op, 4)?) };
    let mut b = s.op(grad_op).input(grad(op, g, 0)?).input(input(op, 0)?).input(input(op, 1)?).input(r1).input(r2);
    if grad_op == "FusedBatchNormGradV3" {
        b = b.input(output(op, 5)?);
    }
    let o = copy_attrs(b, &op.node, &["T", "U", "epsilon", "data_format", "is_training"]).try_build()?.outputs();
    Ok(vec![Some(o[0].clone()), Some(o[1].clone()), Some(o[2].clone()), None, None])
}

/// The attrs shared by DepthwiseConv2dNative and its two backprops.
const DW_ATTRS: [&str; 5] = ["strides", "padding", "explicit_paddings", "data_format", "dilations"];

fn dw_op(s: &Scope, op_type: &str, op: &GradOp, ins: [Output; 3]) -> Result<Output, Status> {
    Ok(copy_attrs(s.op(op_type).inputs(ins), &op.node, &DW_ATTRS).try_build()?.output(0))
}

fn dw_forward(s: &Scope, op: &GradOp, x: Output, f: Output) -> Result<Output, Status> {
    Ok(copy_attrs(s.op("DepthwiseConv2dNative").inputs([x, f]), &op.node, &DW_ATTRS).try_build()?.output(0))
}

/// DepthwiseConv2dNative(input, filter): `DepthwiseConv2dNativeBackpropInput(shape(input),
/// filter, dy)` and `DepthwiseConv2dNativeBackpropFilter(input, shape(filter), dy)`.
pub(super) fn depthwise_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    let (x, f, dy) = (input(op, 0)?, input(op, 1)?, grad(op, g, 0)?);
    let (sx, sf) = (ops::shape(s, x.clone(), DataType::Int32), ops::shape(s, f.clone(), DataType::Int32));
    let dx = dw_op(s, "DepthwiseConv2dNativeBackpropInput", op, [sx, f, dy.clone()])?;
    let df = dw_op(s, "DepthwiseConv2dNativeBackpropFilter", op, [x, sf, dy])?;
    Ok(vec![Some(dx), Some(df)])
}

/// DepthwiseConv2dNativeBackpropInput(sizes, filter, dy) is linear in filter and in dy:
/// `BackpropFilter(ddx, shape(filter), dy)` and `DepthwiseConv2dNative(ddx, filter)`.
pub(super) fn depthwise_backprop_input_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    let (f, dy, ddx) = (input(op, 1)?, input(op, 2)?, grad(op, g, 0)?);
    let sf = ops::shape(s, f.clone(), DataType::Int32);
    let df = dw_op(s, "DepthwiseConv2dNativeBackpropFilter", op, [ddx.clone(), sf, dy])?;
    Ok(vec![None, Some(df), Some(dw_forward(s, op, ddx, f)?)])
}

/// DepthwiseConv2dNativeBackpropFilter(x, sizes, dy):
/// `BackpropInput(shape(x), ddf, dy)` and `DepthwiseConv2dNative(x, ddf)`.
pub(super) fn depthwise_backprop_filter_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    let (x, dy, ddf) = (input(op, 0)?, input(op, 2)?, grad(op, g, 0)?);
    let sx = ops::shape(s, x.clone(), DataType::Int32);
    let dx = dw_op(s, "DepthwiseConv2dNativeBackpropInput", op, [sx, ddf.clone(), dy])?;
    Ok(vec![Some(dx), None, Some(dw_forward(s, op, x, ddf)?)])
}

#[cfg(test)]
mod tests {
    use ferroflow_core::NodeAttrs;

    use super::*;
    use crate::gradients::gradients;
    use crate::ops::test_util::ph;

    #[test]
    fn batch_norm_grad_uses_reserve_spaces_or_population_stats() {
        for training in [true, false] {
            let s = Scope::new_root();
            let x = ph(&s, &[2, 4, 4, 3]);
            let v: Vec<Output> = (0..4).map(|_| ph(&s, &[3])).collect();
            let bn = ops::fused_batch_norm(
                &s,
                x.clone(),
                v[0].clone(),
                v[1].clone(),
                v[2].clone(),
                v[3].clone(),
                0.01,
                training,
            );
            let g = gradients(&s, std::slice::from_ref(&bn.y), &[x, v[0].clone(), v[1].clone(), v[2].clone()], None)
                .unwrap();
            assert!(g[3].is_none());
            let gx = g[0].clone().unwrap();
            let n = s.graph().node(&gx.node).unwrap().def;
            assert_eq!(n.op, "FusedBatchNormGradV3");
            assert_eq!(n.attr_bool("is_training").unwrap(), training);
            assert!((n.attr_float("epsilon").unwrap() - 0.01).abs() < 1e-9);
            let r1 = n.input[3].split(':').collect::<Vec<_>>();
            if training {
                assert_eq!(r1, vec![bn.y.node.as_str(), "3"]);
            } else {
                assert_eq!(r1[0], v[2].node);
            }
            assert_eq!(s.graph().shape_of(&gx), Some(vec![2, 4, 4, 3]));
            assert_eq!(s.graph().shape_of(g[1].as_ref().unwrap()), Some(vec![3]));
            s.status().unwrap();
        }
    }

    #[test]
    fn depthwise_grads() {
        let s = Scope::new_root();
        let x = ph(&s, &[2, 9, 9, 4]);
        let f = ph(&s, &[3, 3, 4, 2]);
        let y = ops::depthwise_conv2d_native(&s, x.clone(), f.clone(), &[1, 2, 2, 1], "SAME");
        assert_eq!(s.graph().shape_of(&y), Some(vec![2, 5, 5, 8]));
        let g = gradients(&s, &[y], &[x, f], None).unwrap();
        let (dx, df) = (g[0].clone().unwrap(), g[1].clone().unwrap());
        let nx = s.graph().node(&dx.node).unwrap().def;
        let nf = s.graph().node(&df.node).unwrap().def;
        assert_eq!(nx.op, "DepthwiseConv2dNativeBackpropInput");
        assert_eq!(nf.op, "DepthwiseConv2dNativeBackpropFilter");
        for n in [&nx, &nf] {
            assert_eq!(n.attr_list_int("strides").unwrap(), vec![1, 2, 2, 1]);
            assert_eq!(n.attr_string("padding").unwrap(), "SAME");
        }
        s.status().unwrap();
    }
}
