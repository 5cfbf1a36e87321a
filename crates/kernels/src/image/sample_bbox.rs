//! `SampleDistortedBoundingBox`, `SampleDistortedBoundingBoxV2` (`min_object_covered` as an
//! input) and `StatelessSampleDistortedBoundingBox` (a `seed` input): the random crop of
//! Inception/ResNet ImageNet preprocessing (`tf.image.sample_distorted_bounding_box`). Up to
//! `max_attempts` times an aspect ratio is drawn, then a crop of that ratio whose area lies in
//! `area_range` of the image; the first crop covering at least `min_object_covered` of one
//! bounding box wins, else the whole image. The draws are TensorFlow's: its Philox stream
//! (a guarded one reserving `max_attempts` 128-bit blocks per run, or the stateless seed's),
//! read one 32-bit sample at a time, with its rejection-sampled uniform integers and its f32
//! rounding (`lrintf`) throughout.

use ferroflow_core::proto::{attr_value::Value as AttrKind, NodeDef};
use ferroflow_core::{DataType, NodeAttrs, Status, Storage, Tensor};

use super::common::dtype_attr;
use crate::random::philox::{u32_to_f32, Philox, SingleSample};
use crate::random::{key_counter_from_seed, GuardedPhilox};
use crate::{KernelRegistry, OpContext, OpKernel};

/// TensorFlow's `SimplePhilox`: 32-bit samples one at a time.
struct Simple<'a>(SingleSample<'a>);

impl Simple<'_> {
    fn rand_float(&mut self) -> f32 {
        u32_to_f32(self.0.next_u32())
    }

    /// A uniform integer in `[0, n)` by TensorFlow's `ExactUniformInt`: a mask for powers of
    /// two, otherwise samples below `2^32 mod n` are rejected (one sample is used even for 0).
    fn uniform(&mut self, n: u32) -> u32 {
        if n == 0 {
            self.0.next_u32();
            return 0;
        }
        if n & (n - 1) == 0 {
            return self.0.next_u32() & (n - 1);
        }
        let rem = (u32::MAX % n) + 1;
        loop {
            let r = self.0.next_u32();
            if r >= rem {
                return r % n;
            }
        }
    }
}

/// An integer rectangle, `[min, max)` on both axes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Rect {
    min_x: i32,
    min_y: i32,
    max_x: i32,
    max_y: i32,
}

impl Rect {
    fn area(&self) -> f32 {
        (self.max_x.wrapping_sub(self.min_x)).wrapping_mul(self.max_y.wrapping_sub(self.min_y)) as f32
    }

    fn intersect(&self, r: &Rect) -> Rect {
        let (x0, y0) = (self.min_x.max(r.min_x), self.min_y.max(r.min_y));
        let (x1, y1) = (self.max_x.min(r.max_x), self.max_y.min(r.max_y));
        if x0 > x1 || y0 > y1 {
            Rect::default()
        } else {
            Rect { min_x: x0, min_y: y0, max_x: x1, max_y: y1 }
        }
    }
}

/// C's `lrintf` (round half to even) then `static_cast<int>`.
fn lrint(x: f32) -> i32 {
    x.round_ties_even() as i64 as i32
}

/// Whether `crop` (of at least one pixel) covers `min_covered` of one box of a pixel or more.
fn covers(crop: &Rect, min_covered: f32, boxes: &[Rect]) -> bool {
    if crop.area() < 1.0 {
        return false;
    }
    boxes.iter().any(|b| {
        let area = b.area();
        area >= 1.0 && crop.intersect(b).area() / area >= min_covered
    })
}

/// TensorFlow's `GenerateRandomCrop`: a crop of `aspect` ratio whose area is within
/// `[min_rel, max_rel]` of a `w` × `h` image, placed uniformly; `None` when none fits.
fn random_crop(w: i32, h: i32, min_rel: f32, max_rel: f32, aspect: f32, rnd: &mut Simple) -> Option<Rect> {
    if max_rel <= 0.0 || aspect <= 0.0 || w <= 0 || h <= 0 || min_rel > max_rel {
        return None;
    }
    let min_area = min_rel * w as f32 * h as f32;
    let max_area = max_rel * w as f32 * h as f32;
    let mut height = lrint((min_area / aspect).sqrt());
    let mut max_height = lrint((max_area / aspect).sqrt());
    if lrint(max_height as f32 * aspect) > w {
        // The largest height whose rounded width fits: in double, as TensorFlow computes it.
        let eps = f64::from(1.0e-7f32);
        max_height = ((w as f64 + 0.5 - eps) / f64::from(aspect)) as i32;
        if lrint(max_height as f32 * aspect) > w {
            max_height -= 1;
        }
    }
    max_height = max_height.min(h);
    height = height.min(max_height);
    if height < max_height {
        let span = max_height.wrapping_sub(height).wrapping_add(1) as u32;
        height = (height as u32).wrapping_add(rnd.uniform(span)) as i32;
    }
    let mut width = lrint(height as f32 * aspect);
    let mut area = width.wrapping_mul(height) as f32;
    if area < min_area {
        height += 1;
        width = lrint(height as f32 * aspect);
        area = width.wrapping_mul(height) as f32;
    }
    if area > max_area {
        height -= 1;
        width = lrint(height as f32 * aspect);
        area = width.wrapping_mul(height) as f32;
    }
    if area < min_area || area > max_area || width > w || height > h || width <= 0 || height <= 0 {
        return None;
    }
    let y = if height < h { rnd.uniform((h - height) as u32) as i32 } else { 0 };
    let x = if width < w { rnd.uniform((w - width) as u32) as i32 } else { 0 };
    Some(Rect { min_x: x, min_y: y, max_x: x + width, max_y: y + height })
}

#[derive(Clone, Copy, PartialEq)]
enum Version {
    /// `min_object_covered` is an attr.
    V1(f32),
    V2,
    Stateless,
}

struct SampleBox {
    version: Version,
    dtype: DataType,
    aspect: [f32; 2],
    area: [f32; 2],
    max_attempts: i32,
    use_image: bool,
    gen: Option<GuardedPhilox>,
}

fn list_float(n: &NodeDef, name: &str) -> Result<Vec<f32>, Status> {
    match &n.attr_value(name)?.value {
        Some(AttrKind::List(l)) => Ok(l.f.clone()),
        _ => Err(n.node_error(format!("attr '{name}' must be a list(float)"))),
    }
}

fn make(n: &NodeDef, version: Version) -> Result<Box<dyn OpKernel>, Status> {
    use DataType::*;
    let dtype = dtype_attr(n, "T", |d| matches!(d, UInt8 | Int8 | Int16 | Int32 | Int64))?;
    let version = match version {
        Version::V1(_) => {
            let m = n.attr_float("min_object_covered")?;
            if m.is_nan() || m < 0.0 {
                return Err(n.node_error(format!("Min object covered must be non-negative: {m}")));
            }
            Version::V1(m)
        }
        v => v,
    };
    let use_image = n.attr_bool("use_image_if_no_bounding_boxes")?;
    let aspect = list_float(n, "aspect_ratio_range")?;
    let [a0, a1] = aspect[..] else {
        return Err(n.node_error("Aspect ratio range field must specify 2 dimensions"));
    };
    if !(a0 > 0.0 && a1 > 0.0) {
        return Err(n.node_error(format!("Aspect ratio range must be non-negative: [{a0}, {a1}]")));
    }
    let area = list_float(n, "area_range")?;
    let [r0, r1] = area[..] else {
        return Err(n.node_error("Area range field must specify 2 dimensions"));
    };
    if !(r0 > 0.0 && r1 > 0.0) {
        return Err(n.node_error(format!("Area range must be non-negative: [{r0}, {r1}]")));
    }
    if !(r0 <= 1.0 && r1 <= 1.0) {
        return Err(n.node_error(format!("Area range must be less then or equal to 1.0: [{r0}, {r1}]")));
    }
    let attempts = n.attr_int("max_attempts")?;
    let max_attempts = i32::try_from(attempts)
        .map_err(|_| n.node_error(format!("Attr max_attempts has value {attempts} out of range for an int32")))?;
    if max_attempts <= 0 {
        return Err(n.node_error(format!("Max attempts must be non-negative: {max_attempts}")));
    }
    let gen = if version == Version::Stateless { None } else { Some(GuardedPhilox::from_node(n)?) };
    Ok(Box::new(SampleBox { version, dtype, aspect: [a0, a1], area: [r0, r1], max_attempts, use_image, gen }))
}

/// The values of an integer tensor, widened as C++ widens them to `uint64`.
fn int_values(ctx: &OpContext, t: &Tensor) -> Result<Vec<u64>, Status> {
    Ok(match t.storage() {
        Storage::U8(v) => v.iter().map(|&x| x as u64).collect(),
        Storage::I8(v) => v.iter().map(|&x| x as i64 as u64).collect(),
        Storage::I16(v) => v.iter().map(|&x| x as i64 as u64).collect(),
        Storage::I32(v) => v.iter().map(|&x| x as i64 as u64).collect(),
        Storage::I64(v) => v.iter().map(|&x| x as u64).collect(),
        _ => return Err(ctx.error(format!("image_size must be an integer tensor, got {}", t.dtype()))),
    })
}

/// A 3-vector of type `dt` (values truncated to it as `T(v)` does).
fn int_vec(dt: DataType, v: [i64; 3]) -> Result<Tensor, Status> {
    let storage = match dt {
        DataType::UInt8 => Storage::U8(v.iter().map(|&x| x as u8).collect()),
        DataType::Int8 => Storage::I8(v.iter().map(|&x| x as i8).collect()),
        DataType::Int16 => Storage::I16(v.iter().map(|&x| x as i16).collect()),
        DataType::Int32 => Storage::I32(v.iter().map(|&x| x as i32).collect()),
        _ => Storage::I64(v.to_vec()),
    };
    Tensor::from_storage(vec![3].into(), storage)
}

/// The generator of a stateless run from its `seed` input (TensorFlow's `GenerateKey`).
fn stateless_philox(ctx: &OpContext, seed: &Tensor) -> Result<Philox, Status> {
    if seed.rank() != 1 || seed.dims()[0] != 2 {
        return Err(ctx.error(format!("seed must have shape [2], not {}", seed.shape())));
    }
    let s = match seed.storage() {
        Storage::I32(v) => [v[0] as i64 as u64, v[1] as i64 as u64],
        Storage::I64(v) => [v[0] as u64, v[1] as u64],
        _ => return Err(ctx.error(format!("Invalid seed type: {}", seed.dtype().tf_name()))),
    };
    Ok(key_counter_from_seed(s))
}

impl SampleBox {
    /// The boxes of input 1 in pixels, after TensorFlow's checks.
    fn boxes(&self, ctx: &OpContext, t: &Tensor, width: i32, height: i32) -> Result<Vec<Rect>, Status> {
        let b = t.as_slice::<f32>()?;
        let mut out = Vec::with_capacity(b.len() / 4);
        for r in b.chunks_exact(4) {
            if let Some(v) = r.iter().find(|v| !(**v >= 0.0 && **v <= 1.0)) {
                return Err(ctx.error(format!("All bounding box coordinates must be in [0.0, 1.0]: {v}")));
            }
            let px = |v: f32, size: i32| (v * size as f32) as i32;
            out.push(Rect {
                min_x: px(r[1], width),
                min_y: px(r[0], height),
                max_x: px(r[3], width),
                max_y: px(r[2], height),
            });
        }
        Ok(out)
    }

    fn run(&self, ctx: &mut OpContext, rng: Philox) -> Result<(), Status> {
        let size = ctx.input(0)?;
        if size.rank() != 1 {
            return Err(ctx.error(format!("image_size must be 1-dimensional{}", size.shape())));
        }
        if size.dims()[0] != 3 {
            return Err(ctx.error(format!("image_size must contain 3 elements{}", size.shape())));
        }
        let hw = int_values(ctx, &size)?;
        if hw[0] >= i32::MAX as u64 {
            return Err(ctx.error("image height cannot be >= int32 max"));
        }
        if hw[1] >= i32::MAX as u64 {
            return Err(ctx.error("image width cannot be >= int32 max"));
        }
        let (height, width) = (hw[0] as i32, hw[1] as i32);
        let boxes = ctx.input(1)?;
        if boxes.rank() != 3 {
            return Err(
                ctx.error(format!("input boxes must be 3-dimensional [batch, num_boxes, coords]: {}", boxes.shape()))
            );
        }
        if boxes.dims()[2] != 4 {
            return Err(ctx.error(format!("bounding boxes must have shape [4] or [*, 4], got {}", boxes.shape())));
        }
        let min_covered = match self.version {
            Version::V1(m) => m,
            _ => {
                let m = ctx.input(2)?;
                if m.rank() != 0 {
                    return Err(ctx.error(format!("min_object_covered must be 0-D, got shape {}", m.shape())));
                }
                let v = m.scalar_value::<f32>()?;
                if v.is_nan() || v < 0.0 {
                    return Err(ctx.error(format!("Min object covered must be non-negative: {v}")));
                }
                v
            }
        };
        let mut rects = self.boxes(ctx, &boxes, width, height)?;
        let image = Rect { min_x: 0, min_y: 0, max_x: width, max_y: height };
        if rects.is_empty() {
            if !self.use_image {
                return Err(ctx.error(
                    "No bounding boxes provided as input. One must enable use_image_if_no_bounding_boxes if you \
                     wish to not provide any bounding boxes.",
                ));
            }
            rects.push(image);
        }
        let mut local = rng;
        let mut rnd = Simple(SingleSample::new(&mut local));
        let [min_ar, max_ar] = self.aspect;
        let mut crop = image;
        for _ in 0..self.max_attempts {
            let aspect = rnd.rand_float() * (max_ar - min_ar) + min_ar;
            if let Some(c) = random_crop(width, height, self.area[0], self.area[1], aspect, &mut rnd) {
                if covers(&c, min_covered, &rects) {
                    crop = c;
                    break;
                }
            }
        }
        let (tw, th) = (crop.max_x - crop.min_x, crop.max_y - crop.min_y);
        let dt = self.dtype;
        ctx.set_output(0, int_vec(dt, [crop.min_y as i64, crop.min_x as i64, 0])?)?;
        ctx.set_output(1, int_vec(dt, [th as i64, tw as i64, -1])?)?;
        let (h, w) = (height as f32, width as f32);
        let bbox = vec![crop.min_y as f32 / h, crop.min_x as f32 / w, crop.max_y as f32 / h, crop.max_x as f32 / w];
        ctx.set_output(2, Tensor::new(vec![1, 1, 4], bbox)?)
    }
}

impl OpKernel for SampleBox {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let rng = match &self.gen {
            // A shared stream: 4 samples per attempt are reserved whatever the run uses.
            Some(g) => g.reserve128(self.max_attempts as u64),
            None => stateless_philox(ctx, &ctx.input(3)?)?,
        };
        self.run(ctx, rng)
    }
}

/// Registers the kernels.
pub(crate) fn register(r: &mut KernelRegistry) {
    r.add("SampleDistortedBoundingBox", |n| make(n, Version::V1(0.0)));
    r.add("SampleDistortedBoundingBoxV2", |n| make(n, Version::V2));
    r.add("StatelessSampleDistortedBoundingBox", |n| make(n, Version::Stateless));
}

#[cfg(test)]
#[path = "sample_bbox_tests.rs"]
mod tests;
