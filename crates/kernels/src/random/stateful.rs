//! The samplers that draw from a `tf.random.Generator` state variable themselves:
//! `StatefulUniform`, `StatefulStandardNormalV2`, `StatefulTruncatedNormal`,
//! `StatefulUniformInt`, `StatefulUniformFullInt` (`tf.raw_ops`; TensorFlow 2's `Generator`
//! emits `RngReadAndSkip` and the stateless samplers instead). Each reads the Philox state
//! of input 0, moves its counter `256 * n` calls ahead for `n` outputs and draws the values
//! the stateless sampler of that key and counter draws.

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{DataType, NodeAttrs, Status};

use super::ops::{int_bounds, shape_from_tensor};
use super::rng_state::{read_and_skip, scalar_input, Algs};
use super::stateless::{check_bounds, dist_supports, sample, Dist};
use crate::{KernelRegistry, OpKernel};

/// The stateful samplers take Philox (id 1) and auto-select (id 3); ThreeFry (id 2) is
/// Unimplemented on CPU, as in TensorFlow.
const ALGS: Algs = Algs { auto_select: true, threefry_unimplemented: true };

op_kernel! {
    struct Stateful { dist: Dist, dtype: DataType }
    fn compute(&self, ctx) {
        let alg = scalar_input(ctx, 1, DataType::Int64)?.scalar_value::<i64>()?;
        let bounds = match self.dist {
            Dist::UniformInt => {
                let (lo, hi) = (ctx.input(3)?, ctx.input(4)?);
                check_bounds(ctx, self.dtype, &lo, &hi)?;
                Some((lo, hi))
            }
            _ => None,
        };
        let shape = shape_from_tensor(ctx, &ctx.input(2)?)?;
        // TensorFlow checks `minval < maxval` before the state moves, even for no outputs.
        let bounds = bounds.as_ref().map(|(l, h)| (l, h, true));
        if let Some((lo, hi, _)) = bounds {
            match self.dtype {
                DataType::Int32 => int_bounds::<i32>(ctx, lo, hi, true).map(|_| ())?,
                _ => int_bounds::<i64>(ctx, lo, hi, true).map(|_| ())?,
            }
        }
        ferroflow_core::check_tensor_alloc(shape.dims(), self.dtype).map_err(|e| ctx.error_with(e))?;
        let (gen, _) = read_and_skip(ctx, alg, ALGS, shape.num_elements() as u64)?;
        let out = sample(ctx, self.dist, self.dtype, gen, shape, bounds)?;
        ctx.set_output(0, out)
    }
}

fn make(n: &NodeDef, dist: Dist) -> Result<Box<dyn OpKernel>, Status> {
    let dtype = n.attr_type("dtype")?;
    if !dist_supports(dist, dtype) {
        return Err(Status::unimplemented(format!("dtype {dtype} is not supported on CPU by ferroflow"))
            .in_node(&n.name, &n.op));
    }
    Ok(Box::new(Stateful { dist, dtype }))
}

pub(crate) fn register(r: &mut KernelRegistry) {
    r.add("StatefulUniform", |n| make(n, Dist::Uniform));
    r.add("StatefulStandardNormalV2", |n| make(n, Dist::Normal));
    r.add("StatefulTruncatedNormal", |n| make(n, Dist::Truncated));
    r.add("StatefulUniformInt", |n| make(n, Dist::UniformInt));
    r.add("StatefulUniformFullInt", |n| make(n, Dist::FullInt));
}
