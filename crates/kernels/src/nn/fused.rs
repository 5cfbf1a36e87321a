//! `_FusedMatMul` and `_FusedConv2D`: a product followed by `BiasAdd` (and `Relu`) in one
//! kernel, as TensorFlow's Grappler remapper builds them on CPU. The product is computed by
//! the `MatMul`/`Conv2D` kernel itself; the bias and the rectifier are then applied in one
//! pass over its output while it is still the only reference, instead of two more passes
//! and two more scheduled nodes. The arithmetic is the unfused one, so results are equal
//! bit for bit.

use std::sync::Arc;

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{DataType, NodeAttrs, Status, Tensor};

use super::common::float_type;
use super::common::{check_dtype, for_chunks, unsupported_type};
use crate::array::util::unshared_mut;
use crate::{OpContext, OpKernel, Value};

/// What follows the product.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Epilogue {
    Bias,
    BiasRelu,
}

struct Fused {
    product: Box<dyn OpKernel>,
    /// The node the product kernel sees: this node under the product's op name.
    product_node: Arc<NodeDef>,
    epilogue: Epilogue,
    dtype: DataType,
}

/// Parses `fused_ops` and `num_args` as TensorFlow's kernels accept them on CPU (the forms
/// this runtime builds): `["BiasAdd"]` or `["BiasAdd", "Relu"]` with one argument.
fn epilogue(node: &NodeDef) -> Result<Epilogue, Status> {
    let ops: Vec<String> = node.attr_list_string("fused_ops")?;
    let num_args = node.attr_int("num_args")?;
    let e = match ops.iter().map(String::as_str).collect::<Vec<_>>().as_slice() {
        ["BiasAdd"] => Epilogue::Bias,
        ["BiasAdd", "Relu"] => Epilogue::BiasRelu,
        other => {
            return Err(Status::unimplemented(format!(
                "node '{}' ({}): fused_ops {other:?} are not supported; ferroflow fuses [BiasAdd] and [BiasAdd, Relu]",
                node.name, node.op
            ))
            .with_node(&node.name))
        }
    };
    if num_args != 1 {
        return Err(Status::invalid_argument(format!(
            "node '{}' ({}): fused_ops {ops:?} take 1 argument (the bias), got num_args={num_args}",
            node.name, node.op
        ))
        .with_node(&node.name));
    }
    Ok(e)
}

fn fused_factory(node: &NodeDef, product_op: &str) -> Result<Box<dyn OpKernel>, Status> {
    let dtype = float_type(node)?;
    let epilogue = epilogue(node)?;
    let mut inner = node.clone();
    inner.op = product_op.to_string();
    inner.input.truncate(2);
    let product = crate::create_kernel(&inner)?;
    Ok(Box::new(Fused { product, product_node: Arc::new(inner), epilogue, dtype }))
}

pub(crate) fn fused_matmul_factory(node: &NodeDef) -> Result<Box<dyn OpKernel>, Status> {
    fused_factory(node, "MatMul")
}

pub(crate) fn fused_conv2d_factory(node: &NodeDef) -> Result<Box<dyn OpKernel>, Status> {
    if node.attr_string("data_format").is_ok_and(|f| f != "NHWC")
        || node.attr_string("filter_format").is_ok_and(|f| f != "HWIO")
    {
        return Err(Status::unimplemented(format!(
            "node '{}' (_FusedConv2D): only NHWC input and HWIO filters are supported on CPU",
            node.name
        ))
        .with_node(&node.name));
    }
    fused_factory(node, "Conv2D")
}

/// `v = v + b[channel]`, then `max(v, 0)` when `relu`, over rows of `b.len()` channels.
fn bias_epilogue<T>(data: &mut [T], b: &[T], relu: bool)
where
    T: Copy + Send + Sync + PartialOrd + Default + std::ops::Add<Output = T>,
{
    let c = b.len();
    let zero = T::default();
    for_chunks(data, c, |_, chunk| {
        for row in chunk.chunks_exact_mut(c) {
            if relu {
                for (v, &bv) in row.iter_mut().zip(b) {
                    let s = *v + bv;
                    // NaN stays NaN, as Relu's max(x, 0) keeps it in TensorFlow.
                    *v = if s < zero { zero } else { s };
                }
            } else {
                for (v, &bv) in row.iter_mut().zip(b) {
                    *v = *v + bv;
                }
            }
        }
    });
}

impl Fused {
    fn finish<T>(&self, ctx: &mut OpContext, mut y: Tensor, bias: &Tensor) -> Result<(), Status>
    where
        T: ferroflow_core::TensorType + Copy + Send + Sync + PartialOrd + Default + std::ops::Add<Output = T>,
    {
        let c = y.dims().last().copied().unwrap_or(0);
        if bias.rank() != 1 || bias.dims()[0] != c {
            return Err(ctx.error(format!(
                "Must provide as many biases as the last dimension of the input tensor: {} vs. {}",
                bias.shape(),
                y.shape()
            )));
        }
        if c > 0 {
            bias_epilogue(unshared_mut::<T>(&mut y)?, bias.as_slice::<T>()?, self.epilogue == Epilogue::BiasRelu);
        }
        ctx.set_output(0, y)
    }
}

impl OpKernel for Fused {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let bias = ctx.input(2)?;
        check_dtype(ctx.node(), "input 2 (bias)", bias.dtype(), self.dtype)?;
        let inputs = vec![ctx.input_value(0)?.clone(), ctx.input_value(1)?.clone()];
        let mut inner = OpContext::new(self.product_node.clone(), inputs, 1, ctx.step().clone());
        self.product.compute(&mut inner)?;
        let y = match inner.take_outputs()?.pop() {
            Some(Value::Tensor(t)) => t,
            _ => return Err(ctx.error("the fused product produced no tensor")),
        };
        match self.dtype {
            DataType::Float => self.finish::<f32>(ctx, y, &bias),
            DataType::Double => self.finish::<f64>(ctx, y, &bias),
            d => Err(unsupported_type(ctx.node(), d)),
        }
    }

    fn is_expensive(&self) -> bool {
        true
    }
}
