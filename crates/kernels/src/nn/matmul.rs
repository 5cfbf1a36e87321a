//! `MatMul`: the product of two matrices, either transposed (real, integer and complex:
//! a complex transpose does not conjugate, `tf.linalg.matmul(adjoint_a=...)` adds a `Conj`).

use crate::dispatch::dispatch;
use ferroflow_core::proto::NodeDef;
use ferroflow_core::{DataType, NodeAttrs, Status, Tensor, C128, C64};

use super::common::check_dtype;
use super::common::type_attr;

/// MatMul's types: the real ones and complex64/complex128.
const TYPES: &[DataType] =
    &[DataType::Float, DataType::Double, DataType::Int32, DataType::Int64, DataType::Complex64, DataType::Complex128];
use super::gemm::{GemmScalar, Mat};
use crate::{OpContext, OpKernel};

struct MatMul {
    ta: bool,
    tb: bool,
    dtype: DataType,
}

pub(crate) fn matmul_factory(node: &NodeDef) -> Result<Box<dyn OpKernel>, Status> {
    let dtype = type_attr(node, TYPES)?;
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
        crate::array::check_alloc(&[m, n], self.dtype)
            .map_err(|e| e.context(format!("node '{}'", ctx.node().name)).with_node(&ctx.node().name))?;
        let am = Mat::row_major(a.as_slice::<T>()?, ad[1], self.ta);
        let bm = Mat::row_major(b.as_slice::<T>()?, bd[1], self.tb);
        let out = T::product(m, n, k, am, bm, true)?;
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
        dispatch!(self.dtype, ctx, [f32, f64, i32, i64, C64, C128], |T| self.run::<T>(ctx, &a, &b))
    }
}
