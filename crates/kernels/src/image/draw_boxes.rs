//! `DrawBoundingBoxesV2`: one-pixel box outlines `[y_min, x_min, y_max, x_max]`
//! (normalized) in the given colours, or TensorFlow's default palette of ten.

use ferroflow_core::half::f16;
use ferroflow_core::proto::NodeDef;
use ferroflow_core::{DataType, Status};

use super::common::{check_type, dtype_attr, float_tensor, image_dims};
use crate::OpKernel;

/// TensorFlow's default colours (RGBA).
const DEFAULT_COLORS: [[f32; 4]; 10] = [
    [1.0, 1.0, 0.0, 1.0],
    [0.0, 0.0, 1.0, 1.0],
    [1.0, 0.0, 0.0, 1.0],
    [0.0, 1.0, 0.0, 1.0],
    [0.5, 0.0, 0.5, 1.0],
    [0.5, 0.5, 0.0, 1.0],
    [0.5, 0.0, 0.0, 1.0],
    [0.0, 0.0, 0.5, 1.0],
    [0.0, 1.0, 1.0, 1.0],
    [1.0, 0.0, 1.0, 1.0],
];

op_kernel! {
    struct DrawBoxes { dtype: DataType }
    fn compute(&self, ctx) {
        let x = ctx.input(0)?;
        check_type(ctx, &x, "images", "T", self.dtype)?;
        let [n, h, w, depth] = image_dims(ctx, &x, "images")?;
        if !matches!(depth, 1 | 3 | 4) {
            return Err(ctx.error(format!("Channel depth should be either 1 (GRY), 3 (RGB), or 4 (RGBA), got {depth}")));
        }
        if h == 0 || w == 0 {
            return Err(ctx.error(format!("image must have non-zero height and width, got shape {}", x.shape())));
        }
        let boxes = ctx.input(1)?;
        let bd = boxes.dims();
        if bd.len() != 3 || bd[0] != n || bd[2] != 4 {
            return Err(ctx.error(format!(
                "boxes must be 3-D [batch, num_boxes, 4] with batch {n}, got shape {}",
                boxes.shape()
            )));
        }
        let bv = boxes.as_slice::<f32>().map_err(|_| ctx.error("boxes must be float"))?;
        let colors_t = ctx.input(2)?;
        if colors_t.rank() != 2 {
            return Err(ctx.error(format!("colors must be a 2-D matrix, got shape {}", colors_t.shape())));
        }
        let colors: Vec<Vec<f32>> = if colors_t.num_elements() == 0 {
            DEFAULT_COLORS.iter().map(|c| c.to_vec()).collect()
        } else {
            let cd = colors_t.dims();
            if cd[1] < depth {
                return Err(ctx.error(format!(
                    "Color array must have at least as many columns as the image depth ({depth}), got {}",
                    cd[1]
                )));
            }
            let cv = colors_t.as_slice::<f32>().map_err(|_| ctx.error("colors must be float"))?;
            cv.chunks_exact(cd[1]).map(<[f32]>::to_vec).collect()
        };
        let mut colors = colors;
        if depth == 1 {
            // Gray images draw every box white, like TensorFlow.
            colors.iter_mut().for_each(|c| c[0] = 1.0);
        }
        let mut v: Vec<f32> = match self.dtype {
            DataType::Float => x.as_slice::<f32>()?.to_vec(),
            _ => x.as_slice::<f16>()?.iter().map(|v| v.to_f32()).collect(),
        };
        let nb = bd[1];
        let (hl, wl) = ((h - 1) as f32, (w - 1) as f32);
        let (hi, wi) = (h as i64, w as i64);
        for b in 0..n {
            let canvas = &mut v[b * h * w * depth..(b + 1) * h * w * depth];
            for k in 0..nb {
                let bx = &bv[(b * nb + k) * 4..][..4];
                let color = &colors[k % colors.len()];
                let (r0, r1) = ((bx[0] * hl) as i64, (bx[2] * hl) as i64);
                let (c0, c1) = ((bx[1] * wl) as i64, (bx[3] * wl) as i64);
                if r0 > r1 || c0 > c1 || r0 >= hi || r1 < 0 || c0 >= wi || c1 < 0 {
                    continue;
                }
                let (r0c, r1c, c0c, c1c) = (r0.max(0), r1.min(hi - 1), c0.max(0), c1.min(wi - 1));
                let mut paint = |r: i64, c: i64| {
                    canvas[((r * wi + c) as usize) * depth..][..depth].copy_from_slice(&color[..depth]);
                };
                for c in c0c..=c1c {
                    if r0 >= 0 {
                        paint(r0, c);
                    }
                    if r1 < hi {
                        paint(r1, c);
                    }
                }
                for r in r0c..=r1c {
                    if c0 >= 0 {
                        paint(r, c0);
                    }
                    if c1 < wi {
                        paint(r, c1);
                    }
                }
            }
        }
        ctx.set_output(0, float_tensor(x.dims().to_vec(), v, self.dtype)?)
    }
}

pub(crate) fn factory(node: &NodeDef) -> Result<Box<dyn OpKernel>, Status> {
    Ok(Box::new(DrawBoxes { dtype: dtype_attr(node, "T", |d| matches!(d, DataType::Float | DataType::Half))? }))
}
