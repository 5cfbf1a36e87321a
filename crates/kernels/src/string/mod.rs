//! String kernels. Here: the ones TensorFlow's `Saver` graphs use: `StringJoin`,
//! `StaticRegexFullMatch`, `RegexFullMatch`, `ShardedFilename` and `ShardedFilespec` (the
//! sharded saver builds its temporary shard prefix with `StringJoin(prefix,
//! Select(StaticRegexFullMatch(prefix, "^s3://.*"), ".part", "_temp/part"))` and names each
//! shard with `ShardedFilename`). In the submodules: hash buckets (`hash_bucket.rs`, with
//! FarmHash and SipHash in `farmhash.rs`), case and strip (`case.rs`), splits (`split.rs`),
//! `Substr`, conversions and base64 (`convert.rs`), regex replacement, `DecodeCSV` and the
//! `tf.train.Example` parsers (`parse_example.rs`, `example_proto.rs`).
//! Strings are byte strings, as in TensorFlow; patterns use RE2 syntax, which the `regex`
//! crate follows.

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{NodeAttrs, Shape, Status, Storage, Tensor};
use regex::bytes::Regex;

use crate::array::util::collect_vec;
use crate::{KernelRegistry, OpContext, OpKernel};

mod case;
mod convert;
mod csv;
mod example_proto;
#[doc(hidden)]
pub mod farmhash;
mod fingerprint;
pub(crate) mod format;
mod hash_bucket;
mod ngrams;
mod parse_example;
mod parse_sequence;
mod reduce_join;
mod regex_replace;
mod segment_join;
mod split;
mod substr;
mod unicode;
mod unicode_script;

pub use farmhash::{fingerprint64, siphash24};

pub(crate) fn strings<'a>(ctx: &OpContext, what: &str, t: &'a Tensor) -> Result<&'a [Vec<u8>], Status> {
    match t.storage() {
        Storage::Str(v) => Ok(v),
        _ => Err(ctx.error(format!("{what} must be a string tensor, got {}", t.dtype()))),
    }
}

/// Output bytes between two budget checks while strings grow.
pub(crate) const CHECK_EVERY: usize = 1 << 20;

/// The elements of a string tensor being built: room for them from the fallible allocation
/// path, and the bytes of the strings checked against the task's memory budget as they grow
/// (every [`CHECK_EVERY`] bytes), for ops whose strings can be far longer than their input's
/// (a width, a separator or a padding from an attr repeated for every element).
pub(crate) struct StringsOut {
    v: Vec<Vec<u8>>,
    bytes: usize,
    next_check: usize,
    op: &'static str,
}

impl StringsOut {
    /// Room for the strings of a tensor of `dims`, made by `op`.
    pub(crate) fn new(dims: &[usize], op: &'static str) -> Result<StringsOut, Status> {
        Ok(StringsOut { v: ferroflow_core::alloc::with_capacity(dims)?, bytes: 0, next_check: CHECK_EVERY, op })
    }

    pub(crate) fn push(&mut self, s: Vec<u8>) -> Result<(), Status> {
        self.bytes = self.bytes.saturating_add(s.len());
        if self.bytes >= self.next_check {
            let (grown, op) = (self.bytes, self.op);
            ferroflow_core::check_alloc_bytes(Some(grown as u64), || {
                format!("the strings {op} makes ({grown} bytes and growing)")
            })?;
            self.next_check = grown.saturating_add(CHECK_EVERY);
        }
        self.v.push(s);
        Ok(())
    }

    pub(crate) fn into_vec(self) -> Vec<Vec<u8>> {
        self.v
    }
}

#[doc(hidden)]
pub fn string_tensor(shape: Shape, v: Vec<Vec<u8>>) -> Result<Tensor, Status> {
    Tensor::from_storage(shape, Storage::Str(v))
}

op_kernel! {
    /// `StringJoin`: joins its inputs element-wise with `separator`; scalars are broadcast, the
    /// other inputs must share one shape.
    struct StringJoin { separator: Vec<u8> }
    fn compute(&self, ctx) {
        let inputs = (0..ctx.num_inputs()).map(|i| ctx.input(i)).collect::<Result<Vec<_>, _>>()?;
        let mut shape: Option<Shape> = None;
        for (i, t) in inputs.iter().enumerate() {
            if t.rank() == 0 {
                continue;
            }
            match &shape {
                None => shape = Some(t.shape().clone()),
                Some(s) if s == t.shape() => {}
                Some(s) => {
                    return Err(ctx.error(format!(
                        "Input shapes do not match: {s} vs. {} (input {i}); inputs must be scalars or share one \
                         shape",
                        t.shape()
                    )))
                }
            }
        }
        let shape = shape.unwrap_or_else(|| Shape::new(Vec::<usize>::new()));
        let n: usize = shape.num_elements();
        let parts = inputs
            .iter()
            .enumerate()
            .map(|(i, t)| strings(ctx, &format!("input {i}"), t))
            .collect::<Result<Vec<_>, _>>()?;
        let pick = |i: usize, k: usize| -> &[u8] {
            let p = &parts[i];
            if p.len() == 1 && inputs[i].rank() == 0 {
                &p[0]
            } else {
                &p[k]
            }
        };
        // The joined sizes first: a few large inputs repeated many times must be refused
        // before anything is built.
        let seps = self.separator.len().checked_mul(parts.len().saturating_sub(1));
        let lens: Option<Vec<usize>> =
            (0..n).map(|k| (0..parts.len()).try_fold(seps?, |a, i| a.checked_add(pick(i, k).len()))).collect();
        let total = lens
            .as_ref()
            .and_then(|l| l.iter().try_fold(n.checked_mul(std::mem::size_of::<Vec<u8>>())?, |a, &x| a.checked_add(x)));
        ferroflow_core::check_alloc_bytes(total.map(|t| t as u64), || {
            format!("the {n} strings StringJoin makes of its {} inputs", parts.len())
        })?;
        let mut out = ferroflow_core::alloc::with_capacity(&[n])?;
        for (k, len) in lens.unwrap_or_default().into_iter().enumerate() {
            let mut s = Vec::new();
            s.try_reserve_exact(len).map_err(|_| {
                Status::resource_exhausted(format!("OOM when allocating a joined string of {len} bytes"))
            })?;
            for i in 0..parts.len() {
                if i > 0 {
                    s.extend_from_slice(&self.separator);
                }
                s.extend_from_slice(pick(i, k));
            }
            out.push(s);
        }
        ctx.set_output(0, string_tensor(shape, out)?)
    }
}

fn string_join_factory(n: &NodeDef) -> Result<Box<dyn OpKernel>, Status> {
    let separator = if n.has_attr("separator") { n.attr_string("separator")?.into_bytes() } else { vec![] };
    Ok(Box::new(StringJoin { separator }))
}

/// A pattern that must match a whole string.
fn full_match(pattern: &str) -> Result<Regex, String> {
    Regex::new(&format!("^(?:{pattern})$")).map_err(|e| format!("Invalid pattern: {pattern}, error: {e}"))
}

fn match_all(ctx: &mut OpContext, re: &Regex) -> Result<(), Status> {
    let t = ctx.input(0)?;
    let out = collect_vec(t.dims(), strings(ctx, "input", &t)?.iter().map(|s| re.is_match(s)))?;
    ctx.set_output(0, Tensor::from_storage(t.shape().clone(), Storage::Bool(out))?)
}

op_kernel! {
    /// `StaticRegexFullMatch`: whether each string matches the `pattern` attr entirely.
    struct StaticRegexFullMatch { re: Regex }
    fn compute(&self, ctx) {
        match_all(ctx, &self.re)
    }
}

fn static_regex_factory(n: &NodeDef) -> Result<Box<dyn OpKernel>, Status> {
    let re = full_match(&n.attr_string("pattern")?).map_err(|e| n.node_error(e))?;
    Ok(Box::new(StaticRegexFullMatch { re }))
}

op_kernel! {
    /// `RegexFullMatch`: as `StaticRegexFullMatch` with the pattern a scalar input.
    struct RegexFullMatch;
    fn compute(&self, ctx) {
        let p = ctx.input_of_rank(1, 0, "Pattern must be scalar, but received ")?;
        let pattern = String::from_utf8_lossy(&strings(ctx, "pattern", &p)?[0]).into_owned();
        let re = full_match(&pattern).map_err(|e| ctx.error(e))?;
        match_all(ctx, &re)
    }
}

fn scalar_of<'a>(ctx: &OpContext, what: &str, t: &'a Tensor) -> Result<&'a Tensor, Status> {
    if t.rank() != 0 {
        return Err(ctx.error(format!("{what} must be a scalar, got shape {}", t.shape())));
    }
    Ok(t)
}

op_kernel! {
    /// `ShardedFilename`: `<basename>-<shard, 5 digits>-of-<num_shards, 5 digits>`.
    struct ShardedFilename;
    fn compute(&self, ctx) {
        let (b, s, n) = (ctx.input(0)?, ctx.input(1)?, ctx.input(2)?);
        let base = strings(ctx, "basename", scalar_of(ctx, "basename", &b)?)?[0].clone();
        let shard = scalar_of(ctx, "shard", &s)?.scalar_value::<i32>()?;
        let num = scalar_of(ctx, "num_shards", &n)?.scalar_value::<i32>()?;
        let mut name = base;
        name.extend_from_slice(format!("-{shard:05}-of-{num:05}").as_bytes());
        ctx.set_output(0, string_tensor(Shape::new(Vec::<usize>::new()), vec![name])?)
    }
}

op_kernel! {
    /// `ShardedFilespec`: `<basename>-?????-of-<num_shards, 5 digits>`.
    struct ShardedFilespec;
    fn compute(&self, ctx) {
        let (b, n) = (ctx.input(0)?, ctx.input(1)?);
        let base = strings(ctx, "basename", scalar_of(ctx, "basename", &b)?)?[0].clone();
        let num = scalar_of(ctx, "num_shards", &n)?.scalar_value::<i32>()?;
        let mut name = base;
        name.extend_from_slice(format!("-?????-of-{num:05}").as_bytes());
        ctx.set_output(0, string_tensor(Shape::new(Vec::<usize>::new()), vec![name])?)
    }
}

pub(crate) fn register(r: &mut KernelRegistry) {
    r.add("StringJoin", string_join_factory);
    r.add("StaticRegexFullMatch", static_regex_factory);
    r.add("RegexFullMatch", |_| Ok(Box::new(RegexFullMatch)));
    r.add("ShardedFilename", |_| Ok(Box::new(ShardedFilename)));
    r.add("ShardedFilespec", |_| Ok(Box::new(ShardedFilespec)));
    ferroflow_core::register_modules! { r: case, convert, csv, fingerprint, format, hash_bucket, ngrams, parse_example, parse_sequence, reduce_join, regex_replace, segment_join, split, substr, unicode, unicode_script }
}
