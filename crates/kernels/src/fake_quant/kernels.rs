//! The six fake-quantization kernels: one forward and one gradient kernel, each reading its
//! range from attrs (`Args`), scalar tensors (`Vars`) or per-channel vectors (`PerChannel`).

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{DataType, NodeAttrs, Status, Tensor};
use rayon::prelude::*;

use super::{nudge, quantize, Nudged};
use crate::{KernelRegistry, OpContext, OpKernel};

/// Elements per parallel chunk.
const CHUNK: usize = 1 << 14;

#[derive(Clone, Copy, PartialEq)]
enum RangeFrom {
    /// `min`/`max` attrs.
    Attrs(f32, f32),
    /// Scalar tensor inputs after the data.
    Scalars,
    /// Vectors over the last dim.
    PerChannel,
}

struct FakeQuant {
    range: RangeFrom,
    gradient: bool,
    quant_min: i32,
    quant_max: i32,
}

fn make(n: &NodeDef) -> Result<Box<dyn OpKernel>, Status> {
    let get_f = |name: &str, d: f32| if n.has_attr(name) { n.attr_float(name) } else { Ok(d) };
    let num_bits = if n.has_attr("num_bits") { n.attr_int("num_bits")? } else { 8 };
    let narrow = if n.has_attr("narrow_range") { n.attr_bool("narrow_range")? } else { false };
    if !(2..=16).contains(&num_bits) {
        return Err(n.node_error(format!("num_bits must be between 2 and 16, inclusive (got {num_bits})")));
    }
    let op = n.op.as_str();
    let range = if op.starts_with("FakeQuantWithMinMaxArgs") {
        let (min, max) = (get_f("min", -6.0)?, get_f("max", 6.0)?);
        if min >= max {
            return Err(n.node_error(format!("min has to be smaller than max, was: {min} >= {max}")));
        }
        RangeFrom::Attrs(min, max)
    } else if op.starts_with("FakeQuantWithMinMaxVarsPerChannel") {
        RangeFrom::PerChannel
    } else {
        RangeFrom::Scalars
    };
    Ok(Box::new(FakeQuant {
        range,
        gradient: op.ends_with("Gradient"),
        quant_min: i32::from(narrow),
        quant_max: (1 << num_bits) - 1,
    }))
}

/// The range of each channel: `None` for TensorFlow's all-zero range (outputs 0).
type Ranges = Vec<Option<Nudged>>;

impl FakeQuant {
    /// The nudged ranges (one, or one per last-dim channel) and the data input.
    fn ranges(&self, ctx: &OpContext, x: &Tensor, first: usize) -> Result<Ranges, Status> {
        let nudged = |min: f32, max: f32| {
            if min == 0.0 && max == 0.0 {
                None
            } else {
                Some(nudge(min, max, self.quant_min, self.quant_max))
            }
        };
        match self.range {
            RangeFrom::Attrs(min, max) => Ok(vec![nudged(min, max)]),
            RangeFrom::Scalars => {
                let (min, max) = (ctx.input(first)?, ctx.input(first + 1)?);
                for (name, t) in [("min", &min), ("max", &max)] {
                    if t.rank() != 0 {
                        return Err(ctx.error(format!("`{name}` must be rank 0 but is rank {}", t.rank())));
                    }
                }
                Ok(vec![nudged(min.as_slice::<f32>()?[0], max.as_slice::<f32>()?[0])])
            }
            RangeFrom::PerChannel => {
                let depth = x.dims().last().copied().unwrap_or(0);
                if x.rank() == 0 {
                    return Err(ctx.error("inputs must be at least rank 1 (its last dim holds the channels)"));
                }
                let (min, max) = (ctx.input(first)?, ctx.input(first + 1)?);
                for (name, t) in [("min", &min), ("max", &max)] {
                    if t.rank() != 1 {
                        return Err(ctx.error(format!("`{name}` must be rank 1 but is rank {}", t.rank())));
                    }
                    if t.dims()[0] != depth {
                        return Err(
                            ctx.error(format!("{name} has incorrect size, expected {depth} was {}", t.dims()[0]))
                        );
                    }
                }
                let (lo, hi) = (min.as_slice::<f32>()?, max.as_slice::<f32>()?);
                Ok(lo.iter().zip(hi).map(|(&a, &b)| nudged(a, b)).collect())
            }
        }
    }

    fn forward(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let x = ctx.input(0)?;
        let ranges = self.ranges(ctx, &x, 1)?;
        let src = x.as_slice::<f32>()?;
        let mut out = ferroflow_core::alloc::zeroed::<f32>(x.dims())?;
        let d = ranges.len();
        let inv: Vec<f32> = ranges.iter().map(|r| r.map_or(0.0, |n| 1.0 / n.scale)).collect();
        // Chunks hold whole rows of `d` channels.
        let chunk = CHUNK.div_ceil(d) * d;
        out.par_chunks_mut(chunk).zip(src.par_chunks(chunk)).for_each(|(o, s)| {
            for (i, (o, &v)) in o.iter_mut().zip(s).enumerate() {
                let c = i % d;
                *o = ranges[c].map_or(0.0, |n| quantize(v, n, inv[c]));
            }
        });
        ctx.set_output(0, Tensor::new(x.dims().to_vec(), out)?)
    }

    fn backward(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let g = ctx.input(0)?;
        let x = ctx.input(1)?;
        if g.dims() != x.dims() {
            return Err(ctx.error(format!("gradient and input must be the same size: {} vs {}", g.shape(), x.shape())));
        }
        let ranges = self.ranges(ctx, &x, 2)?;
        let (gs, xs) = (g.as_slice::<f32>()?, x.as_slice::<f32>()?);
        let d = ranges.len();
        let mut dx = ferroflow_core::alloc::zeroed::<f32>(x.dims())?;
        // Per channel: the sums of the gradients below the range and above it.
        let (mut below, mut above) = (vec![0f32; d], vec![0f32; d]);
        for (i, ((o, &gv), &v)) in dx.iter_mut().zip(gs).zip(xs).enumerate() {
            let c = i % d;
            match ranges[c] {
                None => *o = gv,
                Some(n) if v < n.min => below[c] += gv,
                Some(n) if v > n.max => above[c] += gv,
                Some(_) => *o = gv,
            }
        }
        ctx.set_output(0, Tensor::new(x.dims().to_vec(), dx)?)?;
        match self.range {
            RangeFrom::Attrs(..) => Ok(()),
            RangeFrom::Scalars => {
                ctx.set_output(1, Tensor::scalar(below[0]))?;
                ctx.set_output(2, Tensor::scalar(above[0]))
            }
            RangeFrom::PerChannel => {
                ctx.set_output(1, Tensor::new(vec![d], below)?)?;
                ctx.set_output(2, Tensor::new(vec![d], above)?)
            }
        }
    }
}

impl OpKernel for FakeQuant {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        for i in 0..if self.gradient { 2 } else { 1 } {
            let t = ctx.input(i)?;
            if t.dtype() != DataType::Float {
                return Err(ctx.error(format!("input {i} must be float, got {}", t.dtype())));
            }
        }
        if self.gradient {
            self.backward(ctx)
        } else {
            self.forward(ctx)
        }
    }
}

pub(super) fn register(r: &mut KernelRegistry) {
    for op in [
        "FakeQuantWithMinMaxArgs",
        "FakeQuantWithMinMaxArgsGradient",
        "FakeQuantWithMinMaxVars",
        "FakeQuantWithMinMaxVarsGradient",
        "FakeQuantWithMinMaxVarsPerChannel",
        "FakeQuantWithMinMaxVarsPerChannelGradient",
    ] {
        r.add(op, make);
    }
}
