//! `SparseCross` (string crosses joined by `_X_`, or hashed with FarmHash's
//! `FingerprintCat64` chain from `hash_key`), `SparseCrossV2` (string crosses joined by
//! `sep`) and `SparseCrossHashed` (hashed, SipHash under `salt` with `strong_hash`): per
//! batch row, every combination of one feature of each input, the last input varying
//! fastest, as TensorFlow's feature-column crosses build them.

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{DataType, NodeAttrs, Shape, Status, Storage, Tensor};

use super::util::{indices_matrix, shape_vector};
use crate::array::util::{check_alloc, index_scalar, index_vec};
use crate::string::{fingerprint64, siphash24, string_tensor};
use crate::{KernelRegistry, OpContext, OpKernel};

/// FarmHash's `FingerprintCat64`: a fingerprint of two fingerprints.
fn fingerprint_cat64(fp1: u64, fp2: u64) -> u64 {
    const MUL: u64 = 0xc6a4_a793_5bd1_e995;
    let mix = |v: u64| v ^ (v >> 47);
    let mut r = fp1 ^ MUL;
    r ^= mix(fp2.wrapping_mul(MUL)).wrapping_mul(MUL);
    r = r.wrapping_mul(MUL);
    r = mix(r).wrapping_mul(MUL);
    mix(r)
}

/// One input's values: strings or int64.
enum Vals<'a> {
    Str(&'a [Vec<u8>]),
    Int(&'a [i64]),
}

impl Vals<'_> {
    fn text(&self, i: usize) -> Vec<u8> {
        match self {
            Vals::Str(v) => v[i].clone(),
            Vals::Int(v) => v[i].to_string().into_bytes(),
        }
    }
    fn hash(&self, i: usize, strong: Option<(u64, u64)>) -> u64 {
        match (self, strong) {
            (Vals::Str(v), None) => fingerprint64(&v[i]),
            (Vals::Str(v), Some((k0, k1))) => siphash24(k0, k1, &v[i]),
            (Vals::Int(v), _) => v[i] as u64,
        }
    }
}

/// One input's entries by batch row: row `b` holds `items[ends[b - 1]..ends[b]]` (from 0
/// for the first row), so a dense shape's batch size costs 8 bytes a row, from the
/// fallible allocation path.
struct RowLists {
    ends: Vec<i64>,
    items: Vec<usize>,
}

impl RowLists {
    fn row(&self, b: usize) -> &[usize] {
        let s = if b == 0 { 0 } else { self.ends[b - 1] as usize };
        &self.items[s..self.ends[b] as usize]
    }
}

fn vals<'a>(ctx: &OpContext, what: &str, t: &'a Tensor) -> Result<Vals<'a>, Status> {
    match t.storage() {
        Storage::Str(v) => Ok(Vals::Str(v)),
        Storage::I64(v) => Ok(Vals::Int(v)),
        _ => Err(ctx.error(format!("{what} must be int64 or string, got {}", t.dtype()))),
    }
}

/// How the crosses are output.
#[derive(Clone, Copy)]
enum Mode {
    /// `SparseCross`: strings joined by `_X_`, or hashed (`hash_key`, `num_buckets`).
    V1 { hashed: bool, buckets: i64, key: u64 },
    /// `SparseCrossV2`: strings joined by the `sep` input.
    V2,
    /// `SparseCrossHashed`: the `num_buckets`, `strong_hash` and `salt` inputs.
    Hashed,
}

op_kernel! {
    struct SparseCross { mode: Mode }
    fn compute(&self, ctx) {
        let node = ctx.node().clone();
        let n = node.attr_int("N")?.max(0) as usize;
        let n_dense = node.attr_list_type("dense_types")?.len();
        let inputs: Vec<Tensor> = (0..3 * n + n_dense).map(|i| ctx.input(i)).collect::<Result<_, _>>()?;
        let (idx_t, val_t, shp_t, dense_t) = (&inputs[..n], &inputs[n..2 * n], &inputs[2 * n..3 * n], &inputs[3 * n..]);
        let extra = 3 * n + n_dense;
        // Batch size from the first input, as TensorFlow takes it.
        let mut batch: Option<usize> = None;
        let mut check_batch = |b: usize, what: &str| -> Result<(), Status> {
            match batch {
                None => batch = Some(b),
                Some(x) if x != b => return Err(ctx.error(format!("Expected batch size {x} got {b} ({what})"))),
                _ => {}
            }
            Ok(())
        };
        // Each column: per batch row, the feature positions in its values.
        let mut columns: Vec<(Vals, RowLists)> = Vec::with_capacity(n + n_dense);
        let mut sparse_rows = Vec::with_capacity(n);
        for i in 0..n {
            let m = indices_matrix(ctx, &format!("indices[{i}]"), &idx_t[i])?;
            let sh = shape_vector(ctx, &format!("shapes[{i}]"), &shp_t[i])?;
            if m.rank != 2 || sh.len() != 2 {
                return Err(
                    ctx.error(format!("Expected indices[{i}] to be a matrix of 2 columns and shapes[{i}] a 2-vector"))
                );
            }
            if val_t[i].rank() != 1 || val_t[i].dims()[0] != m.n {
                return Err(ctx.error(format!("Expected values[{i}] to be a vector of {} values", m.n)));
            }
            let b = usize::try_from(sh[0]).map_err(|_| ctx.error(format!("shapes[{i}][0] is negative")))?;
            check_batch(b, &format!("shapes[{i}]"))?;
            sparse_rows.push((m, b));
        }
        for (i, d) in dense_t.iter().enumerate() {
            if d.rank() != 2 {
                return Err(ctx.error(format!("Dense inputs should be a matrix but received shape {}", d.shape())));
            }
            check_batch(d.dims()[0], &format!("dense_inputs[{i}]"))?;
        }
        let batch = batch.unwrap_or(0);
        for (i, (m, b)) in sparse_rows.iter().enumerate() {
            // Entries per row, then where each row starts, then (placing the entries in
            // order) where each ends.
            let mut ends = ferroflow_core::alloc::zeroed::<i64>(&[*b])?;
            for e in 0..m.n {
                let r = m.row(e)[0];
                if r < 0 || r as u64 >= *b as u64 {
                    return Err(ctx.error(format!("indices[{i}][{e}, 0] = {r} is out of range [0, {b})")));
                }
                ends[r as usize] += 1;
            }
            let mut at = 0i64;
            for c in ends.iter_mut() {
                (*c, at) = (at, at + *c);
            }
            let mut items = vec![0usize; m.n];
            for e in 0..m.n {
                let r = m.row(e)[0] as usize;
                items[ends[r] as usize] = e;
                ends[r] += 1;
            }
            columns.push((vals(ctx, &format!("values[{i}]"), &val_t[i])?, RowLists { ends, items }));
        }
        for (i, d) in dense_t.iter().enumerate() {
            let w = d.dims()[1];
            let ends = (1..=batch).map(|b| (b * w) as i64).collect();
            let rows = RowLists { ends, items: (0..batch * w).collect() };
            columns.push((vals(ctx, &format!("dense_inputs[{i}]"), d)?, rows));
        }
        // The output form.
        let (sep, hashed, buckets, key, strong) = match self.mode {
            Mode::V1 { hashed, buckets, key } => (b"_X_".to_vec(), hashed, buckets, key, None),
            Mode::V2 => {
                let s = ctx.input(extra)?;
                let sep = match s.storage() {
                    Storage::Str(v) if s.rank() == 0 => v[0].clone(),
                    _ => return Err(ctx.error(format!("Input separator should be a scalar string, got {}", s.shape()))),
                };
                (sep, false, 0, 0, None)
            }
            Mode::Hashed => {
                let buckets = index_scalar(&ctx.input(extra)?).map_err(|e| ctx.error(e.message))?;
                let strong = ctx.input(extra + 1)?;
                let strong = strong.rank() == 0 && strong.as_slice::<bool>()?[0];
                let salt = index_vec(&ctx.input(extra + 2)?).map_err(|e| ctx.error(e.message))?;
                if strong && salt.len() != 2 {
                    return Err(ctx.error(format!("Input \"salt\" must have length 2 but has length {}", salt.len())));
                }
                let k = strong.then(|| (salt[0] as u64, salt[1] as u64));
                (Vec::new(), true, buckets, 0, k)
            }
        };
        // Count first, to check the output against the memory budget.
        let mut total = 0usize;
        let mut widest = 0usize;
        for b in 0..batch {
            let c = columns.iter().try_fold(1usize, |a, (_, rows)| a.checked_mul(rows.row(b).len()));
            let c = c.ok_or_else(|| ctx.error("too many crosses"))?;
            let c = if columns.is_empty() { 0 } else { c };
            total = total.checked_add(c).ok_or_else(|| ctx.error("too many crosses"))?;
            widest = widest.max(c);
        }
        check_alloc(&[total, 2], DataType::Int64).map_err(|e| ctx.error_with(e))?;
        let mut indices = ferroflow_core::alloc::with_capacity::<i64>(&[total, 2])?;
        let mut out_int = ferroflow_core::alloc::with_capacity::<i64>(&[if hashed { total } else { 0 }])?;
        let mut out_str = ferroflow_core::alloc::with_capacity::<Vec<u8>>(&[if hashed { 0 } else { total }])?;
        let mut perm = vec![0usize; columns.len()];
        for b in 0..batch {
            if columns.is_empty() || columns.iter().any(|(_, rows)| rows.row(b).is_empty()) {
                continue;
            }
            perm.iter_mut().for_each(|p| *p = 0);
            let mut k = 0i64;
            loop {
                if hashed {
                    let mut h = key;
                    for (c, &p) in columns.iter().zip(&perm) {
                        h = fingerprint_cat64(h, c.0.hash(c.1.row(b)[p], strong));
                    }
                    out_int.push(if buckets > 0 { (h % buckets as u64) as i64 } else { (h % i64::MAX as u64) as i64 });
                } else {
                    let mut s = Vec::new();
                    for (j, (c, &p)) in columns.iter().zip(&perm).enumerate() {
                        if j > 0 {
                            s.extend_from_slice(&sep);
                        }
                        s.extend_from_slice(&c.0.text(c.1.row(b)[p]));
                    }
                    out_str.push(s);
                }
                indices.push(b as i64);
                indices.push(k);
                k += 1;
                // The next combination: the last column fastest.
                let mut j = columns.len();
                loop {
                    if j == 0 {
                        break;
                    }
                    j -= 1;
                    perm[j] += 1;
                    if perm[j] < columns[j].1.row(b).len() {
                        break;
                    }
                    perm[j] = 0;
                    if j == 0 {
                        j = usize::MAX;
                        break;
                    }
                }
                if j == usize::MAX {
                    break;
                }
            }
        }
        let count = indices.len() / 2;
        ctx.set_output(0, Tensor::new(Shape::new(vec![count, 2]), indices)?)?;
        if hashed {
            ctx.set_output(1, Tensor::new(Shape::new(vec![count]), out_int)?)?;
        } else {
            ctx.set_output(1, string_tensor(Shape::new(vec![count]), out_str)?)?;
        }
        ctx.set_output(2, Tensor::new(Shape::new(vec![2]), vec![batch as i64, widest as i64])?)
    }
}

fn v1_factory(n: &NodeDef) -> Result<Box<dyn OpKernel>, Status> {
    let hashed = n.attr_bool("hashed_output")?;
    let buckets = n.attr_int("num_buckets")?;
    let key = n.attr_int("hash_key")? as u64;
    Ok(Box::new(SparseCross { mode: Mode::V1 { hashed, buckets, key } }))
}

pub(crate) fn register(r: &mut KernelRegistry) {
    r.add("SparseCross", v1_factory);
    r.add("SparseCrossV2", |_| Ok(Box::new(SparseCross { mode: Mode::V2 })));
    // SparseCrossHashed is not registered: its hash chain starts from a key that differs
    // from SparseCross's (golden values disagree); `Mode::Hashed` is kept for when it is known.
    let _ = Mode::Hashed;
}
