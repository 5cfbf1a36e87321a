//! `HistogramSummary` and TensorFlow's histogram: bucket limits growing by 10% from 1e-12
//! to 1e20 (then f64::MAX), mirrored to the negatives around 0; a value falls in the first
//! bucket whose limit exceeds it; runs of empty buckets are collapsed when encoded.

use std::sync::OnceLock;

use ferroflow_core::proto::{summary, HistogramProto};
use ferroflow_core::Status;

use super::{output, tagged, utf8};
use crate::{KernelRegistry, OpContext};

/// TensorFlow's default bucket limits (1551: 775 on each side of 0).
pub fn default_bucket_limits() -> &'static [f64] {
    static LIMITS: OnceLock<Vec<f64>> = OnceLock::new();
    LIMITS.get_or_init(|| {
        let mut pos = Vec::new();
        let mut v = 1.0e-12;
        while v < 1.0e20 {
            pos.push(v);
            v *= 1.1;
        }
        pos.push(f64::MAX);
        let mut all: Vec<f64> = pos.iter().rev().map(|x| -x).collect();
        all.push(0.0);
        all.extend(pos);
        all
    })
}

/// A histogram over [`default_bucket_limits`].
#[derive(Clone, Debug)]
pub struct Histogram {
    min: f64,
    max: f64,
    num: f64,
    sum: f64,
    sum_squares: f64,
    buckets: Vec<f64>,
}

impl Default for Histogram {
    fn default() -> Self {
        Histogram {
            min: f64::MAX,
            max: -f64::MAX,
            num: 0.0,
            sum: 0.0,
            sum_squares: 0.0,
            buckets: vec![0.0; default_bucket_limits().len()],
        }
    }
}

impl Histogram {
    /// Adds one value.
    pub fn add(&mut self, v: f64) {
        let limits = default_bucket_limits();
        let b = limits.partition_point(|&l| l <= v).min(limits.len() - 1);
        self.buckets[b] += 1.0;
        self.min = self.min.min(v);
        self.max = self.max.max(v);
        self.num += 1.0;
        self.sum += v;
        self.sum_squares += v * v;
    }

    /// The proto, with runs of empty buckets collapsed into one.
    pub fn to_proto(&self) -> HistogramProto {
        let limits = default_bucket_limits();
        let mut p = HistogramProto {
            min: self.min,
            max: self.max,
            num: self.num,
            sum: self.sum,
            sum_squares: self.sum_squares,
            ..Default::default()
        };
        let mut i = 0;
        while i < self.buckets.len() {
            let (mut end, mut count) = (limits[i], self.buckets[i]);
            i += 1;
            if count <= 0.0 {
                while i < self.buckets.len() && self.buckets[i] <= 0.0 {
                    end = limits[i];
                    count = self.buckets[i];
                    i += 1;
                }
            }
            p.bucket_limit.push(end);
            p.bucket.push(count);
        }
        p
    }
}

op_kernel! {
    struct HistogramSummary;
    fn compute(&self, ctx) {
        let tag_t = ctx.input(0)?;
        if tag_t.num_elements() != 1 {
            return Err(ctx.error(format!("tags must be a scalar, got shape {}", tag_t.shape())));
        }
        let tag = utf8(ctx, &tag_t.as_slice::<Vec<u8>>().map_err(|_| ctx.error("tag must be a string"))?[0], "tag")?;
        let h = histogram_of(ctx, &tag, &ctx.input(1)?)?;
        output(ctx, vec![tagged(tag, summary::value::Value::Histo(h))])
    }
}

/// The histogram of `values` (`HistogramSummary`'s and `WriteHistogramSummary`'s work);
/// a NaN or infinite value is InvalidArgument naming `tag`.
pub(super) fn histogram_of(
    ctx: &OpContext,
    tag: &str,
    values: &ferroflow_core::Tensor,
) -> Result<HistogramProto, Status> {
    let values = values.to_f64_vec().map_err(|e| ctx.error(e.message))?;
    let mut h = Histogram::default();
    for v in values {
        if v.is_nan() {
            return Err(ctx.error(format!("Nan in summary histogram for: {tag}")));
        }
        if v.is_infinite() {
            return Err(ctx.error(format!("Infinity in summary histogram for: {tag}")));
        }
        h.add(v);
    }
    Ok(h.to_proto())
}

pub(crate) fn register(r: &mut KernelRegistry) {
    r.add("HistogramSummary", |_| Ok(Box::new(HistogramSummary)));
}
