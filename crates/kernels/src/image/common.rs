//! Helpers shared by the image kernels: reading images as float, the resize attrs and
//! TensorFlow's resize-scale arithmetic, size inputs, and output allocation checks.

use std::borrow::Cow;

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{check_tensor_alloc, DataType, NodeAttrs, Status, Storage, Tensor, TensorType};

use crate::array::util::collect_vec;
use crate::OpContext;

/// Output rows (of `unit` elements each) above which the image kernels split work over rayon.
pub(crate) const PAR_MIN: usize = 16 * 1024;

/// The values of a real-valued tensor as f32 (borrowed when it already is f32), the way
/// TensorFlow's image kernels read any input type with `static_cast<float>`.
pub(crate) fn as_f32<'a>(ctx: &OpContext, t: &'a Tensor) -> Result<Cow<'a, [f32]>, Status> {
    fn conv<T: Copy>(v: &[T], f: impl Fn(T) -> f32) -> Cow<'static, [f32]> {
        Cow::Owned(v.iter().map(|&x| f(x)).collect())
    }
    Ok(match t.storage() {
        Storage::F32(v) => Cow::Borrowed(v.as_slice()),
        Storage::F64(v) => conv(v, |x| x as f32),
        Storage::I32(v) => conv(v, |x| x as f32),
        Storage::I64(v) => conv(v, |x| x as f32),
        Storage::U8(v) => conv(v, f32::from),
        Storage::I8(v) => conv(v, f32::from),
        Storage::I16(v) => conv(v, f32::from),
        Storage::U16(v) => conv(v, f32::from),
        Storage::F16(v) => conv(v, |x| x.to_f32()),
        Storage::BF16(v) => conv(v, |x| x.to_f32()),
        _ => return Err(ctx.error(format!("no CPU kernel for images of type {}", t.dtype()))),
    })
}

/// Whether a resize kernel reads images of this type.
pub(crate) fn is_real(dt: DataType) -> bool {
    use DataType::*;
    matches!(dt, Float | Double | Int32 | Int64 | UInt8 | Int8 | Int16 | UInt16 | Half | BFloat16)
}

/// Unimplemented: no kernel for this dtype.
pub(crate) fn unsupported_type(node: &NodeDef, dt: DataType) -> Status {
    Status::unimplemented(format!("node '{}' (op {}): no CPU kernel for type {dt}", node.name, node.op))
        .with_node(&node.name)
}

/// Reads attr `T` and checks the kernel handles it.
pub(crate) fn dtype_attr(node: &NodeDef, name: &str, ok: impl Fn(DataType) -> bool) -> Result<DataType, Status> {
    let dt = node.attr_type(name)?;
    if !ok(dt) {
        return Err(unsupported_type(node, dt));
    }
    Ok(dt)
}

/// The `align_corners` / `half_pixel_centers` attrs of the resize ops.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ResizeAttrs {
    pub align_corners: bool,
    pub half_pixel_centers: bool,
}

impl ResizeAttrs {
    pub(crate) fn parse(node: &NodeDef) -> Result<ResizeAttrs, Status> {
        let align_corners = node.attr_bool("align_corners")?;
        let half_pixel_centers = node.has_attr("half_pixel_centers") && node.attr_bool("half_pixel_centers")?;
        if half_pixel_centers && align_corners {
            return Err(node.node_error("If half_pixel_centers is True, align_corners must be False."));
        }
        Ok(ResizeAttrs { align_corners, half_pixel_centers })
    }
}

/// TensorFlow's `CalculateResizeScale`, in f32 like TensorFlow (`align_corners` needs
/// more than one pixel on both sides).
pub(crate) fn resize_scale(in_size: usize, out_size: usize, align_corners: bool) -> f32 {
    if align_corners && in_size > 1 && out_size > 1 {
        (in_size as f32 - 1.0) / (out_size as f32 - 1.0)
    } else {
        in_size as f32 / out_size as f32
    }
}

/// Source coordinate of output index `i`: half-pixel `(i + 0.5) * scale - 0.5` or legacy
/// `i * scale`.
#[inline(always)]
pub(crate) fn source(i: usize, scale: f32, half_pixel: bool) -> f32 {
    if half_pixel {
        (i as f32 + 0.5) * scale - 0.5
    } else {
        i as f32 * scale
    }
}

/// Dims of a 4-D `[batch, height, width, channels]` tensor.
pub(crate) fn image_dims(ctx: &OpContext, t: &Tensor, what: &str) -> Result<[usize; 4], Status> {
    let d = t.dims();
    if d.len() != 4 {
        return Err(ctx.error(format!("{what} must be 4-dimensional, got shape {}", t.shape())));
    }
    Ok([d[0], d[1], d[2], d[3]])
}

/// A 1-D int32 `[height, width]` size input; both must be positive.
pub(crate) fn size_input(ctx: &OpContext, i: usize, what: &str) -> Result<(usize, usize), Status> {
    let t = ctx.input(i)?;
    if t.rank() != 1 {
        return Err(ctx.error(format!("{what} must be 1-dimensional, got shape {}", t.shape())));
    }
    if t.num_elements() != 2 {
        return Err(ctx.error(format!("{what} must have two elements, got shape {}", t.shape())));
    }
    let v = t.as_slice::<i32>().map_err(|_| ctx.error(format!("{what} must be int32, got {}", t.dtype())))?;
    if v[0] <= 0 || v[1] <= 0 {
        return Err(ctx.error(format!("output dimensions must be positive, got {v:?}")));
    }
    Ok((v[0] as usize, v[1] as usize))
}

/// Checks the resize input: 4-D, at least one channel, non-empty image.
pub(crate) fn resize_input(ctx: &OpContext, t: &Tensor) -> Result<[usize; 4], Status> {
    let d = image_dims(ctx, t, "input")?;
    if d[3] == 0 {
        return Err(ctx.error("image must have at least one channel"));
    }
    if d[1] == 0 || d[2] == 0 {
        return Err(ctx.error(format!("input image must be of non-zero size, got shape {}", t.shape())));
    }
    if d[1] > i32::MAX as usize || d[2] > i32::MAX as usize {
        return Err(ctx.error("input sizes must be between 0 and max int32"));
    }
    Ok(d)
}

/// Input 0, the images of a resize, with their dims checked by [`resize_input`].
pub(crate) fn resize_images(ctx: &OpContext) -> Result<(Tensor, [usize; 4]), Status> {
    let img = ctx.input(0)?;
    let d = resize_input(ctx, &img)?;
    Ok((img, d))
}

/// A zero-filled output vector for `dims`, from the fallible allocation path; when the
/// output is `dtype` (converted from `T` at the end), that tensor is checked against the
/// memory budget too.
pub(crate) fn zeros<T: TensorType>(dims: &[usize], dtype: DataType) -> Result<Vec<T>, Status> {
    if dtype != T::DTYPE {
        check_tensor_alloc(dims, dtype)?;
    }
    ferroflow_core::alloc::zeroed::<T>(dims)
}

/// Checks that the tensor `t` (the input named `what`) has the kernel's type: `dtype`, the
/// value of attr `attr`.
pub(crate) fn check_type(ctx: &OpContext, t: &Tensor, what: &str, attr: &str, dtype: DataType) -> Result<(), Status> {
    if t.dtype() != dtype {
        return Err(ctx.error(format!("{what} is {} but attr {attr} is {dtype}", t.dtype())));
    }
    Ok(())
}

/// Runs a resize to float32 of the images `img` (dims `d`, checked by [`resize_input`]) to
/// the size input (input 1): allocates the zeroed `[n, oh, ow, c]` output, calls
/// `fill(x, (oh, ow), (hs, ws), out)` with the images as f32 and the two resize scales,
/// and sets output 0. With no output pixels `fill` does not run, so no interpolation
/// tables (whose size input may still be huge) are built.
pub(crate) fn resize_to_float(
    ctx: &mut OpContext,
    img: &Tensor,
    d: [usize; 4],
    align_corners: bool,
    fill: impl FnOnce(&[f32], (usize, usize), (f32, f32), &mut [f32]) -> Result<(), Status>,
) -> Result<(), Status> {
    let [n, ih, iw, c] = d;
    let (oh, ow) = size_input(ctx, 1, "size")?;
    let dims = vec![n, oh, ow, c];
    let mut out = zeros::<f32>(&dims, DataType::Float)?;
    if !out.is_empty() {
        let x = as_f32(ctx, img)?;
        let scales = (resize_scale(ih, oh, align_corners), resize_scale(iw, ow, align_corners));
        fill(&x, (oh, ow), scales, &mut out)?;
    }
    ctx.set_output(0, Tensor::new(dims, out)?)
}

/// Runs `f(row_index, row)` over `out`'s rows of `unit` elements, in parallel when large.
pub(crate) fn for_rows<T: Send>(out: &mut [T], unit: usize, f: impl Fn(usize, &mut [T]) + Sync) {
    use rayon::prelude::*;
    if unit == 0 {
        return;
    }
    if out.len() < PAR_MIN || rayon::current_num_threads() < 2 {
        out.chunks_mut(unit).enumerate().for_each(|(i, r)| f(i, r));
    } else {
        out.par_chunks_mut(unit).enumerate().for_each(|(i, r)| f(i, r));
    }
}

/// Converts a vector of f32 results to a tensor of `dtype` (f32, f64, f16, bf16).
pub(crate) fn float_tensor(dims: Vec<usize>, v: Vec<f32>, dtype: DataType) -> Result<Tensor, Status> {
    match dtype {
        DataType::Float => Tensor::new(dims, v),
        DataType::Double => Tensor::new(dims.clone(), collect_vec(&dims, v.into_iter().map(f64::from))?),
        DataType::Half => {
            Tensor::new(dims.clone(), collect_vec(&dims, v.into_iter().map(ferroflow_core::half::f16::from_f32))?)
        }
        DataType::BFloat16 => {
            Tensor::new(dims.clone(), collect_vec(&dims, v.into_iter().map(ferroflow_core::half::bf16::from_f32))?)
        }
        d => Err(Status::internal(format!("float_tensor: unexpected dtype {d}"))),
    }
}
