//! The kernel bodies the parameterised samplers (gamma, Poisson) share: a stateful op
//! (`shape` input 0, parameters input 1, output `shape + params.shape`) and a stateless one
//! (`shape` input 0, then a seed or a key, counter and algorithm, then the parameters;
//! `shape` must end with the parameters' shape). `draw(params, per_param, base)` gives the
//! values in f64, sample-major, as the sampler's `draw_*` function does.

use ferroflow_core::{DataType, Shape, Status, Tensor};

use super::guarded::GuardedPhilox;
use super::ops::shape_from_tensor;
use super::philox::Philox;
use super::rejection::{ends_with, to_tensor, RESERVED_PER_OUTPUT};
use super::stateless::stateless_gen;
use crate::OpContext;

/// A sampler's parameters and output: `what` names the parameter input in errors.
pub(crate) struct Sampled<'a> {
    /// The parameter input's name in dtype errors (`"alpha"`, `"rate"`).
    pub what: &'a str,
    /// Its name in the stateless shape error (`"alpha"`, `"lam"`).
    pub shape_what: &'a str,
    /// The parameters' dtype.
    pub param: DataType,
    /// The output dtype.
    pub out: DataType,
}

/// Parameter input `i`: of dtype `s.param`.
fn param_input(ctx: &OpContext, i: usize, s: &Sampled) -> Result<Tensor, Status> {
    let p = ctx.input(i)?;
    if p.dtype() != s.param {
        return Err(ctx.error(format!("{} must be {}, got {}", s.what, s.param.tf_name(), p.dtype().tf_name())));
    }
    Ok(p)
}

/// The stateful op: `shape + params.shape` values drawn from `gen`.
pub(crate) fn sample_stateful(
    ctx: &mut OpContext,
    gen: &GuardedPhilox,
    s: &Sampled,
    draw: impl FnOnce(&[f64], usize, Philox) -> Vec<f64>,
) -> Result<(), Status> {
    let samples = shape_from_tensor(ctx, &ctx.input(0)?)?;
    let params = param_input(ctx, 1, s)?;
    let dims: Vec<usize> = samples.dims().iter().chain(params.dims()).copied().collect();
    ferroflow_core::check_tensor_alloc(&dims, s.out).map_err(|e| ctx.error_with(e))?;
    let shape = Shape::new(dims);
    if shape.num_elements() == 0 {
        return ctx.set_output(0, Tensor::zeros(s.out, shape)?);
    }
    let base = gen.reserve_outputs(shape.num_elements(), RESERVED_PER_OUTPUT);
    let v = draw(&params.to_f64_vec()?, samples.num_elements(), base);
    ctx.set_output(0, to_tensor(s.out, shape, v)?)
}

/// The stateless op (`v2`: a key, counter and algorithm; else a seed): `shape` values, which
/// must end with the parameters' shape.
pub(crate) fn sample_stateless(
    ctx: &mut OpContext,
    v2: bool,
    s: &Sampled,
    draw: impl FnOnce(&[f64], usize, Philox) -> Vec<f64>,
) -> Result<(), Status> {
    let shape = shape_from_tensor(ctx, &ctx.input(0)?)?;
    let (base, params_at) = stateless_gen(ctx, v2)?;
    ferroflow_core::check_tensor_alloc(shape.dims(), s.out).map_err(|e| ctx.error_with(e))?;
    if shape.num_elements() == 0 {
        return ctx.set_output(0, Tensor::zeros(s.out, shape)?);
    }
    let params = param_input(ctx, params_at, s)?;
    if !ends_with(shape.dims(), params.dims()) {
        return Err(ctx.error(format!(
            "Shape passed in must end with broadcasted shape: shape {} does not end with {}'s shape {}",
            shape,
            s.shape_what,
            params.shape()
        )));
    }
    let per_param = shape.num_elements() / params.num_elements();
    let v = draw(&params.to_f64_vec()?, per_param, base);
    ctx.set_output(0, to_tensor(s.out, shape, v)?)
}
