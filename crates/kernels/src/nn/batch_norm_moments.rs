//! The batch mean and biased variance per channel of a training-mode batch norm, reading
//! `x` from memory once: channel-last input is cut into runs of rows small enough to stay
//! in cache; each run's sum and then its squared deviations from its own mean are taken
//! (the second pass reads the cache), and the runs are merged in f64 with Chan et al.'s
//! pairwise update. That is the two-pass variance's accuracy at one pass's memory traffic.
//! Channel-first input (one contiguous plane per channel) takes the two passes.

use rayon::prelude::*;

use super::batch_norm::Layout;

/// Rows per run: 512 rows of up to 1024 channels stay within a 2 MiB L2.
const RUN_ROWS: usize = 512;

/// Runs per rayon task.
const RUNS_PER_TASK: usize = 4;

/// One run's count, mean and sum of squared deviations from that mean, per channel.
struct Run {
    n: f64,
    mean: Vec<f64>,
    m2: Vec<f64>,
}

/// The loops of one run, inlined into one function per instruction-set path (as a closure
/// given to [`crate::isa::vectorized`] they stayed at SSE width): per channel, the run's
/// mean into `mean`, then the deviations from it and their squares summed into `dev`, `m2`.
struct RunLoops<'a> {
    x: &'a [f32],
    c: usize,
    mean: &'a mut [f32],
    dev: &'a mut [f32],
    m2: &'a mut [f32],
}

impl crate::isa::PathKernel for RunLoops<'_> {
    #[inline(always)]
    fn run(self) {
        let RunLoops { x, c, mean, dev, m2 } = self;
        if c == 0 {
            return;
        }
        // Every slice cut to `c`, so the channel loops need no bounds checks.
        let (mean, dev, m2) = (&mut mean[..c], &mut dev[..c], &mut m2[..c]);
        let rows = x.len() / c;
        for r in x.chunks_exact(c) {
            let r = &r[..c];
            for j in 0..c {
                mean[j] += r[j];
            }
        }
        let inv = 1.0 / rows as f32;
        for m in mean.iter_mut() {
            *m *= inv;
        }
        for r in x.chunks_exact(c) {
            let r = &r[..c];
            for j in 0..c {
                let d = r[j] - mean[j];
                dev[j] += d;
                m2[j] += d * d;
            }
        }
    }
}

fn run_moments(x: &[f32], c: usize) -> Run {
    let rows = x.len() / c;
    let mut mean = vec![0.0f32; c];
    let mut m2 = vec![0.0f32; c];
    let mut dev = vec![0.0f32; c];
    crate::isa::run(RunLoops { x, c, mean: &mut mean, dev: &mut dev, m2: &mut m2 });
    // `mean` is the run's mean rounded to f32; the deviations from it correct both the mean
    // and the squares to the run's exact mean.
    let n = rows as f64;
    let exact = mean.iter().zip(&dev).map(|(&m, &d)| f64::from(m) + f64::from(d) / n).collect();
    let m2 = m2.iter().zip(&dev).map(|(&q, &d)| (f64::from(q) - f64::from(d) * f64::from(d) / n).max(0.0)).collect();
    Run { n, mean: exact, m2 }
}

/// Merges run `b` into `a` (Chan, Golub and LeVeque's pairwise update).
fn merge(a: &mut Run, b: &Run) {
    if b.n == 0.0 {
        return;
    }
    let n = a.n + b.n;
    let w = a.n * b.n / n;
    for ((ma, qa), (&mb, &qb)) in a.mean.iter_mut().zip(a.m2.iter_mut()).zip(b.mean.iter().zip(&b.m2)) {
        let d = mb - *ma;
        *ma += d * b.n / n;
        *qa += qb + d * d * w;
    }
    a.n = n;
}

/// Per channel, the mean and the biased variance of `x` (which has elements).
pub(crate) fn moments(l: &Layout, x: &[f32]) -> (Vec<f32>, Vec<f32>) {
    let inv_n = 1.0 / l.rest() as f64;
    let (mean, m2) = match *l {
        Layout::Last { c, .. } => {
            let run = RUN_ROWS * c;
            let task = |xs: &[f32]| {
                let mut acc = Run { n: 0.0, mean: vec![0.0; c], m2: vec![0.0; c] };
                for r in xs.chunks(run) {
                    merge(&mut acc, &run_moments(r, c));
                }
                acc
            };
            let per = run * RUNS_PER_TASK;
            let parts: Vec<Run> = if x.len() > per && rayon::current_num_threads() > 1 {
                x.par_chunks(per).map(task).collect()
            } else {
                vec![task(x)]
            };
            let mut acc = Run { n: 0.0, mean: vec![0.0; c], m2: vec![0.0; c] };
            for p in &parts {
                merge(&mut acc, p);
            }
            (acc.mean, acc.m2)
        }
        Layout::First { .. } => {
            let [sum] = l.sums([x, x, x], [], |x, _, _, []| [x]);
            let m: Vec<f32> = sum.iter().map(|s| (s * inv_n) as f32).collect();
            let [sq] = l.sums([x, x, x], [&m[..]], |x, _, _, [m]| [(x - m) * (x - m)]);
            (m.iter().map(|&m| f64::from(m)).collect(), sq)
        }
    };
    let m = mean.iter().map(|&m| m as f32).collect();
    let v = m2.iter().map(|&q| (q * inv_n) as f32).collect();
    (m, v)
}
