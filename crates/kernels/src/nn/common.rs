//! Helpers shared by the nn kernels: attr parsing (padding, strides, data format) and
//! TensorFlow's windowed-output-size arithmetic.

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{DataType, NodeAttrs, Status, Tensor, TensorType};

use crate::array::util::unshared_mut;

/// Element count above which elementwise kernels split their work over the rayon pool.
pub(crate) const PAR_MIN: usize = 32 * 1024;

/// Elements per rayon task in elementwise kernels.
pub(crate) const PAR_CHUNK: usize = 16 * 1024;

/// An Unimplemented status naming the node.
pub(crate) fn unimplemented(node: &NodeDef, msg: impl std::fmt::Display) -> Status {
    Status::unimplemented(format!("node '{}' (op {}): {msg}", node.name, node.op)).with_node(&node.name)
}

/// The error for a dtype a kernel does not handle.
pub(crate) fn unsupported_type(node: &NodeDef, dt: DataType) -> Status {
    unimplemented(node, format!("no CPU kernel for T={dt}"))
}

/// float and double: the types of the float kernels.
pub(crate) const FLOATS: &[DataType] = &[DataType::Float, DataType::Double];

/// float, double, int32 and int64.
pub(crate) const REALS: &[DataType] = &[DataType::Float, DataType::Double, DataType::Int32, DataType::Int64];

/// Attr `T` of `node`, which must be one of `allowed`.
pub(crate) fn type_attr(node: &NodeDef, allowed: &[DataType]) -> Result<DataType, Status> {
    let dtype = node.attr_type("T")?;
    if !allowed.contains(&dtype) {
        return Err(unsupported_type(node, dtype));
    }
    Ok(dtype)
}

/// Attr `T` of a float kernel (float or double).
pub(crate) fn float_type(node: &NodeDef) -> Result<DataType, Status> {
    type_attr(node, FLOATS)
}

/// Checks that a tensor has the dtype the kernel was built for.
pub(crate) fn check_dtype(node: &NodeDef, what: &str, got: DataType, want: DataType) -> Result<(), Status> {
    if got != want {
        return Err(node.node_error(format!("{what} is {got} but attr T is {want}")));
    }
    Ok(())
}

/// Implements `OpKernel` for a float kernel (a struct with a `dtype` field and a generic
/// `run::<T>`): checks that the named inputs `[(index, name), ...]` have the kernel's dtype,
/// then runs it for f32 or f64.
macro_rules! float_kernel {
    ($kernel:ty, $inputs:expr) => {
        impl $crate::OpKernel for $kernel {
            fn compute(&self, ctx: &mut $crate::OpContext) -> Result<(), ferroflow_core::Status> {
                $crate::nn::common::check_inputs(ctx, self.dtype, &$inputs)?;
                $crate::dispatch::dispatch!(self.dtype, ctx, [f32, f64], |T| self.run::<T>(ctx))
            }
        }
    };
}
pub(crate) use float_kernel;

/// Declares the kernel struct `$kernel` (its `attrs` of type `$attrs` and its `dtype`) and
/// its factory `$factory`, which parses them with `$attrs::parse(node)` and [`float_type`].
macro_rules! attrs_kernel {
    ($kernel:ident, $attrs:ident, $factory:ident) => {
        struct $kernel {
            attrs: $attrs,
            dtype: ferroflow_core::DataType,
        }

        pub(crate) fn $factory(
            node: &ferroflow_core::proto::NodeDef,
        ) -> Result<Box<dyn $crate::OpKernel>, ferroflow_core::Status> {
            Ok(Box::new($kernel { attrs: $attrs::parse(node)?, dtype: $crate::nn::common::float_type(node)? }))
        }
    };
}
pub(crate) use attrs_kernel;

/// Checks that each input `(index, name)` has the dtype the kernel was built for.
pub(crate) fn check_inputs(ctx: &crate::OpContext, want: DataType, inputs: &[(usize, &str)]) -> Result<(), Status> {
    for &(i, what) in inputs {
        check_dtype(ctx.node(), what, ctx.input(i)?.dtype(), want)?;
    }
    Ok(())
}

/// The values of shape input `t` (`input_sizes`, `orig_input_shape`, …): int32 or int64, else
/// the error "`what` must be `types`, got T".
pub(crate) fn shape_values(ctx: &crate::OpContext, t: &Tensor, what: &str, types: &str) -> Result<Vec<i64>, Status> {
    crate::array::util::index_vec(t).map_err(|_| ctx.error(format!("{what} must be {types}, got {}", t.dtype())))
}

/// The values `v` of shape input `what` as the dims of a gradient, checked to be allocatable
/// (the gradient is allocated with this shape, in float32 at least).
pub(crate) fn gradient_dims(ctx: &crate::OpContext, v: &[i64], what: &str) -> Result<Vec<usize>, Status> {
    let dims = ferroflow_core::Shape::from_i64(v).map_err(|e| ctx.error(format!("{what}: {}", e.message)))?.0;
    ferroflow_core::check_tensor_alloc(&dims, DataType::Float).map_err(|e| ctx.error_with(e))?;
    Ok(dims)
}

/// TensorFlow's padding schemes (EXPLICIT is rejected when parsed).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Padding {
    /// Output size ceil(in / stride); zero (or ignored) padding split before/after.
    Same,
    /// No padding.
    Valid,
}

/// Reads the `padding` attr.
pub(crate) fn padding_attr(node: &NodeDef) -> Result<Padding, Status> {
    match node.attr_string("padding")?.as_str() {
        "SAME" => Ok(Padding::Same),
        "VALID" => Ok(Padding::Valid),
        "EXPLICIT" => {
            Err(unimplemented(node, "padding EXPLICIT is not supported by ferroflow yet (use SAME or VALID)"))
        }
        other => Err(node.node_error(format!("padding must be SAME or VALID, got '{other}'"))),
    }
}

/// Checks that `data_format` (if present) is NHWC; `op_kind` names the op family in the error.
pub(crate) fn require_nhwc(node: &NodeDef, unimplemented_code: bool) -> Result<(), Status> {
    if !node.has_attr("data_format") {
        return Ok(());
    }
    let f = node.attr_string("data_format")?;
    if f == "NHWC" {
        return Ok(());
    }
    let msg = format!("only the NHWC tensor format is supported on the CPU; the op was given the format: {f}");
    Err(if unimplemented_code { unimplemented(node, msg) } else { node.node_error(msg) })
}

/// Reads a 4-element NHWC window attr (`strides`, `ksize`) and returns its (rows, cols) part.
/// Batch and depth entries must be 1 (Unimplemented otherwise, like TensorFlow).
pub(crate) fn spatial_attr(node: &NodeDef, name: &str) -> Result<(usize, usize), Status> {
    let v = node.attr_list_int(name)?;
    if v.len() != 4 {
        let head: Vec<String> = v.iter().take(8).map(|x| x.to_string()).collect();
        let more = if v.len() > 8 { ", ..." } else { "" };
        return Err(node.node_error(format!(
            "Sliding window {name} field must specify 4 dimensions, got {} ([{}{more}])",
            v.len(),
            head.join(", ")
        )));
    }
    if v.iter().any(|&x| x <= 0) {
        return Err(node.node_error(format!("{name} entries must be > 0, got {v:?}")));
    }
    if v[0] != 1 || v[3] != 1 {
        return Err(unimplemented(
            node,
            format!("{name} {v:?}: the current implementation does not yet support {name} in the batch and depth dimensions"),
        ));
    }
    let cap = |x: i64| usize::try_from(x).ok().filter(|&x| x < (1 << 31));
    match (cap(v[1]), cap(v[2])) {
        (Some(r), Some(c)) => Ok((r, c)),
        _ => Err(node.node_error(format!("{name} {v:?} is too large"))),
    }
}

/// Checks that `dilations` (if present) is all ones.
pub(crate) fn require_unit_dilations(node: &NodeDef) -> Result<(), Status> {
    if !node.has_attr("dilations") {
        return Ok(());
    }
    let d = node.attr_list_int("dilations")?;
    if d.len() != 4 {
        return Err(node.node_error(format!("dilations must specify 4 dimensions, got {d:?}")));
    }
    if d.iter().any(|&x| x != 1) {
        return Err(unimplemented(
            node,
            format!("dilations {d:?} are not supported by ferroflow yet (only [1,1,1,1])"),
        ));
    }
    Ok(())
}

/// One spatial dimension of a sliding window: output size and padding before.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Window {
    /// Input size.
    pub input: usize,
    /// Window (filter) size.
    pub size: usize,
    /// Stride.
    pub stride: usize,
    /// Output size.
    pub output: usize,
    /// Padding before (TensorFlow puts the odd element after).
    pub pad: usize,
}

impl Window {
    /// The window of a stride-1 convolution's input gradient computed as a forward
    /// convolution: the output gradient is the input, the output has the input's size, the
    /// padding before becomes `size - 1 - pad`; `None` at other strides.
    pub fn turned(&self) -> Option<Window> {
        (self.stride == 1 && self.pad < self.size).then(|| Window {
            input: self.output,
            size: self.size,
            stride: 1,
            output: self.input,
            pad: self.size - 1 - self.pad,
        })
    }

    /// TensorFlow's `GetWindowedOutputSize` (dilation 1): VALID gives
    /// `(in - k + stride) / stride` (an error if negative), SAME gives `ceil(in / stride)` with
    /// `pad_before = max(0, (out - 1) * stride + k - in) / 2`.
    pub fn new(input: usize, size: usize, stride: usize, padding: Padding) -> Result<Window, String> {
        if stride == 0 {
            return Err(format!("stride must be > 0, but got {stride}"));
        }
        let (i, k, s) = (input as i64, size as i64, stride as i64);
        let (out, pad) = match padding {
            Padding::Valid => ((i - k + s) / s, 0),
            Padding::Same => {
                let out = (i + s - 1) / s;
                let needed = ((out - 1) * s + k - i).max(0);
                (out, needed / 2)
            }
        };
        if out < 0 {
            return Err(format!(
                "computed output size would be negative: {out} [input_size: {input}, effective_filter_size: {size}, stride: {stride}]"
            ));
        }
        Ok(Window { input, size, stride, output: out as usize, pad: pad as usize })
    }

    /// The input range `[start, end)` covered by output position `o` (clipped to the input).
    #[inline(always)]
    pub fn range(&self, o: usize) -> (usize, usize) {
        let start = (o * self.stride) as isize - self.pad as isize;
        let end = (start + self.size as isize).min(self.input as isize);
        (start.max(0) as usize, end.max(0) as usize)
    }

    /// Whether the windows tile the input exactly: each input element lies in exactly one.
    pub fn tiles(&self) -> bool {
        self.stride == self.size && self.output * self.stride >= self.input + self.pad
    }
}

/// Formats dims like TensorFlow (`[2,3]`).
pub(crate) fn dims_str(d: &[usize]) -> String {
    let v: Vec<String> = d.iter().map(|x| x.to_string()).collect();
    format!("[{}]", v.join(","))
}

/// Sets each element `v` of the tensor `x` (copied first when shared) to `f(v, w)`, with
/// `w` the element of `other` at the same index, in chunks as [`for_chunks`].
pub(crate) fn zip_in_place<A, B>(x: &mut Tensor, other: &[B], f: impl Fn(A, B) -> A + Sync) -> Result<(), Status>
where
    A: TensorType + Copy + Send,
    B: Copy + Sync,
{
    for_chunks(unshared_mut::<A>(x)?, 1, |off, c| {
        let n = c.len();
        for (v, &w) in c.iter_mut().zip(&other[off..off + n]) {
            *v = f(*v, w);
        }
    });
    Ok(())
}

/// Runs `f(index, chunk)` over the consecutive `unit`-element chunks of `out`, on the rayon
/// pool when `parallel` (the caller weighs the work: a batch of matrix products or solves).
pub(crate) fn each_chunk<T: Send>(out: &mut [T], unit: usize, parallel: bool, f: impl Fn(usize, &mut [T]) + Sync) {
    use rayon::prelude::*;
    if parallel {
        out.par_chunks_mut(unit).enumerate().for_each(|(i, c)| f(i, c));
    } else {
        out.chunks_mut(unit).enumerate().for_each(|(i, c)| f(i, c));
    }
}

/// Runs `f` on chunks of `data` (in parallel when `data` is large). `f` gets the chunk's
/// offset and the chunk; chunks hold a multiple of `unit` elements. `f` is compiled for the
/// process's instruction-set path ([`crate::isa::vectorized`]).
pub(crate) fn for_chunks<T: Send>(data: &mut [T], unit: usize, f: impl Fn(usize, &mut [T]) + Sync) {
    use rayon::prelude::*;
    let unit = unit.max(1);
    if data.len() < PAR_MIN || rayon::current_num_threads() < 2 {
        crate::isa::vectorized(|| f(0, data));
        return;
    }
    let per = PAR_CHUNK.div_ceil(unit) * unit;
    data.par_chunks_mut(per).enumerate().for_each(|(i, c)| crate::isa::vectorized(|| f(i * per, c)));
}
