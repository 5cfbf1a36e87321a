//! `MatMul`: the product of two matrices, either transposed.

use crate::dispatch::dispatch;
use ferroflow_core::proto::NodeDef;
use ferroflow_core::{DataType, NodeAttrs, Status, Tensor};

use super::common::{check_dtype, unsupported_type};
use super::gemm::{GemmScalar, Mat};
use crate::{OpContext, OpKernel};

struct MatMul {
    ta: bool,
    tb: bool,
    dtype: DataType,
}

pub(crate) fn matmul_factory(node: &NodeDef) -> Result<Box<dyn OpKernel>, Status> {
    let dtype = node.attr_type("T")?;
    if !matches!(dtype, DataType::Float | DataType::Double | DataType::Int32 | DataType::Int64) {
        return Err(unsupported_type(node, dtype));
    }
    Ok(Box::new(MatMul { ta: node.attr_bool("transpose_a")?, tb: node.attr_bool("transpose_b")?, dtype }))
}

impl MatMul {
    fn run<T: GemmScalar>(&self, ctx: &mut OpContext, a: &Tensor, b: &Tensor) -> Result<(), Status> {
        let (ad, bd) = (a.dims(), b.dims());
        let (m, k) = if self.ta { (ad[1], ad[0]) } else { (ad[0], ad[1]) };
        let (kb, n) = if self.tb { (bd[1], bd[0]) } else { (bd[0], bd[1]) };
        if k != kb {
            return Err(ctx.error(format!("Matrix size-incompatible: In[0]: {}, In[1]: {}", a.shape(), b.shape())));
        }
        // Empty inputs may claim a huge product ([n, 0] x [0, n]).
        crate::array::check_alloc(&[m, n], self.dtype).map_err(|e| e.context(format!("node '{}'", ctx.node().name)))?;
        let am = Mat::row_major(a.as_slice::<T>()?, ad[1], self.ta);
        let bm = Mat::row_major(b.as_slice::<T>()?, bd[1], self.tb);
        let out = T::product(m, n, k, am, bm, true);
        ctx.set_output(0, Tensor::new(vec![m, n], out)?)
    }
}

impl OpKernel for MatMul {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let a = ctx.input(0)?;
        let b = ctx.input(1)?;
        for (i, t) in [&a, &b].into_iter().enumerate() {
            if t.rank() != 2 {
                return Err(ctx.error(format!("In[{i}] is not a matrix. Instead it has shape {}", t.shape())));
            }
            check_dtype(ctx.node(), &format!("input {i}"), t.dtype(), self.dtype)?;
        }
        dispatch!(self.dtype, ctx, [f32, f64, i32, i64], |T| self.run::<T>(ctx, &a, &b))
    }
}

#[cfg(test)]
mod tests {
    use ferroflow_core::{attr, Code};

    use super::*;
    use crate::testutil::{node, run_kernel};

    fn mm(a: Tensor, b: Tensor, ta: bool, tb: bool) -> Result<Tensor, Status> {
        let n = node(
            "MatMul",
            &[("T", attr::ty(a.dtype())), ("transpose_a", attr::bool(ta)), ("transpose_b", attr::bool(tb))],
        );
        run_kernel(n, vec![a, b], 1).map(|mut v| v.remove(0))
    }

    #[test]
    fn products_with_transposes() {
        let a = Tensor::new(vec![2, 3], vec![1.0f32, 2., 3., 4., 5., 6.]).unwrap();
        let b = Tensor::new(vec![3, 2], vec![7.0f32, 8., 9., 10., 11., 12.]).unwrap();
        let c = mm(a.clone(), b.clone(), false, false).unwrap();
        assert_eq!(c.dims(), &[2, 2]);
        assert_eq!(c.as_slice::<f32>().unwrap(), &[58., 64., 139., 154.]);
        // a^T (3x2 stored as 2x3) times b^T (2x3 stored as 3x2) = 3x3
        let c = mm(a.clone(), b.clone(), true, true).unwrap();
        assert_eq!(c.dims(), &[3, 3]);
        assert_eq!(c.as_slice::<f32>().unwrap(), &[39., 49., 59., 54., 68., 82., 69., 87., 105.]);
        let ai = Tensor::new(vec![2, 3], vec![1i32, 2, 3, 4, 5, 6]).unwrap();
        let c = mm(ai.clone(), ai, false, true).unwrap();
        assert_eq!(c.as_slice::<i32>().unwrap(), &[14, 32, 32, 77]);
    }

    #[test]
    fn mismatched_inner_dims_name_node_and_shapes() {
        let a = Tensor::zeros(DataType::Float, vec![2, 3]).unwrap();
        let b = Tensor::zeros(DataType::Float, vec![4, 5]).unwrap();
        let e = mm(a, b, false, false).unwrap_err();
        assert_eq!(e.code, Code::InvalidArgument);
        assert!(e.message.contains("'test'") && e.message.contains("In[0]: [2,3], In[1]: [4,5]"), "{e}");
        let v = Tensor::zeros(DataType::Float, vec![3]).unwrap();
        let e = mm(v.clone(), v, false, false).unwrap_err();
        assert!(e.message.contains("not a matrix"), "{e}");
    }

    #[test]
    fn a_huge_empty_product_is_refused() {
        let a = Tensor::zeros(DataType::Float, vec![1 << 40, 0]).unwrap();
        let b = Tensor::zeros(DataType::Float, vec![0, 1 << 40]).unwrap();
        let e = mm(a, b, false, false).unwrap_err();
        assert_eq!(e.code, Code::ResourceExhausted, "{e}");
    }

    #[test]
    fn empty_inner_dim_gives_zeros() {
        let a = Tensor::zeros(DataType::Double, vec![2, 0]).unwrap();
        let b = Tensor::zeros(DataType::Double, vec![0, 3]).unwrap();
        let c = mm(a, b, false, false).unwrap();
        assert_eq!(c.as_slice::<f64>().unwrap(), &[0.0; 6]);
    }
}
