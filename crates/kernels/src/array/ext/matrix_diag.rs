//! MatrixDiagV3, MatrixDiagPartV3, MatrixSetDiagV3 (a band of diagonals `k = [lo, hi]`,
//! each padded to the longest and aligned by `align`), their V2 forms (no `align`: all
//! left-aligned) and their V1 forms (main diagonal).

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{NodeAttrs, Status, Tensor, TensorType};

use crate::array::util::{check_alloc, copy_vec, dims_str, index_vec, product};
use crate::{KernelRegistry, OpContext, OpKernel};

/// Geometry of a diagonal band of an `m × n` matrix.
#[derive(Clone, Copy, Debug)]
struct Band {
    m: usize,
    n: usize,
    lo: i64,
    hi: i64,
    max_len: usize,
    /// Superdiagonals (d > 0) and the main diagonal right-aligned.
    right_super: bool,
    /// Subdiagonals (d < 0) right-aligned.
    right_sub: bool,
}

impl Band {
    fn new(m: usize, n: usize, lo: i64, hi: i64, align: (bool, bool)) -> Band {
        let max_len = (m as i64 + hi.min(0)).min(n as i64 - lo.max(0)).max(0) as usize;
        Band { m, n, lo, hi, max_len, right_super: align.0, right_sub: align.1 }
    }
    fn num_diags(&self) -> usize {
        (self.hi - self.lo + 1) as usize
    }
    fn len(&self, d: i64) -> usize {
        (self.m as i64 + d.min(0)).min(self.n as i64 - d.max(0)).max(0) as usize
    }
    /// Calls `f(flat index into the packed diagonals, Some(matrix offset) or None for padding)`.
    fn visit(&self, mut f: impl FnMut(usize, Option<usize>)) {
        for (di, d) in (self.lo..=self.hi).rev().enumerate() {
            let len = self.len(d);
            let right = if d >= 0 { self.right_super } else { self.right_sub };
            let pad = if right { self.max_len - len } else { 0 };
            for j in 0..self.max_len {
                let at = di * self.max_len + j;
                if j < pad || j >= pad + len {
                    f(at, None);
                } else {
                    let t = (j - pad) as i64;
                    let (r, c) = if d >= 0 { (t, t + d) } else { (t - d, t) };
                    f(at, Some(r as usize * self.n + c as usize));
                }
            }
        }
    }
}

fn parse_align(n: &NodeDef) -> Result<(bool, bool), Status> {
    if n.attr_value("align").is_err() {
        return Ok((false, false));
    }
    match n.attr_string("align")?.as_str() {
        "LEFT_RIGHT" => Ok((false, true)),
        "RIGHT_LEFT" => Ok((true, false)),
        "LEFT_LEFT" => Ok((false, false)),
        "RIGHT_RIGHT" => Ok((true, true)),
        a => Err(n.node_error(format!("Unknown align {a}"))),
    }
}

/// `k` as `(lo, hi)`: a scalar or a vector of one or two.
fn diag_range(ctx: &OpContext, t: &Tensor) -> Result<(i64, i64), Status> {
    if t.rank() > 1 {
        return Err(ctx.error(format!("diag_index must be a scalar or vector, received shape: {}", t.shape())));
    }
    let v = index_vec(t).map_err(|e| ctx.error(e.message))?;
    let (lo, hi) = match v.as_slice() {
        [k] => (*k, *k),
        [a, b] => (*a, *b),
        _ => return Err(ctx.error(format!("diag_index must have only one or two elements, received {}", v.len()))),
    };
    if lo > hi {
        return Err(ctx.error(format!("lower_diag_index must not be larger than upper_diag_index: {lo} > {hi}")));
    }
    Ok((lo, hi))
}

fn check_band(ctx: &OpContext, m: usize, n: usize, lo: i64, hi: i64) -> Result<(), Status> {
    let (m, n) = (m as i64, n as i64);
    for (what, k) in [("lower_diag_index", lo), ("upper_diag_index", hi)] {
        if !((-m < k && k < n) || k == 0) {
            return Err(ctx.error(format!("{what} is out of bound: {k}. It must be between {} and {n}", -m)));
        }
    }
    Ok(())
}

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Diag,
    Part,
    Set,
}

struct MatrixDiag {
    kind: Kind,
    v3: bool,
    align: (bool, bool),
}

/// The scalar of input `i` (V3's `padding_value`), else the default.
fn pad_value<T: TensorType>(ctx: &OpContext, i: usize) -> Result<T, Status> {
    let t = ctx.input(i)?;
    if t.num_elements() != 1 {
        return Err(ctx.error(format!("padding_value must be a scalar, got shape {}", t.shape())));
    }
    Ok(t.as_slice::<T>()?[0].clone())
}

impl MatrixDiag {
    fn k(&self, ctx: &OpContext, i: usize) -> Result<(i64, i64), Status> {
        if self.v3 {
            diag_range(ctx, &ctx.input(i)?)
        } else {
            Ok((0, 0))
        }
    }

    fn part<T: TensorType>(&self, ctx: &mut OpContext, x: &Tensor) -> Result<(), Status> {
        if x.rank() < 2 {
            return Err(ctx.error(format!("input must be at least 2-dim, received shape: {}", x.shape())));
        }
        let (lo, hi) = self.k(ctx, 1)?;
        let pad: T = if self.v3 { pad_value(ctx, 2)? } else { T::default() };
        let r = x.rank();
        let (m, n) = (x.dims()[r - 2], x.dims()[r - 1]);
        check_band(ctx, m, n, lo, hi)?;
        let b = Band::new(m, n, lo, hi, self.align);
        let mut dims = x.dims()[..r - 2].to_vec();
        if lo != hi {
            dims.push(b.num_diags());
        }
        dims.push(b.max_len);
        check_alloc(&dims, x.dtype()).map_err(|e| ctx.error_with(e))?;
        let src = x.as_slice::<T>()?;
        let per = b.num_diags() * b.max_len;
        let mut out = ferroflow_core::alloc::filled(&dims, pad.clone())?;
        for (bi, o) in out.chunks_mut(per.max(1)).enumerate().take(product(&x.dims()[..r - 2])) {
            let mat = &src[bi * m * n..];
            b.visit(|at, off| {
                if let Some(off) = off {
                    o[at] = mat[off].clone();
                }
            });
        }
        ctx.set_output(0, Tensor::new(dims, out)?)
    }

    /// Splits a packed-diagonals tensor into (batch dims, num_diags, max_len).
    fn packed(&self, ctx: &OpContext, d: &Tensor, lo: i64, hi: i64) -> Result<(Vec<usize>, usize), Status> {
        let lead = if lo == hi { 1 } else { 2 };
        if d.rank() < lead {
            return Err(ctx.error(format!("diagonal must be at least {lead}-dim, received shape: {}", d.shape())));
        }
        let r = d.rank();
        if lo != hi && d.dims()[r - 2] as i64 != hi - lo + 1 {
            return Err(ctx.error(format!(
                "The number of diagonals provided in the input does not match the lower_diag_index and upper_diag_index range. Expected {} but got {}",
                hi - lo + 1,
                d.dims()[r - 2]
            )));
        }
        Ok((d.dims()[..r - lead].to_vec(), d.dims()[r - 1]))
    }

    fn diag<T: TensorType>(&self, ctx: &mut OpContext, d: &Tensor) -> Result<(), Status> {
        let (lo, hi) = self.k(ctx, 1)?;
        let (batch, max_len) = self.packed(ctx, d, lo, hi)?;
        let (mut rows, mut cols, pad) = if self.v3 {
            let scalar = |i: usize| -> Result<i64, Status> {
                let t = ctx.input(i)?;
                let v = index_vec(&t).map_err(|e| ctx.error(e.message))?;
                v.first()
                    .copied()
                    .filter(|_| v.len() == 1)
                    .ok_or_else(|| ctx.error("num_rows and num_cols must be scalars"))
            };
            (scalar(2)?, scalar(3)?, pad_value::<T>(ctx, 4)?)
        } else {
            (-1, -1, T::default())
        };
        let min_rows = max_len as i64 - hi.min(0);
        let min_cols = max_len as i64 + lo.max(0);
        if rows == -1 && cols == -1 {
            rows = min_rows.max(min_cols);
            cols = rows;
        } else if rows == -1 {
            rows = min_rows;
        } else if cols == -1 {
            cols = min_cols;
        }
        if rows < min_rows || cols < min_cols {
            return Err(ctx.error(format!(
                "The number of rows or columns is not consistent with the specified d_lower, d_upper, and diagonal: num_rows {rows} (at least {min_rows}), num_cols {cols} (at least {min_cols})"
            )));
        }
        let (m, n) = (rows as usize, cols as usize);
        let b = Band::new(m, n, lo, hi, self.align);
        if b.max_len != max_len {
            return Err(ctx.error(format!(
                "The number of rows or columns is not consistent with the specified d_lower, d_upper, and diagonal: diagonal length {max_len}, expected {}",
                b.max_len
            )));
        }
        let mut dims = batch.clone();
        dims.extend([m, n]);
        check_alloc(&dims, d.dtype()).map_err(|e| ctx.error_with(e))?;
        let src = d.as_slice::<T>()?;
        let per = b.num_diags() * max_len;
        let mut out = ferroflow_core::alloc::filled(&dims, pad)?;
        if m * n > 0 {
            for (bi, o) in out.chunks_mut(m * n).enumerate() {
                b.visit(|at, off| {
                    if let Some(off) = off {
                        o[off] = src[bi * per + at].clone();
                    }
                });
            }
        }
        ctx.set_output(0, Tensor::new(dims, out)?)
    }

    fn set<T: TensorType>(&self, ctx: &mut OpContext, x: &Tensor) -> Result<(), Status> {
        let d = ctx.input(1)?;
        if x.rank() < 2 {
            return Err(ctx.error(format!("input must be at least 2-dim, received shape: {}", x.shape())));
        }
        let (lo, hi) = self.k(ctx, 2)?;
        let r = x.rank();
        let (m, n) = (x.dims()[r - 2], x.dims()[r - 1]);
        check_band(ctx, m, n, lo, hi)?;
        let b = Band::new(m, n, lo, hi, self.align);
        let (batch, max_len) = self.packed(ctx, &d, lo, hi)?;
        if batch != x.dims()[..r - 2] || max_len != b.max_len {
            return Err(ctx.error(format!(
                "diagonal shape {} does not fit input shape {} (expected batch {} and diagonal length {})",
                d.shape(),
                x.shape(),
                dims_str(&x.dims()[..r - 2]),
                b.max_len
            )));
        }
        let mut out = copy_vec::<T>(x)?;
        let src = d.as_slice::<T>()?;
        let per = b.num_diags() * max_len;
        if m * n > 0 {
            for (bi, o) in out.chunks_mut(m * n).enumerate() {
                b.visit(|at, off| {
                    if let Some(off) = off {
                        o[off] = src[bi * per + at].clone();
                    }
                });
            }
        }
        ctx.set_output(0, Tensor::new(x.shape().clone(), out)?)
    }
}

impl OpKernel for MatrixDiag {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let x = ctx.input(0)?;
        match self.kind {
            Kind::Part => ferroflow_core::with_dtype!(x.dtype(), T => self.part::<T>(ctx, &x)),
            Kind::Diag => ferroflow_core::with_dtype!(x.dtype(), T => self.diag::<T>(ctx, &x)),
            Kind::Set => ferroflow_core::with_dtype!(x.dtype(), T => self.set::<T>(ctx, &x)),
        }
    }
}

fn make(n: &NodeDef, kind: Kind, v3: bool) -> Result<Box<dyn OpKernel>, Status> {
    // V1 ops place the main diagonal; V3 defaults to RIGHT_LEFT (read from the attr).
    let align = if v3 { parse_align(n)? } else { (false, false) };
    Ok(Box::new(MatrixDiag { kind, v3, align }))
}

pub(crate) fn register(r: &mut KernelRegistry) {
    r.add("MatrixDiagV3", |n| make(n, Kind::Diag, true));
    r.add("MatrixDiagPartV3", |n| make(n, Kind::Part, true));
    r.add("MatrixSetDiagV3", |n| make(n, Kind::Set, true));
    // V2: V3 without `align`, every diagonal left-aligned (V3's LEFT_LEFT).
    r.add("MatrixDiagV2", |_| Ok(Box::new(MatrixDiag { kind: Kind::Diag, v3: true, align: (false, false) })));
    r.add("MatrixDiagPartV2", |_| Ok(Box::new(MatrixDiag { kind: Kind::Part, v3: true, align: (false, false) })));
    r.add("MatrixSetDiagV2", |_| Ok(Box::new(MatrixDiag { kind: Kind::Set, v3: true, align: (false, false) })));
    r.add("MatrixDiag", |n| make(n, Kind::Diag, false));
    r.add("MatrixDiagPart", |n| make(n, Kind::Part, false));
    r.add("MatrixSetDiag", |n| make(n, Kind::Set, false));
}
