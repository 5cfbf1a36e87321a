//! Grouped convolutions: `Conv2D` and its gradients when the filter's depth is a fraction of
//! the input's (`filters [kh, kw, c / groups, oc]`, as Keras `Conv2D(groups=…)` builds them
//! for ResNeXt, RegNet and ConvNeXt). Group `i` convolves input channels
//! `[i·c/groups, (i+1)·c/groups)` with filter columns `[i·oc/groups, (i+1)·oc/groups)` into
//! the same output channels.
//!
//! One input channel per group is a depthwise convolution with the filter laid out exactly
//! as `DepthwiseConv2dNative` reads it (`[kh, kw, 1, c·m]` is `[kh, kw, c, m]` in memory), so
//! the depthwise kernels run it. Otherwise each group's channels are gathered into
//! contiguous buffers, the ungrouped kernel runs on them, and the result is scattered back;
//! the groups run one after another, each kernel using the whole pool.

use ferroflow_core::{Status, TensorType};

use super::depthwise::DwGeom;
use super::im2col::ConvGeom;

/// Copies `len` channels starting at `c0` of every pixel of `src` (pixels of `c` channels)
/// into a contiguous buffer of pixels of `len` channels.
pub fn gather_channels<T: Copy>(src: &[T], c: usize, c0: usize, len: usize) -> Vec<T> {
    if c == 0 || len == 0 {
        return Vec::new();
    }
    let mut out = Vec::with_capacity(src.len() / c * len);
    for px in src.chunks_exact(c) {
        out.extend_from_slice(&px[c0..c0 + len]);
    }
    out
}

/// Writes pixels of `len` channels from `src` into channels `[c0, c0 + len)` of `dst`
/// (pixels of `c` channels).
pub fn scatter_channels<T: Copy>(dst: &mut [T], c: usize, c0: usize, src: &[T], len: usize) {
    if c == 0 || len == 0 {
        return;
    }
    for (d, s) in dst.chunks_exact_mut(c).zip(src.chunks_exact(len)) {
        d[c0..c0 + len].copy_from_slice(s);
    }
}

/// The depthwise geometry of a grouped convolution with one input channel per group
/// (`g` is the per-group geometry), or None when groups hold more than one channel.
pub(crate) fn as_depthwise(g: &ConvGeom, groups: usize) -> Option<DwGeom> {
    (g.c == 1).then_some(DwGeom { n: g.n, c: groups, m: g.oc, y: g.y, x: g.x })
}

/// The forward convolution of `groups` groups: `g` is one group's geometry, `conv` the
/// ungrouped kernel. Returns the output (`rows × oc·groups`).
pub(crate) fn forward<T: TensorType + Copy + Default>(
    g: &ConvGeom,
    groups: usize,
    x: &[T],
    f: &[T],
    conv: impl Fn(&ConvGeom, &[T], &[T], &mut [T]),
) -> Result<Vec<T>, Status> {
    let (c, oc) = (g.c * groups, g.oc * groups);
    let mut out = ferroflow_core::alloc::zeroed::<T>(&[g.n, g.y.output, g.x.output, oc])?;
    let mut part = ferroflow_core::alloc::zeroed::<T>(&[g.n, g.y.output, g.x.output, g.oc])?;
    for i in 0..groups {
        let xg = gather_channels(x, c, i * g.c, g.c);
        let fg = gather_channels(f, oc, i * g.oc, g.oc);
        conv(g, &xg, &fg, &mut part);
        scatter_channels(&mut out, oc, i * g.oc, &part, g.oc);
    }
    Ok(out)
}

/// The input gradient of `groups` groups into `dx` (`n·h·w·c·groups`); `bprop(g, f, dy, dx)`
/// is the ungrouped kernel, which receives a zeroed `dx`.
pub(crate) fn backprop_input<T: TensorType + Copy + Default>(
    g: &ConvGeom,
    groups: usize,
    f: &[T],
    dy: &[T],
    dx: &mut [T],
    bprop: impl Fn(&ConvGeom, &[T], &[T], &mut [T]),
) -> Result<(), Status> {
    let (c, oc) = (g.c * groups, g.oc * groups);
    let mut part = ferroflow_core::alloc::zeroed::<T>(&[g.n, g.y.input, g.x.input, g.c])?;
    for i in 0..groups {
        let fg = gather_channels(f, oc, i * g.oc, g.oc);
        let dyg = gather_channels(dy, oc, i * g.oc, g.oc);
        part.fill(T::default());
        bprop(g, &fg, &dyg, &mut part);
        scatter_channels(dx, c, i * g.c, &part, g.c);
    }
    Ok(())
}

/// The filter gradient of `groups` groups (`kh·kw·c × oc·groups`); `bprop(g, x, dy)` is the
/// ungrouped kernel.
pub(crate) fn backprop_filter<T: TensorType + Copy + Default>(
    g: &ConvGeom,
    groups: usize,
    x: &[T],
    dy: &[T],
    bprop: impl Fn(&ConvGeom, &[T], &[T]) -> Result<Vec<T>, Status>,
) -> Result<Vec<T>, Status> {
    let (c, oc) = (g.c * groups, g.oc * groups);
    let mut dw = ferroflow_core::alloc::zeroed::<T>(&[g.y.size, g.x.size, g.c, oc])?;
    for i in 0..groups {
        let xg = gather_channels(x, c, i * g.c, g.c);
        let dyg = gather_channels(dy, oc, i * g.oc, g.oc);
        let part = bprop(g, &xg, &dyg)?;
        scatter_channels(&mut dw, oc, i * g.oc, &part, g.oc);
    }
    Ok(dw)
}
