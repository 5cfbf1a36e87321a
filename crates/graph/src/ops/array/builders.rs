//! Builder functions of the array ops, TensorFlow-like names in snake_case.

use ferroflow_core::{attr, DataType, Tensor};

use crate::ops::base::constant;
use crate::ops::op_output;
use crate::scope::{Output, Scope};

one_output_builders! {
    /// `Reshape`: `x` with the dims in `shape` (one may be -1).
    reshape => "Reshape"(x, shape);
    /// `Rank` of `x` (int32 scalar).
    rank => "Rank"(x);
    /// `Fill`: a tensor of shape `dims` filled with the scalar `value`.
    fill => "Fill"(dims, value);
    /// `ZerosLike`.
    zeros_like => "ZerosLike"(x);
    /// `OnesLike`.
    ones_like => "OnesLike"(x);
    /// `ExpandDims`: inserts a unit dim at `dim`.
    expand_dims => "ExpandDims"(x, dim);
    /// `Transpose` by `perm`.
    transpose => "Transpose"(x, perm);
    /// `InvertPermutation`.
    invert_permutation => "InvertPermutation"(x);
    /// `Slice`: `size` elements from `begin` per dim (-1 = to the end).
    slice => "Slice"(x, begin, size);
    /// `Gather` (v1, axis 0).
    gather => "Gather"(params, indices);
    /// `UnsortedSegmentSum`.
    unsorted_segment_sum => "UnsortedSegmentSum"(data, segment_ids, num_segments);
    /// `Tile`.
    tile => "Tile"(x, multiples);
    /// `BroadcastTo`.
    broadcast_to => "BroadcastTo"(x, shape);
    /// `Range`: `start, start + delta, …` up to `limit` (exclusive).
    range => "Range"(start, limit, delta);
    /// `Pad` with zeros; `paddings` is `[rank, 2]`.
    pad => "Pad"(x, paddings);
    /// `PadV2`: pad with `constant_values`.
    pad_v2 => "PadV2"(x, paddings, constant_values);
    /// `Snapshot`.
    snapshot => "Snapshot"(x);
    /// `Where` (one input): coordinates of the true / non-zero elements.
    where_ => "Where"(x);
}

/// `Shape` of `x` as an `out_type` (int32 or int64) vector.
pub fn shape(s: &Scope, x: Output, out_type: DataType) -> Output {
    s.op("Shape").input(x).attr("out_type", attr::ty(out_type)).build().output(0)
}

/// `Size`: number of elements of `x`.
pub fn size(s: &Scope, x: Output, out_type: DataType) -> Output {
    s.op("Size").input(x).attr("out_type", attr::ty(out_type)).build().output(0)
}

/// `ShapeN`: the shapes of several tensors.
pub fn shape_n(s: &Scope, xs: Vec<Output>, out_type: DataType) -> Vec<Output> {
    s.op("ShapeN").input_list(xs).attr("out_type", attr::ty(out_type)).build().outputs()
}

fn scalar_of(dtype: DataType, one: bool) -> Tensor {
    match (dtype, one) {
        (DataType::Float, true) => Tensor::scalar(1.0f32),
        (DataType::Double, true) => Tensor::scalar(1.0f64),
        (DataType::Int32, true) => Tensor::scalar(1i32),
        (DataType::Int64, true) => Tensor::scalar(1i64),
        (DataType::UInt8, true) => Tensor::scalar(1u8),
        (DataType::Bool, true) => Tensor::scalar(true),
        (d, _) => Tensor::zeros(d, ferroflow_core::Shape::scalar()).unwrap_or_else(|_| Tensor::scalar(0.0f32)),
    }
}

fn filled(s: &Scope, shape: &[i64], dtype: DataType, one: bool) -> Output {
    let sc = s.sub(if one { "ones" } else { "zeros" });
    let v = scalar_of(dtype, one);
    if v.dtype() != dtype || (one && !(dtype.is_numeric() || dtype == DataType::Bool)) {
        s.graph().record_error(ferroflow_core::Status::invalid_argument(format!(
            "cannot build {} of dtype {dtype}",
            if one { "ones" } else { "zeros" }
        )));
    }
    let dims = constant(&sc, shape.iter().map(|&d| d as i32).collect::<Vec<i32>>());
    let value = constant(&sc, v);
    fill(&sc, dims, value)
}

/// A tensor of zeros (`Fill` of constants), like `tf.zeros`.
pub fn zeros(s: &Scope, shape: &[i64], dtype: DataType) -> Output {
    filled(s, shape, dtype, false)
}

/// A tensor of ones (`Fill` of constants), like `tf.ones`.
pub fn ones(s: &Scope, shape: &[i64], dtype: DataType) -> Output {
    filled(s, shape, dtype, true)
}

/// `Squeeze`: removes the unit dims `dims` (all unit dims if empty).
pub fn squeeze(s: &Scope, x: Output, dims: &[i64]) -> Output {
    s.op("Squeeze").input(x).attr("squeeze_dims", attr::list_int(dims)).build().output(0)
}

/// `ConcatV2` of `values` along `axis`; one value is returned as it is (an `Identity`, as
/// TensorFlow's `tf.concat` does: `ConcatV2` takes at least two).
pub fn concat(s: &Scope, values: Vec<Output>, axis: Output) -> Output {
    if values.len() == 1 {
        return s.op("Identity").name("concat").input(values[0].clone()).build().output(0);
    }
    s.op("ConcatV2").name("concat").input_list(values).input(axis).build().output(0)
}

/// `ConcatOffset`: where each input starts in the concatenation.
pub fn concat_offset(s: &Scope, concat_dim: Output, shapes: Vec<Output>) -> Vec<Output> {
    s.op("ConcatOffset").input(concat_dim).input_list(shapes).build().outputs()
}

/// `Pack` (`tf.stack`) along `axis`.
pub fn stack(s: &Scope, values: Vec<Output>, axis: i64) -> Output {
    s.op("Pack").input_list(values).attr("axis", attr::int(axis)).build().output(0)
}

/// `Unpack` (`tf.unstack`): `num` tensors along `axis`.
pub fn unstack(s: &Scope, x: Output, num: i64, axis: i64) -> Vec<Output> {
    s.op("Unpack").input(x).attr("num", attr::int(num)).attr("axis", attr::int(axis)).build().outputs()
}

/// The masks of a strided slice (bit `i` refers to position `i` of begin/end/strides).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SliceMasks {
    /// `begin_mask`: ignore `begin[i]`.
    pub begin: i64,
    /// `end_mask`: ignore `end[i]`.
    pub end: i64,
    /// `ellipsis_mask`: position `i` is `...`.
    pub ellipsis: i64,
    /// `new_axis_mask`: position `i` is `tf.newaxis`.
    pub new_axis: i64,
    /// `shrink_axis_mask`: position `i` is a single index.
    pub shrink_axis: i64,
}

fn with_masks(b: crate::scope::OpBuilder, m: SliceMasks) -> crate::scope::OpBuilder {
    b.attr("begin_mask", attr::int(m.begin))
        .attr("end_mask", attr::int(m.end))
        .attr("ellipsis_mask", attr::int(m.ellipsis))
        .attr("new_axis_mask", attr::int(m.new_axis))
        .attr("shrink_axis_mask", attr::int(m.shrink_axis))
}

/// `StridedSlice` (Python's `x[begin:end:stride, ...]`).
///
/// ```
/// use ferroflow_graph::{ops, Scope};
/// let s = Scope::new_root();
/// let x = ops::constant(&s, vec![1.0f32, 2.0, 3.0, 4.0]);
/// // x[::-1]
/// let m = ops::SliceMasks { begin: 1, end: 1, ..Default::default() };
/// let (b, e, st) = (ops::constant(&s, vec![0i32]), ops::constant(&s, vec![0i32]), ops::constant(&s, vec![-1i32]));
/// let y = ops::strided_slice(&s, x, b, e, st, m);
/// assert_eq!(s.graph().shape_of(&y), Some(vec![4]));
/// ```
pub fn strided_slice(s: &Scope, x: Output, begin: Output, end: Output, strides: Output, masks: SliceMasks) -> Output {
    with_masks(s.op("StridedSlice").input(x).input(begin).input(end).input(strides), masks).build().output(0)
}

/// `StridedSliceGrad`: scatters `dy` into zeros of `shape` through the slice.
pub fn strided_slice_grad(
    s: &Scope,
    shape: Output,
    begin: Output,
    end: Output,
    strides: Output,
    dy: Output,
    masks: SliceMasks,
) -> Output {
    with_masks(s.op("StridedSliceGrad").input(shape).input(begin).input(end).input(strides).input(dy), masks)
        .build()
        .output(0)
}

/// `GatherV2` along `axis`.
pub fn gather_v2(s: &Scope, params: Output, indices: Output, axis: Output) -> Output {
    gather_v2_batch(s, params, indices, axis, 0)
}

/// `GatherV2` with `batch_dims`.
pub fn gather_v2_batch(s: &Scope, params: Output, indices: Output, axis: Output, batch_dims: i64) -> Output {
    op_output(s, "GatherV2", [params, indices, axis], [("batch_dims", attr::int(batch_dims))])
}

/// `DynamicStitch`.
pub fn dynamic_stitch(s: &Scope, indices: Vec<Output>, data: Vec<Output>) -> Output {
    s.op("DynamicStitch").input_list(indices).input_list(data).build().output(0)
}

/// `OneHot` (`depth` is an int32 scalar; `axis` -1 = last).
pub fn one_hot(s: &Scope, indices: Output, depth: Output, on: Output, off: Output, axis: i64) -> Output {
    s.op("OneHot").input(indices).input(depth).input(on).input(off).attr("axis", attr::int(axis)).build().output(0)
}

/// `PreventGradient`: identity whose gradient is an error with `message`.
pub fn prevent_gradient(s: &Scope, x: Output, message: &str) -> Output {
    s.op("PreventGradient").input(x).attr("message", attr::string(message)).build().output(0)
}
