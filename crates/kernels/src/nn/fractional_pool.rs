//! `FractionalMaxPool`, `FractionalAvgPool` (`tf.nn.fractional_max_pool` /
//! `fractional_avg_pool`, NHWC) and their gradients `FractionalMaxPoolGrad` /
//! `FractionalAvgPoolGrad`.
//!
//! Rows and columns are pooled to `floor(size / ratio)` cells (the division in single
//! precision, as TensorFlow's); cell `i` covers input rows `seq[i] ..= seq[i + 1] - 1`, or
//! `..= seq[i + 1]` when `overlapping` (clipped to the input), where `seq` is the pooling
//! sequence of `fractional_seq`, returned as the second and third outputs. The average of
//! integers divides with truncation. The gradients take the sequences as inputs: the max
//! gradient routes each output gradient to its cell's first maximum in `orig_input`; the
//! average one spreads it evenly over its cell (accumulated in double precision, then
//! converted to `T`).

use ferroflow_core::alloc::{with_capacity, zeroed};
use ferroflow_core::proto::NodeDef;
use ferroflow_core::Status;
use ferroflow_core::{DataType, Tensor, TensorType};

use super::common::{type_attr, REALS};
use super::fractional_seq::{pooling_sequence, window, FractionalAttrs, SeqGen};
use crate::dispatch::dispatch;
use crate::{OpContext, OpKernel};

/// Element types of fractional pooling.
pub(crate) trait Elem: TensorType + Copy + PartialOrd + Default + Send + Sync {
    fn add(self, o: Self) -> Self;
    /// `self / n` (truncating for integers).
    fn div_count(self, n: usize) -> Self;
    fn to_f64(self) -> f64;
    fn from_f64(v: f64) -> Self;
}

macro_rules! elem {
    ($($t:ty),*) => {$(
        impl Elem for $t {
            fn add(self, o: Self) -> Self {
                self + o
            }
            fn div_count(self, n: usize) -> Self {
                self / (n as $t)
            }
            fn to_f64(self) -> f64 {
                self as f64
            }
            fn from_f64(v: f64) -> Self {
                v as $t
            }
        }
    )*};
}
elem!(f32, f64, i32, i64);

/// The 4 dims of a rank-4 tensor, or InvalidArgument naming `what`.
fn dims4(ctx: &OpContext, dims: &[usize], what: &str) -> Result<[usize; 4], Status> {
    match dims {
        &[b, r, c, d] => Ok([b, r, c, d]),
        _ => Err(ctx.error(format!("{what} must be 4-dimensional, got shape {dims:?}"))),
    }
}

/// Cell `(hs, ws)`'s input windows from the two sequences.
struct Cells<'a> {
    rows: &'a [i64],
    cols: &'a [i64],
    overlapping: bool,
    in_rows: usize,
    in_cols: usize,
}

impl Cells<'_> {
    fn rows(&self, hs: usize) -> (usize, usize) {
        window(self.rows, hs, self.overlapping, self.in_rows)
    }
    fn cols(&self, ws: usize) -> (usize, usize) {
        window(self.cols, ws, self.overlapping, self.in_cols)
    }
    /// Calls `f(b, rows, cols)` for each of `n` batch entries and each cell of the `out`
    /// [rows, cols] output, in output order, with the cell's inclusive input windows.
    fn each(&self, n: usize, out: [usize; 2], mut f: impl FnMut(usize, (usize, usize), (usize, usize))) {
        for b in 0..n {
            for hs in 0..out[0] {
                let rows = self.rows(hs);
                for ws in 0..out[1] {
                    f(b, rows, self.cols(ws));
                }
            }
        }
    }
}

/// Checks that the inputs `named` `(index, name)` have the kernel's `dtype`.
fn check_named(ctx: &OpContext, dtype: DataType, named: &[(usize, &str)]) -> Result<(), Status> {
    for &(i, what) in named {
        let t = ctx.input(i)?.dtype();
        if t != dtype {
            return Err(ctx.error(format!("{what} must be {dtype}, got {t}")));
        }
    }
    Ok(())
}

struct FractionalPool {
    max: bool,
    attrs: FractionalAttrs,
    dtype: DataType,
}

impl FractionalPool {
    fn run<T: Elem>(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let x = ctx.input(0)?;
        if x.dims().len() != 4 {
            return Err(ctx.error("tensor_in must be 4-dimensional"));
        }
        let [n, h, w, d] = dims4(ctx, x.dims(), "value")?;
        let mut out_hw = [0usize; 2];
        for (i, (&size, &r)) in [h, w].iter().zip(&self.attrs.ratio).enumerate() {
            if r > size as f32 {
                return Err(ctx.error(format!(
                    "Pooling ratio is higher than input dimension size for dimension {}. Input dim size: {size} \
                     pooling ratio: {r}",
                    i + 1
                )));
            }
            out_hw[i] = (size as f32 / r).floor() as usize;
        }
        let [oh, ow] = out_hw;
        let mut gen = SeqGen::new(self.attrs.seeds);
        let rows = pooling_sequence(h, oh, &mut gen, self.attrs.pseudo_random);
        let cols = pooling_sequence(w, ow, &mut gen, self.attrs.pseudo_random);
        let cells = Cells { rows: &rows, cols: &cols, overlapping: self.attrs.overlapping, in_rows: h, in_cols: w };
        let xv = x.as_slice::<T>()?;
        let out_dims = [n, oh, ow, d];
        let mut out = with_capacity::<T>(&out_dims)?;
        cells.each(n, [oh, ow], |b, (r0, r1), (c0, c1)| {
            for ch in 0..d {
                let mut acc: Option<T> = None;
                for r in r0..=r1 {
                    for c in c0..=c1 {
                        let v = xv[((b * h + r) * w + c) * d + ch];
                        acc = Some(match acc {
                            None => v,
                            Some(a) if self.max => {
                                if a < v {
                                    v
                                } else {
                                    a
                                }
                            }
                            Some(a) => a.add(v),
                        });
                    }
                }
                let count = (r1 + 1 - r0) * (c1 + 1 - c0);
                let v = acc.unwrap_or_default();
                out.push(if self.max { v } else { v.div_count(count) });
            }
        });
        ctx.set_output(0, Tensor::new(out_dims.to_vec(), out)?)?;
        ctx.set_output(1, Tensor::new(vec![oh + 1], rows)?)?;
        ctx.set_output(2, Tensor::new(vec![ow + 1], cols)?)
    }
}

impl OpKernel for FractionalPool {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        check_named(ctx, self.dtype, &[(0, "value")])?;
        dispatch!(self.dtype, ctx, [f32, f64, i32, i64], |T| self.run::<T>(ctx))
    }
}

/// A pooling sequence input `i` (`what`) of `cells + 1` increasing int64 boundaries whose
/// cells start inside an input of `size`.
fn sequence_input(ctx: &OpContext, i: usize, what: &str, cells: usize, size: usize) -> Result<Vec<i64>, Status> {
    let t = ctx.input(i)?;
    if t.dtype() != DataType::Int64 || t.dims().len() != 1 {
        return Err(ctx.error(format!("{what} must be a 1-D int64 tensor, got {} {:?}", t.dtype(), t.dims())));
    }
    let seq = t.as_slice::<i64>()?.to_vec();
    if seq.len() != cells + 1 {
        return Err(ctx.error(format!(
            "{what} must have {} elements (one more than the {cells} pooled cells), got {}",
            cells + 1,
            seq.len()
        )));
    }
    for k in 0..cells {
        if seq[k] < 0 || seq[k] >= size as i64 || seq[k + 1] <= seq[k] {
            return Err(ctx.error(format!("{what} must increase from 0 within the input size {size}, got {seq:?}")));
        }
    }
    Ok(seq)
}

struct FractionalGrad {
    max: bool,
    overlapping: bool,
    dtype: DataType,
}

impl FractionalGrad {
    fn run<T: Elem>(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let (dy_at, seq_at) = if self.max { (2, 3) } else { (1, 2) };
        let in_dims = if self.max {
            dims4(ctx, ctx.input(0)?.dims(), "orig_input")?
        } else {
            let s = ctx.input(0)?;
            let v = if s.dtype() == DataType::Int64 { s.as_slice::<i64>()?.to_vec() } else { Vec::new() };
            if v.len() != 4 || v.iter().any(|&e| e < 0) {
                return Err(ctx.error(format!(
                    "orig_input_tensor_shape must be 4 non-negative int64 sizes, got {} {:?}",
                    s.dtype(),
                    s.dims()
                )));
            }
            [v[0] as usize, v[1] as usize, v[2] as usize, v[3] as usize]
        };
        let dy = ctx.input(dy_at)?;
        let [n, oh, ow, d] = dims4(ctx, dy.dims(), "out_backprop")?;
        let [_, h, w, _] = in_dims;
        if n != in_dims[0] || d != in_dims[3] {
            return Err(ctx.error(format!(
                "out_backprop of shape {:?} does not match the input shape {in_dims:?} in batch and depth",
                dy.dims()
            )));
        }
        let rows = sequence_input(ctx, seq_at, "row_pooling_sequence", oh, h)?;
        let cols = sequence_input(ctx, seq_at + 1, "col_pooling_sequence", ow, w)?;
        let cells = Cells { rows: &rows, cols: &cols, overlapping: self.overlapping, in_rows: h, in_cols: w };
        let g = dy.as_slice::<T>()?;
        let out = if self.max {
            let x = ctx.input(0)?;
            let y = ctx.input(1)?;
            if y.dims() != dy.dims() {
                return Err(ctx.error(format!(
                    "orig_output of shape {:?} must have out_backprop's shape {:?}",
                    y.dims(),
                    dy.dims()
                )));
            }
            let (dx, maxima) = max_grad(x.as_slice::<T>()?, g, &cells, in_dims, [oh, ow])?;
            if maxima.iter().zip(y.as_slice::<T>()?).any(|(a, b)| a != b) {
                return Err(
                    ctx.error("orig_output is not the fractional max pooling of orig_input over the given sequences")
                );
            }
            dx
        } else {
            avg_grad(g, &cells, in_dims, [oh, ow])?
        };
        ctx.set_output(0, Tensor::new(in_dims.to_vec(), out)?)
    }
}

/// The input gradient and the recomputed maxima.
fn max_grad<T: Elem>(
    x: &[T],
    g: &[T],
    cells: &Cells,
    in_dims: [usize; 4],
    out: [usize; 2],
) -> Result<(Vec<T>, Vec<T>), Status> {
    let [n, h, w, d] = in_dims;
    let mut dx = zeroed::<T>(&in_dims)?;
    let mut maxima = with_capacity::<T>(&[g.len()])?;
    let mut gi = 0;
    cells.each(n, out, |b, (r0, r1), (c0, c1)| {
        for ch in 0..d {
            let mut best: Option<(T, usize)> = None;
            for r in r0..=r1 {
                for c in c0..=c1 {
                    let at = ((b * h + r) * w + c) * d + ch;
                    if best.is_none_or(|(v, _)| v < x[at]) {
                        best = Some((x[at], at));
                    }
                }
            }
            if let Some((v, at)) = best {
                dx[at] = dx[at].add(g[gi]);
                maxima.push(v);
            }
            gi += 1;
        }
    });
    Ok((dx, maxima))
}

fn avg_grad<T: Elem>(g: &[T], cells: &Cells, in_dims: [usize; 4], out: [usize; 2]) -> Result<Vec<T>, Status> {
    let [n, h, w, d] = in_dims;
    let mut acc = zeroed::<f64>(&in_dims)?;
    let mut gi = 0;
    cells.each(n, out, |b, (r0, r1), (c0, c1)| {
        let count = ((r1 + 1 - r0) * (c1 + 1 - c0)) as f64;
        for ch in 0..d {
            let share = g[gi].to_f64() / count;
            for r in r0..=r1 {
                for c in c0..=c1 {
                    acc[((b * h + r) * w + c) * d + ch] += share;
                }
            }
            gi += 1;
        }
    });
    let mut dx = with_capacity::<T>(&in_dims)?;
    dx.extend(acc.into_iter().map(T::from_f64));
    Ok(dx)
}

impl OpKernel for FractionalGrad {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let named: &[(usize, &str)] = if self.max {
            &[(0, "orig_input"), (1, "orig_output"), (2, "out_backprop")]
        } else {
            &[(1, "out_backprop")]
        };
        check_named(ctx, self.dtype, named)?;
        dispatch!(self.dtype, ctx, [f32, f64, i32, i64], |T| self.run::<T>(ctx))
    }
}

fn make_pool(node: &NodeDef, max: bool) -> Result<Box<dyn OpKernel>, Status> {
    let dtype = type_attr(node, REALS)?;
    Ok(Box::new(FractionalPool { max, attrs: FractionalAttrs::parse(node)?, dtype }))
}

fn make_grad(node: &NodeDef, max: bool) -> Result<Box<dyn OpKernel>, Status> {
    use ferroflow_core::NodeAttrs;
    let dtype = type_attr(node, REALS)?;
    Ok(Box::new(FractionalGrad { max, overlapping: node.attr_bool("overlapping")?, dtype }))
}

pub(crate) fn register(r: &mut crate::KernelRegistry) {
    r.add("FractionalMaxPool", |n| make_pool(n, true));
    r.add("FractionalAvgPool", |n| make_pool(n, false));
    r.add("FractionalMaxPoolGrad", |n| make_grad(n, true));
    r.add("FractionalAvgPoolGrad", |n| make_grad(n, false));
}

#[cfg(test)]
#[path = "fractional_pool_tests.rs"]
mod tests;
