//! Shape functions of the extended array ops (`ext_defs.rs`). Unknown dims are -1, unknown
//! rank is `None`; an error only when shapes are definitely incompatible.

use ferroflow_core::{NodeAttrs, Status};

use super::shapes::{const_ints, want_rank};
use crate::shape_fn::{broadcast_dims, Dims, ShapeCtx};

type R = Result<Vec<Dims>, Status>;

fn num_outputs(c: &ShapeCtx) -> Result<usize, Status> {
    let n = c.node.attr_int("num_split")?;
    if n < 1 {
        return Err(c.error(format!("num_split must be >= 1, got {n}")));
    }
    Ok(n as usize)
}

fn split_axis(c: &ShapeCtx, dim_input: usize, r: usize) -> Result<Option<usize>, Status> {
    let Some(d) = const_ints(c, dim_input).and_then(|v| v.first().copied()) else { return Ok(None) };
    let ri = r as i64;
    if d < -ri || d >= ri {
        return Err(c.error(format!("-input rank(-{r}) <= split_dim < input rank ({r}), but got {d}")));
    }
    Ok(Some(if d < 0 { d + ri } else { d } as usize))
}

pub(crate) fn split_shape(c: &ShapeCtx) -> R {
    let n = num_outputs(c)?;
    want_rank(c, 0, 0)?;
    let Some(dims) = c.input(1) else { return Ok(vec![None; n]) };
    let Some(axis) = split_axis(c, 0, dims.len())? else { return Ok(vec![Some(vec![-1; dims.len()]); n]) };
    let mut out = dims.clone();
    if dims[axis] >= 0 {
        if dims[axis] % n as i64 != 0 {
            return Err(c.error(format!(
                "Number of ways to split should evenly divide the split dimension, but got split_dim {axis} (size = {}) and num_split {n}",
                dims[axis]
            )));
        }
        out[axis] = dims[axis] / n as i64;
    }
    Ok(vec![Some(out); n])
}

pub(crate) fn split_v_shape(c: &ShapeCtx) -> R {
    let n = num_outputs(c)?;
    want_rank(c, 2, 0)?;
    let Some(dims) = c.input(0) else { return Ok(vec![None; n]) };
    let Some(axis) = split_axis(c, 2, dims.len())? else { return Ok(vec![Some(vec![-1; dims.len()]); n]) };
    let Some(sizes) = const_ints(c, 1) else {
        let mut d = dims.clone();
        d[axis] = -1;
        return Ok(vec![Some(d); n]);
    };
    if sizes.len() != n {
        return Err(c.error(format!("Determined shape must either match input shape along split_dim exactly if fully specified, or be less than the size of the input along split_dim if not fully specified.  Got: {} sizes for num_split {n}", sizes.len())));
    }
    let unknown: Vec<usize> = (0..n).filter(|&i| sizes[i] == -1).collect();
    if unknown.len() > 1 {
        return Err(c.error(
            "Only one dimensions can have a value of -1. Second one found at dimension ".to_string()
                + &unknown[1].to_string(),
        ));
    }
    let known: i64 = sizes.iter().filter(|&&s| s != -1).sum();
    let mut sizes = sizes;
    if let Some(&u) = unknown.first() {
        sizes[u] = if dims[axis] >= 0 { dims[axis] - known } else { -1 };
    } else if dims[axis] >= 0 && known != dims[axis] {
        return Err(c.error(format!(
            "Determined shape must either match input shape along split_dim exactly if fully specified, or be less than the size of the input along split_dim if not fully specified.  Got: {known}"
        )));
    }
    Ok(sizes
        .iter()
        .map(|&s| {
            let mut d = dims.clone();
            d[axis] = s;
            Some(d)
        })
        .collect())
}

/// `ApproxTopK`: the input's shape with the reduction dimension cut to `k`.
pub(crate) fn approx_top_k_shape(c: &ShapeCtx) -> R {
    let k = c.node.attr_int("k")?;
    let axis = c.node.attr_int("reduction_dimension")?;
    let Some(mut dims) = c.input(0) else { return Ok(vec![None, None]) };
    let r = dims.len() as i64;
    if axis < -r || axis >= r {
        return Err(c.error(format!("reduction_dimension {axis} is out of range for an input of rank {r}")));
    }
    let a = if axis < 0 { axis + r } else { axis } as usize;
    if dims[a] >= 0 && dims[a] < k {
        return Err(c.error(format!("k ({k}) must be at most the size of the reduction dimension ({})", dims[a])));
    }
    dims[a] = k;
    Ok(vec![Some(dims.clone()), Some(dims)])
}

pub(crate) fn top_k_shape(c: &ShapeCtx) -> R {
    want_rank(c, 1, 0)?;
    let k = const_ints(c, 1).and_then(|v| v.first().copied());
    if let Some(k) = k.filter(|&k| k < 0) {
        return Err(c.error(format!("Need k >= 0, got {k}")));
    }
    let Some(mut dims) = c.input(0) else { return Ok(vec![None, None]) };
    if dims.is_empty() {
        return Err(c.error("Shape must be at least rank 1 but is rank 0"));
    }
    let last = dims.len() - 1;
    if let (Some(k), true) = (k, dims[last] >= 0) {
        if dims[last] < k {
            return Err(c.error(format!("input must have last dimension >= k = {k} but is {}", dims[last])));
        }
    }
    dims[last] = k.unwrap_or(-1);
    Ok(vec![Some(dims.clone()), Some(dims)])
}

pub(crate) fn broadcast_args_shape(c: &ShapeCtx) -> R {
    want_rank(c, 0, 1)?;
    want_rank(c, 1, 1)?;
    let len = |i| c.input(i).and_then(|d| d.first().copied()).unwrap_or(-1);
    let (a, b) = (len(0), len(1));
    Ok(vec![Some(vec![if a < 0 || b < 0 { -1 } else { a.max(b) }])])
}

pub(crate) fn lin_space_shape(c: &ShapeCtx) -> R {
    for i in 0..3 {
        want_rank(c, i, 0)?;
    }
    let n = const_ints(c, 2).and_then(|v| v.first().copied());
    if let Some(n) = n.filter(|&n| n < 0) {
        return Err(c.error(format!("Requires num > 0: {n}")));
    }
    Ok(vec![Some(vec![n.unwrap_or(-1)])])
}

pub(crate) fn ensure_shape_shape(c: &ShapeCtx) -> R {
    let want = c.node.attr_shape("shape")?;
    let (Some(w), Some(have)) = (want.clone(), c.input(0)) else { return Ok(vec![want.or(c.input(0))]) };
    if w.len() != have.len() {
        return Err(c.error(format!("Shape of tensor {have:?} is not compatible with expected shape {w:?}.")));
    }
    let mut out = Vec::with_capacity(w.len());
    for (&a, &b) in w.iter().zip(&have) {
        if a >= 0 && b >= 0 && a != b {
            return Err(c.error(format!("Shape of tensor {have:?} is not compatible with expected shape {w:?}.")));
        }
        out.push(if a >= 0 { a } else { b });
    }
    Ok(vec![Some(out)])
}

pub(crate) fn diag_shape(c: &ShapeCtx) -> R {
    Ok(vec![c.input(0).map(|d| d.iter().chain(d.iter()).copied().collect())])
}

pub(crate) fn diag_part_shape(c: &ShapeCtx) -> R {
    let Some(d) = c.input(0) else { return Ok(vec![None]) };
    if d.len() % 2 != 0 {
        return Err(c.error(format!("Input must have even rank <= 6, input rank is {}", d.len())));
    }
    let h = d.len() / 2;
    let mut out = Vec::with_capacity(h);
    for i in 0..h {
        let (a, b) = (d[i], d[i + h]);
        if a >= 0 && b >= 0 && a != b {
            return Err(c.error(format!("Dimensions must be equal, but are {a} and {b}")));
        }
        out.push(a.max(b));
    }
    Ok(vec![Some(out)])
}

pub(crate) fn bound_shape(c: &ShapeCtx) -> R {
    Ok(vec![c.input(1)])
}

fn paddings(c: &ShapeCtx, r: usize) -> Result<Option<Vec<(i64, i64)>>, Status> {
    if let Some(p) = c.input(1) {
        if p.len() != 2 || (p[0] >= 0 && p[0] != r as i64) || (p[1] >= 0 && p[1] != 2) {
            return Err(c.error(format!("paddings must be a matrix of shape [{r}, 2], got {p:?}")));
        }
    }
    let Some(v) = const_ints(c, 1) else { return Ok(None) };
    if v.len() != 2 * r || v.iter().any(|&x| x < 0) {
        return Err(c.error(format!("paddings must be {r}x2 non-negative values, got {v:?}")));
    }
    Ok(Some((0..r).map(|i| (v[2 * i], v[2 * i + 1])).collect()))
}

fn mirror(c: &ShapeCtx, grow: bool) -> R {
    let Some(d) = c.input(0) else { return Ok(vec![None]) };
    let Some(p) = paddings(c, d.len())? else { return Ok(vec![Some(vec![-1; d.len()])]) };
    let out = d
        .iter()
        .zip(&p)
        .map(|(&x, &(a, b))| {
            if x < 0 {
                -1
            } else if grow {
                x + a + b
            } else {
                (x - a - b).max(-1)
            }
        })
        .collect();
    Ok(vec![Some(out)])
}

pub(crate) fn mirror_pad_shape(c: &ShapeCtx) -> R {
    mirror(c, true)
}

pub(crate) fn mirror_pad_grad_shape(c: &ShapeCtx) -> R {
    mirror(c, false)
}

pub(crate) fn gather_nd_shape(c: &ShapeCtx) -> R {
    let (Some(p), Some(i)) = (c.input(0), c.input(1)) else { return Ok(vec![None]) };
    if i.is_empty() {
        return Err(c.error("indices must be at least a vector"));
    }
    let depth = i[i.len() - 1];
    if depth < 0 {
        return Ok(vec![None]);
    }
    if depth as usize > p.len() {
        return Err(
            c.error(format!("index innermost dimension length must be <= params rank; saw: {depth} vs. {}", p.len()))
        );
    }
    Ok(vec![Some(i[..i.len() - 1].iter().chain(&p[depth as usize..]).copied().collect())])
}

pub(crate) fn scatter_nd_shape(c: &ShapeCtx) -> R {
    want_rank(c, 2, 1)?;
    if let Some(v) = const_ints(c, 2) {
        return Ok(vec![Some(v)]);
    }
    Ok(vec![c.input(2).and_then(|d| d.first().copied()).filter(|&n| n >= 0).map(|n| vec![-1; n as usize])])
}

/// One operand's labels: letters, with at most one ellipsis (`None`).
fn parse_term(t: &str) -> Option<Vec<Option<char>>> {
    let mut out = Vec::new();
    let mut rest = t.trim();
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix("...") {
            out.push(None);
            rest = r;
        } else {
            let ch = rest.chars().next()?;
            if !ch.is_ascii_alphabetic() {
                return None;
            }
            out.push(Some(ch));
            rest = &rest[1..];
        }
    }
    (out.iter().filter(|l| l.is_none()).count() <= 1).then_some(out)
}

pub(crate) fn einsum_shape(c: &ShapeCtx) -> R {
    let eq: String = c.node.attr_string("equation")?.chars().filter(|ch| !ch.is_whitespace()).collect();
    let (lhs, rhs) = match eq.split_once("->") {
        Some((l, r)) => (l, Some(r)),
        None => (eq.as_str(), None),
    };
    let terms: Option<Vec<_>> = lhs.split(',').map(parse_term).collect();
    let Some(terms) = terms else { return Err(c.error(format!("Invalid Einsum equation: {eq}"))) };
    if terms.len() != c.inputs.len() {
        return Err(c.error(format!("Expecting {} inputs for equation {eq}, got {}", terms.len(), c.inputs.len())));
    }
    let out_term = match rhs {
        Some(r) => parse_term(r).ok_or_else(|| c.error(format!("Invalid Einsum equation: {eq}")))?,
        None => return Ok(vec![None]),
    };
    let mut label_dim: std::collections::HashMap<char, i64> = Default::default();
    let mut ell: Dims = Some(vec![]);
    for (i, t) in terms.iter().enumerate() {
        let Some(dims) = c.input(i) else {
            if t.contains(&None) {
                ell = None;
            }
            continue;
        };
        let named = t.iter().filter(|l| l.is_some()).count();
        let has_ell = t.contains(&None);
        if dims.len() < named || (!has_ell && dims.len() != named) {
            return Err(c.error(format!("Expected input {i} to have rank {named} but got: {}", dims.len())));
        }
        let ell_rank = dims.len() - named;
        let mut k = 0;
        for l in t {
            match l {
                None => {
                    let e = Some(dims[k..k + ell_rank].to_vec());
                    ell = broadcast_dims(c, &ell, &e)?;
                    k += ell_rank;
                }
                Some(ch) => {
                    let d = dims[k];
                    let cur = label_dim.entry(*ch).or_insert(-1);
                    if *cur >= 0 && d >= 0 && *cur != d && *cur != 1 && d != 1 {
                        return Err(c.error(format!("Expected dimension {cur} at axis {k} of input {i}, got {d}")));
                    }
                    if *cur < 0 || *cur == 1 {
                        *cur = d;
                    }
                    k += 1;
                }
            }
        }
    }
    let mut out = Vec::new();
    for l in &out_term {
        match l {
            None => match &ell {
                Some(e) => out.extend_from_slice(e),
                None => return Ok(vec![None]),
            },
            Some(ch) => out.push(*label_dim.get(ch).unwrap_or(&-1)),
        }
    }
    Ok(vec![Some(out)])
}

fn diag_k(c: &ShapeCtx, i: usize) -> Option<(i64, i64)> {
    match const_ints(c, i)?.as_slice() {
        [k] => Some((*k, *k)),
        [a, b] => Some((*a, *b)),
        _ => None,
    }
}

pub(crate) fn matrix_diag_part_v3_shape(c: &ShapeCtx) -> R {
    let (Some(d), Some((lo, hi))) = (c.input(0), diag_k(c, 1)) else { return Ok(vec![None]) };
    if d.len() < 2 {
        return Err(c.error(format!("input must be at least 2-dim, got rank {}", d.len())));
    }
    let (m, n) = (d[d.len() - 2], d[d.len() - 1]);
    let mut out = d[..d.len() - 2].to_vec();
    if lo != hi {
        out.push(hi - lo + 1);
    }
    out.push(if m < 0 || n < 0 { -1 } else { (m + hi.min(0)).min(n - lo.max(0)).max(0) });
    Ok(vec![Some(out)])
}

pub(crate) fn matrix_diag_v3_shape(c: &ShapeCtx) -> R {
    let (Some(d), Some((lo, hi))) = (c.input(0), diag_k(c, 1)) else { return Ok(vec![None]) };
    let lead = if lo == hi { 1 } else { 2 };
    if d.len() < lead {
        return Err(c.error(format!("diagonal must be at least {lead}-dim, got rank {}", d.len())));
    }
    let one = |i| const_ints(c, i).and_then(|v| v.first().copied()).unwrap_or(-1);
    let (mut rows, mut cols) = (one(2), one(3));
    let len = d[d.len() - 1];
    if len >= 0 {
        let (min_rows, min_cols) = (len - hi.min(0), len + lo.max(0));
        if rows < 0 && cols < 0 {
            rows = min_rows.max(min_cols);
            cols = rows;
        } else if rows < 0 {
            rows = min_rows;
        } else if cols < 0 {
            cols = min_cols;
        }
    }
    let mut out = d[..d.len() - lead].to_vec();
    out.extend([rows, cols]);
    Ok(vec![Some(out)])
}

pub(crate) fn matrix_diag_shape(c: &ShapeCtx) -> R {
    Ok(vec![c.input(0).map(|d| {
        let mut o = d.clone();
        o.push(*d.last().unwrap_or(&-1));
        o
    })])
}

pub(crate) fn matrix_diag_part_shape(c: &ShapeCtx) -> R {
    let Some(d) = c.input(0) else { return Ok(vec![None]) };
    if d.len() < 2 {
        return Err(c.error(format!("input must be at least 2-dim, got rank {}", d.len())));
    }
    let (m, n) = (d[d.len() - 2], d[d.len() - 1]);
    let mut out = d[..d.len() - 2].to_vec();
    out.push(if m < 0 || n < 0 { -1 } else { m.min(n) });
    Ok(vec![Some(out)])
}

pub(crate) fn empty_shape(c: &ShapeCtx) -> R {
    want_rank(c, 0, 1)?;
    if let Some(v) = const_ints(c, 0) {
        if let Some(d) = v.iter().find(|&&d| d < 0) {
            return Err(c.error(format!("Empty: dimensions must be >= 0, got {d}")));
        }
        return Ok(vec![Some(v)]);
    }
    Ok(vec![c.input(0).and_then(|d| d.first().copied()).filter(|&n| n >= 0).map(|n| vec![-1; n as usize])])
}
