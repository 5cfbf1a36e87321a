//! Moving spatial blocks to and from the batch or depth dimension: SpaceToBatchND,
//! BatchToSpaceND (and their 4-D forms SpaceToBatch, BatchToSpace), SpaceToDepth and
//! DepthToSpace (NHWC, as TensorFlow's CPU kernels). Dilated convolutions
//! (`tf.nn.atrous_conv2d`, `tf.nn.convolution` with dilations) and pixel shuffles use them.
//! Every one is a strided view of its input, so each is one or two strided copies.

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{NodeAttrs, Status, Tensor, TensorType};

use super::strided::{strided_gather, strided_scatter, strides_of};
use super::util::{check_alloc, index_vec, product};
use crate::{KernelRegistry, OpContext, OpKernel};

/// `block_shape` (`[M]`, each >= 1) and the `[M, 2]` paddings or crops (each >= 0).
fn block_args(
    ctx: &OpContext,
    x: &Tensor,
    block_t: &Tensor,
    pads_t: &Tensor,
    what: &str,
) -> Result<(Vec<usize>, Vec<[usize; 2]>), Status> {
    if block_t.rank() != 1 {
        return Err(ctx.error(format!("block_shape must be one-dimensional, got shape {}", block_t.shape())));
    }
    let m = block_t.dims()[0];
    if pads_t.dims() != [m, 2] {
        return Err(ctx.error(format!("{what} should have shape [{m}, 2] instead of {}", pads_t.shape())));
    }
    if x.rank() < 1 + m {
        return Err(ctx.error(format!("input rank should be >= {} instead of {}", 1 + m, x.rank())));
    }
    let block = index_vec(block_t).map_err(|e| ctx.error(e.message))?;
    let pads = index_vec(pads_t).map_err(|e| ctx.error(e.message))?;
    if let Some(b) = block.iter().find(|&&b| b < 1) {
        return Err(ctx.error(format!("All values in block_shape must be positive, got value, {b} instead.")));
    }
    if let Some(p) = pads.iter().find(|&&p| p < 0) {
        return Err(ctx.error(format!("All values in {what} must be non-negative, got value, {p} instead.")));
    }
    let pairs = pads.chunks(2).map(|p| [p[0] as usize, p[1] as usize]).collect();
    Ok((block.iter().map(|&b| b as usize).collect(), pairs))
}

fn space_to_batch_typed<T: TensorType>(x: &Tensor, block: &[usize], pads: &[[usize; 2]]) -> Result<Tensor, Status> {
    let m = block.len();
    let dims = x.dims();
    let (batch, rest) = (dims[0], product(&dims[1 + m..]));
    let padded: Vec<usize> = (0..m).map(|i| dims[1 + i] + pads[i][0] + pads[i][1]).collect();
    // The input as [batch, spatial..., rest], written into its zero-padded copy.
    let mut pdims = vec![batch];
    pdims.extend(&padded);
    pdims.push(rest);
    let pstrides = strides_of(&pdims);
    let mut buf = ferroflow_core::alloc::zeroed::<T>(&pdims)?;
    let offset: isize = (0..m).map(|i| pads[i][0] as isize * pstrides[1 + i]).sum();
    let mut idims = vec![batch];
    idims.extend(&dims[1..1 + m]);
    idims.push(rest);
    strided_scatter(&mut buf, offset, &idims, &pstrides, x.as_slice::<T>()?);
    // Output as [block..., batch, padded/block..., rest].
    let mut vdims = block.to_vec();
    let mut vstrides: Vec<isize> = (0..m).map(|i| pstrides[1 + i]).collect();
    vdims.push(batch);
    vstrides.push(pstrides[0]);
    for i in 0..m {
        vdims.push(padded[i] / block[i]);
        vstrides.push(pstrides[1 + i] * block[i] as isize);
    }
    vdims.push(rest);
    vstrides.push(1);
    let mut out_dims = vec![batch * product(block)];
    out_dims.extend((0..m).map(|i| padded[i] / block[i]));
    out_dims.extend(&dims[1 + m..]);
    Tensor::new(out_dims, strided_gather(&buf, 0, &vdims, &vstrides)?)
}

fn batch_to_space_typed<T: TensorType>(x: &Tensor, block: &[usize], crops: &[[usize; 2]]) -> Result<Tensor, Status> {
    let m = block.len();
    let dims = x.dims();
    let batch = dims[0] / product(block);
    let rest = product(&dims[1 + m..]);
    // The input as [block..., batch, spatial..., rest]; the uncropped output is
    // [batch, spatial_0, block_0, ..., spatial_m, block_m, rest] of it.
    let mut idims = block.to_vec();
    idims.push(batch);
    idims.extend(&dims[1..1 + m]);
    idims.push(rest);
    let is = strides_of(&idims);
    let mut vdims = vec![batch];
    let mut vstrides = vec![is[m]];
    for i in 0..m {
        vdims.extend([dims[1 + i], block[i]]);
        vstrides.extend([is[m + 1 + i], is[i]]);
    }
    vdims.push(rest);
    vstrides.push(1);
    let full = strided_gather(x.as_slice::<T>()?, 0, &vdims, &vstrides)?;
    // Crop: the full output as [batch, spatial * block..., rest].
    let mut fdims = vec![batch];
    fdims.extend((0..m).map(|i| dims[1 + i] * block[i]));
    fdims.push(rest);
    let fs = strides_of(&fdims);
    let mut cdims = vec![batch];
    cdims.extend((0..m).map(|i| fdims[1 + i] - crops[i][0] - crops[i][1]));
    cdims.push(rest);
    let offset: isize = (0..m).map(|i| crops[i][0] as isize * fs[1 + i]).sum();
    let data = strided_gather(&full, offset, &cdims, &fs)?;
    let mut out_dims = cdims[..1 + m].to_vec();
    out_dims.extend(&dims[1 + m..]);
    Tensor::new(out_dims, data)
}

fn space_to_batch_nd(ctx: &mut OpContext) -> Result<(), Status> {
    let out = space_to_batch(ctx, &ctx.input(0)?, &ctx.input(1)?, &ctx.input(2)?)?;
    ctx.set_output(0, out)
}

fn batch_to_space_nd(ctx: &mut OpContext) -> Result<(), Status> {
    let out = batch_to_space(ctx, &ctx.input(0)?, &ctx.input(1)?, &ctx.input(2)?)?;
    ctx.set_output(0, out)
}

fn space_to_batch(ctx: &OpContext, x: &Tensor, block_t: &Tensor, pads_t: &Tensor) -> Result<Tensor, Status> {
    let (block, pads) = block_args(ctx, x, block_t, pads_t, "paddings")?;
    for (i, &b) in block.iter().enumerate() {
        let p = x.dims()[1 + i] + pads[i][0] + pads[i][1];
        if !p.is_multiple_of(b) {
            return Err(ctx.error(format!("padded_shape[{i}]={p} is not divisible by block_shape[{i}]={b}")));
        }
    }
    let mut out_dims = vec![x.dims()[0] * product(&block)];
    out_dims.extend(block.iter().enumerate().map(|(i, &b)| (x.dims()[1 + i] + pads[i][0] + pads[i][1]) / b));
    out_dims.extend(&x.dims()[1 + block.len()..]);
    check_alloc(&out_dims, x.dtype()).map_err(|e| ctx.error_with(e))?;
    ferroflow_core::with_dtype!(x.dtype(), T => space_to_batch_typed::<T>(x, &block, &pads))
}

fn batch_to_space(ctx: &OpContext, x: &Tensor, block_t: &Tensor, crops_t: &Tensor) -> Result<Tensor, Status> {
    let (block, crops) = block_args(ctx, x, block_t, crops_t, "crops")?;
    let prod = product(&block);
    if !x.dims()[0].is_multiple_of(prod) {
        return Err(ctx.error(format!(
            "Input batch dimension ({}) is not divisible by product of block sizes ({prod})",
            x.dims()[0]
        )));
    }
    for (i, &b) in block.iter().enumerate() {
        let full = x.dims()[1 + i] * b;
        if crops[i][0] + crops[i][1] > full {
            return Err(ctx.error(format!(
                "Crops must be non-negative and at most the block-expanded size: crops[{i}] = {:?} for size {full}",
                crops[i]
            )));
        }
    }
    ferroflow_core::with_dtype!(x.dtype(), T => batch_to_space_typed::<T>(x, &block, &crops))
}

/// Attr `block_size` of the 4-D ops (at least 2).
fn block_size_attr(n: &NodeDef) -> Result<i64, Status> {
    let block = n.attr_int("block_size")?;
    if block < 2 {
        return Err(n.node_error(format!("Value for attr 'block_size' of {block} must be at least minimum 2")));
    }
    Ok(block)
}

/// SpaceToDepth and DepthToSpace of NHWC images, by `block_size`.
struct DepthSpace {
    to_depth: bool,
    block: usize,
}

fn depth_space_make(n: &NodeDef) -> Result<Box<dyn OpKernel>, Status> {
    let block = block_size_attr(n)?;
    let format = if n.has_attr("data_format") { n.attr_string("data_format")? } else { "NHWC".into() };
    if format != "NHWC" {
        return Err(n.node_error(format!("Only NHWC data_format supported on CPU. Got {format}")));
    }
    Ok(Box::new(DepthSpace { to_depth: n.op == "SpaceToDepth", block: block as usize }))
}

impl OpKernel for DepthSpace {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let x = ctx.input(0)?;
        if x.rank() != 4 {
            return Err(ctx.error(format!("Input rank should be: 4 instead of: {}", x.rank())));
        }
        let b = self.block;
        let [n, h, w, c] = [x.dims()[0], x.dims()[1], x.dims()[2], x.dims()[3]];
        let (out_dims, vdims, vstrides): (Vec<usize>, Vec<usize>, Vec<isize>) = if self.to_depth {
            if h % b != 0 || w % b != 0 {
                return Err(ctx.error(format!("Image width {w} and height {h} should be divisible by block_size: {b}")));
            }
            // Output [n, h/b, w/b, (bh, bw, c)] reads the input at (n, oh·b + bh, ow·b + bw, c).
            let s = |v: usize| v as isize;
            (
                vec![n, h / b, w / b, c * b * b],
                vec![n, h / b, w / b, b, b, c],
                vec![s(h * w * c), s(b * w * c), s(b * c), s(w * c), s(c), 1],
            )
        } else {
            if c % (b * b) != 0 {
                return Err(ctx.error(format!("Input depth dimension {c} should be divisible by: {}", b * b)));
            }
            let co = c / (b * b);
            // Output [n, (h, bh), (w, bw), co] reads the input at (n, h, w, (bh, bw, co)).
            let s = |v: usize| v as isize;
            (
                vec![n, h * b, w * b, co],
                vec![n, h, b, w, b, co],
                vec![s(h * w * c), s(w * c), s(b * co), s(c), s(co), 1],
            )
        };
        let out = ferroflow_core::with_dtype!(x.dtype(), T => Tensor::new(out_dims, strided_gather(x.as_slice::<T>()?, 0, &vdims, &vstrides)?))?;
        ctx.set_output(0, out)
    }
}

/// SpaceToBatch and BatchToSpace: the ND ops over the two spatial dims of a 4-D input,
/// with one `block_size` for both.
struct Legacy {
    to_batch: bool,
    block: i64,
}

fn legacy_make(n: &NodeDef) -> Result<Box<dyn OpKernel>, Status> {
    let block = block_size_attr(n)?;
    Ok(Box::new(Legacy { to_batch: n.op == "SpaceToBatch", block }))
}

impl OpKernel for Legacy {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let x = ctx.input(0)?;
        if x.rank() != 4 {
            return Err(ctx.error(format!("input rank should be 4 instead of {}", x.rank())));
        }
        let pads = ctx.input(1)?;
        let block = Tensor::vec(vec![self.block, self.block]);
        let out = if self.to_batch {
            space_to_batch(ctx, &x, &block, &pads)?
        } else {
            batch_to_space(ctx, &x, &block, &pads)?
        };
        ctx.set_output(0, out)
    }
}

pub(crate) fn register(r: &mut KernelRegistry) {
    use super::util::FnKernel;
    r.add("SpaceToBatchND", |_| Ok(FnKernel::expensive(space_to_batch_nd)));
    r.add("BatchToSpaceND", |_| Ok(FnKernel::expensive(batch_to_space_nd)));
    r.add("SpaceToDepth", depth_space_make);
    r.add("DepthToSpace", depth_space_make);
    r.add("SpaceToBatch", legacy_make);
    r.add("BatchToSpace", legacy_make);
}
