//! `_FusedMatMul` and `_FusedConv2D`: a product followed by `BiasAdd` (and `Relu`) in one
//! kernel, as TensorFlow's Grappler remapper builds them on CPU. The product is computed by
//! the `MatMul`/`Conv2D` kernel itself; the bias and the rectifier are then applied in one
//! pass over its output while it is still the only reference, instead of two more passes
//! and two more scheduled nodes. The arithmetic is the unfused one, so results are equal
//! bit for bit.

use std::sync::Arc;

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{DataType, NodeAttrs, Status, Tensor};

use super::common::{check_dtype, for_chunks, unsupported_type};
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
            )))
        }
    };
    if num_args != 1 {
        return Err(Status::invalid_argument(format!(
            "node '{}' ({}): fused_ops {ops:?} take 1 argument (the bias), got num_args={num_args}",
            node.name, node.op
        )));
    }
    Ok(e)
}

fn fused_factory(node: &NodeDef, product_op: &str) -> Result<Box<dyn OpKernel>, Status> {
    let dtype = node.attr_type("T")?;
    if !matches!(dtype, DataType::Float | DataType::Double) {
        return Err(unsupported_type(node, dtype));
    }
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
        )));
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
            bias_epilogue(y.data_mut::<T>()?, bias.as_slice::<T>()?, self.epilogue == Epilogue::BiasRelu);
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

#[cfg(test)]
mod tests {
    use ferroflow_core::{attr, Code};

    use super::*;
    use crate::testutil::{node, run_kernel};

    fn fused_mm(a: Tensor, b: Tensor, bias: Tensor, ops: &[&str]) -> Result<Tensor, Status> {
        let n = node(
            "_FusedMatMul",
            &[
                ("T", attr::ty(a.dtype())),
                ("transpose_a", attr::bool(false)),
                ("transpose_b", attr::bool(false)),
                ("fused_ops", attr::list_string(ops)),
                ("num_args", attr::int(1)),
                ("epsilon", attr::float(0.0)),
            ],
        );
        run_kernel(n, vec![a, b, bias], 1).map(|mut v| v.remove(0))
    }

    #[test]
    fn matmul_bias_relu_equals_the_unfused_ops() {
        let a = Tensor::new(vec![2, 3], vec![1.0f32, -2., 3., -4., 5., -6.]).unwrap();
        let b = Tensor::new(vec![3, 2], vec![0.5f32, -1., 2., 0.25, -3., 1.5]).unwrap();
        let bias = Tensor::vec(vec![1.0f32, -20.0]);
        // a·b = [[-12.5, 3], [26, -3.75]]; + bias = [[-11.5, -17], [27, -23.75]].
        let y = fused_mm(a.clone(), b.clone(), bias.clone(), &["BiasAdd"]).unwrap();
        assert_eq!(y.as_slice::<f32>().unwrap(), &[-11.5, -17.0, 27.0, -23.75]);
        let y = fused_mm(a, b, bias, &["BiasAdd", "Relu"]).unwrap();
        assert_eq!(y.as_slice::<f32>().unwrap(), &[0.0, 0.0, 27.0, 0.0]);
    }

    #[test]
    fn conv_bias_relu_equals_the_unfused_ops() {
        // 1x3x3x1 input, 2x2x1x2 filter, VALID: out 1x2x2x2.
        let x = Tensor::new(vec![1, 3, 3, 1], (1..=9).map(|v| v as f32).collect::<Vec<_>>()).unwrap();
        let f = Tensor::new(vec![2, 2, 1, 2], vec![1.0f32, -1., 0., 1., 0., -1., 1., 0.]).unwrap();
        let bias = Tensor::vec(vec![0.5f32, 2.0]);
        let n = node(
            "_FusedConv2D",
            &[
                ("T", attr::ty(DataType::Float)),
                ("strides", attr::list_int(&[1, 1, 1, 1])),
                ("padding", attr::string("VALID")),
                ("fused_ops", attr::list_string(&["BiasAdd", "Relu"])),
                ("num_args", attr::int(1)),
            ],
        );
        let y = run_kernel(n, vec![x.clone(), f.clone(), bias.clone()], 1).unwrap().remove(0);
        let conv = node(
            "Conv2D",
            &[
                ("T", attr::ty(DataType::Float)),
                ("strides", attr::list_int(&[1, 1, 1, 1])),
                ("padding", attr::string("VALID")),
            ],
        );
        let c = run_kernel(conv, vec![x, f], 1).unwrap().remove(0);
        let want: Vec<f32> = c
            .as_slice::<f32>()
            .unwrap()
            .iter()
            .enumerate()
            .map(|(i, v)| (v + bias.as_slice::<f32>().unwrap()[i % 2]).max(0.0))
            .collect();
        assert_eq!(y.dims(), &[1, 2, 2, 2]);
        assert_eq!(y.as_slice::<f32>().unwrap(), want.as_slice());
    }

    #[test]
    fn a_bias_of_the_wrong_size_and_unknown_fusions_are_refused() {
        let a = Tensor::new(vec![1, 2], vec![1.0f32, 2.]).unwrap();
        let b = Tensor::new(vec![2, 2], vec![1.0f32, 0., 0., 1.]).unwrap();
        let e = fused_mm(a.clone(), b.clone(), Tensor::vec(vec![1.0f32; 3]), &["BiasAdd"]).unwrap_err();
        assert_eq!(e.code, Code::InvalidArgument);
        assert!(e.message.contains("biases"), "{}", e.message);
        let e = fused_mm(a, b, Tensor::vec(vec![1.0f32; 2]), &["BiasAdd", "Elu"]).unwrap_err();
        assert_eq!(e.code, Code::Unimplemented);
    }
}
