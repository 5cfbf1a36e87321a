//! The gradient of grayscale dilation (TensorFlow's `nn_grad.py`): `Dilation2D(input,
//! filter)` sends its incoming gradient to the first maximum of each window, through
//! `Dilation2DBackpropInput` for the input and `Dilation2DBackpropFilter` for the filter
//! (both with the forward op's strides, rates and padding). `tf.nn.erosion2d` is built from
//! `Dilation2D`, so this differentiates it too.

use super::nn_grad::{copy_attrs, grad, input};
use super::registry::{GradRegistry, Grads};
use crate::gradients::GradOp;
use crate::scope::{Output, Scope};

const ATTRS: [&str; 3] = ["strides", "rates", "padding"];

fn dilation2d_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    let (x, f, dy) = (input(op, 0)?, input(op, 1)?, grad(op, g, 0)?);
    let backprop = |name: &str| {
        let b = s.op(name).input(x.clone()).input(f.clone()).input(dy.clone());
        Some(copy_attrs(b, &op.node, &ATTRS).build().output(0))
    };
    Ok(vec![backprop("Dilation2DBackpropInput"), backprop("Dilation2DBackpropFilter")])
}

pub(super) fn register(r: &mut GradRegistry) {
    r.add("Dilation2D", dilation2d_grad);
}

#[cfg(test)]
mod tests {
    use ferroflow_core::DataType;

    use crate::gradients;
    use crate::ops::{self, Dilation2dAttrs};
    use crate::scope::Scope;

    #[test]
    fn both_inputs_get_the_backprop_ops_with_the_forward_attrs() {
        let s = Scope::new_root();
        let x = ops::placeholder(&s, DataType::Float, Some(&[1, 5, 6, 2]));
        let f = ops::placeholder(&s, DataType::Float, Some(&[2, 3, 2]));
        let a = Dilation2dAttrs { strides: [1, 2, 1, 1], rates: [1, 1, 2, 1], padding: "SAME".into() };
        let y = ops::dilation2d(&s, x.clone(), f.clone(), &a);
        assert_eq!(s.graph().shape_of(&y), Some(vec![1, 3, 6, 2]));
        let g = gradients(&s, &[y], &[x, f], None).unwrap();
        let (dx, df) = (g[0].clone().unwrap(), g[1].clone().unwrap());
        assert_eq!(s.graph().shape_of(&dx), Some(vec![1, 5, 6, 2]));
        assert_eq!(s.graph().shape_of(&df), Some(vec![2, 3, 2]));
        let node = |o: &crate::scope::Output| s.graph().node(&o.node).unwrap().def;
        assert_eq!(node(&dx).op, "Dilation2DBackpropInput");
        assert_eq!(node(&df).op, "Dilation2DBackpropFilter");
        assert_eq!(Dilation2dAttrs::of(&node(&df)).unwrap().rates, [1, 1, 2, 1]);
        s.status().unwrap();
    }
}
