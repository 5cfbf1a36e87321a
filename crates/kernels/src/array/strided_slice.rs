//! StridedSlice and StridedSliceGrad, with TensorFlow's sparse-to-dense spec (ellipsis,
//! new axes, shrink axes, begin/end masks, negative strides).

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{NodeAttrs, Status, Tensor};

use super::strided::{strided_gather, strided_scatter, strides_of};
use super::util::{check_node_alloc, index_vec, shape_input};
use crate::{KernelRegistry, OpContext};

/// The five masks of a strided slice.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Masks {
    /// Ignore `begin[i]` (start at the first element in the stride direction).
    pub begin: i64,
    /// Ignore `end[i]`.
    pub end: i64,
    /// Position `i` is `...`.
    pub ellipsis: i64,
    /// Position `i` inserts a new unit dim.
    pub new_axis: i64,
    /// Position `i` takes one element and drops the dim.
    pub shrink_axis: i64,
}

impl Masks {
    pub(crate) fn from_node(n: &NodeDef) -> Result<Masks, Status> {
        Ok(Masks {
            begin: n.attr_int("begin_mask")?,
            end: n.attr_int("end_mask")?,
            ellipsis: n.attr_int("ellipsis_mask")?,
            new_axis: n.attr_int("new_axis_mask")?,
            shrink_axis: n.attr_int("shrink_axis_mask")?,
        })
    }
}

/// A resolved slice: per input dim the start and stride and the number of elements taken
/// (`processing`), plus the final output dims.
#[derive(Clone, Debug, PartialEq)]
pub struct SliceSpec {
    /// First index per input dim.
    pub begin: Vec<i64>,
    /// Stride per input dim.
    pub strides: Vec<i64>,
    /// Elements taken per input dim.
    pub processing: Vec<usize>,
    /// Output dims (after new and shrunk axes).
    pub final_dims: Vec<usize>,
}

const NEW_AXIS: i64 = -1;
const SHRINK_AXIS: i64 = -2;

fn bit(mask: i64, i: usize) -> bool {
    i < 64 && (mask >> i) & 1 == 1
}

/// Resolves a strided slice of `dims` with TensorFlow's rules and messages.
pub fn strided_slice_spec(
    dims: &[usize],
    begin: &[i64],
    end: &[i64],
    strides: &[i64],
    m: Masks,
) -> Result<SliceSpec, String> {
    let sparse_n = begin.len();
    if sparse_n > 32 {
        return Err(format!("strided slice spec has {sparse_n} entries; at most 32 are supported"));
    }
    // Sparse spec: add an implicit trailing ellipsis when there is none.
    let mut ellipsis = m.ellipsis & ((1i64 << sparse_n) - 1);
    if ellipsis.count_ones() > 1 {
        return Err("Multiple ellipses in slice spec not allowed".into());
    }
    let mut n_sparse = sparse_n;
    if ellipsis == 0 {
        ellipsis |= 1 << sparse_n;
        n_sparse += 1;
    }
    let ell_pos = (0..n_sparse).find(|&i| bit(ellipsis, i)).unwrap_or(n_sparse);
    let new_after_ellipsis = (ell_pos + 1..sparse_n).filter(|&i| bit(m.new_axis, i)).count();
    let rank = dims.len();
    let mut d_begin = vec![0i64; rank];
    let mut d_end = vec![0i64; rank];
    let mut d_stride = vec![1i64; rank];
    let mut d_bmask = vec![false; rank];
    let mut d_emask = vec![false; rank];
    let mut d_shrink = vec![false; rank];
    let mut gather: Vec<i64> = Vec::new();
    let mut full = 0usize;
    for i in 0..n_sparse {
        if bit(ellipsis, i) {
            let next = (rank + 1 + new_after_ellipsis).saturating_sub(n_sparse - i).min(rank).max(full);
            while full < next {
                d_bmask[full] = true;
                d_emask[full] = true;
                gather.push(full as i64);
                full += 1;
            }
        } else if bit(m.new_axis, i) {
            gather.push(NEW_AXIS);
        } else {
            if full == rank {
                return Err(format!("Index out of range using input dim {full}; input has only {rank} dims"));
            }
            d_begin[full] = begin[i];
            d_end[full] = end[i];
            d_stride[full] = strides[i];
            d_bmask[full] = bit(m.begin, i);
            d_emask[full] = bit(m.end, i);
            if bit(m.shrink_axis, i) {
                d_shrink[full] = true;
                gather.push(SHRINK_AXIS);
            } else {
                gather.push(full as i64);
            }
            full += 1;
        }
    }
    let mut processing = Vec::with_capacity(rank);
    for i in 0..rank {
        let dim = dims[i] as i64;
        let stride = d_stride[i];
        if stride == 0 {
            return Err(format!("strides[{i}] must be non-zero"));
        }
        let (lo, hi) = if stride > 0 { (0, dim) } else { (-1, dim - 1) };
        let canon = |x: i64, is_end: bool, masked: bool| -> i64 {
            if masked {
                if (stride > 0) != is_end {
                    lo
                } else {
                    hi
                }
            } else {
                let fwd = if x < 0 { dim + x } else { x };
                fwd.clamp(lo, hi)
            }
        };
        let size = if d_shrink[i] {
            let fwd = if d_begin[i] < 0 { dim + d_begin[i] } else { d_begin[i] };
            if fwd < 0 || fwd >= dim {
                return Err(format!("slice index {fwd} of dimension {i} out of bounds."));
            }
            if stride < 0 {
                return Err("only stride 1 allowed on non-range indexing.".into());
            }
            d_begin[i] = fwd;
            1
        } else {
            let b = canon(d_begin[i], false, d_bmask[i]);
            let e = canon(d_end[i], true, d_emask[i]);
            d_begin[i] = b;
            let len = e - b;
            if len == 0 || (len < 0) != (stride < 0) {
                0
            } else {
                len / stride + i64::from(len % stride != 0)
            }
        };
        processing.push(size as usize);
    }
    let final_dims = gather
        .iter()
        .filter_map(|&g| match g {
            NEW_AXIS => Some(1),
            SHRINK_AXIS => None,
            k => Some(processing[k as usize]),
        })
        .collect();
    Ok(SliceSpec { begin: d_begin, strides: d_stride, processing, final_dims })
}

impl SliceSpec {
    /// Offset and element strides of the view into a row-major tensor of `dims`.
    pub(crate) fn view(&self, dims: &[usize]) -> (isize, Vec<isize>) {
        let st = strides_of(dims);
        let offset = self.begin.iter().zip(&st).map(|(&b, &s)| b as isize * s).sum();
        (offset, self.strides.iter().zip(&st).map(|(&k, &s)| k as isize * s).collect())
    }

    fn is_identity(&self, dims: &[usize]) -> bool {
        self.processing == dims && self.begin.iter().all(|&b| b == 0) && self.strides.iter().all(|&s| s == 1)
    }
}

pub(crate) fn read_spec(ctx: &OpContext, first: usize, dims: &[usize], m: Masks) -> Result<SliceSpec, Status> {
    let (b, e, s) = (ctx.input(first)?, ctx.input(first + 1)?, ctx.input(first + 2)?);
    if b.rank() != 1 || e.shape() != b.shape() || s.shape() != b.shape() {
        return Err(ctx.error(format!(
            "Expected begin, end, and strides to be 1D equal size tensors, but got shapes {}, {}, and {} instead.",
            b.shape(),
            e.shape(),
            s.shape()
        )));
    }
    let iv = |t: &Tensor| index_vec(t).map_err(|x| ctx.error(x.message));
    strided_slice_spec(dims, &iv(&b)?, &iv(&e)?, &iv(&s)?, m).map_err(|msg| ctx.error(msg))
}

op_kernel! {
    struct StridedSlice { masks: Masks }
    fn compute(&self, ctx) {
        let x = ctx.input(0)?;
        let spec = read_spec(ctx, 1, x.dims(), self.masks)?;
        if spec.is_identity(x.dims()) {
            return ctx.set_output(0, x.reshape(spec.final_dims)?);
        }
        let (offset, strides) = spec.view(x.dims());
        let p = &spec.processing;
        let out = ferroflow_core::with_dtype!(x.dtype(), T => {
            Tensor::new(spec.final_dims.clone(), strided_gather(x.as_slice::<T>()?, offset, p, &strides)?)
        })?;
        ctx.set_output(0, out)
    }
}

op_kernel! {
    struct StridedSliceGrad { masks: Masks }
    fn compute(&self, ctx) {
        let shape = shape_input(ctx, 0, |s| format!("shape must be a vector, got shape {}", s.shape()))?;
        let dy = ctx.input(4)?;
        check_node_alloc(ctx, shape.dims(), dy.dtype())?;
        let spec = read_spec(ctx, 1, shape.dims(), self.masks)?;
        if dy.dims() != spec.final_dims.as_slice() {
            return Err(ctx.error(format!(
                "shape of dy was {} instead of {}",
                dy.shape(),
                ferroflow_core::Shape::new(spec.final_dims.clone())
            )));
        }
        let (offset, strides) = spec.view(shape.dims());
        let mut out = Tensor::zeros(dy.dtype(), shape.clone()).map_err(|e| ctx.error_with(e))?;
        ferroflow_core::with_dtype!(dy.dtype(), T => {
            strided_scatter(out.data_mut::<T>()?, offset, &spec.processing, &strides, dy.as_slice::<T>()?);
            Ok::<(), Status>(())
        })?;
        ctx.set_output(0, out)
    }
}

pub(crate) fn register(r: &mut KernelRegistry) {
    r.add("StridedSlice", |n| Ok(Box::new(StridedSlice { masks: Masks::from_node(n)? })));
    r.add("StridedSliceGrad", |n| Ok(Box::new(StridedSliceGrad { masks: Masks::from_node(n)? })));
}
