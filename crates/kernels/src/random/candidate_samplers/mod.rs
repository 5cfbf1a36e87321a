//! The candidate samplers besides the log-uniform one, as TensorFlow's `range_sampler.cc`
//! draws them (same Philox reservation and rejection of repeats, see `candidates`):
//! `UniformCandidateSampler` (exactly uniform 64-bit integers), `AllCandidateSampler`
//! (every class once, expected count 1), `LearnedUnigramCandidateSampler` and
//! `ThreadUnsafeUnigramCandidateSampler` (each class weighted by 1 + how often it has been a
//! true class in the kernel's earlier runs: TensorFlow's `WeightedPicker`, here a Fenwick
//! tree, picked at an exactly uniform weight index), and `FixedUnigramCandidateSampler`
//! (`fixed`: a given distribution, Walker's alias method).

mod fixed;

use std::sync::Mutex;

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{NodeAttrs, Status};

use super::candidates::{draw_with, range_max, sampler_kernel, Drawn, RangeSampler, SimplePhilox};
use crate::{KernelRegistry, OpKernel};

/// Every class equally likely.
struct Uniform {
    range: i64,
    /// 1 / range, rounded to float as TensorFlow stores it.
    inv_range: f32,
}

impl RangeSampler for Uniform {
    fn range(&self) -> i64 {
        self.range
    }

    fn draw(&self, rnd: &mut SimplePhilox, unique: bool, n: usize, truth: &[i64]) -> Result<Drawn, String> {
        let range = self.range as u64;
        draw_with(rnd, unique, n, truth, |r| r.uniform64(range) as i64, |_| self.inv_range)
    }
}

fn make_uniform(n: &NodeDef) -> Result<Box<dyn OpKernel>, Status> {
    let range = range_max(n)?;
    sampler_kernel(n, Box::new(Uniform { range, inv_range: (1.0 / range as f64) as f32 }))
}

/// Classes `0..num_sampled`, each with expected count 1 (no draws).
struct All {
    range: i64,
}

impl RangeSampler for All {
    fn range(&self) -> i64 {
        self.range
    }

    fn draw(&self, _: &mut SimplePhilox, _: bool, n: usize, truth: &[i64]) -> Result<Drawn, String> {
        Ok(Drawn {
            sampled: (0..n as i64).collect(),
            sampled_expected: vec![1.0; n],
            true_expected: vec![1.0; truth.len()],
        })
    }
}

fn make_all(n: &NodeDef) -> Result<Box<dyn OpKernel>, Status> {
    // The range is the number sampled: the sampler returns the whole of it.
    let range = n.attr_int("num_sampled")?;
    sampler_kernel(n, Box::new(All { range }))
}

/// Integer weights of `0..n` with O(log n) updates and picks (a Fenwick tree over the
/// weights; picks return what TensorFlow's binary-tree `WeightedPicker` returns: the class
/// whose cumulative weight interval holds the index).
struct Picker {
    weights: Vec<i32>,
    /// 1-based Fenwick tree: `tree[i]` sums the weights of `(i - lowbit(i), i]`.
    tree: Vec<i32>,
    total: i32,
}

impl Picker {
    /// Every weight 1.
    fn ones(n: usize) -> Picker {
        let tree = (0..=n).map(|i| (i & i.wrapping_neg()) as i32).collect();
        Picker { weights: vec![1; n], tree, total: n as i32 }
    }

    fn add(&mut self, index: usize, delta: i32) {
        let Some(w) = self.weights.get_mut(index) else { return };
        *w += delta;
        self.total += delta;
        let mut i = index + 1;
        while i < self.tree.len() {
            self.tree[i] += delta;
            i += i & i.wrapping_neg();
        }
    }

    /// The class whose cumulative interval holds `position` (in `[0, total)`).
    fn find(&self, mut position: i32) -> usize {
        let n = self.weights.len();
        let (mut pos, mut step) = (0usize, if n == 0 { 0 } else { 1usize << n.ilog2() });
        while step > 0 {
            if let Some(&t) = self.tree.get(pos + step) {
                if t <= position {
                    pos += step;
                    position -= t;
                }
            }
            step >>= 1;
        }
        pos
    }

    fn pick(&self, rnd: &mut SimplePhilox) -> i64 {
        if self.total <= 0 {
            return -1;
        }
        self.find(rnd.uniform(self.total as u32) as i32) as i64
    }

    fn probability(&self, v: i64) -> f32 {
        let w = usize::try_from(v).ok().and_then(|i| self.weights.get(i)).copied().unwrap_or(0);
        w as f32 / self.total as f32
    }
}

/// The learned unigram samplers: class weights start at 1 and each true class of a run adds
/// 1 to its weight for later runs (the total stays below 2^31).
struct Unigram {
    range: i64,
    picker: Mutex<Picker>,
}

impl RangeSampler for Unigram {
    fn range(&self) -> i64 {
        self.range
    }

    fn draw(&self, rnd: &mut SimplePhilox, unique: bool, n: usize, truth: &[i64]) -> Result<Drawn, String> {
        let p = self.picker.lock().unwrap_or_else(|e| e.into_inner());
        draw_with(rnd, unique, n, truth, |r| p.pick(r), |v| p.probability(v))
    }

    fn update(&self, truth: &[i64]) {
        let mut p = self.picker.lock().unwrap_or_else(|e| e.into_inner());
        let room = (i32::MAX - p.total).max(0) as usize;
        for &v in truth.iter().take(room) {
            if let Ok(i) = usize::try_from(v) {
                p.add(i, 1);
            }
        }
    }
}

fn make_unigram(n: &NodeDef) -> Result<Box<dyn OpKernel>, Status> {
    let range = range_max(n)?;
    if range >= i64::from(i32::MAX) {
        return Err(n.node_error(format!("range_max must be less than {} for unigram samplers, got {range}", i32::MAX)));
    }
    // The weights and the tree: two int32s per class.
    ferroflow_core::check_alloc_bytes(Some(8 * (range as u64 + 1)), || {
        format!("the unigram sampler's weights of {range} classes")
    })
    .map_err(|e| e.in_node(&n.name, &n.op))?;
    sampler_kernel(n, Box::new(Unigram { range, picker: Mutex::new(Picker::ones(range as usize)) }))
}

pub(crate) fn register(r: &mut KernelRegistry) {
    r.add("UniformCandidateSampler", make_uniform);
    r.add("AllCandidateSampler", make_all);
    r.add("LearnedUnigramCandidateSampler", make_unigram);
    r.add("ThreadUnsafeUnigramCandidateSampler", make_unigram);
    r.add("FixedUnigramCandidateSampler", fixed::make);
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use ferroflow_core::{attr, Code, Tensor};

    use super::Picker;
    use crate::testutil::{node, run_kernel, test_step};
    use crate::{create_kernel, OpContext, ResourceMgr, Value};

    fn sampler(op: &str, num_sampled: i64, unique: bool, range: i64) -> ferroflow_core::proto::NodeDef {
        node(
            op,
            &[
                ("num_true", attr::int(2)),
                ("num_sampled", attr::int(num_sampled)),
                ("unique", attr::bool(unique)),
                ("range_max", attr::int(range)),
                ("seed", attr::int(7)),
                ("seed2", attr::int(9)),
            ],
        )
    }

    fn truth() -> Tensor {
        Tensor::new(vec![2, 2], vec![1i64, 2, 3, 3]).unwrap()
    }

    fn close(got: &Tensor, want: &[f32]) {
        let g = got.as_slice::<f32>().unwrap();
        assert!(g.len() == want.len() && g.iter().zip(want).all(|(a, b)| (a - b).abs() <= 1e-6), "{g:?} vs {want:?}");
    }

    /// Three runs of one kernel: TensorFlow 2.21's values (eager, which reuses the kernel, so
    /// the generator moves on and the learned weights grow between runs).
    #[test]
    fn successive_runs_match_tensorflow() {
        type Run<'a> = (&'a [i64], &'a [f32], &'a [f32]);
        let learned: [Run; 3] = [
            (&[1, 0, 3, 2], &[0.73785603; 4], &[0.73785603; 4]),
            (
                &[3, 1, 0, 2],
                &[0.8660804, 0.8660804, 0.96098155, 0.96098155],
                &[0.96098155, 0.8660804, 0.61025566, 0.8660804],
            ),
            (
                &[3, 0, 2, 1],
                &[0.7928238, 0.7928238, 0.94569004, 0.94569004],
                &[0.94569004, 0.38137516, 0.7928238, 0.7928238],
            ),
        ];
        let uniform: [Run; 3] = [
            (&[1, 2, 4, 0], &[0.67232; 4], &[0.67232; 4]),
            (&[4, 0, 3, 1], &[0.8; 4], &[0.8; 4]),
            (&[1, 2, 3, 0], &[0.67232; 4], &[0.67232; 4]),
        ];
        for (op, runs) in [
            ("LearnedUnigramCandidateSampler", &learned),
            ("ThreadUnsafeUnigramCandidateSampler", &learned),
            ("UniformCandidateSampler", &uniform),
        ] {
            let n = Arc::new(sampler(op, 4, true, 5));
            let k = create_kernel(&n).unwrap();
            for (sampled, true_expected, sampled_expected) in runs.iter() {
                let step = test_step(Arc::new(ResourceMgr::new()));
                let mut ctx = OpContext::new(n.clone(), vec![Value::Tensor(truth())], 3, step);
                k.compute(&mut ctx).unwrap();
                let out: Vec<Tensor> = ctx.take_outputs().unwrap().into_iter().map(|v| v.tensor().unwrap()).collect();
                assert_eq!(out[0].as_slice::<i64>().unwrap(), *sampled, "{op}");
                close(&out[1], true_expected);
                close(&out[2], sampled_expected);
            }
        }
    }

    #[test]
    fn all_sampler_returns_every_class() {
        let n = node(
            "AllCandidateSampler",
            &[
                ("num_true", attr::int(2)),
                ("num_sampled", attr::int(4)),
                ("unique", attr::bool(true)),
                ("seed", attr::int(0)),
                ("seed2", attr::int(0)),
            ],
        );
        let out = run_kernel(n.clone(), vec![truth()], 3).unwrap();
        assert_eq!(out[0].as_slice::<i64>().unwrap(), &[0, 1, 2, 3]);
        assert_eq!(out[1].as_slice::<f32>().unwrap(), &[1.0; 4]);
        assert_eq!(out[2].as_slice::<f32>().unwrap(), &[1.0; 4]);
        let bad = Tensor::new(vec![1, 2], vec![0i64, 4]).unwrap();
        let e = run_kernel(n, vec![bad], 3).unwrap_err();
        assert!(e.message.contains("`true_candidate` out of range [0, 4), received 4"), "{e}");
    }

    #[test]
    fn picker_finds_the_interval_holding_the_index() {
        let mut p = Picker::ones(5);
        p.add(2, 3);
        p.add(4, -1);
        // Weights 1 1 4 1 0: intervals [0,1) [1,2) [2,6) [6,7).
        let got: Vec<usize> = (0..p.total).map(|w| p.find(w)).collect();
        assert_eq!(got, vec![0, 1, 2, 2, 2, 2, 3]);
        assert_eq!(p.probability(2), 4.0 / 7.0);
        assert_eq!(p.probability(9), 0.0);
    }

    #[test]
    fn unigram_range_limit_and_bad_shapes_are_invalid_arguments() {
        let e = run_kernel(sampler("LearnedUnigramCandidateSampler", 2, false, i64::from(i32::MAX)), vec![truth()], 3)
            .unwrap_err();
        assert_eq!(e.code, Code::InvalidArgument);
        assert!(e.message.contains("range_max must be less than 2147483647 for unigram samplers"), "{e}");
        let one_col = Tensor::new(vec![2, 1], vec![1i64, 2]).unwrap();
        let e = run_kernel(sampler("UniformCandidateSampler", 2, false, 5), vec![one_col], 3).unwrap_err();
        assert!(e.message.contains("true_classes must have num_true columns, expected: 1 was: 2"), "{e}");
        let e = run_kernel(sampler("UniformCandidateSampler", 6, true, 5), vec![truth()], 3).unwrap_err();
        assert!(e.message.contains("Sampler's range is too small."), "{e}");
    }
}
