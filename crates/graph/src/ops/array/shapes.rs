//! Shape functions of the array ops (everything but slicing). Unknown dims are -1, unknown
//! rank is `None`; an error only when shapes are definitely incompatible.

use ferroflow_core::{DataType, NodeAttrs, Status, Tensor};

use crate::shape_fn::{Dims, ShapeCtx};

type R = Result<Vec<Dims>, Status>;

/// The elements of an int32/int64 constant input.
pub(crate) fn const_ints(c: &ShapeCtx, i: usize) -> Option<Vec<i64>> {
    c.const_input(i).and_then(tensor_ints)
}

fn tensor_ints(t: &Tensor) -> Option<Vec<i64>> {
    match t.dtype() {
        DataType::Int32 => t.as_slice::<i32>().ok().map(|v| v.iter().map(|&x| x as i64).collect()),
        DataType::Int64 => t.as_slice::<i64>().ok().map(|v| v.to_vec()),
        _ => None,
    }
}

/// Rank of input `i`, if known.
pub(crate) fn rank(c: &ShapeCtx, i: usize) -> Option<usize> {
    c.input(i).map(|d| d.len())
}

/// Errors unless input `i` has rank `r` (when known).
pub(crate) fn want_rank(c: &ShapeCtx, i: usize, r: usize) -> Result<(), Status> {
    match rank(c, i) {
        Some(x) if x != r => Err(c.error(format!("Shape must be rank {r} but is rank {x}"))),
        _ => Ok(()),
    }
}

/// A shape given as a 1-D tensor input: its value when constant, else its length.
pub(crate) fn shape_from_tensor(c: &ShapeCtx, i: usize) -> Result<Dims, Status> {
    want_rank(c, i, 1)?;
    if let Some(v) = const_ints(c, i) {
        return Ok(Some(v));
    }
    Ok(c.input(i).and_then(|d| d.first().copied()).filter(|&n| n >= 0).map(|n| vec![-1; n as usize]))
}

fn unknowns(r: Option<usize>) -> Dims {
    r.map(|r| vec![-1; r])
}

fn norm_axis(c: &ShapeCtx, axis: i64, r: usize, what: &str) -> Result<usize, Status> {
    let r = r as i64;
    if axis < -r || axis >= r {
        return Err(c.error(format!("Invalid {what}: {axis}; must be in [{},{r})", -r)));
    }
    Ok(if axis < 0 { axis + r } else { axis } as usize)
}

fn checked_product(it: impl IntoIterator<Item = i64>) -> Option<i64> {
    it.into_iter().try_fold(1i64, |a, b| a.checked_mul(b))
}

pub(crate) fn reshape_shape(c: &ShapeCtx) -> R {
    want_rank(c, 1, 1)?;
    let Some(sizes) = const_ints(c, 1) else {
        return Ok(vec![shape_from_tensor(c, 1)?]);
    };
    let mut unknown = None;
    for (d, &s) in sizes.iter().enumerate() {
        if s == -1 {
            if let Some(u) = unknown {
                return Err(c.error(format!("Only one input size may be -1, not both {u} and {d}")));
            }
            unknown = Some(d);
        } else if s < 0 {
            return Err(c.error(format!("Size {d} must be non-negative, not {s}")));
        }
    }
    let input = c.input(0);
    let Some(inp) = input.filter(|d| d.iter().all(|&x| x >= 0)) else {
        return Ok(vec![Some(sizes)]);
    };
    let has_zero = sizes.contains(&0);
    let (Some(n_in), Some(known)) =
        (checked_product(inp.iter().copied()), checked_product(sizes.iter().copied().filter(|&s| s > 0)))
    else {
        return Ok(vec![Some(sizes)]);
    };
    let mut out = sizes.clone();
    if let Some(u) = unknown {
        let n = checked_product(inp.iter().copied().filter(|&d| d > 0 || !has_zero)).unwrap_or(0);
        let in_zero = has_zero && inp.contains(&0);
        let missing = n / known.max(1);
        if !in_zero && known * missing != n {
            return Err(c.error(format!(
                "Cannot reshape a tensor with {n_in} elements to shape {sizes:?} (requires a multiple of {known})"
            )));
        }
        out[u] = missing;
    }
    let total = checked_product(out.iter().copied());
    if total != Some(n_in) {
        return Err(c.error(format!("Cannot reshape a tensor with {n_in} elements to shape {sizes:?}")));
    }
    Ok(vec![Some(out)])
}

pub(crate) fn shape_shape(c: &ShapeCtx) -> R {
    Ok(vec![Some(vec![rank(c, 0).map_or(-1, |r| r as i64)])])
}

pub(crate) fn shape_n_shape(c: &ShapeCtx) -> R {
    Ok((0..c.inputs.len()).map(|i| Some(vec![rank(c, i).map_or(-1, |r| r as i64)])).collect())
}

pub(crate) fn fill_shape(c: &ShapeCtx) -> R {
    want_rank(c, 1, 0)?;
    let d = shape_from_tensor(c, 0)?;
    if let Some(n) = d.as_ref().and_then(|d| d.iter().find(|&&x| x < 0)).filter(|_| c.const_input(0).is_some()) {
        return Err(c.error(format!("Fill dimensions must be >= 0, got {n}")));
    }
    Ok(vec![d])
}

pub(crate) fn expand_dims_shape(c: &ShapeCtx) -> R {
    let Some(mut d) = c.input(0) else { return Ok(vec![None]) };
    let r = d.len() as i64;
    match const_ints(c, 1) {
        Some(v) if v.len() == 1 => {
            let k = v[0];
            if k < -1 - r || k > r {
                return Err(c.error(format!("Tried to expand dim index {k} for tensor with {r} dimensions.")));
            }
            let k = if k < 0 { k + r + 1 } else { k } as usize;
            d.insert(k, 1);
            Ok(vec![Some(d)])
        }
        Some(_) => Err(c.error("'dim' must be a tensor with a single value")),
        None => Ok(vec![unknowns(Some(d.len() + 1))]),
    }
}

pub(crate) fn squeeze_shape(c: &ShapeCtx) -> R {
    let Some(d) = c.input(0) else { return Ok(vec![None]) };
    let dims = c.node.attr_list_int("squeeze_dims")?;
    let r = d.len() as i64;
    let mut drop = vec![false; d.len()];
    for (i, &k) in dims.iter().enumerate() {
        if k < -r || k >= r {
            return Err(c.error(format!("squeeze_dims[{i}] not in [{},{r}).", -r)));
        }
        let k = if k < 0 { k + r } else { k } as usize;
        if d[k] != 1 && d[k] != -1 {
            return Err(c.error(format!("Can not squeeze dim[{k}], expected a dimension of 1, got {}", d[k])));
        }
        drop[k] = true;
    }
    if dims.is_empty() {
        if d.contains(&-1) {
            return Ok(vec![None]);
        }
        return Ok(vec![Some(d.into_iter().filter(|&x| x != 1).collect())]);
    }
    Ok(vec![Some(d.into_iter().zip(drop).filter(|(_, dr)| !dr).map(|(x, _)| x).collect())])
}

pub(crate) fn transpose_shape(c: &ShapeCtx) -> R {
    want_rank(c, 1, 1)?;
    let input = c.input(0);
    let Some(perm) = const_ints(c, 1) else {
        let r =
            rank(c, 0).or_else(|| c.input(1).and_then(|p| p.first().copied()).filter(|&n| n >= 0).map(|n| n as usize));
        return Ok(vec![unknowns(r)]);
    };
    let Some(d) = input else { return Ok(vec![Some(vec![-1; perm.len()])]) };
    if perm.len() != d.len() {
        return Err(c.error(format!(
            "transpose expects a vector of size {}. But input(1) is a vector of size {}",
            d.len(),
            perm.len()
        )));
    }
    let mut seen = vec![false; d.len()];
    let mut out = Vec::with_capacity(d.len());
    for &p in &perm {
        if p < 0 || p as usize >= d.len() || seen[p as usize] {
            return Err(c.error(format!("perm {perm:?} is not a permutation of 0..{}", d.len())));
        }
        seen[p as usize] = true;
        out.push(d[p as usize]);
    }
    Ok(vec![Some(out)])
}

pub(crate) fn vector_unchanged(c: &ShapeCtx) -> R {
    want_rank(c, 0, 1)?;
    Ok(vec![c.input(0).or(Some(vec![-1]))])
}

/// Merges two partial dims: equal or one unknown.
fn merge(c: &ShapeCtx, a: i64, b: i64, j: usize) -> Result<i64, Status> {
    match (a, b) {
        (-1, x) | (x, -1) => Ok(x),
        (x, y) if x == y => Ok(x),
        (x, y) => Err(c.error(format!("Dimension {j} in both shapes must be equal, but are {x} and {y}"))),
    }
}

pub(crate) fn concat_shape(c: &ShapeCtx) -> R {
    let n = c.inputs.len() - 1;
    want_rank(c, n, 0)?;
    let known: Vec<(usize, Vec<i64>)> = (0..n).filter_map(|i| c.input(i).map(|d| (i, d))).collect();
    let Some((_, first)) = known.first() else { return Ok(vec![None]) };
    let r = first.len();
    if r == 0 {
        return Err(c.error("Can't concatenate scalars (use tf.stack instead)"));
    }
    for (_, d) in &known {
        if d.len() != r {
            return Err(c.error(format!("Shape must be rank {r} but is rank {}", d.len())));
        }
    }
    let Some(axis) = const_ints(c, n).and_then(|v| v.first().copied()) else { return Ok(vec![unknowns(Some(r))]) };
    let ri = r as i64;
    if axis < -ri || axis >= ri {
        return Err(c.error(format!(
            "ConcatOp : Expected concatenating dimensions in the range [{}, {ri}), but got {axis}",
            -ri
        )));
    }
    let axis = if axis < 0 { axis + ri } else { axis } as usize;
    let mut out = first.clone();
    out[axis] = if known.len() == n { 0 } else { -1 };
    for (k, (_, d)) in known.iter().enumerate() {
        for j in 0..r {
            if j == axis {
                out[j] = if out[j] < 0 || d[j] < 0 { -1 } else { out[j].checked_add(d[j]).unwrap_or(-1) };
            } else if k > 0 {
                out[j] = merge(c, out[j], d[j], j)?;
            }
        }
    }
    Ok(vec![Some(out)])
}

pub(crate) fn concat_offset_shape(c: &ShapeCtx) -> R {
    Ok((1..c.inputs.len()).map(|i| c.input(i)).collect())
}

pub(crate) fn pack_shape(c: &ShapeCtx) -> R {
    let n = c.inputs.len();
    let mut merged: Dims = None;
    for i in 0..n {
        if let Some(d) = c.input(i) {
            merged = Some(match merged {
                None => d,
                Some(m) if m.len() == d.len() => {
                    m.iter().zip(&d).enumerate().map(|(j, (&a, &b))| merge(c, a, b, j)).collect::<Result<_, _>>()?
                }
                Some(m) => {
                    return Err(c.error(format!(
                        "Shapes of all inputs must match: rank {} vs. rank {}",
                        m.len(),
                        d.len()
                    )))
                }
            });
        }
    }
    let Some(mut m) = merged else { return Ok(vec![None]) };
    let axis = norm_axis(c, c.node.attr_int("axis")?, m.len() + 1, "axis")?;
    m.insert(axis, n as i64);
    Ok(vec![Some(m)])
}

pub(crate) fn unpack_shape(c: &ShapeCtx) -> R {
    let num = c.node.attr_int("num")?.max(0) as usize;
    let Some(mut d) = c.input(0) else { return Ok(vec![None; num]) };
    let axis = norm_axis(c, c.node.attr_int("axis")?, d.len(), "axis")?;
    if d[axis] >= 0 && d[axis] != num as i64 {
        return Err(c.error(format!("Dimension must be {num} but is {} (axis {axis})", d[axis])));
    }
    d.remove(axis);
    Ok(vec![Some(d); num])
}

pub(crate) fn gather_shape(c: &ShapeCtx) -> R {
    let (Some(p), Some(i)) = (c.input(0), c.input(1)) else { return Ok(vec![None]) };
    if p.is_empty() {
        return Err(c.error("Shape must be at least rank 1 but is rank 0"));
    }
    let mut out = i;
    out.extend_from_slice(&p[1..]);
    Ok(vec![Some(out)])
}

pub(crate) fn gather_v2_shape(c: &ShapeCtx) -> R {
    want_rank(c, 2, 0)?;
    let (Some(p), Some(i)) = (c.input(0), c.input(1)) else { return Ok(vec![None]) };
    let Some(axis) = const_ints(c, 2).and_then(|v| v.first().copied()) else { return Ok(vec![None]) };
    let pr = p.len() as i64;
    let min_rank = if axis < 0 { -axis } else { axis + 1 };
    if pr < min_rank {
        return Err(c.error(format!("Shape must be at least rank {min_rank} but is rank {pr}")));
    }
    let axis = if axis < 0 { axis + pr } else { axis } as usize;
    let mut bd = c.node.attr_int("batch_dims")?;
    if bd < 0 {
        bd += i.len() as i64;
    }
    if bd < 0 || bd as usize > i.len() || bd as usize > axis {
        return Err(c.error(format!("batch_dims {} is invalid for axis {axis} and indices rank {}", bd, i.len())));
    }
    let mut out = p[..axis].to_vec();
    out.extend_from_slice(&i[bd as usize..]);
    out.extend_from_slice(&p[axis + 1..]);
    Ok(vec![Some(out)])
}

pub(crate) fn segment_sum_shape(c: &ShapeCtx) -> R {
    want_rank(c, 2, 0)?;
    let (Some(d), Some(ids)) = (c.input(0), c.input(1)) else { return Ok(vec![None]) };
    if d.len() < ids.len() {
        return Err(c.error(format!("data rank {} is less than segment_ids rank {}", d.len(), ids.len())));
    }
    let num = const_ints(c, 2).and_then(|v| v.first().copied()).unwrap_or(-1);
    let mut out = vec![num];
    out.extend_from_slice(&d[ids.len()..]);
    Ok(vec![Some(out)])
}

pub(crate) fn stitch_shape(c: &ShapeCtx) -> R {
    let n = c.inputs.len() / 2;
    let (Some(i0), Some(d0)) = (c.input(0), c.input(n)) else { return Ok(vec![None]) };
    if d0.len() < i0.len() {
        return Err(c.error(format!("data[0] rank {} is less than indices[0] rank {}", d0.len(), i0.len())));
    }
    let mut out = vec![-1];
    out.extend_from_slice(&d0[i0.len()..]);
    Ok(vec![Some(out)])
}

pub(crate) fn tile_shape(c: &ShapeCtx) -> R {
    want_rank(c, 1, 1)?;
    let m = const_ints(c, 1);
    match (c.input(0), m) {
        (Some(d), Some(m)) => {
            if d.len() != m.len() {
                return Err(c.error(format!(
                    "Expected multiples argument to be a vector of length {} but got length {}",
                    d.len(),
                    m.len()
                )));
            }
            Ok(vec![Some(
                d.iter().zip(&m).map(|(&a, &k)| if a < 0 { -1 } else { a.checked_mul(k).unwrap_or(-1) }).collect(),
            )])
        }
        (Some(d), None) => Ok(vec![unknowns(Some(d.len()))]),
        (None, Some(m)) => Ok(vec![unknowns(Some(m.len()))]),
        (None, None) => Ok(vec![None]),
    }
}

pub(crate) fn broadcast_to_shape(c: &ShapeCtx) -> R {
    let out = shape_from_tensor(c, 1)?;
    if let (Some(o), Some(i)) = (&out, c.input(0)) {
        if i.len() > o.len() {
            return Err(c.error(format!(
                "Rank of input ({}) must be no greater than rank of output shape ({}).",
                i.len(),
                o.len()
            )));
        }
        let lead = o.len() - i.len();
        for (k, &d) in i.iter().enumerate() {
            let t = o[lead + k];
            if d >= 0 && t >= 0 && d != 1 && d != t {
                return Err(c.error(format!("Incompatible shapes: {i:?} vs. {o:?}")));
            }
        }
    }
    Ok(vec![out])
}

pub(crate) fn one_hot_shape(c: &ShapeCtx) -> R {
    let axis = c.node.attr_int("axis")?;
    if axis < -1 {
        return Err(c.error("axis must be >= -1"));
    }
    for i in 1..4 {
        want_rank(c, i, 0)?;
    }
    let Some(mut d) = c.input(0) else { return Ok(vec![None]) };
    let depth = const_ints(c, 1).and_then(|v| v.first().copied()).unwrap_or(-1);
    let a = if axis == -1 { d.len() } else { axis as usize };
    if a > d.len() {
        return Err(c.error(format!("Expected axis to be -1 or between [0, {}).  But received: {axis}", d.len() + 1)));
    }
    d.insert(a, depth);
    Ok(vec![Some(d)])
}

pub(crate) fn range_shape(c: &ShapeCtx) -> R {
    for i in 0..3 {
        want_rank(c, i, 0)?;
    }
    let vals: Option<Vec<f64>> =
        (0..3).map(|i| c.const_input(i).and_then(|t| t.to_f64_vec().ok()).and_then(|v| v.first().copied())).collect();
    let n = match vals.as_deref() {
        Some(&[s, l, d]) if d != 0.0 && ((d > 0.0 && s <= l) || (d < 0.0 && s >= l)) => {
            let is_int = c.const_input(0).is_some_and(|t| matches!(t.dtype(), DataType::Int32 | DataType::Int64));
            if is_int {
                (((l - s).abs() + d.abs() - 1.0) / d.abs()).floor() as i64
            } else {
                ((l - s) / d).abs().ceil() as i64
            }
        }
        _ => -1,
    };
    Ok(vec![Some(vec![n])])
}

pub(crate) fn pad_shape(c: &ShapeCtx) -> R {
    want_rank(c, 1, 2)?;
    let p = const_ints(c, 1);
    match (c.input(0), p) {
        (Some(d), Some(p)) => {
            if p.len() != 2 * d.len() {
                return Err(c.error(format!(
                    "The first dimension of paddings must be the rank of inputs ({} vs {})",
                    p.len() / 2,
                    d.len()
                )));
            }
            let mut out = Vec::with_capacity(d.len());
            for (k, &x) in d.iter().enumerate() {
                let (b, a) = (p[2 * k], p[2 * k + 1]);
                if b < 0 || a < 0 {
                    return Err(c.error(format!("Paddings must be non-negative: {b} {a}")));
                }
                out.push(if x < 0 { -1 } else { x.checked_add(b).and_then(|v| v.checked_add(a)).unwrap_or(-1) });
            }
            Ok(vec![Some(out)])
        }
        (Some(d), None) => Ok(vec![unknowns(Some(d.len()))]),
        (None, _) => {
            Ok(vec![c.input(1).and_then(|p| p.first().copied()).filter(|&n| n >= 0).map(|n| vec![-1; n as usize])])
        }
    }
}

pub(crate) fn where_shape(c: &ShapeCtx) -> R {
    Ok(vec![Some(vec![-1, rank(c, 0).map_or(-1, |r| r as i64)])])
}
