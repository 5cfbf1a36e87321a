//! Tile and BroadcastTo: both are strided gathers with zero strides.

use ferroflow_core::{Shape, Status, Tensor};

use super::strided::{strided_gather, strides_of};
use super::util::{check_alloc, index_vec, FnKernel};
use crate::{KernelRegistry, OpContext};

fn tile(ctx: &mut OpContext) -> Result<(), Status> {
    let x = ctx.input(0)?;
    let m = ctx.input(1)?;
    if m.rank() != 1 {
        return Err(ctx.error(format!("Expected multiples argument to be a vector, got shape {}", m.shape())));
    }
    let m = index_vec(&m).map_err(|e| ctx.error(e.message))?;
    if m.len() != x.rank() {
        return Err(ctx.error(format!(
            "Expected multiples argument to be a vector of length {} but got length {}",
            x.rank(),
            m.len()
        )));
    }
    if let Some(i) = m.iter().position(|&v| v < 0) {
        return Err(ctx.error(format!("Expected multiples[{i}] >= 0, but got {}", m[i])));
    }
    let out_dims: Option<Vec<i64>> = x.dims().iter().zip(&m).map(|(&d, &k)| (d as i64).checked_mul(k)).collect();
    let out_dims = out_dims.ok_or_else(|| ctx.error(format!("tiling {} by {m:?} overflows", x.shape())))?;
    let out_shape = Shape::from_i64(&out_dims).map_err(|e| ctx.error(e.message))?;
    check_alloc(out_shape.dims(), x.dtype()).map_err(|e| e.context(format!("node '{}'", ctx.node().name)))?;
    if m.iter().all(|&k| k == 1) {
        return ctx.set_output(0, x);
    }
    let st = strides_of(x.dims());
    let mut vd = Vec::with_capacity(2 * m.len());
    let mut vs = Vec::with_capacity(2 * m.len());
    for i in 0..m.len() {
        vd.extend([m[i] as usize, x.dims()[i]]);
        vs.extend([0, st[i]]);
    }
    let out = ferroflow_core::with_dtype!(x.dtype(), T => Tensor::new(out_shape.clone(), strided_gather(x.as_slice::<T>()?, 0, &vd, &vs)))?;
    ctx.set_output(0, out)
}

/// Broadcasts `x` to `dims` (NumPy rules); the error message matches TensorFlow's.
pub fn broadcast_tensor(x: &Tensor, dims: &[usize]) -> Result<Tensor, String> {
    if x.rank() > dims.len() {
        return Err(format!(
            "Rank of input ({}) must be no greater than rank of output shape ({}).",
            x.rank(),
            dims.len()
        ));
    }
    let lead = dims.len() - x.rank();
    let st = strides_of(x.dims());
    let mut strides = vec![0isize; dims.len()];
    for (i, &d) in x.dims().iter().enumerate() {
        let o = dims[lead + i];
        if d == o {
            strides[lead + i] = st[i];
        } else if d != 1 {
            return Err(format!("Incompatible shapes: {} vs. {}", x.shape(), Shape::new(dims.to_vec())));
        }
    }
    if x.dims() == dims {
        return Ok(x.clone());
    }
    let gather = || -> Result<Tensor, Status> {
        ferroflow_core::with_dtype!(x.dtype(), T => Tensor::new(dims.to_vec(), strided_gather(x.as_slice::<T>()?, 0, dims, &strides)))
    };
    gather().map_err(|e| e.message)
}

fn broadcast_to(ctx: &mut OpContext) -> Result<(), Status> {
    let x = ctx.input(0)?;
    let s = ctx.input(1)?;
    if s.rank() != 1 {
        return Err(ctx.error(format!("shape must be a vector, got shape {}", s.shape())));
    }
    let s = index_vec(&s).map_err(|e| ctx.error(e.message))?;
    if let Some(d) = s.iter().find(|&&d| d < 0) {
        return Err(ctx.error(format!("Dimension {d} must be >= 0")));
    }
    let shape = Shape::from_i64(&s).map_err(|e| ctx.error(e.message))?;
    check_alloc(shape.dims(), x.dtype()).map_err(|e| e.context(format!("node '{}'", ctx.node().name)))?;
    let out = broadcast_tensor(&x, shape.dims()).map_err(|m| ctx.error(m))?;
    ctx.set_output(0, out)
}

pub(crate) fn register(r: &mut KernelRegistry) {
    r.add("Tile", |_| Ok(FnKernel::expensive(tile)));
    r.add("BroadcastTo", |_| Ok(FnKernel::expensive(broadcast_to)));
}

#[cfg(test)]
mod tests {
    use ferroflow_core::{attr, DataType};

    use super::*;
    use crate::testutil::{node, run_kernel};

    #[test]
    fn tiles() {
        let n = node("Tile", &[("T", attr::ty(DataType::Int32)), ("Tmultiples", attr::ty(DataType::Int32))]);
        let x = Tensor::new(vec![2, 2], vec![1i32, 2, 3, 4]).unwrap();
        let o = run_kernel(n.clone(), vec![x.clone(), Tensor::vec(vec![2i32, 3])], 1).unwrap();
        assert_eq!(o[0].dims(), &[4, 6]);
        assert_eq!(&o[0].as_slice::<i32>().unwrap()[..12], &[1, 2, 1, 2, 1, 2, 3, 4, 3, 4, 3, 4]);
        assert_eq!(run_kernel(n.clone(), vec![x.clone(), Tensor::vec(vec![0i32, 3])], 1).unwrap()[0].dims(), &[0, 6]);
        let e = run_kernel(n.clone(), vec![x.clone(), Tensor::vec(vec![1i32])], 1).unwrap_err();
        assert!(e.message.contains("Expected multiples argument to be a vector of length 2 but got length 1"));
        let e = run_kernel(n.clone(), vec![x.clone(), Tensor::vec(vec![1i32, -1])], 1).unwrap_err();
        assert!(e.message.contains("Expected multiples[1] >= 0, but got -1"));
        let huge = run_kernel(n.clone(), vec![x.clone(), Tensor::vec(vec![1i32 << 20, 1 << 20])], 1).unwrap_err();
        assert_eq!(huge.code, ferroflow_core::Code::ResourceExhausted);
        let n64 = node("Tile", &[("T", attr::ty(DataType::Int32)), ("Tmultiples", attr::ty(DataType::Int64))]);
        assert!(run_kernel(n64, vec![x, Tensor::vec(vec![i64::MAX, 2])], 1).is_err());
    }

    #[test]
    fn broadcasts() {
        let n = node("BroadcastTo", &[("T", attr::ty(DataType::Float)), ("Tidx", attr::ty(DataType::Int64))]);
        let x = Tensor::new(vec![2, 1], vec![1.0f32, 2.0]).unwrap();
        let o = run_kernel(n.clone(), vec![x.clone(), Tensor::vec(vec![2i64, 2, 3])], 1).unwrap();
        assert_eq!(o[0].dims(), &[2, 2, 3]);
        assert_eq!(&o[0].as_slice::<f32>().unwrap()[..6], &[1., 1., 1., 2., 2., 2.]);
        let e = run_kernel(n.clone(), vec![x.clone(), Tensor::vec(vec![3i64, 3])], 1).unwrap_err();
        assert!(e.message.contains("Incompatible shapes: [2,1] vs. [3,3]"));
        let e = run_kernel(n.clone(), vec![x.clone(), Tensor::vec(vec![2i64])], 1).unwrap_err();
        assert!(e.message.contains("Rank of input (2) must be no greater than rank of output shape (1)."));
        let e = run_kernel(n, vec![x, Tensor::vec(vec![-1i64, 1])], 1).unwrap_err();
        assert!(e.message.contains("Dimension -1 must be >= 0"));
    }
}
