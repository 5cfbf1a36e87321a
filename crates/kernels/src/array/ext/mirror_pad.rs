//! MirrorPad (REFLECT excludes the edge, SYMMETRIC repeats it) and MirrorPadGrad, which
//! folds the gradient of the padded tensor back onto the input positions it was copied from.

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{NodeAttrs, Status, Tensor, TensorType};

use crate::array::util::{check_alloc, index_vec, product};
use crate::dispatch::dispatch;
use crate::math::elem::Num;
use crate::{KernelRegistry, OpContext, OpKernel};

struct MirrorPad {
    /// 0 for SYMMETRIC, 1 for REFLECT: how far the mirror starts from the edge.
    offset: usize,
    grad: bool,
}

/// For a dimension of `n` source elements padded by `(a, b)`: the source index of each
/// of the `a + n + b` padded positions.
fn index_map(n: usize, a: usize, b: usize, offset: usize) -> Vec<usize> {
    let mut m = Vec::with_capacity(a + n + b);
    m.extend((0..a).map(|i| a - 1 - i + offset));
    m.extend(0..n);
    m.extend((0..b).map(|i| n - 1 - offset - i));
    m
}

/// Visits the padded positions in row-major order with their flat source offsets.
fn walk(maps: &[Vec<usize>], strides: &[usize], d: usize, base: usize, f: &mut impl FnMut(usize)) {
    if d + 1 == maps.len() {
        for &j in &maps[d] {
            f(base + j);
        }
        return;
    }
    for &j in &maps[d] {
        walk(maps, strides, d + 1, base + j * strides[d], f);
    }
}

fn strides(dims: &[usize]) -> Vec<usize> {
    (0..dims.len()).map(|d| product(&dims[d + 1..])).collect()
}

fn pad_typed<T: TensorType>(x: &Tensor, maps: &[Vec<usize>], out_dims: Vec<usize>) -> Result<Tensor, Status> {
    let src = x.as_slice::<T>()?;
    let mut out = ferroflow_core::alloc::with_capacity(&out_dims)?;
    if !maps.is_empty() && !out_dims.contains(&0) {
        walk(maps, &strides(x.dims()), 0, 0, &mut |s| out.push(src[s].clone()));
    } else if maps.is_empty() {
        out.extend_from_slice(src);
    }
    Tensor::new(out_dims, out)
}

fn grad_typed<T: Num>(g: &Tensor, maps: &[Vec<usize>], out_dims: Vec<usize>) -> Result<Tensor, Status> {
    let src = g.as_slice::<T>()?;
    let mut out = ferroflow_core::alloc::zeroed::<T>(&out_dims)?;
    if maps.is_empty() {
        out.copy_from_slice(src);
    } else if !g.dims().contains(&0) {
        let mut k = 0;
        walk(maps, &strides(&out_dims), 0, 0, &mut |s| {
            out[s] = out[s].add(src[k]);
            k += 1;
        });
    }
    Tensor::new(out_dims, out)
}

impl OpKernel for MirrorPad {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let x = ctx.input(0)?;
        let p = ctx.input(1)?;
        let r = x.rank();
        if p.rank() != 2 || p.dims()[0] != r || p.dims()[1] != 2 {
            return Err(ctx.error(format!("paddings must be a matrix with 2 columns: {}", p.shape())));
        }
        let pv = index_vec(&p).map_err(|e| ctx.error(e.message))?;
        let mut maps = Vec::with_capacity(r);
        let mut out_dims = Vec::with_capacity(r);
        for d in 0..r {
            let (a, b) = (pv[2 * d], pv[2 * d + 1]);
            if a < 0 || b < 0 {
                return Err(ctx.error(format!("Paddings must be non-negative: {a} {b}")));
            }
            let n = if self.grad {
                (x.dims()[d] as i64).checked_sub(a + b).filter(|&n| n >= 0).ok_or_else(|| {
                    ctx.error(format!("paddings {a}, {b} do not fit dimension {d} of size {}", x.dims()[d]))
                })?
            } else {
                x.dims()[d] as i64
            };
            let limit = n - self.offset as i64;
            if a > limit || b > limit {
                return Err(ctx.error(if self.offset == 1 {
                    format!("paddings must be less than the dimension size: {a}, {b} not less than {n}")
                } else {
                    format!("paddings must be no greater than the dimension size: {a}, {b} greater than {n}")
                }));
            }
            let (a, b, n) = (a as usize, b as usize, n as usize);
            out_dims.push(if self.grad {
                n
            } else {
                n.checked_add(a + b).ok_or_else(|| ctx.error("padded size overflows"))?
            });
            maps.push(if n == 0 { Vec::new() } else { index_map(n, a, b, self.offset) });
        }
        check_alloc(&out_dims, x.dtype()).map_err(|e| ctx.error_with(e))?;
        let out = if self.grad {
            dispatch!(x.dtype(), ctx, [f32, f64, i32, i64], |T| grad_typed::<T>(&x, &maps, out_dims))?
        } else {
            ferroflow_core::with_dtype!(x.dtype(), T => pad_typed::<T>(&x, &maps, out_dims))?
        };
        ctx.set_output(0, out)
    }
}

fn make(n: &NodeDef, grad: bool) -> Result<Box<dyn OpKernel>, Status> {
    let offset = match n.attr_string("mode")?.as_str() {
        "REFLECT" => 1,
        "SYMMETRIC" => 0,
        m => return Err(n.node_error(format!("mode must be REFLECT or SYMMETRIC, got {m}"))),
    };
    Ok(Box::new(MirrorPad { offset, grad }))
}

pub(crate) fn register(r: &mut KernelRegistry) {
    r.add("MirrorPad", |n| make(n, false));
    r.add("MirrorPadGrad", |n| make(n, true));
}
