//! Builder functions of the extended array ops (`ext_defs.rs`).

use ferroflow_core::{attr, DataType};

use crate::ops::op_output;
use crate::scope::{Output, Scope};

/// `Split`: `value` cut into `num_split` equal parts along `split_dim` (an int32 scalar).
pub fn split(s: &Scope, split_dim: Output, value: Output, num_split: i64) -> Vec<Output> {
    s.op("Split").input(split_dim).input(value).attr("num_split", attr::int(num_split)).build().outputs()
}

/// `SplitV`: `value` cut along `split_dim` into parts of `size_splits` (one may be -1).
pub fn split_v(s: &Scope, value: Output, size_splits: Output, split_dim: Output, num_split: i64) -> Vec<Output> {
    s.op("SplitV")
        .input(value)
        .input(size_splits)
        .input(split_dim)
        .attr("num_split", attr::int(num_split))
        .build()
        .outputs()
}

/// The scan builders: `f(s, x, axis, exclusive, reverse)`, the op's scan of `x` along the
/// scalar `axis`.
macro_rules! scan_builders {
    ($($f:ident => $op:literal),* $(,)?) => {$(
        #[doc = concat!("`", $op, "` of `x` along the scalar `axis`.")]
        pub fn $f(s: &Scope, x: Output, axis: Output, exclusive: bool, reverse: bool) -> Output {
            let attrs = [("exclusive", attr::bool(exclusive)), ("reverse", attr::bool(reverse))];
            op_output(s, $op, [x, axis], attrs)
        }
    )*};
}

scan_builders! {
    cumsum => "Cumsum",
    cumprod => "Cumprod",
    cumulative_logsumexp => "CumulativeLogsumexp",
}

one_output_builders! {
    /// `ReverseV2`: `x` with the dimensions in `axis` reversed.
    reverse_v2 => "ReverseV2"(x, axis);
    /// `Roll`: `x` shifted cyclically by `shift` along `axis`.
    roll => "Roll"(x, shift, axis);
    /// `MatrixBandPart`: the band of `num_lower` sub- and `num_upper` superdiagonals (-1 = all).
    matrix_band_part => "MatrixBandPart"(x, num_lower, num_upper);
    /// `ClipByValue`: `x` clamped to `[lo, hi]` (broadcast).
    clip_by_value => "ClipByValue"(x, lo, hi);
    /// `BroadcastArgs`: the broadcast shape of two shape vectors.
    broadcast_args => "BroadcastArgs"(s0, s1);
    /// `LinSpace`: `num` evenly spaced values from `start` to `stop`.
    lin_space => "LinSpace"(start, stop, num);
    /// `Diag`: a tensor of rank 2k with `x` (rank k) on its diagonal.
    diag => "Diag"(x);
    /// `DiagPart`: the diagonal of a rank-2k tensor.
    diag_part => "DiagPart"(x);
    /// `GatherNd`: slices of `params` at the index tuples of `indices`' last dimension.
    gather_nd => "GatherNd"(params, indices);
    /// `ScatterNd`: zeros of `shape` with `updates` summed in at `indices`.
    scatter_nd => "ScatterNd"(indices, updates, shape);
}

/// `TopKV2`: the `k` largest values of the last dimension and their indices.
pub fn top_k_v2(s: &Scope, x: Output, k: Output, sorted: bool) -> (Output, Output) {
    let o = s.op("TopKV2").input(x).input(k).attr("sorted", attr::bool(sorted)).build();
    (o.output(0), o.output(1))
}

/// `EnsureShape`: `x`, checked at run time against `shape` (-1 = any size).
pub fn ensure_shape(s: &Scope, x: Output, shape: Option<&[i64]>) -> Output {
    s.op("EnsureShape").input(x).attr("shape", attr::shape(shape)).build().output(0)
}

/// `Bucketize`: the index of the bucket of each element given sorted `boundaries`.
pub fn bucketize(s: &Scope, x: Output, boundaries: &[f32]) -> Output {
    s.op("Bucketize").input(x).attr("boundaries", attr::list_float(boundaries)).build().output(0)
}

/// `LowerBound` (`upper` false) or `UpperBound` of each row of `values` in `sorted_inputs`.
pub fn search_sorted(s: &Scope, sorted_inputs: Output, values: Output, upper: bool, out_type: DataType) -> Output {
    op_output(
        s,
        if upper { "UpperBound" } else { "LowerBound" },
        [sorted_inputs, values],
        [("out_type", attr::ty(out_type))],
    )
}

/// `MirrorPad` with `mode` "REFLECT" or "SYMMETRIC".
pub fn mirror_pad(s: &Scope, x: Output, paddings: Output, mode: &str) -> Output {
    s.op("MirrorPad").input(x).input(paddings).attr("mode", attr::string(mode)).build().output(0)
}

/// `MirrorPadGrad`: folds the padded gradient `g` back onto the unpadded input.
pub fn mirror_pad_grad(s: &Scope, g: Output, paddings: Output, mode: &str) -> Output {
    s.op("MirrorPadGrad").input(g).input(paddings).attr("mode", attr::string(mode)).build().output(0)
}

/// `TensorScatterUpdate`/`Add`/`Sub` (`op` is the full op name).
pub fn tensor_scatter(s: &Scope, op: &str, tensor: Output, indices: Output, updates: Output) -> Output {
    s.op(op).input(tensor).input(indices).input(updates).build().output(0)
}

/// `Einsum` of `inputs` by `equation` (e.g. `"bij,bjk->bik"`).
pub fn einsum(s: &Scope, inputs: Vec<Output>, equation: &str) -> Output {
    s.op("Einsum").input_list(inputs).attr("equation", attr::string(equation)).build().output(0)
}

/// `All`: logical and of a bool tensor over `axes`.
pub fn reduce_all(s: &Scope, x: Output, axes: Output, keep_dims: bool) -> Output {
    s.op("All").input(x).input(axes).attr("keep_dims", attr::bool(keep_dims)).build().output(0)
}

/// `Any`: logical or of a bool tensor over `axes`.
pub fn reduce_any(s: &Scope, x: Output, axes: Output, keep_dims: bool) -> Output {
    s.op("Any").input(x).input(axes).attr("keep_dims", attr::bool(keep_dims)).build().output(0)
}

/// `MatrixDiagV3`: matrices with the diagonals `k` (`[lo, hi]`) taken from `diagonal`.
pub fn matrix_diag_v3(
    s: &Scope,
    diagonal: Output,
    k: Output,
    num_rows: Output,
    num_cols: Output,
    padding: Output,
    align: &str,
) -> Output {
    op_output(s, "MatrixDiagV3", [diagonal, k, num_rows, num_cols, padding], [("align", attr::string(align))])
}

/// `MatrixDiagPartV3`: the diagonals `k` of each innermost matrix, padded with `padding`.
pub fn matrix_diag_part_v3(s: &Scope, x: Output, k: Output, padding: Output, align: &str) -> Output {
    s.op("MatrixDiagPartV3").input(x).input(k).input(padding).attr("align", attr::string(align)).build().output(0)
}

/// `MatrixSetDiagV3`: `x` with its diagonals `k` replaced by `diagonal`.
pub fn matrix_set_diag_v3(s: &Scope, x: Output, diagonal: Output, k: Output, align: &str) -> Output {
    s.op("MatrixSetDiagV3").input(x).input(diagonal).input(k).attr("align", attr::string(align)).build().output(0)
}
