//! `BiasAdd` and `BiasAddGrad` (data_format NHWC: channels last; NCHW: channels at dim 1).

use crate::array::util::unshared_mut;
use crate::dispatch::dispatch;
use ferroflow_core::proto::NodeDef;
use ferroflow_core::{DataType, NodeAttrs, Status, Tensor};
use rayon::prelude::*;

use super::common::{check_inputs, for_chunks, PAR_MIN};
use super::common::{type_attr, REALS};
use crate::math::elem::Num;
use crate::{OpContext, OpKernel};

/// `(outer, channels, inner)`: the value is a row-major [outer, channels, inner] block.
fn layout(ctx: &OpContext, dims: &[usize], nchw: bool) -> Result<(usize, usize, usize), Status> {
    if dims.len() < 2 {
        return Err(ctx.error(format!("Input tensor must be at least 2D: {}", super::common::dims_str(dims))));
    }
    let cd = if nchw { 1 } else { dims.len() - 1 };
    Ok((dims[..cd].iter().product(), dims[cd], dims[cd + 1..].iter().product()))
}

fn nchw_attr(node: &NodeDef) -> Result<bool, Status> {
    match node.attr_string("data_format")?.as_str() {
        "NHWC" => Ok(false),
        "NCHW" => Ok(true),
        f => Err(node.node_error(format!("data_format must be NHWC or NCHW, got '{f}'"))),
    }
}

struct BiasAdd {
    nchw: bool,
    dtype: DataType,
}

pub(crate) fn bias_add_factory(node: &NodeDef) -> Result<Box<dyn OpKernel>, Status> {
    Ok(Box::new(BiasAdd { nchw: nchw_attr(node)?, dtype: type_attr(node, REALS)? }))
}

impl BiasAdd {
    fn run<T: Num>(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let bias = ctx.input(1)?;
        let mut x = ctx.take_input(0)?;
        let (_, c, inner) = layout(ctx, x.dims(), self.nchw)?;
        if bias.rank() != 1 {
            return Err(ctx.error(format!("Biases must be 1D: {}", bias.shape())));
        }
        if bias.dims()[0] != c {
            return Err(ctx.error(format!(
                "Must provide as many biases as the {} dimension of the input tensor: {} vs. {}",
                if self.nchw { "channel" } else { "last" },
                bias.shape(),
                x.shape()
            )));
        }
        let b = bias.as_slice::<T>()?;
        let data = unshared_mut::<T>(&mut x)?;
        if c == 0 || inner == 0 {
            // Nothing to add.
        } else if !self.nchw {
            for_chunks(data, c, |_, chunk| {
                for row in chunk.chunks_exact_mut(c) {
                    for (v, &bv) in row.iter_mut().zip(b) {
                        *v = v.add(bv);
                    }
                }
            });
        } else {
            for_chunks(data, inner, |off, chunk| {
                for (i, block) in chunk.chunks_exact_mut(inner).enumerate() {
                    let bv = b[(off / inner + i) % c];
                    block.iter_mut().for_each(|v| *v = v.add(bv));
                }
            });
        }
        ctx.set_output(0, x)
    }
}

impl OpKernel for BiasAdd {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        check_inputs(ctx, self.dtype, &[(0, "input 0"), (1, "input 1")])?;
        dispatch!(self.dtype, ctx, [f32, f64, i32, i64], |T| self.run::<T>(ctx))
    }
}

struct BiasAddGrad {
    nchw: bool,
    dtype: DataType,
}

pub(crate) fn bias_add_grad_factory(node: &NodeDef) -> Result<Box<dyn OpKernel>, Status> {
    Ok(Box::new(BiasAddGrad { nchw: nchw_attr(node)?, dtype: type_attr(node, REALS)? }))
}

/// Sums a row-major [outer, c, inner] block over outer and inner into `acc` (len c).
fn sum_into<T: Num>(data: &[T], c: usize, inner: usize, acc: &mut [T]) {
    if inner == 1 {
        for row in data.chunks_exact(c) {
            for (a, &v) in acc.iter_mut().zip(row) {
                *a = a.add(v);
            }
        }
    } else {
        for (i, block) in data.chunks_exact(inner).enumerate() {
            let s = block.iter().fold(T::default(), |s, &v| s.add(v));
            acc[i % c] = acc[i % c].add(s);
        }
    }
}

impl BiasAddGrad {
    fn run<T: Num>(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let g = ctx.input(0)?;
        let (outer, c, inner) = layout(ctx, g.dims(), self.nchw)?;
        let data = g.as_slice::<T>()?;
        let mut acc = vec![T::default(); c];
        let threads = rayon::current_num_threads();
        if c > 0 && inner > 0 && outer > 1 && data.len() >= PAR_MIN && threads > 1 {
            let per = outer.div_ceil(threads) * c * inner;
            let parts: Vec<Vec<T>> = data
                .par_chunks(per)
                .map(|chunk| {
                    let mut a = vec![T::default(); c];
                    sum_into(chunk, c, inner, &mut a);
                    a
                })
                .collect();
            for p in parts {
                for (a, v) in acc.iter_mut().zip(p) {
                    *a = a.add(v);
                }
            }
        } else if c > 0 && inner > 0 {
            sum_into(data, c, inner, &mut acc);
        }
        ctx.set_output(0, Tensor::new(vec![c], acc)?)
    }
}

impl OpKernel for BiasAddGrad {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        check_inputs(ctx, self.dtype, &[(0, "out_backprop")])?;
        dispatch!(self.dtype, ctx, [f32, f64, i32, i64], |T| self.run::<T>(ctx))
    }
}
