//! The fast Fourier transforms of `tf.signal` (TensorFlow's definitions, shape functions and
//! builders): `FFT`/`IFFT`/`FFT2D`/`IFFT2D`/`FFT3D`/`IFFT3D` over the innermost 1, 2 or 3
//! dimensions of a complex tensor, and the real forms `RFFT*` (real → the non-negative
//! half of the spectrum) and `IRFFT*` (that half → real), which take the transform's
//! length as the input `fft_length`.

use ferroflow_core::{attr, Status};

use crate::op_def::op;
use crate::ops::array::const_ints;
use crate::ops::complex::{complex_of, real_of};
use crate::registry::OpRegistry;
use crate::scope::{Output, Scope};
use crate::shape_fn::{Dims, ShapeCtx};

const COMPLEX: &str = "Tcomplex: {complex64, complex128} = DT_COMPLEX64";
const REAL: &str = "Treal: {float, double} = DT_FLOAT";

/// The transform's rank from the op's name (`FFT` 1, `RFFT2D` 2, `IFFT3D` 3).
pub fn fft_rank(op: &str) -> usize {
    if op.ends_with("2D") {
        2
    } else if op.ends_with("3D") {
        3
    } else {
        1
    }
}

/// The input's dims, which must have at least the transform's rank.
fn transform_input(c: &ShapeCtx) -> Result<Dims, Status> {
    let rank = fft_rank(&c.node.op);
    let Some(d) = c.input(0) else { return Ok(None) };
    if d.len() < rank {
        return Err(c.error(format!("Shape must be at least rank {rank} but is rank {}", d.len())));
    }
    Ok(Some(d))
}

/// `FFT*`/`IFFT*`: the input's shape.
fn complex_shape(c: &ShapeCtx) -> Result<Vec<Dims>, Status> {
    Ok(vec![transform_input(c)?])
}

/// `RFFT*`/`IRFFT*`: the input's shape with the innermost dims set from `fft_length` (the
/// last one halved plus one for the forward transform), unknown where it is not constant.
fn real_shape(c: &ShapeCtx) -> Result<Vec<Dims>, Status> {
    let rank = fft_rank(&c.node.op);
    if let Some(l) = c.input(1) {
        if l.len() != 1 || (l[0] >= 0 && l[0] != rank as i64) {
            return Err(c.error(format!("fft_length must be a vector of {rank} elements, got shape {l:?}")));
        }
    }
    let Some(mut d) = transform_input(c)? else { return Ok(vec![None]) };
    let lengths = const_ints(c, 1).filter(|l| l.len() == rank);
    let first = d.len() - rank;
    for i in 0..rank {
        d[first + i] = match &lengths {
            Some(l) if i == rank - 1 && c.node.op.starts_with("RFFT") => l[i] / 2 + 1,
            Some(l) => l[i],
            None => -1,
        };
    }
    Ok(vec![Some(d)])
}

pub(crate) fn register(r: &mut OpRegistry) {
    for name in ["FFT", "IFFT", "FFT2D", "IFFT2D", "FFT3D", "IFFT3D"] {
        r.add(
            op(name).input("input: Tcomplex").output("output: Tcomplex").attr(COMPLEX).shape_fn(complex_shape).build(),
        );
    }
    for name in ["RFFT", "RFFT2D", "RFFT3D"] {
        r.add(
            op(name)
                .input("input: Treal")
                .input("fft_length: int32")
                .output("output: Tcomplex")
                .attr(REAL)
                .attr(COMPLEX)
                .shape_fn(real_shape)
                .build(),
        );
    }
    for name in ["IRFFT", "IRFFT2D", "IRFFT3D"] {
        r.add(
            op(name)
                .input("input: Tcomplex")
                .input("fft_length: int32")
                .output("output: Treal")
                .attr(REAL)
                .attr(COMPLEX)
                .shape_fn(real_shape)
                .build(),
        );
    }
}

/// The op name of a transform of `rank` (1 to 3) dims: `base` is `FFT`, `IFFT`, `RFFT` or
/// `IRFFT`.
fn transform_op(base: &str, rank: usize) -> String {
    match rank {
        1 => base.to_string(),
        r => format!("{base}{r}D"),
    }
}

/// `FFT` (`inverse` false) or `IFFT` of the innermost `rank` (1 to 3) dims of complex `x`;
/// the inverse divides by the transform's size.
pub fn fft(s: &Scope, x: Output, rank: usize, inverse: bool) -> Output {
    let name = transform_op(if inverse { "IFFT" } else { "FFT" }, rank);
    s.op(&name).input(x.clone()).attr("Tcomplex", attr::ty(x.dtype)).build().output(0)
}

/// `RFFT` of the innermost `rank` dims of real `x` (cropped to `fft_length`): the
/// spectrum's non-negative frequencies of the last dim (`fft_length[-1] / 2 + 1` of them).
pub fn rfft(s: &Scope, x: Output, fft_length: Output, rank: usize) -> Output {
    let c = complex_of(x.dtype);
    s.op(&transform_op("RFFT", rank))
        .input(x.clone())
        .input(fft_length)
        .attr("Treal", attr::ty(x.dtype))
        .attr("Tcomplex", attr::ty(c))
        .build()
        .output(0)
}

/// `IRFFT`: the real signal of `fft_length` whose spectrum's non-negative half is `x`
/// (the inverse of [`rfft`]).
pub fn irfft(s: &Scope, x: Output, fft_length: Output, rank: usize) -> Output {
    let r = real_of(x.dtype);
    s.op(&transform_op("IRFFT", rank))
        .input(x.clone())
        .input(fft_length)
        .attr("Treal", attr::ty(r))
        .attr("Tcomplex", attr::ty(x.dtype))
        .build()
        .output(0)
}
