//! `Dilation2D` (grayscale morphological dilation, `tf.nn.dilation2d`; `tf.nn.erosion2d` is
//! its dual) and its gradients `Dilation2DBackpropInput` and `Dilation2DBackpropFilter`:
//! `out[b, y, x, c] = max over (i, j) of in[b, y·s + i·r, x·s + j·r, c] + filter[i, j, c]`,
//! windows placed as a convolution's (SAME or VALID, strides and atrous rates on rows and
//! columns). Gradients flow to the first maximum (TensorFlow's strict `>` scan over rows then
//! columns); a window with no pixel inside the image sends its gradient to the clamped
//! window origin and to filter tap (0, 0), as TensorFlow's reference loops do.

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{check_tensor_alloc, DataType, NodeAttrs, Status, Tensor};

use super::common::dtype_attr;
use crate::dispatch::dispatch;
use crate::math::elem::Num;
use crate::{KernelRegistry, OpContext, OpKernel};

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Forward,
    BackpropInput,
    BackpropFilter,
}

struct Dilation {
    kind: Kind,
    strides: [i64; 2],
    rates: [i64; 2],
    same: bool,
}

/// The sizes of one run.
struct Geom {
    batch: usize,
    rows: i64,
    cols: i64,
    depth: usize,
    f_rows: usize,
    f_cols: usize,
    out_rows: usize,
    out_cols: usize,
    pad: [i64; 2],
}

/// The first maximum of one window: its value, the input pixel and the filter tap.
struct Arg<T> {
    value: T,
    pixel: (i64, i64),
    tap: (usize, usize),
}

fn spatial(n: &NodeDef, name: &str, len_msg: &str, dims_msg: &str) -> Result<[i64; 2], Status> {
    let v = n.attr_list_int(name)?;
    if v.len() != 4 {
        return Err(n.node_error(len_msg));
    }
    if v[0] != 1 || v[3] != 1 {
        return Err(Status::unimplemented(format!("node '{}' (op {}): {dims_msg}", n.name, n.op)).with_node(&n.name));
    }
    Ok([v[1], v[2]])
}

fn make(n: &NodeDef, kind: Kind) -> Result<Box<dyn OpKernel>, Status> {
    use DataType::*;
    dtype_attr(n, "T", |d| {
        matches!(d, Float | Double | Int32 | UInt8 | Int16 | Int8 | Int64 | BFloat16 | UInt16 | Half | UInt32 | UInt64)
    })?;
    let strides = spatial(
        n,
        "strides",
        "Sliding window stride field must specify 4 dimensions",
        "Stride is only supported across spatial dimensions.",
    )?;
    let rates = spatial(
        n,
        "rates",
        "Input stride (atrous rate) field must specify 4 dimensions",
        "Rate is only supported across spatial dimensions.",
    )?;
    let same = match n.attr_string("padding")?.as_str() {
        "SAME" => true,
        "VALID" => false,
        p => return Err(n.node_error(format!("padding must be SAME or VALID, got '{p}'"))),
    };
    Ok(Box::new(Dilation { kind, strides, rates, same }))
}

impl Dilation {
    /// TensorFlow's `GetWindowedOutputSize`: (output size, padding before).
    fn out_size(&self, ctx: &OpContext, input: i64, k: i64, stride: i64) -> Result<(i64, i64), Status> {
        if stride <= 0 {
            return Err(ctx.error(format!("Stride must be > 0, but got {stride}")));
        }
        let (out, pad) = if self.same {
            let out = (input + stride - 1) / stride;
            (out, ((out - 1) * stride + k - input).max(0) / 2)
        } else {
            ((input - k + stride) / stride, 0)
        };
        if out < 0 {
            return Err(ctx.error(format!(
                "Computed output size would be negative: {out} [input_size: {input}, effective_filter_size: {k}, \
                 stride: {stride}]"
            )));
        }
        Ok((out, pad))
    }

    /// TensorFlow's `ParseSizes`: checks the input and filter and places the windows.
    fn geometry(&self, ctx: &OpContext, x: &Tensor, f: &Tensor) -> Result<Geom, Status> {
        if x.rank() != 4 {
            return Err(ctx.error(format!("input must be 4-dimensional{}", x.shape())));
        }
        if f.rank() != 3 {
            return Err(ctx.error(format!("filter must be 3-dimensional: {}", f.shape())));
        }
        let (xd, fd) = (x.dims(), f.dims());
        if xd[3] != fd[2] {
            return Err(ctx.error(format!("input and filter must have the same depth: {} vs {}", xd[3], fd[2])));
        }
        let eff = |k: usize, r: i64| k as i64 + (k as i64 - 1) * (r - 1);
        let (out_rows, pad_top) = self.out_size(ctx, xd[1] as i64, eff(fd[0], self.rates[0]), self.strides[0])?;
        let (out_cols, pad_left) = self.out_size(ctx, xd[2] as i64, eff(fd[1], self.rates[1]), self.strides[1])?;
        Ok(Geom {
            batch: xd[0],
            rows: xd[1] as i64,
            cols: xd[2] as i64,
            depth: xd[3],
            f_rows: fd[0],
            f_cols: fd[1],
            out_rows: out_rows as usize,
            out_cols: out_cols as usize,
            pad: [pad_top, pad_left],
        })
    }

    /// Calls `visit(output index, first maximum)` for every output element, in TensorFlow's
    /// (batch, row, column, channel) order.
    fn scan<T: Num>(&self, g: &Geom, x: &[T], f: &[T], mut visit: impl FnMut(usize, usize, Arg<T>)) {
        let (rows, cols, depth) = (g.rows, g.cols, g.depth);
        let mut o = 0;
        for b in 0..g.batch {
            for ho in 0..g.out_rows {
                let h_beg = ho as i64 * self.strides[0] - g.pad[0];
                for wo in 0..g.out_cols {
                    let w_beg = wo as i64 * self.strides[1] - g.pad[1];
                    for d in 0..depth {
                        let mut arg = Arg { value: T::LOWEST, pixel: (h_beg.max(0), w_beg.max(0)), tap: (0, 0) };
                        for h in 0..g.f_rows {
                            let h_in = h_beg + h as i64 * self.rates[0];
                            if h_in < 0 || h_in >= rows {
                                continue;
                            }
                            for w in 0..g.f_cols {
                                let w_in = w_beg + w as i64 * self.rates[1];
                                if w_in < 0 || w_in >= cols {
                                    continue;
                                }
                                let xi = ((b as i64 * rows + h_in) * cols + w_in) as usize * depth + d;
                                let val = x[xi].add(f[(h * g.f_cols + w) * depth + d]);
                                if val > arg.value {
                                    arg = Arg { value: val, pixel: (h_in, w_in), tap: (h, w) };
                                }
                            }
                        }
                        visit(o, b, arg);
                        o += 1;
                    }
                }
            }
        }
    }

    fn run<T: Num>(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let (x, f) = (ctx.input(0)?, ctx.input(1)?);
        let g = self.geometry(ctx, &x, &f)?;
        let (xs, fs) = (x.as_slice::<T>()?, f.as_slice::<T>()?);
        let out_dims = [g.batch, g.out_rows, g.out_cols, g.depth];
        if self.kind == Kind::Forward {
            check_tensor_alloc(&out_dims, T::DTYPE).map_err(|e| ctx.error_with(e))?;
            let mut out = Vec::with_capacity(out_dims.iter().product());
            self.scan(&g, xs, fs, |_, _, a| out.push(a.value));
            return ctx.set_output(0, Tensor::new(out_dims.to_vec(), out)?);
        }
        let dy = ctx.input(2)?;
        if dy.rank() != 4 {
            return Err(ctx.error(format!("out_backprop must be 4-dimensional{}", dy.shape())));
        }
        if dy.dims() != out_dims {
            return Err(ctx.error("out_backprop has incompatible size."));
        }
        let dys = dy.as_slice::<T>()?;
        let depth = g.depth;
        let (shape, mut grad) = if self.kind == Kind::BackpropInput {
            (x.shape().clone(), vec![T::ZERO; xs.len()])
        } else {
            (f.shape().clone(), vec![T::ZERO; fs.len()])
        };
        let (rows, cols) = (g.rows, g.cols);
        let (f_rows, f_cols) = (g.f_rows, g.f_cols);
        let input = self.kind == Kind::BackpropInput;
        self.scan(&g, xs, fs, |o, b, a| {
            let d = o % depth;
            let at = if input {
                let (h, w) = a.pixel;
                (h < rows && w < cols).then(|| ((b as i64 * rows + h) * cols + w) as usize * depth + d)
            } else {
                let (h, w) = a.tap;
                (h < f_rows && w < f_cols).then(|| (h * f_cols + w) * depth + d)
            };
            if let Some(i) = at {
                grad[i] = grad[i].add(dys[o]);
            }
        });
        ctx.set_output(0, Tensor::new(shape, grad)?)
    }
}

impl OpKernel for Dilation {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let dt = ctx.input(0)?.dtype();
        use ferroflow_core::half::{bf16, f16};
        dispatch!(dt, ctx, [f32, f64, i32, u8, i16, i8, i64, bf16, u16, f16, u32, u64], |T| self.run::<T>(ctx))
    }
}

/// Registers the kernels.
pub(crate) fn register(r: &mut KernelRegistry) {
    r.add("Dilation2D", |n| make(n, Kind::Forward));
    r.add("Dilation2DBackpropInput", |n| make(n, Kind::BackpropInput));
    r.add("Dilation2DBackpropFilter", |n| make(n, Kind::BackpropFilter));
}

#[cfg(test)]
#[path = "dilation_tests.rs"]
mod tests;
