//! `Qr`: the QR decomposition of each innermost matrix, by Householder reflections (the
//! convention of LAPACK and Eigen: `R`'s diagonal takes the sign that makes each reflection
//! stable). tf_keras's `Orthogonal` initializer (the default recurrent initializer of
//! `LSTM`, `GRU` and `SimpleRNN`) emits it. float32 is computed in float64.

use ferroflow_core::{DataType, NodeAttrs, Shape, Status, Tensor};
use rayon::prelude::*;

use crate::array::util::collect_vec;
use crate::{KernelRegistry, OpContext, OpKernel};

struct Qr {
    full: bool,
}

/// QR of one row-major `m x n` matrix: `(q: m x p, r: p x n)`, `p` = `m` when `full`,
/// else `min(m, n)`.
pub fn qr(a: &[f64], m: usize, n: usize, full: bool) -> (Vec<f64>, Vec<f64>) {
    let p = if full { m } else { m.min(n) };
    let (mut q, mut r) = (vec![0.0; m * p], vec![0.0; p * n]);
    qr_into(a, m, n, full, &mut q, &mut r);
    (q, r)
}

/// [`qr`] into `q` (`m x p`) and `r` (`p x n`), both zero.
fn qr_into(a: &[f64], m: usize, n: usize, full: bool, q: &mut [f64], r: &mut [f64]) {
    let mut a = a.to_vec();
    let k = m.min(n);
    let mut vs: Vec<Vec<f64>> = Vec::with_capacity(k);
    for j in 0..k {
        let mut v: Vec<f64> = (j..m).map(|i| a[i * n + j]).collect();
        let norm = v.iter().map(|x| x * x).sum::<f64>().sqrt();
        let tail = v[1..].iter().map(|x| x * x).sum::<f64>();
        if tail == 0.0 && v[0] >= 0.0 || norm == 0.0 {
            // Already upper triangular in this column with the sign LAPACK keeps: no reflection.
            vs.push(Vec::new());
            continue;
        }
        let alpha = if v[0] >= 0.0 { -norm } else { norm };
        v[0] -= alpha;
        let vn = v.iter().map(|x| x * x).sum::<f64>().sqrt();
        v.iter_mut().for_each(|x| *x /= vn);
        for c in j..n {
            let dot: f64 = (j..m).map(|i| v[i - j] * a[i * n + c]).sum();
            for i in j..m {
                a[i * n + c] -= 2.0 * v[i - j] * dot;
            }
        }
        vs.push(v);
    }
    let p = if full { m } else { k };
    for i in 0..p.min(m) {
        for c in i..n {
            r[i * n + c] = a[i * n + c];
        }
    }
    // Q = H_0 H_1 ... applied to the first p columns of the identity.
    for i in 0..p.min(m) {
        q[i * p + i] = 1.0;
    }
    for j in (0..k).rev() {
        let v = &vs[j];
        if v.is_empty() {
            continue;
        }
        for c in 0..p {
            let dot: f64 = (j..m).map(|i| v[i - j] * q[i * p + c]).sum();
            for i in j..m {
                q[i * p + c] -= 2.0 * v[i - j] * dot;
            }
        }
    }
}

impl OpKernel for Qr {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let x = ctx.input(0)?;
        let dims = x.shape().dims().to_vec();
        if dims.len() < 2 {
            return Err(ctx.error(format!("input must have rank >= 2, got shape {}", x.shape())));
        }
        let (m, n) = (dims[dims.len() - 2], dims[dims.len() - 1]);
        let p = if self.full { m } else { m.min(n) };
        let batch: usize = dims[..dims.len() - 2].iter().product();
        let mut qd = dims[..dims.len() - 2].to_vec();
        let mut rd = qd.clone();
        qd.extend([m, p]);
        rd.extend([p, n]);
        ferroflow_core::check_tensor_alloc(&qd, x.dtype()).map_err(|e| ctx.error_with(e))?;
        ferroflow_core::check_tensor_alloc(&rd, x.dtype()).map_err(|e| ctx.error_with(e))?;
        let vals = x.to_f64_vec()?;
        // Each matrix's factors computed in place in the outputs (float64 first).
        let mut q = ferroflow_core::alloc::zeroed::<f64>(&qd)?;
        let mut r = ferroflow_core::alloc::zeroed::<f64>(&rd)?;
        let one = |b: usize, qb: &mut [f64], rb: &mut [f64]| {
            qr_into(&vals[b * m * n..(b + 1) * m * n], m, n, self.full, qb, rb)
        };
        // (An empty q has an empty r.)
        if m * p > 0 && p * n > 0 {
            q.par_chunks_mut(m * p).zip(r.par_chunks_mut(p * n)).enumerate().for_each(|(b, (qb, rb))| one(b, qb, rb));
        } else if m * p > 0 {
            q.par_chunks_mut(m * p).enumerate().for_each(|(b, qb)| one(b, qb, &mut []));
        }
        debug_assert_eq!(q.len(), batch * m * p);
        let (q, r) = match x.dtype() {
            DataType::Float => {
                let qf = collect_vec(&qd, q.into_iter().map(|v| v as f32))?;
                let rf = collect_vec(&rd, r.into_iter().map(|v| v as f32))?;
                (Tensor::new(Shape::from(qd), qf)?, Tensor::new(Shape::from(rd), rf)?)
            }
            DataType::Double => (Tensor::new(Shape::from(qd), q)?, Tensor::new(Shape::from(rd), r)?),
            d => return Err(ctx.error(format!("Qr of {d} is not supported by ferroflow (float32 and float64 are)"))),
        };
        ctx.set_output(0, q)?;
        ctx.set_output(1, r)
    }
}

pub(crate) fn register(r: &mut KernelRegistry) {
    r.add("Qr", |n| Ok(Box::new(Qr { full: n.attr_bool("full_matrices").unwrap_or(false) })));
}
