//! Candidate sampling for sampled losses (`tf.nn.sampled_softmax_loss`, `tf.nn.nce_loss`):
//! `LogUniformCandidateSampler` (Zipfian classes, TensorFlow's numbers: the same Philox
//! stream reservation, draws and rejection of repeats) and `ComputeAccidentalHits` (the
//! sampled classes that are a row's true classes, to be masked out of its logits).

use std::collections::{HashMap, HashSet};

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{DataType, NodeAttrs, Status, Tensor};

use super::guarded::GuardedPhilox;
use super::philox::{u64_to_f64, SingleSample};
use crate::{KernelRegistry, OpContext, OpKernel};

struct LogUniform {
    num_true: usize,
    num_sampled: usize,
    unique: bool,
    range: i64,
    log_range: f64,
    gen: GuardedPhilox,
}

fn make_log_uniform(n: &NodeDef) -> Result<Box<dyn OpKernel>, Status> {
    let range = n.attr_int("range_max")?;
    if range <= 0 {
        return Err(n.node_error("range_max must be positive"));
    }
    let (num_true, num_sampled) = (n.attr_int("num_true")?, n.attr_int("num_sampled")?);
    if num_true < 1 || num_sampled < 1 {
        return Err(n.node_error(format!("num_true ({num_true}) and num_sampled ({num_sampled}) must be at least 1")));
    }
    Ok(Box::new(LogUniform {
        num_true: num_true as usize,
        num_sampled: num_sampled as usize,
        unique: n.attr_bool("unique")?,
        range,
        log_range: (range as f64).ln_1p(),
        gen: GuardedPhilox::from_node(n)?,
    }))
}

impl LogUniform {
    fn probability(&self, v: i64) -> f32 {
        (((v as f64 + 2.0) / (v as f64 + 1.0)).ln() / self.log_range) as f32
    }

    /// The expected count of a class of probability `p` among the draws.
    fn expected(&self, p: f32, tries: usize) -> f32 {
        if tries == self.num_sampled {
            p * self.num_sampled as f32
        } else {
            -((tries as f32) * (-p).ln_1p()).exp_m1()
        }
    }
}

impl OpKernel for LogUniform {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let t = ctx.input(0)?;
        if t.rank() != 2 {
            return Err(ctx.error("true_classes must be a matrix"));
        }
        if t.dims()[1] != self.num_true {
            return Err(ctx.error(format!(
                "true_classes must have num_true columns, expected: {} was: {}",
                t.dims()[1],
                self.num_true
            )));
        }
        if t.dtype() != DataType::Int64 {
            return Err(ctx.error(format!("true_classes must be int64, got {}", t.dtype())));
        }
        if self.unique && self.num_sampled as i64 > self.range {
            return Err(ctx.error("Sampler's range is too small."));
        }
        let truth = t.as_slice::<i64>()?;
        if let Some(&c) = truth.iter().find(|&&c| c < 0 || c >= self.range) {
            return Err(ctx.error(format!("`true_candidate` out of range [0, {}), received {c}", self.range)));
        }
        // TensorFlow reserves 2048 32-bit samples per sampled class.
        let mut local = self.gen.reserve128((2048 * self.num_sampled as u64).div_ceil(4));
        let mut rnd = SingleSample::new(&mut local);
        let mut draw = || {
            let (x0, x1) = (rnd.next_u32(), rnd.next_u32());
            let v = (u64_to_f64(x0, x1) * self.log_range).exp() as i64 - 1;
            v % self.range
        };
        let mut sampled = Vec::with_capacity(self.num_sampled);
        let tries = if self.unique {
            let mut used = HashSet::with_capacity(self.num_sampled);
            let mut tries = 0usize;
            while sampled.len() < self.num_sampled {
                tries += 1;
                let v = draw();
                if used.insert(v) {
                    sampled.push(v);
                }
            }
            tries
        } else {
            sampled.extend((0..self.num_sampled).map(|_| draw()));
            self.num_sampled
        };
        let sampled_expected: Vec<f32> = sampled.iter().map(|&v| self.expected(self.probability(v), tries)).collect();
        let true_expected: Vec<f32> = truth.iter().map(|&v| self.expected(self.probability(v), tries)).collect();
        ctx.set_output(0, Tensor::new(vec![self.num_sampled], sampled)?)?;
        ctx.set_output(1, Tensor::new(t.dims().to_vec(), true_expected)?)?;
        ctx.set_output(2, Tensor::new(vec![self.num_sampled], sampled_expected)?)
    }
}

struct AccidentalHits {
    num_true: usize,
}

fn make_hits(n: &NodeDef) -> Result<Box<dyn OpKernel>, Status> {
    Ok(Box::new(AccidentalHits { num_true: n.attr_int("num_true")?.max(0) as usize }))
}

impl OpKernel for AccidentalHits {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let t = ctx.input(0)?;
        if t.rank() != 2 || t.dims()[1] != self.num_true || t.dtype() != DataType::Int64 {
            return Err(ctx.error("true_candidates must be a batch_size * num_true matrix"));
        }
        let s = ctx.input(1)?;
        if s.rank() != 1 || s.dtype() != DataType::Int64 {
            return Err(
                ctx.error("sampled_candidates must be a vector, which is typically an output from CandidateSampler")
            );
        }
        // The last position of each sampled class.
        let pos: HashMap<i64, i64> = s.as_slice::<i64>()?.iter().enumerate().map(|(i, &c)| (c, i as i64)).collect();
        let (mut rows, mut ids) = (Vec::new(), Vec::new());
        for (k, c) in t.as_slice::<i64>()?.iter().enumerate() {
            if let Some(&p) = pos.get(c) {
                rows.push((k / self.num_true.max(1)) as i32);
                ids.push(p);
            }
        }
        let n = rows.len();
        ctx.set_output(0, Tensor::new(vec![n], rows)?)?;
        ctx.set_output(1, Tensor::new(vec![n], ids)?)?;
        ctx.set_output(2, Tensor::new(vec![n], vec![-f32::MAX; n])?)
    }
}

pub(crate) fn register(r: &mut KernelRegistry) {
    r.add("LogUniformCandidateSampler", make_log_uniform);
    r.add("ComputeAccidentalHits", make_hits);
}

#[cfg(test)]
mod tests {
    use ferroflow_core::{attr, Code, Tensor};

    use crate::testutil::{node, run_kernel};

    fn sampler(num_sampled: i64, unique: bool, range: i64) -> ferroflow_core::proto::NodeDef {
        node(
            "LogUniformCandidateSampler",
            &[
                ("num_true", attr::int(1)),
                ("num_sampled", attr::int(num_sampled)),
                ("unique", attr::bool(unique)),
                ("range_max", attr::int(range)),
                ("seed", attr::int(3)),
                ("seed2", attr::int(4)),
            ],
        )
    }

    fn truth(v: &[i64]) -> Tensor {
        Tensor::new(vec![v.len(), 1], v.to_vec()).unwrap()
    }

    #[test]
    fn unique_draws_are_distinct_and_in_range() {
        let out = run_kernel(sampler(20, true, 20), vec![truth(&[0, 19])], 3).unwrap();
        let mut s = out[0].as_slice::<i64>().unwrap().to_vec();
        s.sort_unstable();
        assert_eq!(s, (0..20).collect::<Vec<i64>>());
        // Drawing all 20 classes takes more than 20 tries: each expected count is below 1.
        assert!(out[2].as_slice::<f32>().unwrap().iter().all(|&c| c > 0.0 && c <= 1.0));
        assert_eq!(out[1].dims(), &[2, 1]);
    }

    #[test]
    fn bad_inputs_are_invalid_arguments() {
        let e = run_kernel(sampler(3, false, 10), vec![truth(&[10])], 3).unwrap_err();
        assert_eq!(e.code, Code::InvalidArgument);
        assert!(e.message.contains("`true_candidate` out of range [0, 10), received 10"), "{e}");
        let e = run_kernel(sampler(11, true, 10), vec![truth(&[1])], 3).unwrap_err();
        assert!(e.message.contains("Sampler's range is too small."), "{e}");
        let e = run_kernel(sampler(3, false, 10), vec![Tensor::new(vec![2], vec![1i64, 2]).unwrap()], 3).unwrap_err();
        assert!(e.message.contains("true_classes must be a matrix"), "{e}");
    }
}
