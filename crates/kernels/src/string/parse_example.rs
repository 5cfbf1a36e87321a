//! `ParseExampleV2`, `ParseExample` (V1) and `ParseSingleExample`: `tf.train.Example` protos to dense tensors
//! (fixed shapes, with defaults when a feature is missing) and sparse tensors (indices,
//! values, dense shape per key), variable-length dense features (padded) and, in V2, ragged
//! features (values and row splits per key).
// Tuples of index vectors are clearer here than one-use type aliases.
#![allow(clippy::type_complexity)]

use std::collections::HashMap;

use ferroflow_core::proto::attr_value::Value as AV;
use ferroflow_core::proto::NodeDef;
use ferroflow_core::{shape_proto_dims, DataType, NodeAttrs, Shape, Status, Storage, Tensor};

use super::example_proto::{parse_example, Feature};
use super::strings;
use crate::array::util::check_alloc;
use crate::{KernelRegistry, OpContext};

struct Config {
    sparse_types: Vec<DataType>,
    dense_types: Vec<DataType>,
    /// Each dense feature's shape; for a variable-length one (`FixedLenSequenceFeature`,
    /// first dimension -1), the shape of one of its rows.
    dense_shapes: Vec<Vec<usize>>,
    /// Whether each dense feature has a variable first dimension.
    dense_var: Vec<bool>,
    /// `ParseSingleExample`: the keys are attrs and the input a scalar.
    single: Option<(Vec<Vec<u8>>, Vec<Vec<u8>>)>,
    /// `ParseExample` (V1): each key is a scalar input of its own.
    v1: bool,
    /// `ParseExampleV2`'s ragged features: value and row-split types.
    ragged_types: Vec<DataType>,
    ragged_split_types: Vec<DataType>,
}

pub(super) fn type_name(t: DataType) -> &'static str {
    match t {
        DataType::Float => "float",
        DataType::Int64 => "int64",
        _ => "string",
    }
}

/// Whether `f` holds values of dtype `t` (an empty feature fits any), or its type name.
pub(super) fn type_matches(f: &Feature, t: DataType) -> Result<(), &'static str> {
    match (f, t) {
        (Feature::Empty, _)
        | (Feature::Float(_), DataType::Float)
        | (Feature::Int64(_), DataType::Int64)
        | (Feature::Bytes(_), DataType::String) => Ok(()),
        (f, _) => Err(f.type_name()),
    }
}

/// Appends `f`'s values to `out` (of dtype `t`), or the mismatch error text.
pub(super) fn append(f: &Feature, t: DataType, out: &mut Storage) -> Result<(), &'static str> {
    match (f, out) {
        (Feature::Empty, _) => Ok(()),
        (Feature::Float(v), Storage::F32(o)) if t == DataType::Float => {
            o.extend_from_slice(v);
            Ok(())
        }
        (Feature::Int64(v), Storage::I64(o)) if t == DataType::Int64 => {
            o.extend_from_slice(v);
            Ok(())
        }
        (Feature::Bytes(v), Storage::Str(o)) if t == DataType::String => {
            o.extend(v.iter().cloned());
            Ok(())
        }
        (f, _) => Err(f.type_name()),
    }
}

/// Appends a dense default's values `v` to `out`; false when their types differ.
pub(super) fn append_default(out: &mut Storage, v: &Storage) -> bool {
    match (out, v) {
        (Storage::F32(o), Storage::F32(v)) => o.extend_from_slice(v),
        (Storage::I64(o), Storage::I64(v)) => o.extend_from_slice(v),
        (Storage::Str(o), Storage::Str(v)) => o.extend(v.iter().cloned()),
        _ => return false,
    }
    true
}

pub(super) fn empty_storage(t: DataType) -> Storage {
    match t {
        DataType::Float => Storage::F32(Vec::new()),
        DataType::Int64 => Storage::I64(Vec::new()),
        _ => Storage::Str(Vec::new()),
    }
}

pub(super) fn storage_len(s: &Storage) -> usize {
    match s {
        Storage::F32(v) => v.len(),
        Storage::I64(v) => v.len(),
        Storage::Str(v) => v.len(),
        _ => 0,
    }
}

op_kernel! {
    struct ParseExample { cfg: Config }
    fn compute(&self, ctx) {
        let cfg = &self.cfg;
        let serialized = ctx.input(0)?;
        let mut ragged_keys = Vec::new();
        let (sparse_keys, dense_keys, first_default) = match &cfg.single {
            Some((s, d)) => (s.clone(), d.clone(), 1),
            None if cfg.v1 => {
                let (ns, nd) = (cfg.sparse_types.len(), cfg.dense_types.len());
                let mut keys = Vec::with_capacity(ns + nd);
                for i in 0..ns + nd {
                    let t = ctx.input(2 + i)?;
                    let what = if i < ns { "sparse_keys" } else { "dense_keys" };
                    match strings(ctx, what, &t)? {
                        [k] if t.rank() == 0 => keys.push(k.clone()),
                        _ => return Err(ctx.error(format!("Expected {what} to be scalars, got shape {}", t.shape()))),
                    }
                }
                let dense = keys.split_off(ns);
                (keys, dense, 2 + ns + nd)
            }
            None => {
                let keys = |i: usize, what: &str| -> Result<Vec<Vec<u8>>, Status> {
                    let t = ctx.input(i)?;
                    Ok(strings(ctx, what, &t)?.to_vec())
                };
                ragged_keys = keys(4, "ragged_keys")?;
                (keys(2, "sparse_keys")?, keys(3, "dense_keys")?, 5)
            }
        };
        if sparse_keys.len() != cfg.sparse_types.len() || dense_keys.len() != cfg.dense_types.len() {
            return Err(ctx.error(format!(
                "Expected len(sparse_keys) == num_sparse ({}) and len(dense_keys) == len(Tdense) ({})",
                cfg.sparse_types.len(),
                cfg.dense_types.len()
            )));
        }
        if ragged_keys.len() != cfg.ragged_types.len() {
            return Err(ctx.error(format!(
                "Expected len(ragged_keys) == len(ragged_value_types) ({}), got {}",
                cfg.ragged_types.len(),
                ragged_keys.len()
            )));
        }
        let scalar = serialized.rank() == 0;
        if serialized.rank() > 1 || (cfg.single.is_some() && !scalar) {
            return Err(
                ctx.error(format!("Expected serialized to be a scalar or vector, got shape {}", serialized.shape()))
            );
        }
        let records = strings(ctx, "serialized", &serialized)?;
        let examples = records
            .iter()
            .enumerate()
            .map(|(i, r)| parse_example(r).map_err(|e| ctx.error(format!("{e} (example {i})"))))
            .collect::<Result<Vec<HashMap<Vec<u8>, Feature>>, _>>()?;
        let batch = examples.len();
        let key_str = |k: &[u8]| String::from_utf8_lossy(k).into_owned();
        // Dense outputs.
        let mut dense_out = Vec::with_capacity(dense_keys.len());
        for (d, key) in dense_keys.iter().enumerate() {
            let t = cfg.dense_types[d];
            let shape = &cfg.dense_shapes[d];
            let per: usize = shape.iter().product();
            let default = ctx.input(first_default + d)?;
            if default.dtype() != t {
                return Err(ctx.error(format!("dense_defaults[{d}] is {} but Tdense[{d}] is {t}", default.dtype())));
            }
            if cfg.dense_var[d] {
                let key = key_str(key);
                dense_out.push(variable_dense(ctx, &examples, (&key, t, shape), &default, scalar)?);
                continue;
            }
            if default.num_elements() != 0 && default.num_elements() != per {
                return Err(ctx.error(format!(
                    "Key: {}.  dense_defaults[{d}] has {} values but the dense shape needs {per}",
                    key_str(key),
                    default.num_elements()
                )));
            }
            let mut dims = if scalar { vec![] } else { vec![batch] };
            dims.extend_from_slice(shape);
            check_alloc(&dims, t).map_err(|e| ctx.error_with(e))?;
            let mut out = empty_storage(t);
            for (i, ex) in examples.iter().enumerate() {
                match ex.get(key).filter(|f| !matches!(f, Feature::Empty)) {
                    Some(f) => {
                        // TensorFlow checks the type before the count.
                        type_matches(f, t).map_err(|got| {
                            ctx.error(format!(
                                "Name: <unknown>, Key: {}, Index: {i}.  Data types don't match. Data type: {got} but \
                                 expected type: {}",
                                key_str(key),
                                type_name(t)
                            ))
                        })?;
                        if f.len() != per {
                            return Err(ctx.error(format!(
                                "Name: <unknown>, Key: {}, Index: {i}.  Number of {} values != expected.  Values size: \
                                 {} but output shape: {shape:?}",
                                key_str(key),
                                type_name(t),
                                f.len()
                            )));
                        }
                        append(f, t, &mut out).map_err(|got| ctx.error(format!("feature type {got} changed")))?;
                    }
                    None if default.num_elements() == 0 => {
                        return Err(ctx.error(format!(
                            "Name: <unknown>, Feature: {} (data type: {}) is required but could not be found.",
                            key_str(key),
                            type_name(t)
                        )))
                    }
                    None => {
                        if !append_default(&mut out, default.storage()) {
                            return Err(ctx.error(format!("dense_defaults[{d}] has the wrong dtype")));
                        }
                    }
                }
            }
            dense_out.push(Tensor::from_storage(Shape::new(dims), out)?);
        }
        // Sparse outputs.
        let mut sparse_out = Vec::with_capacity(sparse_keys.len());
        for (s, key) in sparse_keys.iter().enumerate() {
            let t = cfg.sparse_types[s];
            let mut vals = empty_storage(t);
            let mut idx = Vec::new();
            let mut widest = 0usize;
            for (i, ex) in examples.iter().enumerate() {
                let Some(f) = ex.get(key) else { continue };
                let before = storage_len(&vals);
                append(f, t, &mut vals).map_err(|got| {
                    ctx.error(format!(
                        "Name: <unknown>, Key: {}, Index: {i}.  Data types don't match. Expected type: {}, Actual \
                         type: {got}",
                        key_str(key),
                        type_name(t)
                    ))
                })?;
                let n = storage_len(&vals) - before;
                widest = widest.max(n);
                for j in 0..n {
                    if !scalar {
                        idx.push(i as i64);
                    }
                    idx.push(j as i64);
                }
            }
            let nnz = storage_len(&vals);
            let r = if scalar { 1 } else { 2 };
            let shape: Vec<i64> = if scalar { vec![widest as i64] } else { vec![batch as i64, widest as i64] };
            sparse_out.push((
                Tensor::new(Shape::new(vec![nnz, r]), idx)?,
                Tensor::from_storage(Shape::new(vec![nnz]), vals)?,
                Tensor::new(Shape::new(vec![r]), shape)?,
            ));
        }
        let ns = sparse_out.len();
        for (k, (i, v, s)) in sparse_out.into_iter().enumerate() {
            ctx.set_output(k, i)?;
            ctx.set_output(ns + k, v)?;
            ctx.set_output(2 * ns + k, s)?;
        }
        let nd = dense_out.len();
        for (k, d) in dense_out.into_iter().enumerate() {
            ctx.set_output(3 * ns + k, d)?;
        }
        let nr = ragged_keys.len();
        for (k, key) in ragged_keys.iter().enumerate() {
            let (values, splits) =
                ragged(ctx, &examples, (&key_str(key), cfg.ragged_types[k]), cfg.ragged_split_types[k], scalar)?;
            ctx.set_output(3 * ns + nd + k, values)?;
            ctx.set_output(3 * ns + nd + nr + k, splits)?;
        }
        Ok(())
    }
}

/// A ragged feature (`tf.io.RaggedFeature`): every example's values one after the other,
/// and the row splits (of `split_type`) where each example's begin; a scalar input has
/// no row splits (TensorFlow's empty vector).
fn ragged(
    ctx: &OpContext,
    examples: &[HashMap<Vec<u8>, Feature>],
    (key, t): (&str, DataType),
    split_type: DataType,
    scalar: bool,
) -> Result<(Tensor, Tensor), Status> {
    let mut values = empty_storage(t);
    let mut splits = vec![0i64];
    for (i, ex) in examples.iter().enumerate() {
        if let Some(f) = ex.get(key.as_bytes()) {
            append(f, t, &mut values).map_err(|got| {
                ctx.error(format!(
                    "Name: <unknown>, Key: {key}, Index: {i}.  Data types don't match. Expected type: {}, Actual \
                     type: {got}",
                    type_name(t)
                ))
            })?;
        }
        splits.push(storage_len(&values) as i64);
    }
    if scalar {
        splits.clear();
    }
    let n = storage_len(&values);
    let values = Tensor::from_storage(Shape::new(vec![n]), values)?;
    let len = splits.len();
    let splits = match split_type {
        DataType::Int32 => {
            let s = splits
                .iter()
                .map(|&v| i32::try_from(v))
                .collect::<Result<Vec<_>, _>>()
                .map_err(|_| ctx.error(format!("Key: {key}.  {n} values do not fit int32 row splits")))?;
            Tensor::new(Shape::new(vec![len]), s)?
        }
        _ => Tensor::new(Shape::new(vec![len]), splits)?,
    };
    Ok((values, splits))
}

/// A variable-length dense feature (`FixedLenSequenceFeature`): each example's values are
/// rows of `row` (a missing feature has none), padded with the default (a scalar; zero or
/// the empty string when none) to the most rows of any example.
fn variable_dense(
    ctx: &OpContext,
    examples: &[HashMap<Vec<u8>, Feature>],
    (key, t, row): (&str, DataType, &[usize]),
    default: &Tensor,
    scalar: bool,
) -> Result<Tensor, Status> {
    if default.num_elements() > 1 {
        return Err(ctx.error(format!(
            "Key: {key}.  The default of a variable-length feature is its padding: one value, got {}",
            default.num_elements()
        )));
    }
    let per: usize = row.iter().product();
    let mut rows = Vec::with_capacity(examples.len());
    for (i, ex) in examples.iter().enumerate() {
        let n = match ex.get(key.as_bytes()) {
            Some(f) => {
                type_matches(f, t).map_err(|got| {
                    ctx.error(format!(
                        "Name: <unknown>, Key: {key}, Index: {i}.  Data types don't match. Data type: {got} but \
                         expected type: {}",
                        type_name(t)
                    ))
                })?;
                f.len()
            }
            None => 0,
        };
        if per == 0 && n > 0 || per > 0 && n % per != 0 {
            return Err(ctx.error(format!(
                "Name: <unknown>, Key: {key}, Index: {i}.  Number of {} values is not a multiple of stride length. \
                 Saw {n} values but output shape is: [?,{}]",
                type_name(t),
                row.iter().map(usize::to_string).collect::<Vec<_>>().join(",")
            )));
        }
        rows.push(n.checked_div(per).unwrap_or(0));
    }
    let most = rows.iter().copied().max().unwrap_or(0);
    let mut dims = if scalar { vec![most] } else { vec![examples.len(), most] };
    dims.extend_from_slice(row);
    check_alloc(&dims, t).map_err(|e| ctx.error_with(e))?;
    let mut out = empty_storage(t);
    for (ex, &r) in examples.iter().zip(&rows) {
        if let Some(f) = ex.get(key.as_bytes()) {
            append(f, t, &mut out).map_err(|got| ctx.error(format!("feature type {got} changed")))?;
        }
        let pad = (most - r) * per;
        match (&mut out, default.storage()) {
            (Storage::F32(o), Storage::F32(v)) => o.extend(std::iter::repeat_n(v.first().copied().unwrap_or(0.0), pad)),
            (Storage::I64(o), Storage::I64(v)) => o.extend(std::iter::repeat_n(v.first().copied().unwrap_or(0), pad)),
            (Storage::Str(o), Storage::Str(v)) => {
                o.extend(std::iter::repeat_n(v.first().cloned().unwrap_or_default(), pad))
            }
            _ => return Err(ctx.error(format!("Key: {key}.  the default has the wrong dtype"))),
        }
    }
    Tensor::from_storage(Shape::new(dims), out)
}

fn config(n: &NodeDef, single: bool) -> Result<Config, Status> {
    let list = |k: &str| if n.has_attr(k) { n.attr_list_type(k) } else { Ok(vec![]) };
    let sparse_types = list("sparse_types")?;
    let dense_types = list("Tdense")?;
    let ragged_types = list("ragged_value_types")?;
    let ragged_split_types = list("ragged_split_types")?;
    if ragged_types.len() != ragged_split_types.len() {
        return Err(n.node_error(format!(
            "len(ragged_value_types) {} != len(ragged_split_types) {}",
            ragged_types.len(),
            ragged_split_types.len()
        )));
    }
    if let Some(t) = ragged_split_types.iter().find(|t| !matches!(t, DataType::Int32 | DataType::Int64)) {
        return Err(n.node_error(format!("ragged_split_types must be int32 or int64, got {t}")));
    }
    for &t in sparse_types.iter().chain(&dense_types).chain(&ragged_types) {
        if !matches!(t, DataType::Float | DataType::Int64 | DataType::String) {
            return Err(n.node_error(format!("feature types must be float, int64 or string, got {t}")));
        }
    }
    let shapes = match n.attr_value("dense_shapes").ok().and_then(|v| v.value.as_ref()) {
        Some(AV::List(l)) => l.shape.iter().map(shape_proto_dims).collect::<Vec<_>>(),
        _ => vec![],
    };
    if shapes.len() != dense_types.len() {
        return Err(n.node_error(format!("len(dense_shapes) {} != len(Tdense) {}", shapes.len(), dense_types.len())));
    }
    let mut dense_shapes = Vec::with_capacity(shapes.len());
    let mut dense_var = Vec::with_capacity(shapes.len());
    for s in shapes {
        let mut dims = s.ok_or_else(|| n.node_error("dense_shapes must have a known rank"))?;
        // A variable first dimension (FixedLenSequenceFeature); every other one known.
        let var = dims.first() == Some(&-1);
        if var {
            dims.remove(0);
        }
        if dims.iter().any(|&d| d < 0) {
            return Err(n.node_error(format!(
                "dense_shapes may have an unknown size only in their first dimension, got {dims:?}"
            )));
        }
        dense_shapes.push(dims.into_iter().map(|d| d as usize).collect());
        dense_var.push(var);
    }
    let single = if single {
        let keys = |k: &str| -> Result<Vec<Vec<u8>>, Status> {
            Ok(n.attr_list_string(k)?.into_iter().map(String::into_bytes).collect())
        };
        Some((keys("sparse_keys")?, keys("dense_keys")?))
    } else {
        None
    };
    Ok(Config {
        sparse_types,
        dense_types,
        dense_shapes,
        dense_var,
        single,
        v1: n.op == "ParseExample",
        ragged_types,
        ragged_split_types,
    })
}

pub(crate) fn register(r: &mut KernelRegistry) {
    r.add("ParseExampleV2", |n| Ok(Box::new(ParseExample { cfg: config(n, false)? })));
    r.add("ParseExample", |n| Ok(Box::new(ParseExample { cfg: config(n, false)? })));
    r.add("ParseSingleExample", |n| Ok(Box::new(ParseExample { cfg: config(n, true)? })));
}
