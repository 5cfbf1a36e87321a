//! `ParseSequenceExampleV2`: `tf.train.SequenceExample` protos (what
//! `tf.io.parse_sequence_example` and `parse_single_sequence_example` build) to tensors. The
//! context features parse as `ParseExampleV2`'s (dense with defaults, sparse, ragged); each
//! feature list is a sequence of features, one per time step, parsed to a dense tensor
//! padded to the longest sequence (with its lengths), a sparse tensor indexed by (example,
//! step, value), or a ragged tensor of two levels.

use ferroflow_core::proto::attr_value::Value as AV;
use ferroflow_core::proto::NodeDef;
use ferroflow_core::{shape_proto_dims, DataType, NodeAttrs, Status, Tensor};

use super::example_proto::{parse_sequence_example, Feature};
use super::parse_example::type_name;
use super::strings;
use crate::{KernelRegistry, OpContext, OpKernel};

struct Config {
    ctx_sparse: Vec<DataType>,
    ctx_dense: Vec<DataType>,
    ctx_dense_shapes: Vec<Vec<usize>>,
    /// Value and row-split types of each ragged context feature.
    ctx_ragged: Vec<(DataType, DataType)>,
    fl_sparse: Vec<DataType>,
    fl_dense: Vec<DataType>,
    /// The shape of one time step of each dense feature list.
    fl_dense_shapes: Vec<Vec<usize>>,
    fl_ragged: Vec<(DataType, DataType)>,
}

mod outputs;

use outputs::{context_dense, dims_text, key_text, list_dense, ragged, sparse, Batch};

struct ParseSequenceExample {
    cfg: Config,
}

fn key_list(ctx: &OpContext, i: usize, what: &str, want: usize) -> Result<Vec<Vec<u8>>, Status> {
    let t = ctx.input(i)?;
    let keys = strings(ctx, what, &t)?.to_vec();
    if keys.len() != want {
        return Err(ctx.error(format!("Expected len({what}) to be {want} (from the attrs), got {}", keys.len())));
    }
    Ok(keys)
}

/// TensorFlow's check that no key is parsed two ways (a dense key that is also ragged is
/// reported as sparse, as TensorFlow words it).
fn check_disjoint(ctx: &OpContext, what: &str, [dense, sparse, ragged]: [&[Vec<u8>]; 3]) -> Result<(), Status> {
    let clash = |a: &[Vec<u8>], b: &[Vec<u8>]| a.iter().find(|k| b.contains(k)).map(|k| key_text(k));
    let found = clash(dense, sparse)
        .or_else(|| clash(dense, ragged))
        .map(|k| (k, "dense and sparse"))
        .or_else(|| clash(sparse, ragged).map(|k| (k, "sparse and ragged")));
    match found {
        Some((k, how)) => Err(ctx.error(format!("{what} {k} cannot be both {how}"))),
        None => Ok(()),
    }
}

impl OpKernel for ParseSequenceExample {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let cfg = &self.cfg;
        let serialized = ctx.input(0)?;
        if serialized.rank() > 1 {
            return Err(ctx.error(format!(
                "Expected serialized to be a scalar or vector, got shape: [{}]",
                dims_text(serialized.dims())
            )));
        }
        let names = ctx.input(1)?;
        let names: Vec<String> = strings(ctx, "debug_name", &names)?.iter().map(|n| key_text(n)).collect();
        let ctx_sparse_keys = key_list(ctx, 2, "context_sparse_keys", cfg.ctx_sparse.len())?;
        let ctx_dense_keys = key_list(ctx, 3, "context_dense_keys", cfg.ctx_dense.len())?;
        let ctx_ragged_keys = key_list(ctx, 4, "context_ragged_keys", cfg.ctx_ragged.len())?;
        let fl_sparse_keys = key_list(ctx, 5, "feature_list_sparse_keys", cfg.fl_sparse.len())?;
        let fl_dense_keys = key_list(ctx, 6, "feature_list_dense_keys", cfg.fl_dense.len())?;
        let fl_ragged_keys = key_list(ctx, 7, "feature_list_ragged_keys", cfg.fl_ragged.len())?;
        let assumed = ctx.input(8)?;
        let assumed = assumed.as_slice::<bool>().map_err(|e| ctx.error_with(e))?.to_vec();
        if assumed.len() != cfg.fl_dense.len() {
            return Err(ctx.error(format!(
                "Expected feature_list_dense_missing_assumed_empty to have {} values, got {}",
                cfg.fl_dense.len(),
                assumed.len()
            )));
        }
        check_disjoint(ctx, "Context feature", [&ctx_dense_keys, &ctx_sparse_keys, &ctx_ragged_keys])?;
        check_disjoint(ctx, "Sequence feature", [&fl_dense_keys, &fl_sparse_keys, &fl_ragged_keys])?;
        let mut defaults = Vec::with_capacity(cfg.ctx_dense.len());
        for (d, shape) in cfg.ctx_dense_shapes.iter().enumerate() {
            let def = ctx.input(9 + d)?;
            if def.dtype() != cfg.ctx_dense[d] {
                return Err(ctx.error(format!(
                    "context_dense_defaults[{d}] is {} but Tcontext_dense[{d}] is {}",
                    def.dtype(),
                    cfg.ctx_dense[d]
                )));
            }
            if def.num_elements() != 0 && def.dims() != &shape[..] {
                return Err(ctx.error(format!(
                    "default_value[{d}].shape() == [{}] != context_dense_shapes[{d}] == [{}]",
                    dims_text(def.dims()),
                    dims_text(shape)
                )));
            }
            defaults.push(def);
        }
        let records = strings(ctx, "serialized", &serialized)?;
        if !names.is_empty() && names.len() != records.len() {
            return Err(ctx.error("example_names must be empty or have the correct number of elements"));
        }
        let mut examples = Vec::with_capacity(records.len());
        for (i, r) in records.iter().enumerate() {
            let name = names.get(i).map_or("<unknown>", String::as_str);
            examples.push(
                parse_sequence_example(r)
                    .map_err(|_| ctx.error(format!("Invalid protocol message input, example id: {name}")))?,
            );
        }
        let batch = Batch { examples, names, scalar: serialized.rank() == 0 };
        let outputs = self.outputs(ctx, &batch, [&ctx_sparse_keys, &ctx_dense_keys, &ctx_ragged_keys], &defaults)?;
        let lists = self.list_outputs(ctx, &batch, [&fl_sparse_keys, &fl_dense_keys, &fl_ragged_keys], &assumed)?;
        for (k, t) in outputs.into_iter().chain(lists).enumerate() {
            ctx.set_output(k, t)?;
        }
        Ok(())
    }
}

impl ParseSequenceExample {
    /// The context outputs in TensorFlow's order: sparse indices, values, shapes; dense
    /// values; ragged values, row splits.
    fn outputs(
        &self,
        ctx: &OpContext,
        batch: &Batch,
        [sparse_keys, dense_keys, ragged_keys]: [&[Vec<u8>]; 3],
        defaults: &[Tensor],
    ) -> Result<Vec<Tensor>, Status> {
        let cfg = &self.cfg;
        let context_rows = |key: &[u8]| -> Vec<Vec<&Feature>> {
            batch.examples.iter().map(|ex| ex.context.get(key).into_iter().collect()).collect()
        };
        let type_error =
            |key: String, t: DataType| type_mismatch(ctx, batch, t, move |_| format!("Context feature: {key}"));
        let parts: [Vec<Tensor>; 3] = by_part(
            sparse_keys
                .iter()
                .zip(&cfg.ctx_sparse)
                .map(|(key, &t)| sparse(batch, &context_rows(key), t, false, &type_error(key_text(key), t))),
        )?;
        let mut out: Vec<Tensor> = parts.into_iter().flatten().collect();
        for (d, key) in dense_keys.iter().enumerate() {
            let spec = (cfg.ctx_dense[d], &cfg.ctx_dense_shapes[d][..]);
            out.push(context_dense(ctx, batch, &key_text(key), spec, &defaults[d])?);
        }
        let [values, splits]: [Vec<Tensor>; 2] =
            by_part(ragged_keys.iter().zip(&cfg.ctx_ragged).map(|(key, &(t, st))| {
                let k = key_text(key);
                ragged(ctx, batch, &context_rows(key), (&k, t, st), false, &type_error(k.clone(), t))
            }))?;
        out.extend(values);
        out.extend(splits);
        Ok(out)
    }

    /// The feature-list outputs in TensorFlow's order: sparse indices, values, shapes;
    /// dense values, lengths; ragged values, outer splits, inner splits.
    fn list_outputs(
        &self,
        ctx: &OpContext,
        batch: &Batch,
        [sparse_keys, dense_keys, ragged_keys]: [&[Vec<u8>]; 3],
        assumed: &[bool],
    ) -> Result<Vec<Tensor>, Status> {
        let cfg = &self.cfg;
        let list_rows = |key: &[u8]| -> Vec<Vec<&Feature>> {
            batch.examples.iter().map(|ex| ex.lists.get(key).map(|l| l.iter().collect()).unwrap_or_default()).collect()
        };
        let type_error = |key: String, t: DataType| {
            type_mismatch(ctx, batch, t, move |r| format!("Feature list: {key}, Index: {r}"))
        };
        let sparse_parts: [Vec<Tensor>; 3] = by_part(
            sparse_keys
                .iter()
                .zip(&cfg.fl_sparse)
                .map(|(key, &t)| sparse(batch, &list_rows(key), t, true, &type_error(key_text(key), t))),
        )?;
        let (mut dense, mut lengths) = (Vec::new(), Vec::new());
        for (d, key) in dense_keys.iter().enumerate() {
            let spec = (cfg.fl_dense[d], &cfg.fl_dense_shapes[d][..]);
            let (v, l) = list_dense(ctx, batch, &key_text(key), spec, assumed[d])?;
            dense.push(v);
            lengths.push(l);
        }
        let ragged_parts: [Vec<Tensor>; 3] = by_part(ragged_keys.iter().zip(&cfg.fl_ragged).map(|(key, &(t, st))| {
            let k = key_text(key);
            ragged(ctx, batch, &list_rows(key), (&k, t, st), true, &type_error(k.clone(), t))
        }))?;
        let mut out: Vec<Tensor> = sparse_parts.into_iter().flatten().collect();
        out.extend(dense);
        out.extend(lengths);
        out.extend(ragged_parts.into_iter().flatten());
        Ok(out)
    }
}

/// The error for a feature of `batch`'s example `i` whose values are not of type `t`, its
/// place (feature and, in a list, step `r`) spelled by `place(r)`.
fn type_mismatch<'a>(
    ctx: &'a OpContext,
    batch: &'a Batch,
    t: DataType,
    place: impl Fn(usize) -> String + 'a,
) -> impl Fn(usize, usize) -> Status + 'a {
    move |i, r| {
        ctx.error(format!(
            "Name: {}, {}.  Data types don't match. Expected type: {}",
            batch.name(i),
            place(r),
            type_name(t)
        ))
    }
}

/// The parts of each feature's output (sparse: indices, values, shapes), grouped by part:
/// every feature's first part, then every feature's second, and so on.
fn by_part<const N: usize, P: IntoIterator<Item = Tensor>>(
    features: impl Iterator<Item = Result<P, Status>>,
) -> Result<[Vec<Tensor>; N], Status> {
    let mut parts: [Vec<Tensor>; N] = std::array::from_fn(|_| Vec::new());
    for feature in features {
        for (part, tensor) in parts.iter_mut().zip(feature?) {
            part.push(tensor);
        }
    }
    Ok(parts)
}

fn config(n: &NodeDef) -> Result<Config, Status> {
    let list = |k: &str| if n.has_attr(k) { n.attr_list_type(k) } else { Ok(vec![]) };
    let count = |k: &str| if n.has_attr(k) { n.attr_int(k) } else { Ok(0) };
    let features = |k: &str| -> Result<Vec<DataType>, Status> {
        let v = list(k)?;
        if let Some(t) = v.iter().find(|t| !matches!(t, DataType::Float | DataType::Int64 | DataType::String)) {
            return Err(n.node_error(format!("{k} must be float, int64 or string, got {t}")));
        }
        Ok(v)
    };
    let ragged = |values: &str, splits: &str| -> Result<Vec<(DataType, DataType)>, Status> {
        let (v, s) = (features(values)?, list(splits)?);
        if v.len() != s.len() {
            return Err(n.node_error(format!("len({values}) {} != len({splits}) {}", v.len(), s.len())));
        }
        if let Some(t) = s.iter().find(|t| !matches!(t, DataType::Int32 | DataType::Int64)) {
            return Err(n.node_error(format!("{splits} must be int32 or int64, got {t}")));
        }
        Ok(v.into_iter().zip(s).collect())
    };
    let shapes = |k: &str, want: usize| -> Result<Vec<Vec<usize>>, Status> {
        let protos = match n.attr_value(k).ok().and_then(|v| v.value.as_ref()) {
            Some(AV::List(l)) => l.shape.iter().map(shape_proto_dims).collect::<Vec<_>>(),
            _ => vec![],
        };
        if protos.len() != want {
            return Err(n.node_error(format!("len({k}) {} != the number of its features {want}", protos.len())));
        }
        protos
            .into_iter()
            .map(|d| match d {
                Some(d) if d.iter().all(|&x| x >= 0) => Ok(d.into_iter().map(|x| x as usize).collect()),
                d => Err(n.node_error(format!("{k} must be fully defined, got {d:?}"))),
            })
            .collect()
    };
    let ctx_sparse = features("context_sparse_types")?;
    let fl_sparse = features("feature_list_sparse_types")?;
    let fl_dense = features("feature_list_dense_types")?;
    for (k, have) in [("Ncontext_sparse", ctx_sparse.len()), ("Nfeature_list_sparse", fl_sparse.len())] {
        if count(k)? != have as i64 {
            return Err(n.node_error(format!("{k} {} != the number of its types {have}", count(k)?)));
        }
    }
    if count("Nfeature_list_dense")? != fl_dense.len() as i64 {
        return Err(n.node_error(format!(
            "Nfeature_list_dense {} != len(feature_list_dense_types) {}",
            count("Nfeature_list_dense")?,
            fl_dense.len()
        )));
    }
    let ctx_dense = features("Tcontext_dense")?;
    Ok(Config {
        ctx_dense_shapes: shapes("context_dense_shapes", ctx_dense.len())?,
        ctx_dense,
        ctx_sparse,
        ctx_ragged: ragged("context_ragged_value_types", "context_ragged_split_types")?,
        fl_dense_shapes: shapes("feature_list_dense_shapes", fl_dense.len())?,
        fl_dense,
        fl_sparse,
        fl_ragged: ragged("feature_list_ragged_value_types", "feature_list_ragged_split_types")?,
    })
}

pub(crate) fn register(r: &mut KernelRegistry) {
    r.add("ParseSequenceExampleV2", |n| Ok(Box::new(ParseSequenceExample { cfg: config(n)? })));
}
