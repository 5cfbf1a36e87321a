//! Text ops of `tf.strings` (TensorFlow's definitions): `StringFormat` and `PrintV2`
//! (`tf.print`), `Fingerprint` (`tf.fingerprint`), `ReduceJoin`, `StringNGrams`,
//! `UnicodeDecode`, `UnicodeDecodeWithOffsets`, `UnicodeEncode`, `UnicodeTranscode`,
//! `UnicodeScript`.

use ferroflow_core::Status;

use crate::op_def::op;
use crate::ops::math::reduction_shape;
use crate::registry::OpRegistry;
use crate::shape_fn::{unchanged, Dims, ShapeCtx};

fn ngrams_shape(c: &ShapeCtx) -> Result<Vec<Dims>, Status> {
    Ok(vec![Some(vec![-1]), c.input(1)])
}

fn decode_shape(c: &ShapeCtx) -> Result<Vec<Dims>, Status> {
    let n = c.input(0).and_then(|d| d.iter().try_fold(1i64, |a, &x| (x >= 0).then_some(a * x)));
    let mut out = vec![Some(vec![n.map_or(-1, |n| n + 1)]), Some(vec![-1])];
    if c.node.op == "UnicodeDecodeWithOffsets" {
        out.push(Some(vec![-1]));
    }
    Ok(out)
}

fn encode_shape(c: &ShapeCtx) -> Result<Vec<Dims>, Status> {
    let n = c.input(1).and_then(|d| d.first().copied()).filter(|&n| n >= 1).map_or(-1, |n| n - 1);
    Ok(vec![Some(vec![n])])
}

const ERRORS: &str = "errors: {'strict', 'replace', 'ignore'} = 'replace'";
const OUT_ENCODINGS: &str = "output_encoding: {'UTF-8', 'UTF-16-BE', 'UTF-32-BE'}";

pub(super) fn register(r: &mut OpRegistry) {
    r.add(op("UnicodeScript").input("input: int32").output("output: int32").shape_fn(unchanged).build());
    r.add(
        op("Fingerprint")
            .input("data: T")
            .input("method: string")
            .output("fingerprint: uint8")
            .attr("T: type")
            .shape_fn(|c| Ok(vec![Some(vec![c.input(0).and_then(|d| d.first().copied()).unwrap_or(-1), 8])]))
            .build(),
    );
    r.add(
        op("StringFormat")
            .input("inputs: T")
            .output("output: string")
            .attr("T: list(type) >= 0")
            .attr("template: string = '%s'")
            .attr("placeholder: string = '%s'")
            .attr("summarize: int = 3")
            .shape_fn(|_| Ok(vec![Some(vec![])]))
            .build(),
    );
    r.add(
        op("PrintV2")
            .input("input: string")
            .attr("output_stream: string = 'stderr'")
            .attr("end: string = '\n'")
            .stateful()
            .shape_fn(|_| Ok(vec![]))
            .build(),
    );
    let join = op("UnsortedSegmentJoin").input("inputs: string").input("segment_ids: Tindices");
    let join = join.input("num_segments: Tnumsegments").output("output: string").attr("separator: string = ''");
    let join = join.attr("Tindices: {int32, int64}").attr("Tnumsegments: {int32, int64} = DT_INT32");
    r.add(join.shape_fn(|_| Ok(vec![None])).build());
    r.add(
        op("ReduceJoin")
            .input("inputs: string")
            .input("reduction_indices: int32")
            .output("output: string")
            .attr("keep_dims: bool = false")
            .attr("separator: string = ''")
            .shape_fn(reduction_shape)
            .build(),
    );
    r.add(
        op("StringNGrams")
            .input("data: string")
            .input("data_splits: Tsplits")
            .output("ngrams: string")
            .output("ngrams_splits: Tsplits")
            .attr("separator: string")
            .attr("ngram_widths: list(int) >= 0")
            .attr("left_pad: string")
            .attr("right_pad: string")
            .attr("pad_width: int")
            .attr("preserve_short_sequences: bool")
            .attr("Tsplits: {int32, int64} = DT_INT64")
            .shape_fn(ngrams_shape)
            .build(),
    );
    for name in ["UnicodeDecode", "UnicodeDecodeWithOffsets"] {
        let b = op(name).input("input: string").output("row_splits: Tsplits").output("char_values: int32");
        r.add(
            b.when(name.ends_with("Offsets"), |b| b.output("char_to_byte_starts: int64"))
                .attr("input_encoding: string")
                .attr(ERRORS)
                .attr("replacement_char: int = 65533")
                .attr("replace_control_characters: bool = false")
                .attr("Tsplits: {int32, int64} = DT_INT64")
                .shape_fn(decode_shape)
                .build(),
        );
    }
    r.add(
        op("UnicodeEncode")
            .input("input_values: int32")
            .input("input_splits: Tsplits")
            .output("output: string")
            .attr(ERRORS)
            .attr(OUT_ENCODINGS)
            .attr("replacement_char: int = 65533")
            .attr("Tsplits: {int32, int64} = DT_INT64")
            .shape_fn(encode_shape)
            .build(),
    );
    r.add(
        op("UnicodeTranscode")
            .input("input: string")
            .output("output: string")
            .attr("input_encoding: string")
            .attr(OUT_ENCODINGS)
            .attr(ERRORS)
            .attr("replacement_char: int = 65533")
            .attr("replace_control_characters: bool = false")
            .shape_fn(unchanged)
            .build(),
    );
}
