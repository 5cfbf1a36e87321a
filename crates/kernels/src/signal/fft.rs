//! The fast Fourier transforms of `tf.signal`, as TensorFlow's CPU kernels compute them:
//! `FFT`/`IFFT` (and the 2-D and 3-D forms) over the innermost dims of a complex tensor,
//! `RFFT*` (a real signal cropped to `fft_length` → the non-negative frequencies of its
//! last dim) and `IRFFT*` (those frequencies, cropped likewise → the real signal). The
//! inverse transforms divide by the transform's size. Lines along each transformed dim go
//! through rustfft (its AVX/SSE paths are chosen at run time), in parallel for large
//! tensors.

use std::sync::{Arc, Mutex};

use ferroflow_core::{DataType, Status, Tensor, TensorType};
use rayon::prelude::*;
use rustfft::num_complex::Complex;
use rustfft::{Fft, FftNum, FftPlanner};

use crate::{KernelRegistry, OpContext, OpKernel};

/// Tensors with more elements than this are transformed in parallel chunks.
const PAR_ELEMENTS: usize = 1 << 15;

#[derive(Clone, Copy, PartialEq, Debug)]
enum Kind {
    /// Complex → complex (`FFT*`, `IFFT*`).
    Complex,
    /// Real → the spectrum's non-negative half (`RFFT*`).
    RealForward,
    /// The non-negative half → real (`IRFFT*`).
    RealInverse,
}

/// One transform op: its kind, direction and rank, and the plans made so far (rustfft's
/// planners keep one plan per length).
struct FftKernel {
    kind: Kind,
    inverse: bool,
    rank: usize,
    plans32: Mutex<FftPlanner<f32>>,
    plans64: Mutex<FftPlanner<f64>>,
}

/// The element types of one precision: `Real` and its complex `Complex<Real>`.
trait Precision: FftNum + TensorType + Default {
    fn planner(k: &FftKernel) -> &Mutex<FftPlanner<Self>>;
}

impl Precision for f32 {
    fn planner(k: &FftKernel) -> &Mutex<FftPlanner<f32>> {
        &k.plans32
    }
}

impl Precision for f64 {
    fn planner(k: &FftKernel) -> &Mutex<FftPlanner<f64>> {
        &k.plans64
    }
}

impl FftKernel {
    fn plan<T: Precision>(&self, n: usize, inverse: bool) -> Arc<dyn Fft<T>> {
        let mut p = T::planner(self).lock().unwrap_or_else(|e| e.into_inner());
        if inverse {
            p.plan_fft_inverse(n)
        } else {
            p.plan_fft_forward(n)
        }
    }

    /// Transforms `data` (row-major `dims`) in place along each of `axes`.
    fn transform<T: Precision>(
        &self,
        data: &mut [Complex<T>],
        dims: &[usize],
        axes: std::ops::Range<usize>,
        inverse: bool,
    ) where
        Complex<T>: TensorType,
    {
        if data.is_empty() {
            return;
        }
        for a in axes.rev() {
            let n = dims[a];
            if n <= 1 {
                continue;
            }
            let fft = self.plan::<T>(n, inverse);
            let stride: usize = dims[a + 1..].iter().product();
            let block = n * stride;
            let run = |chunk: &mut [Complex<T>]| {
                let mut scratch = vec![Complex::default(); fft.get_inplace_scratch_len()];
                if stride == 1 {
                    fft.process_with_scratch(chunk, &mut scratch);
                    return;
                }
                // Each block is an n × stride matrix whose columns are the lines: transpose,
                // transform the rows, transpose back.
                let mut t = vec![Complex::default(); block];
                for b in chunk.chunks_exact_mut(block) {
                    for (i, row) in b.chunks_exact(stride).enumerate() {
                        for (j, &v) in row.iter().enumerate() {
                            t[j * n + i] = v;
                        }
                    }
                    fft.process_with_scratch(&mut t, &mut scratch);
                    for (i, row) in b.chunks_exact_mut(stride).enumerate() {
                        for (j, v) in row.iter_mut().enumerate() {
                            *v = t[j * n + i];
                        }
                    }
                }
            };
            let blocks = data.len() / block;
            if data.len() > PAR_ELEMENTS && blocks > 1 {
                let per = blocks.div_ceil(rayon::current_num_threads() * 4).max(1);
                data.par_chunks_mut(per * block).for_each(run);
            } else {
                run(data);
            }
        }
    }

    fn compute_typed<T: Precision>(&self, ctx: &mut OpContext, x: &Tensor, lengths: &[usize]) -> Result<Tensor, Status>
    where
        Complex<T>: TensorType,
    {
        let dims = x.dims();
        let lead = dims.len() - self.rank;
        let mut out_dims = dims.to_vec();
        match self.kind {
            Kind::Complex => {}
            Kind::RealForward => {
                out_dims[lead..].copy_from_slice(lengths);
                out_dims[dims.len() - 1] = lengths[self.rank - 1] / 2 + 1;
            }
            Kind::RealInverse => out_dims[lead..].copy_from_slice(lengths),
        }
        let out_type = if self.kind == Kind::RealInverse { T::DTYPE } else { <Complex<T> as TensorType>::DTYPE };
        ferroflow_core::check_tensor_alloc(&out_dims, out_type).map_err(|e| ctx.error_with(e))?;
        if out_dims.contains(&0) || lengths.contains(&0) {
            // Nothing to transform: an empty output, or a transform of length 0 (zeros).
            return Tensor::zeros(out_type, out_dims);
        }
        let out = match self.kind {
            Kind::Complex => {
                let mut data = x.as_slice::<Complex<T>>()?.to_vec();
                self.transform(&mut data, dims, lead..dims.len(), self.inverse);
                if self.inverse {
                    scale(&mut data, lengths_of(&dims[lead..]));
                }
                Tensor::new(out_dims, data)?
            }
            Kind::RealForward => {
                // The input cropped to fft_length, as complex; transformed along the last dim,
                // which is then cut to its non-negative half, and along the others.
                let mut full_dims = dims.to_vec();
                full_dims[lead..].copy_from_slice(lengths);
                let src = x.as_slice::<T>()?;
                let mut data: Vec<Complex<T>> =
                    crop(src, dims, &full_dims).into_iter().map(|r| Complex::new(r, T::zero())).collect();
                self.transform(&mut data, &full_dims, full_dims.len() - 1..full_dims.len(), false);
                let mut half = crop(&data, &full_dims, &out_dims);
                self.transform(&mut half, &out_dims, lead..out_dims.len() - 1, false);
                Tensor::new(out_dims, half)?
            }
            Kind::RealInverse => {
                // The input cropped to the half spectrum, inverse-transformed along the outer
                // dims, completed by its conjugate symmetry along the last dim and transformed
                // back there; the real parts are the signal.
                let n = lengths[self.rank - 1];
                let mut half_dims = out_dims.clone();
                *half_dims.last_mut().unwrap_or(&mut 0) = n / 2 + 1;
                let mut half = crop(x.as_slice::<Complex<T>>()?, dims, &half_dims);
                self.transform(&mut half, &half_dims, lead..half_dims.len() - 1, true);
                let h = n / 2 + 1;
                let mut full = Vec::with_capacity(half.len() / h * n);
                for line in half.chunks_exact(h) {
                    full.extend_from_slice(line);
                    full.extend((h..n).map(|k| line[n - k].conj()));
                }
                self.transform(&mut full, &out_dims, out_dims.len() - 1..out_dims.len(), true);
                let mut real: Vec<T> = full.into_iter().map(|c| c.re).collect();
                let size = lengths_of(lengths);
                let s = T::one() / T::from_usize(size).unwrap_or_else(T::one);
                real.iter_mut().for_each(|v| *v = *v * s);
                Tensor::new(out_dims, real)?
            }
        };
        Ok(out)
    }
}

fn lengths_of(l: &[usize]) -> usize {
    l.iter().product()
}

/// Divides every element by `size` (the inverse transform's normalisation).
fn scale<T: FftNum>(data: &mut [Complex<T>], size: usize) {
    let s = T::one() / T::from_usize(size).unwrap_or_else(T::one);
    data.iter_mut().for_each(|v| *v = *v * s);
}

/// `src` (row-major `dims`) cut to its leading `to` elements along every dim (`to[i] <=
/// dims[i]`).
fn crop<T: Copy>(src: &[T], dims: &[usize], to: &[usize]) -> Vec<T> {
    if dims == to {
        return src.to_vec();
    }
    let total: usize = to.iter().product();
    let mut out = Vec::with_capacity(total);
    if total == 0 {
        return out;
    }
    let r = dims.len();
    let row = to[r - 1];
    let mut idx = vec![0usize; r - 1];
    loop {
        let mut off = 0;
        for (d, &i) in idx.iter().enumerate() {
            off = off * dims[d] + i;
        }
        let start = off * dims[r - 1];
        out.extend_from_slice(&src[start..start + row]);
        // Next index of the outer dims (the last varies fastest).
        let mut d = r - 1;
        loop {
            if d == 0 {
                return out;
            }
            d -= 1;
            idx[d] += 1;
            if idx[d] < to[d] {
                break;
            }
            idx[d] = 0;
        }
    }
}

impl OpKernel for FftKernel {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let x = ctx.input(0)?;
        if x.rank() < self.rank {
            return Err(ctx.error(format!("Input must have rank of at least {} but got: {}", self.rank, x.shape())));
        }
        let lead = x.rank() - self.rank;
        let lengths: Vec<usize> = if self.kind == Kind::Complex {
            x.dims()[lead..].to_vec()
        } else {
            let l = ctx.input(1)?;
            if l.rank() != 1 || l.dims()[0] != self.rank || l.dtype() != DataType::Int32 {
                return Err(ctx.error(format!(
                    "fft_length must have shape [{}] (got {} {})",
                    self.rank,
                    l.dtype(),
                    l.shape()
                )));
            }
            let mut out = Vec::with_capacity(self.rank);
            for (i, &v) in l.as_slice::<i32>()?.iter().enumerate() {
                if v < 0 {
                    return Err(ctx.error(format!("fft_length[{i}] must >= 0, but got: {v}")));
                }
                // The half spectrum of a length-0 transform would still have one element
                // (TensorFlow 2.21 aborts the process on it).
                if v == 0 && self.kind == Kind::RealForward && x.num_elements() > 0 {
                    return Err(ctx.error(format!("fft_length[{i}] is 0: a transform of length 0 has no spectrum")));
                }
                let dim = lead + i;
                let need =
                    if self.kind == Kind::RealInverse && i == self.rank - 1 { v as usize / 2 + 1 } else { v as usize };
                if x.dims()[dim] < need {
                    return Err(ctx.error(format!(
                        "Input dimension {dim} must have length of at least {need} but got: {}",
                        x.dims()[dim]
                    )));
                }
                out.push(v as usize);
            }
            out
        };
        let out = match x.dtype() {
            DataType::Complex64 | DataType::Float => self.compute_typed::<f32>(ctx, &x, &lengths)?,
            DataType::Complex128 | DataType::Double => self.compute_typed::<f64>(ctx, &x, &lengths)?,
            t => return Err(ctx.error(format!("no CPU kernel for input type {t}"))),
        };
        ctx.set_output(0, out)
    }

    fn is_expensive(&self) -> bool {
        true
    }
}

/// The kernel of transform op `node.op` (`FFT`, `IRFFT2D`, …).
fn make(node: &ferroflow_core::proto::NodeDef) -> Result<Box<dyn OpKernel>, Status> {
    let op = node.op.as_str();
    let base = op.trim_end_matches("2D").trim_end_matches("3D");
    let (kind, inverse) = match base {
        "FFT" => (Kind::Complex, false),
        "IFFT" => (Kind::Complex, true),
        "RFFT" => (Kind::RealForward, false),
        "IRFFT" => (Kind::RealInverse, true),
        _ => return Err(Status::internal(format!("op {op} is not a Fourier transform"))),
    };
    let rank = if op.ends_with("2D") {
        2
    } else if op.ends_with("3D") {
        3
    } else {
        1
    };
    Ok(Box::new(FftKernel {
        kind,
        inverse,
        rank,
        plans32: Mutex::new(FftPlanner::new()),
        plans64: Mutex::new(FftPlanner::new()),
    }))
}

pub(crate) fn register(r: &mut KernelRegistry) {
    for op in
        ["FFT", "IFFT", "RFFT", "IRFFT", "FFT2D", "IFFT2D", "RFFT2D", "IRFFT2D", "FFT3D", "IFFT3D", "RFFT3D", "IRFFT3D"]
    {
        r.add(op, make);
    }
}

#[cfg(test)]
mod tests {
    use ferroflow_core::{attr, Code, DataType, Tensor, C64};

    use crate::testutil::{node, run_kernel};

    fn run(op: &str, inputs: Vec<Tensor>) -> Result<Tensor, ferroflow_core::Status> {
        let n = node(op, &[("Tcomplex", attr::ty(DataType::Complex64)), ("Treal", attr::ty(DataType::Float))]);
        run_kernel(n, inputs, 1).map(|mut o| o.remove(0))
    }

    fn len(v: &[i32]) -> Tensor {
        Tensor::new(vec![v.len()], v.to_vec()).unwrap()
    }

    #[test]
    fn bad_inputs_are_tensorflows_invalid_argument_naming_the_node() {
        let scalar = Tensor::scalar(C64::new(1.0, 1.0));
        let cases = [
            ("FFT", vec![scalar], "Input must have rank of at least 1 but got: []"),
            ("FFT2D", vec![Tensor::new(vec![1], vec![C64::new(1.0, 0.0)]).unwrap()], "rank of at least 2"),
            (
                "RFFT",
                vec![Tensor::zeros(DataType::Float, vec![2, 4]).unwrap(), len(&[5])],
                "Input dimension 1 must have length of at least 5 but got: 4",
            ),
            (
                "RFFT",
                vec![Tensor::zeros(DataType::Float, vec![2, 4]).unwrap(), len(&[-1])],
                "fft_length[0] must >= 0, but got: -1",
            ),
            (
                "RFFT",
                vec![Tensor::zeros(DataType::Float, vec![2, 4]).unwrap(), len(&[2, 2])],
                "fft_length must have shape [1]",
            ),
            ("RFFT", vec![Tensor::zeros(DataType::Float, vec![2, 4]).unwrap(), len(&[0])], "fft_length[0] is 0"),
            (
                "IRFFT",
                vec![Tensor::zeros(DataType::Complex64, vec![2, 2]).unwrap(), len(&[4])],
                "Input dimension 1 must have length of at least 3 but got: 2",
            ),
        ];
        for (op, inputs, want) in cases {
            let e = run(op, inputs).unwrap_err();
            assert_eq!(e.code, Code::InvalidArgument, "{op}: {e}");
            assert!(e.message.contains(want) && e.node().is_some(), "{op}: {e}");
        }
    }

    #[test]
    fn empty_batches_and_inverse_transforms_round_trip() {
        // An empty batch gives an empty spectrum of the right shape.
        let y = run("RFFT", vec![Tensor::zeros(DataType::Float, vec![0, 8]).unwrap(), len(&[8])]).unwrap();
        assert_eq!((y.dtype(), y.dims()), (DataType::Complex64, &[0usize, 5][..]));
        // IRFFT(RFFT(x)) = x for odd and even lengths, in 1 and 2 dims.
        for (dims, l) in [(vec![3usize, 7], vec![7]), (vec![2, 8], vec![8]), (vec![2, 4, 6], vec![4, 6])] {
            let n: usize = dims.iter().product();
            let x =
                Tensor::new(dims.clone(), (0..n).map(|i| ((i * 37 % 11) as f32) - 5.0).collect::<Vec<_>>()).unwrap();
            let rank = l.len();
            let sfx = if rank == 1 { String::new() } else { format!("{rank}D") };
            let spec = run(&format!("RFFT{sfx}"), vec![x.clone(), len(&l)]).unwrap();
            let back = run(&format!("IRFFT{sfx}"), vec![spec, len(&l)]).unwrap();
            let (a, b) = (x.as_slice::<f32>().unwrap(), back.as_slice::<f32>().unwrap());
            assert!(a.iter().zip(b).all(|(p, q)| (p - q).abs() < 1e-5), "{dims:?}: {a:?} vs {b:?}");
        }
    }
}
