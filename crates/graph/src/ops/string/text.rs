//! String ops of input pipelines and preprocessing: the hash buckets
//! (`StringToHashBucket{,Fast,Strong}`), `StringLower`/`StringUpper`/`StringStrip`,
//! `StringSplit`/`StringSplitV2`, `Substr`, `StringToNumber`, `AsString`,
//! `EncodeBase64`/`DecodeBase64`, `RegexReplace`/`StaticRegexReplace`.

use ferroflow_core::{attr, DataType, Status};

use crate::op_def::op;
use crate::ops::op_output;
use crate::registry::OpRegistry;
use crate::scope::{Output, Scope};
use crate::shape_fn::{unchanged, Dims, ShapeCtx};

type R = Result<Vec<Dims>, Status>;

fn split_shape(c: &ShapeCtx) -> R {
    if let Some(d) = c.input(0) {
        if d.len() != 1 {
            return Err(c.error(format!("Shape must be rank 1 but is rank {}", d.len())));
        }
    }
    Ok(vec![Some(vec![-1, 2]), Some(vec![-1]), Some(vec![2])])
}

pub(crate) fn register(r: &mut OpRegistry) {
    for name in ["StringToHashBucketFast", "StringToHashBucket", "StringToHashBucketStrong"] {
        let input = if name == "StringToHashBucket" { "string_tensor: string" } else { "input: string" };
        let b = op(name).input(input).output("output: int64").attr("num_buckets: int >= 1");
        r.add(b.when(name == "StringToHashBucketStrong", |b| b.attr("key: list(int)")).shape_fn(unchanged).build());
    }
    for name in ["StringLower", "StringUpper"] {
        r.add(
            op(name)
                .input("input: string")
                .output("output: string")
                .attr("encoding: string = ''")
                .shape_fn(unchanged)
                .build(),
        );
    }
    r.add(op("StringStrip").input("input: string").output("output: string").shape_fn(unchanged).build());
    r.add(
        op("StringSplit")
            .input("input: string")
            .input("delimiter: string")
            .output("indices: int64")
            .output("values: string")
            .output("shape: int64")
            .attr("skip_empty: bool = true")
            .shape_fn(split_shape)
            .build(),
    );
    r.add(
        op("StringSplitV2")
            .input("input: string")
            .input("sep: string")
            .output("indices: int64")
            .output("values: string")
            .output("shape: int64")
            .attr("maxsplit: int = -1")
            .shape_fn(split_shape)
            .build(),
    );
    r.add(
        op("Substr")
            .input("input: string")
            .input("pos: T")
            .input("len: T")
            .output("output: string")
            .attr("T: {int32, int64}")
            .attr("unit: {'BYTE', 'UTF8_CHAR'} = 'BYTE'")
            .shape_fn(unchanged)
            .build(),
    );
    r.add(
        op("StringToNumber")
            .input("string_tensor: string")
            .output("output: out_type")
            .attr("out_type: {float, double, int32, int64, uint32, uint64} = DT_FLOAT")
            .shape_fn(unchanged)
            .build(),
    );
    r.add(
        op("AsString")
            .input("input: T")
            .output("output: string")
            .attr(
                "T: {float, double, int32, uint8, int16, int8, int64, bfloat16, uint16, half, uint32, uint64, \
                 complex64, complex128, bool, variant, string}",
            )
            .attr("precision: int = -1")
            .attr("scientific: bool = false")
            .attr("shortest: bool = false")
            .attr("width: int = -1")
            .attr("fill: string = ''")
            .shape_fn(unchanged)
            .build(),
    );
    r.add(
        op("EncodeBase64")
            .input("input: string")
            .output("output: string")
            .attr("pad: bool = false")
            .shape_fn(unchanged)
            .build(),
    );
    r.add(op("DecodeBase64").input("input: string").output("output: string").shape_fn(unchanged).build());
    r.add(
        op("RegexReplace")
            .input("input: string")
            .input("pattern: string")
            .input("rewrite: string")
            .output("output: string")
            .attr("replace_global: bool = true")
            .shape_fn(unchanged)
            .build(),
    );
    r.add(
        op("StaticRegexReplace")
            .input("input: string")
            .output("output: string")
            .attr("pattern: string")
            .attr("rewrite: string")
            .attr("replace_global: bool = true")
            .shape_fn(unchanged)
            .build(),
    );
}

/// `StringToHashBucketFast`: FarmHash Fingerprint64 of each string modulo `num_buckets`.
pub fn string_to_hash_bucket_fast(s: &Scope, input: Output, num_buckets: i64) -> Output {
    s.op("StringToHashBucketFast").input(input).attr("num_buckets", attr::int(num_buckets)).build().output(0)
}

/// `StringToNumber` as `out_type`.
pub fn string_to_number(s: &Scope, input: Output, out_type: DataType) -> Output {
    s.op("StringToNumber").input(input).attr("out_type", attr::ty(out_type)).build().output(0)
}

/// `StringSplitV2`: (indices, values, shape) of the sparse tokens.
pub fn string_split_v2(s: &Scope, input: Output, sep: Output, maxsplit: i64) -> (Output, Output, Output) {
    let o = s.op("StringSplitV2").input(input).input(sep).attr("maxsplit", attr::int(maxsplit)).build();
    (o.output(0), o.output(1), o.output(2))
}

/// `StaticRegexReplace` (RE2 pattern, `\1`-style rewrite).
pub fn static_regex_replace(s: &Scope, input: Output, pattern: &str, rewrite: &str, global: bool) -> Output {
    let attrs = [
        ("pattern", attr::string(pattern)),
        ("rewrite", attr::string(rewrite)),
        ("replace_global", attr::bool(global)),
    ];
    op_output(s, "StaticRegexReplace", [input], attrs)
}
