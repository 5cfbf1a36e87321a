//! String ops that TensorFlow's `Saver` graphs use: `StringJoin`, `StaticRegexFullMatch`,
//! `RegexFullMatch`, `ShardedFilename`, `ShardedFilespec`; and two of input pipelines:
//! `StringLength`, `DecodeRaw`, `DecodeCompressed`. The preprocessing string ops are in `text.rs`, the parsers
//! (`ParseExampleV2`, `ParseSingleExample`, `DecodeCSV`) in `parse.rs`.

mod parse;
mod parse_sequence;
mod text;
mod text_ext;

pub use text::*;

use ferroflow_core::Status;

use crate::op_def::op;
use crate::registry::OpRegistry;
use crate::shape_fn::{scalar, unchanged, Dims, ShapeCtx};

/// The shape shared by the non-scalar inputs (scalars broadcast); unknown when an input's
/// shape is.
fn join_shape(c: &ShapeCtx) -> Result<Vec<Dims>, Status> {
    let mut out: Vec<i64> = vec![];
    for i in 0..c.inputs.len() {
        match c.input(i) {
            None => return Ok(vec![None]),
            Some(d) if d.is_empty() => {}
            Some(d) if out.is_empty() => out = d,
            Some(d) if d.len() != out.len() => {
                return Err(c.error(format!("inputs must be scalars or share one shape: {out:?} vs. {d:?}")))
            }
            Some(_) => {}
        }
    }
    Ok(vec![Some(out)])
}

pub(crate) fn register(r: &mut OpRegistry) {
    ferroflow_core::register_modules! { r: parse, parse_sequence, text, text_ext }
    r.add(
        op("StringJoin")
            .input("inputs: N * string")
            .output("output: string")
            .attr("N: int >= 0")
            .attr("separator: string = ''")
            .shape_fn(join_shape)
            .build(),
    );
    r.add(
        op("StaticRegexFullMatch")
            .input("input: string")
            .output("output: bool")
            .attr("pattern: string")
            .shape_fn(unchanged)
            .build(),
    );
    r.add(
        op("RegexFullMatch")
            .input("input: string")
            .input("pattern: string")
            .output("output: bool")
            .shape_fn(unchanged)
            .build(),
    );
    r.add(
        op("ShardedFilename")
            .input("basename: string")
            .input("shard: int32")
            .input("num_shards: int32")
            .output("filename: string")
            .shape_fn(scalar)
            .build(),
    );
    r.add(
        op("ShardedFilespec")
            .input("basename: string")
            .input("num_shards: int32")
            .output("filename: string")
            .shape_fn(scalar)
            .build(),
    );
    r.add(
        op("StringLength")
            .input("input: string")
            .output("output: int32")
            .attr("unit: {'BYTE', 'UTF8_CHAR'} = 'BYTE'")
            .shape_fn(unchanged)
            .build(),
    );
    r.add(
        op("DecodeRaw")
            .input("bytes: string")
            .output("output: out_type")
            .attr("out_type: {half, bfloat16, float, double, int32, uint16, uint8, int16, int8, int64, complex64, complex128, bool}")
            .attr("little_endian: bool = true")
            .shape_fn(decode_raw_shape)
            .build(),
    );
    r.add(
        op("DecodeCompressed")
            .input("bytes: string")
            .output("output: string")
            .attr("compression_type: string = ''")
            .shape_fn(unchanged)
            .build(),
    );
}

/// `DecodeCompressed` of each string of `bytes` ("", "ZLIB" or "GZIP").
pub fn decode_compressed(
    s: &crate::scope::Scope,
    bytes: crate::scope::Output,
    compression_type: &str,
) -> crate::scope::Output {
    s.op("DecodeCompressed")
        .input(bytes)
        .attr("compression_type", ferroflow_core::attr::string(compression_type))
        .build()
        .output(0)
}

/// `DecodeRaw`: the input's shape and one more dimension (the values per string).
fn decode_raw_shape(c: &ShapeCtx) -> Result<Vec<Dims>, Status> {
    Ok(vec![c.input(0).map(|mut d| {
        d.push(-1);
        d
    })])
}
