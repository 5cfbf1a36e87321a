//! `ExtractImagePatches`: each output pixel holds the `ksize_rows × ksize_cols × depth`
//! patch (sampled every `rate` pixels) around its window, zeros where the window leaves
//! the image (SAME padding).

use ferroflow_core::half::{bf16, f16};
use ferroflow_core::proto::NodeDef;
use ferroflow_core::{DataType, NodeAttrs, Status, Tensor, TensorType, C128, C64};

use super::common::{check_type, for_rows, image_dims, zeros};
use crate::dispatch::dispatch;
use crate::{OpContext, OpKernel};

/// One spatial axis: output size and leading padding.
fn axis(input: usize, k: usize, rate: usize, stride: usize, same: bool) -> Option<(usize, usize, usize)> {
    let eff = k.checked_sub(1)?.checked_mul(rate)?.checked_add(1)?;
    if same {
        let out = input.div_ceil(stride);
        let need = (out.saturating_sub(1) * stride + eff).saturating_sub(input);
        Some((out, need / 2, eff))
    } else {
        Some(((input.checked_sub(eff)?) / stride + 1, 0, eff))
    }
}

struct Patches {
    k: [usize; 2],
    stride: [usize; 2],
    rate: [usize; 2],
    same: bool,
    dtype: DataType,
}

impl Patches {
    fn run<T: TensorType + Copy + Default + Send + Sync>(
        &self,
        ctx: &OpContext,
        img: &Tensor,
    ) -> Result<Tensor, Status> {
        let [n, ih, iw, c] = image_dims(ctx, img, "input")?;
        let too_big = || {
            ctx.error(format!("Computed output size would be negative: the effective window of ksizes {:?} and rates {:?} is larger than the input {:?} (padding VALID)", self.k, self.rate, [ih, iw]))
        };
        let (oh, pt, _) = axis(ih, self.k[0], self.rate[0], self.stride[0], self.same).ok_or_else(too_big)?;
        let (ow, pl, _) = axis(iw, self.k[1], self.rate[1], self.stride[1], self.same).ok_or_else(too_big)?;
        let depth = self.k[0]
            .checked_mul(self.k[1])
            .and_then(|v| v.checked_mul(c))
            .ok_or_else(|| ctx.error("patch depth overflows"))?;
        let dims = [n, oh, ow, depth];
        let mut out = zeros::<T>(&dims, T::DTYPE)?;
        let x = img.as_slice::<T>()?;
        let [kr, kc] = self.k;
        let [sr, sc] = self.stride;
        let [rr, rc] = self.rate;
        for_rows(&mut out, ow * depth, |r, row| {
            let (b, y) = (r / oh, r % oh);
            for (xo, patch) in row.chunks_exact_mut(depth).enumerate() {
                for i in 0..kr {
                    let iy = (y * sr + i * rr) as i64 - pt as i64;
                    if iy < 0 || iy as usize >= ih {
                        continue;
                    }
                    for j in 0..kc {
                        let ix = (xo * sc + j * rc) as i64 - pl as i64;
                        if ix < 0 || ix as usize >= iw {
                            continue;
                        }
                        let src = &x[((b * ih + iy as usize) * iw + ix as usize) * c..][..c];
                        patch[(i * kc + j) * c..][..c].copy_from_slice(src);
                    }
                }
            }
        });
        Tensor::new(dims.to_vec(), out)
    }
}

impl OpKernel for Patches {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let img = ctx.input(0)?;
        check_type(ctx, &img, "images", "T", self.dtype)?;
        let dt = self.dtype;
        let t =
            dispatch!(dt, ctx, [f32, f64, i8, i16, i32, i64, u8, u16, u32, u64, f16, bf16, bool, C64, C128], |T| self
                .run::<T>(ctx, &img))?;
        ctx.set_output(0, t)
    }
}

/// A 4-entry attr whose batch and depth entries are 1: its (rows, cols) entries.
fn spatial(node: &NodeDef, name: &str, what: &str) -> Result<[usize; 2], Status> {
    let v = node.attr_list_int(name)?;
    if v.len() != 4 || v[0] != 1 || v[3] != 1 {
        return Err(node.node_error(format!(
            "{name} must be [1, {what}_rows, {what}_cols, 1]: only support {name} across space, got {v:?}"
        )));
    }
    let ok = |x: i64| usize::try_from(x).ok().filter(|&x| x > 0 && x < (1 << 24));
    match (ok(v[1]), ok(v[2])) {
        (Some(a), Some(b)) => Ok([a, b]),
        _ => Err(node.node_error(format!("{name} entries must be positive and below 2^24, got {v:?}"))),
    }
}

pub(crate) fn factory(node: &NodeDef) -> Result<Box<dyn OpKernel>, Status> {
    let dtype = node.attr_type("T")?;
    let same = match node.attr_string("padding")?.as_str() {
        "SAME" => true,
        "VALID" => false,
        p => return Err(node.node_error(format!("padding must be SAME or VALID, got '{p}'"))),
    };
    Ok(Box::new(Patches {
        k: spatial(node, "ksizes", "ksize")?,
        stride: spatial(node, "strides", "stride")?,
        rate: spatial(node, "rates", "rate")?,
        same,
        dtype,
    }))
}
