//! Einsum with one or two operands, reduced to strided gathers, row sums and the batched
//! matrix product: each operand's repeated labels become diagonals (one stride, the sum of
//! theirs), labels no one else needs are summed out, ellipsis dimensions of size 1 that
//! broadcast are dropped; then `[batch, free, contracted]` × `[batch, contracted, free]`
//! goes through gemm and the `[batch, free_a, free_b]` result is permuted to the output.

use std::borrow::Cow;

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{DataType, NodeAttrs, Status, Tensor};
use rayon::prelude::*;

use super::einsum_parse::{check_equation, parse, Spec};
use super::util::kernel_dtype;
use crate::array::strided::{strided_gather, strides_of};
use crate::array::util::{check_alloc, collect_vec, next_index};
use crate::dispatch::dispatch;
use crate::math::elem::Num;
use crate::nn::gemm::{GemmScalar, Mat, PAR_GEMM_MIN};
use crate::{KernelRegistry, OpContext, OpKernel};

/// An operand as unique labels with sizes and (possibly combined) strides.
struct View {
    labels: Vec<usize>,
    dims: Vec<usize>,
    strides: Vec<isize>,
}

/// Operand `i`'s view: diagonals merged, broadcast size-1 ellipsis dimensions dropped.
fn view(spec: &Spec, i: usize, dims: &[usize]) -> View {
    let st = strides_of(dims);
    let mut v = View { labels: Vec::new(), dims: Vec::new(), strides: Vec::new() };
    for (axis, &l) in spec.inputs[i].iter().enumerate() {
        if dims[axis] == 1 && spec.sizes[l] != 1 {
            continue;
        }
        match v.labels.iter().position(|&x| x == l) {
            Some(p) => v.strides[p] += st[axis],
            None => {
                v.labels.push(l);
                v.dims.push(dims[axis]);
                v.strides.push(st[axis]);
            }
        }
    }
    v
}

/// Where label `l` sits among `labels` (an internal error if the planner lost it).
fn pos_of(labels: &[usize], l: usize) -> Result<usize, Status> {
    labels
        .iter()
        .position(|&x| x == l)
        .ok_or_else(|| Status::internal(format!("einsum: label {l} is not among {labels:?}")))
}

/// The view's elements in the label order `order` followed by the labels `summed`, the
/// trailing `summed` block added up: a row-major tensor over `order`.
fn arrange<'a, T: Num>(src: &'a [T], v: &View, order: &[usize], summed: &[usize]) -> Result<Cow<'a, [T]>, Status> {
    let all: Vec<usize> = order.iter().chain(summed).copied().collect();
    let at = all.iter().map(|&l| pos_of(&v.labels, l)).collect::<Result<Vec<_>, _>>()?;
    let dims: Vec<usize> = at.iter().map(|&p| v.dims[p]).collect();
    let strides: Vec<isize> = at.iter().map(|&p| v.strides[p]).collect();
    let n: usize = dims.iter().product();
    let data: Cow<'a, [T]> = if strides == strides_of(&dims) && src.len() == n {
        Cow::Borrowed(src)
    } else {
        Cow::Owned(strided_gather(src, 0, &dims, &strides)?)
    };
    let s: usize = dims[order.len()..].iter().product();
    if summed.is_empty() || s == 1 {
        return Ok(data);
    }
    let rows: usize = dims[..order.len()].iter().product();
    if s == 0 {
        return Ok(Cow::Owned(ferroflow_core::alloc::zeroed::<T>(&[rows])?));
    }
    Ok(Cow::Owned(collect_vec(&[rows], data.chunks(s).map(|c| c.iter().fold(T::ZERO, |a, &b| a.add(b))))?))
}

fn size_of(spec: &Spec, labels: &[usize]) -> usize {
    labels.iter().map(|&l| spec.sizes[l]).product()
}

/// Permutes a row-major tensor over `have` into the output label order.
fn to_output<T: Num>(data: Cow<[T]>, spec: &Spec, have: &[usize]) -> Result<Vec<T>, Status> {
    let hd: Vec<usize> = have.iter().map(|&l| spec.sizes[l]).collect();
    if have == spec.output.as_slice() {
        return match data {
            Cow::Owned(v) => Ok(v),
            Cow::Borrowed(s) => collect_vec(&hd, s.iter().copied()),
        };
    }
    let hs = strides_of(&hd);
    let od: Vec<usize> = spec.output.iter().map(|&l| spec.sizes[l]).collect();
    let os = spec.output.iter().map(|&l| pos_of(have, l).map(|p| hs[p])).collect::<Result<Vec<isize>, _>>()?;
    strided_gather(&data, 0, &od, &os)
}

fn einsum_one<T: Num>(spec: &Spec, x: &Tensor) -> Result<Vec<T>, Status> {
    let v = view(spec, 0, x.dims());
    let summed: Vec<usize> = v.labels.iter().copied().filter(|l| !spec.output.contains(l)).collect();
    let kept: Vec<usize> = spec.output.iter().copied().filter(|l| v.labels.contains(l)).collect();
    let data = arrange(x.as_slice::<T>()?, &v, &kept, &summed)?;
    to_output(data, spec, &kept)
}

/// One gemm operand: its elements, the start of each batch's matrix and the matrix's
/// row and column strides.
struct Operand<'a, T: Clone> {
    data: Cow<'a, [T]>,
    offsets: Vec<usize>,
    rs: usize,
    cs: usize,
}

/// The stride of `labels` of the view taken as one merged dimension (row-major over
/// them), if their strides allow it; 0 for no labels.
fn merged_stride(v: &View, labels: &[usize]) -> Result<Option<usize>, Status> {
    let mut it = labels.iter().rev();
    let Some(&last) = it.next() else { return Ok(Some(0)) };
    let (mut expect, s0) = {
        let p = pos_of(&v.labels, last)?;
        (v.strides[p] * v.dims[p] as isize, v.strides[p])
    };
    for &l in it {
        let p = pos_of(&v.labels, l)?;
        if v.dims[p] != 1 && v.strides[p] != expect {
            return Ok(None);
        }
        expect = v.strides[p] * v.dims[p] as isize;
    }
    Ok(usize::try_from(s0).ok())
}

/// The matrices of one operand over `batch`, rows `rows` and columns `cols`: read in place
/// through strides when possible, else gathered (and `summed` labels added up) first.
fn operand<'a, T: Num>(
    src: &'a [T],
    v: &View,
    batch: &[usize],
    rows: &[usize],
    cols: &[usize],
    summed: &[usize],
    sizes: &[usize],
) -> Result<Operand<'a, T>, Status> {
    let nb: usize = batch.iter().map(|&l| sizes[l]).product();
    if summed.is_empty() {
        if let (Some(rs), Some(cs)) = (merged_stride(v, rows)?, merged_stride(v, cols)?) {
            let bs = batch
                .iter()
                .map(|&l| pos_of(&v.labels, l).map(|p| (sizes[l], v.strides[p])))
                .collect::<Result<Vec<(usize, isize)>, _>>()?;
            let mut offsets = Vec::with_capacity(nb);
            for b in 0..nb {
                let (mut rem, mut off) = (b, 0isize);
                for &(d, st) in bs.iter().rev() {
                    off += (rem % d) as isize * st;
                    rem /= d;
                }
                offsets.push(off as usize);
            }
            return Ok(Operand { data: Cow::Borrowed(src), offsets, rs, cs });
        }
    }
    let order: Vec<usize> = batch.iter().chain(rows).chain(cols).copied().collect();
    let data = arrange(src, v, &order, summed)?;
    let (m, k): (usize, usize) = (rows.iter().map(|&l| sizes[l]).product(), cols.iter().map(|&l| sizes[l]).product());
    Ok(Operand { data, offsets: (0..nb).map(|b| b * m * k).collect(), rs: k, cs: 1 })
}

fn einsum_two<T: Num + GemmScalar>(spec: &Spec, a: &Tensor, b: &Tensor) -> Result<Vec<T>, Status> {
    let (mut va, mut vb) = (view(spec, 0, a.dims()), view(spec, 1, b.dims()));
    let (mut xa, mut xb) = (a, b);
    let in_out = |l: &usize| spec.output.contains(l);
    let groups = |va: &View, vb: &View| {
        let batch: Vec<usize> = va.labels.iter().copied().filter(|l| vb.labels.contains(l) && in_out(l)).collect();
        let free_a: Vec<usize> = va.labels.iter().copied().filter(|l| !vb.labels.contains(l) && in_out(l)).collect();
        let free_b: Vec<usize> = vb.labels.iter().copied().filter(|l| !va.labels.contains(l) && in_out(l)).collect();
        (batch, free_a, free_b)
    };
    let (batch, free_a, free_b) = groups(&va, &vb);
    // Computing Bᵀ·Aᵀ instead gives [batch, free_b, free_a]: swap when that is the output.
    let swapped: Vec<usize> = batch.iter().chain(&free_b).chain(&free_a).copied().collect();
    if swapped == spec.output && !(free_a.is_empty() || free_b.is_empty()) {
        std::mem::swap(&mut va, &mut vb);
        std::mem::swap(&mut xa, &mut xb);
    }
    let (batch, free_a, free_b) = groups(&va, &vb);
    let contract: Vec<usize> = va.labels.iter().copied().filter(|l| vb.labels.contains(l) && !in_out(l)).collect();
    let sum_a: Vec<usize> = va.labels.iter().copied().filter(|l| !vb.labels.contains(l) && !in_out(l)).collect();
    let sum_b: Vec<usize> = vb.labels.iter().copied().filter(|l| !va.labels.contains(l) && !in_out(l)).collect();
    let sz = &spec.sizes;
    let oa = operand(xa.as_slice::<T>()?, &va, &batch, &free_a, &contract, &sum_a, sz)?;
    let ob = operand(xb.as_slice::<T>()?, &vb, &batch, &contract, &free_b, &sum_b, sz)?;
    let (nb, m, k, n) =
        (size_of(spec, &batch), size_of(spec, &free_a), size_of(spec, &contract), size_of(spec, &free_b));
    let mut out = ferroflow_core::alloc::zeroed::<T>(&[nb, m, n])?;
    if m * n > 0 && k > 0 {
        let big = m * n * k * nb >= PAR_GEMM_MIN;
        let one = |(i, c): (usize, &mut [T])| {
            let x = Mat { data: &oa.data[oa.offsets[i]..], rs: oa.rs, cs: oa.cs };
            let y = Mat { data: &ob.data[ob.offsets[i]..], rs: ob.rs, cs: ob.cs };
            T::gemm(m, n, k, x, y, c, n, false, nb == 1 && big);
        };
        if nb > 1 && big && rayon::current_num_threads() > 1 {
            out.par_chunks_mut(m * n).enumerate().for_each(one);
        } else {
            out.chunks_mut(m * n).enumerate().for_each(one);
        }
    }
    let have: Vec<usize> = batch.iter().chain(&free_a).chain(&free_b).copied().collect();
    to_output(Cow::Owned(out), spec, &have)
}

/// Writes `compact` (row-major over the distinct output labels `uniq`) onto the diagonals
/// of the output, whose repeated labels share one index; zeros elsewhere.
fn inflate<T: Num>(compact: &[T], spec: &Spec, uniq: &[usize], out_dims: &[usize]) -> Result<Vec<T>, Status> {
    let ostr = strides_of(out_dims);
    let ustr: Vec<isize> =
        uniq.iter().map(|u| spec.output.iter().zip(&ostr).filter(|(l, _)| *l == u).map(|(_, s)| *s).sum()).collect();
    let udims: Vec<usize> = uniq.iter().map(|&l| spec.sizes[l]).collect();
    let mut out = ferroflow_core::alloc::zeroed::<T>(out_dims)?;
    let mut idx = vec![0usize; udims.len()];
    for &v in compact {
        let off: isize = idx.iter().zip(&ustr).map(|(&i, &s)| i as isize * s).sum();
        out[off as usize] = v;
        next_index(&mut idx, &udims);
    }
    Ok(out)
}

struct Einsum {
    equation: String,
    ty: DataType,
}

impl Einsum {
    fn run<T: Num + GemmScalar>(&self, ctx: &mut OpContext, xs: &[Tensor], spec: &Spec) -> Result<(), Status> {
        let out_dims: Vec<usize> = spec.output.iter().map(|&l| spec.sizes[l]).collect();
        check_alloc(&out_dims, self.ty).map_err(|e| ctx.error_with(e))?;
        let mut uniq: Vec<usize> = Vec::with_capacity(spec.output.len());
        for &l in &spec.output {
            if !uniq.contains(&l) {
                uniq.push(l);
            }
        }
        if uniq.len() == spec.output.len() {
            let out =
                if xs.len() == 1 { einsum_one::<T>(spec, &xs[0])? } else { einsum_two::<T>(spec, &xs[0], &xs[1])? };
            return ctx.set_output(0, Tensor::new(out_dims, out)?);
        }
        let compact_spec = Spec { output: uniq.clone(), ..spec.clone() };
        let compact = if xs.len() == 1 {
            einsum_one::<T>(&compact_spec, &xs[0])?
        } else {
            einsum_two::<T>(&compact_spec, &xs[0], &xs[1])?
        };
        ctx.set_output(0, Tensor::new(out_dims.clone(), inflate(&compact, spec, &uniq, &out_dims)?)?)
    }
}

impl OpKernel for Einsum {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let xs: Vec<Tensor> = (0..ctx.num_inputs()).map(|i| ctx.input(i)).collect::<Result<_, _>>()?;
        for (i, x) in xs.iter().enumerate() {
            if x.dtype() != self.ty {
                return Err(ctx.error(format!("input {i} is {} but T is {}", x.dtype(), self.ty)));
            }
        }
        let shapes: Vec<&[usize]> = xs.iter().map(|x| x.dims()).collect();
        let spec = parse(&self.equation, &shapes).map_err(|e| ctx.error(e))?;
        dispatch!(self.ty, ctx, [f32, f64, i32, i64], |T| self.run::<T>(ctx, &xs, &spec))
    }
}

fn make(n: &NodeDef) -> Result<Box<dyn OpKernel>, Status> {
    use DataType::*;
    let ty = kernel_dtype(n, "T", &[Float, Double, Int32, Int64])?;
    let equation = n.attr_string("equation")?;
    check_equation(&equation).map_err(|e| n.node_error(e.message))?;
    Ok(Box::new(Einsum { equation, ty }))
}

pub(crate) fn register(r: &mut KernelRegistry) {
    r.add("Einsum", make);
}
