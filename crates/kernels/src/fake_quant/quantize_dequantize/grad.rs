//! `QuantizeAndDequantizeV4Grad`, the gradient of `QuantizeAndDequantizeV4` (TensorFlow's
//! clipped straight-through estimator): the incoming gradient where the input lies in the
//! given range [`input_min`, `input_max`] (per slice along `axis`), 0 outside; the range
//! ends get zero gradients.

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{DataType, Status, Tensor};
use rayon::prelude::*;

use super::{int_attr, split, vals, Qf, CHUNK};
use crate::{OpContext, OpKernel};

/// The kernel.
struct V4Grad {
    axis: i64,
}

pub(super) fn make(n: &NodeDef) -> Result<Box<dyn OpKernel>, Status> {
    Ok(Box::new(V4Grad { axis: int_attr(n, "axis", -1)? }))
}

impl V4Grad {
    fn check(&self, ctx: &OpContext, g: &Tensor, x: &Tensor, min: &Tensor, max: &Tensor) -> Result<(), Status> {
        let rank = x.rank() as i64;
        if self.axis < -1 {
            return Err(ctx.error(format!("Axis must be at least -1. Found {}", self.axis)));
        }
        if self.axis != -1 && self.axis >= rank {
            return Err(ctx.error(format!(
                "Axis should be -1 or 0 or a positive value less than {rank}but given axis value was {}",
                self.axis
            )));
        }
        if g.dims() != x.dims() {
            return Err(ctx.error("gradient and input must be the same size"));
        }
        for (name, t) in [("min", min), ("max", max)] {
            if t.rank() > 1 {
                return Err(
                    ctx.error(format!("Input {name} tensor must have dimension 0 or 1. Received {}.", t.rank()))
                );
            }
        }
        if self.axis == -1 {
            for (name, t) in [("input_min", min), ("input_max", max)] {
                if t.rank() != 0 {
                    return Err(ctx.error(format!("{name} must be a scalar if axis is unspecified")));
                }
            }
            return Ok(());
        }
        for (name, t) in [("input_min", min), ("input_max", max)] {
            if t.rank() != 1 {
                return Err(ctx.error(format!("Shape must be rank 1 for {name}_tensor when the axis is specified")));
            }
        }
        let (_, depth, _) = split(x.dims(), self.axis);
        for (name, t) in [("min", min), ("max", max)] {
            if t.dims()[0] != depth {
                return Err(ctx.error(format!("{name} has incorrect size, expected {depth} was {}", t.dims()[0])));
            }
        }
        Ok(())
    }

    fn run<T: Qf>(
        &self,
        ctx: &mut OpContext,
        g: &Tensor,
        x: &Tensor,
        min: &Tensor,
        max: &Tensor,
    ) -> Result<(), Status> {
        for t in [g, min, max] {
            if t.dtype() != x.dtype() {
                return Err(ctx.error(format!("all inputs must be {}, got {}", x.dtype(), t.dtype())));
            }
        }
        let (gs, xs, lo, hi) = (vals::<T>(g)?, vals::<T>(x)?, vals::<T>(min)?, vals::<T>(max)?);
        let (_, depth, inner) = split(x.dims(), self.axis);
        let mut dx = ferroflow_core::alloc::zeroed::<T>(x.dims())?;
        dx.par_chunks_mut(CHUNK).zip(gs.par_chunks(CHUNK).zip(xs.par_chunks(CHUNK))).enumerate().for_each(
            |(k, (o, (gs, xs)))| {
                for (j, (o, (&gv, &v))) in o.iter_mut().zip(gs.iter().zip(xs)).enumerate() {
                    let c = ((k * CHUNK + j) / inner.max(1)) % depth.max(1);
                    let (Some(&a), Some(&b)) = (lo.get(c), hi.get(c)) else { continue };
                    *o = gv.mul(if v >= a && v <= b { T::ONE } else { T::ZERO });
                }
            },
        );
        ctx.set_output(0, Tensor::new(x.dims().to_vec(), dx)?)?;
        ctx.set_output(1, Tensor::new(min.dims().to_vec(), vec![T::ZERO; min.num_elements()])?)?;
        ctx.set_output(2, Tensor::new(min.dims().to_vec(), vec![T::ZERO; min.num_elements()])?)
    }
}

impl OpKernel for V4Grad {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let (g, x, min, max) = (ctx.input(0)?, ctx.input(1)?, ctx.input(2)?, ctx.input(3)?);
        self.check(ctx, &g, &x, &min, &max)?;
        match x.dtype() {
            DataType::Float => self.run::<f32>(ctx, &g, &x, &min, &max),
            DataType::Double => self.run::<f64>(ctx, &g, &x, &min, &max),
            d => Err(ctx.error(format!("input must be float or double, got {d}"))),
        }
    }
}

#[cfg(test)]
mod tests {
    use ferroflow_core::{attr, Code, Tensor};

    use crate::testutil::{node, run_kernel};

    fn x() -> Tensor {
        Tensor::new(vec![2, 3], vec![1.0f32, 2.0, 3.0, 4.0, 5.0, -6.0]).unwrap()
    }

    fn v(v: &[f32]) -> Tensor {
        Tensor::new(vec![v.len()], v.to_vec()).unwrap()
    }

    fn s(v: f32) -> Tensor {
        Tensor::scalar(v)
    }

    #[test]
    fn v4_grad_passes_what_lies_in_each_range() {
        let out = run_kernel(
            node("QuantizeAndDequantizeV4Grad", &[("axis", attr::int(1))]),
            vec![x(), x(), v(&[0.0, 1.0, 2.0]), v(&[1.0, 2.0, 3.0])],
            3,
        )
        .unwrap();
        assert_eq!(out[0].as_slice::<f32>().unwrap(), &[1.0, 2.0, 3.0, 0.0, 0.0, -0.0]);
        assert_eq!(out[1].as_slice::<f32>().unwrap(), &[0.0; 3]);
        assert_eq!(out[2].dims(), &[3]);
    }

    #[test]
    fn bad_inputs_are_invalid_arguments_with_tensorflows_messages() {
        type Case<'a> = (Vec<(&'a str, ferroflow_core::proto::AttrValue)>, Vec<Tensor>, &'a str);
        let cases: Vec<Case> = vec![
            (vec![], vec![v(&[1.0]), x(), s(0.0), s(1.0)], "gradient and input must be the same size"),
            (
                vec![("axis", attr::int(2))],
                vec![x(), x(), s(0.0), s(1.0)],
                "Axis should be -1 or 0 or a positive value less than 2but given axis value was 2",
            ),
            (
                vec![("axis", attr::int(1))],
                vec![x(), x(), v(&[0.0, 1.0]), v(&[1.0; 3])],
                "min has incorrect size, expected 3 was 2",
            ),
            (vec![], vec![x(), x(), v(&[0.0]), s(1.0)], "input_min must be a scalar if axis is unspecified"),
            (
                vec![],
                vec![x(), x(), s(0.0), Tensor::new(vec![1, 1], vec![1f32]).unwrap()],
                "Input max tensor must have dimension 0 or 1. Received 2.",
            ),
        ];
        for (attrs, inputs, want) in cases {
            let e = run_kernel(node("QuantizeAndDequantizeV4Grad", &attrs), inputs, 3).unwrap_err();
            assert_eq!(e.code, Code::InvalidArgument, "{e}");
            assert!(e.message.contains(want), "{e} (want {want})");
        }
    }
}
