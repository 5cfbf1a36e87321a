//! Shape functions of Slice, StridedSlice and StridedSliceGrad (TensorFlow's sparse-to-dense
//! slice spec over partially known dims).

use ferroflow_core::{NodeAttrs, Status};

use super::shapes::{const_ints, rank, shape_from_tensor, want_rank};
use crate::shape_fn::{Dims, ShapeCtx};

type R = Result<Vec<Dims>, Status>;

pub(crate) fn slice_shape(c: &ShapeCtx) -> R {
    want_rank(c, 1, 1)?;
    want_rank(c, 2, 1)?;
    let input = c.input(0);
    let (Some(begin), Some(size)) = (const_ints(c, 1), const_ints(c, 2)) else {
        return Ok(vec![input.map(|d| vec![-1; d.len()])]);
    };
    let Some(d) = input else { return Ok(vec![Some(size.iter().map(|&s| s.max(-1)).collect())]) };
    if begin.len() != d.len() || size.len() != d.len() {
        return Err(c.error(format!(
            "Expected begin and size arguments to be 1-D tensors of size {}, but got {} and {} elements",
            d.len(),
            begin.len(),
            size.len()
        )));
    }
    let mut out = Vec::with_capacity(d.len());
    for i in 0..d.len() {
        let (b, s, n) = (begin[i], size[i], d[i]);
        if b < 0 || (n >= 0 && b > n) {
            return Err(c.error(format!("Expected begin[{i}] in [0, {n}], but got {b}")));
        }
        if s == -1 {
            out.push(if n < 0 { -1 } else { n - b });
        } else if s < 0 || (n >= 0 && s > n - b) {
            return Err(c.error(format!("Expected size[{i}] in [0, {}], but got {s}", n - b)));
        } else {
            out.push(s);
        }
    }
    Ok(vec![Some(out)])
}

fn bit(mask: i64, i: usize) -> bool {
    i < 64 && (mask >> i) & 1 == 1
}

/// Output dims of a strided slice of partially known `dims` (-1 = unknown).
fn strided_dims(c: &ShapeCtx, dims: &[i64], begin: &[i64], end: &[i64], strides: &[i64]) -> Result<Vec<i64>, Status> {
    let m = |n: &str| c.node.attr_int(n);
    let (bm, em, mut ell, nm, sm) =
        (m("begin_mask")?, m("end_mask")?, m("ellipsis_mask")?, m("new_axis_mask")?, m("shrink_axis_mask")?);
    let sparse = begin.len();
    if sparse > 32 {
        return Err(c.error("strided slice spec has more than 32 entries"));
    }
    ell &= (1i64 << sparse) - 1;
    if ell.count_ones() > 1 {
        return Err(c.error("Multiple ellipses in slice spec not allowed"));
    }
    let mut n_sparse = sparse;
    if ell == 0 {
        ell |= 1 << sparse;
        n_sparse += 1;
    }
    let ell_pos = (0..n_sparse).find(|&i| bit(ell, i)).unwrap_or(n_sparse);
    let new_after = (ell_pos + 1..sparse).filter(|&i| bit(nm, i)).count();
    let rank = dims.len();
    let mut out = Vec::new();
    let mut full = 0usize;
    for i in 0..n_sparse {
        if bit(ell, i) {
            let next = (rank + 1 + new_after).saturating_sub(n_sparse - i).min(rank).max(full);
            out.extend_from_slice(&dims[full..next]);
            full = next;
        } else if bit(nm, i) {
            out.push(1);
        } else {
            if full == rank {
                return Err(c.error(format!("Index out of range using input dim {full}; input has only {rank} dims")));
            }
            let (n, stride) = (dims[full], strides[i]);
            if stride == 0 {
                return Err(c.error(format!("strides[{i}] must be non-zero")));
            }
            if bit(sm, i) {
                let fwd = if begin[i] < 0 && n >= 0 { n + begin[i] } else { begin[i] };
                if n >= 0 && (fwd < 0 || fwd >= n) {
                    return Err(c.error(format!("slice index {fwd} of dimension {full} out of bounds.")));
                }
            } else if n < 0 {
                out.push(-1);
            } else {
                let (lo, hi) = if stride > 0 { (0, n) } else { (-1, n - 1) };
                let canon = |x: i64, is_end: bool, masked: bool| {
                    if masked {
                        if (stride > 0) != is_end {
                            lo
                        } else {
                            hi
                        }
                    } else {
                        (if x < 0 { n + x } else { x }).clamp(lo, hi)
                    }
                };
                let b = canon(begin[i], false, bit(bm, i));
                let e = canon(end[i], true, bit(em, i));
                let len = e - b;
                out.push(if len == 0 || (len < 0) != (stride < 0) {
                    0
                } else {
                    len / stride + i64::from(len % stride != 0)
                });
            }
            full += 1;
        }
    }
    Ok(out)
}

pub(crate) fn strided_slice_shape(c: &ShapeCtx) -> R {
    for i in 1..4 {
        want_rank(c, i, 1)?;
    }
    let (Some(d), Some(b), Some(e), Some(s)) = (c.input(0), const_ints(c, 1), const_ints(c, 2), const_ints(c, 3))
    else {
        return Ok(vec![None]);
    };
    if b.len() != e.len() || b.len() != s.len() {
        return Err(c.error(format!(
            "Expected begin, end, and strides to be 1D equal size tensors, but got {}, {} and {} elements",
            b.len(),
            e.len(),
            s.len()
        )));
    }
    Ok(vec![Some(strided_dims(c, &d, &b, &e, &s)?)])
}

pub(crate) fn strided_slice_grad_shape(c: &ShapeCtx) -> R {
    let out = shape_from_tensor(c, 0)?;
    let _ = rank(c, 4);
    Ok(vec![out])
}
