//! nn kernels: matrix products, bias, rectifiers, softmax and cross-entropy, convolution
//! (blocked im2col + gemm) and pooling. NHWC throughout.
//!
//! [`gemm`] is a safe front end to the `gemm` crate that other families may reuse.

hidden_mods! {
    activation, common, conv, conv_backprop, conv_direct, conv_direct_filter, conv_groups, im2col, in_top_k,
    #[cfg(target_arch = "x86_64")] simd, volume, winograd, winograd_filter, #[cfg(target_arch = "x86_64")]
    winograd_simd, winograd_tile, winograd_tile3, winograd_weights,
}
mod avg_pool;
mod batch_matmul;
mod batch_norm;
mod batch_norm_act;
mod batch_norm_grad;
mod batch_norm_moments;
mod batch_norm_rows;
mod bias;
mod conv3d;
#[cfg(target_arch = "x86_64")]
mod conv_padded;
mod depthwise;
mod depthwise_backprop;
#[cfg(target_arch = "x86_64")]
mod depthwise_forward_simd;
mod depthwise_simd;
mod depthwise_strided;
mod fractional_pool;
mod fractional_seq;
mod fused;
pub mod gemm;
mod lrn;
mod matmul;
mod max_pool;
mod max_pool_argmax;
mod max_pool_grad_grad;
mod max_pool_index;
mod pool;
mod pool3d;
mod pool_v2;
mod relu;
mod softmax;
mod xent;

use crate::KernelRegistry;

/// Registers this family's kernels.
pub(crate) fn register(r: &mut KernelRegistry) {
    ferroflow_core::register_modules! { r: activation, in_top_k, lrn, softmax, conv3d, pool3d, max_pool_argmax, fractional_pool }
    r.add("MatMul", matmul::matmul_factory);
    r.add("BatchMatMulV2", batch_matmul::batch_matmul_factory);
    r.add("BiasAdd", bias::bias_add_factory);
    r.add("BiasAddGrad", bias::bias_add_grad_factory);
    r.add("Relu", relu::relu_factory);
    r.add("ReluGrad", relu::relu_grad_factory);
    r.add("Relu6", relu::relu6_factory);
    r.add("Relu6Grad", relu::relu6_grad_factory);
    r.add("Elu", relu::elu_factory);
    r.add("EluGrad", relu::elu_grad_factory);
    r.add("SoftmaxCrossEntropyWithLogits", xent::xent_factory);
    r.add("SparseSoftmaxCrossEntropyWithLogits", xent::sparse_xent_factory);
    r.add("Conv2D", conv::conv2d_factory);
    r.add("_FusedMatMul", fused::fused_matmul_factory);
    r.add("_FusedConv2D", fused::fused_conv2d_factory);
    r.add("Conv2DBackpropInput", conv_backprop::backprop_input_factory);
    r.add("Conv2DBackpropFilter", conv_backprop::backprop_filter_factory);
    r.add("MaxPool", |n| pool::pool_factory::<max_pool::MaxPool>(n, true));
    r.add("MaxPoolGrad", |n| pool::pool_factory::<max_pool::MaxPoolGrad>(n, false));
    r.add("_MaxPoolWithIndex", max_pool_index::max_pool_with_index_factory);
    r.add("_MaxPoolGradWithIndex", max_pool_index::max_pool_grad_with_index_factory);
    r.add("MaxPoolGradGrad", |n| pool::pool_factory::<max_pool_grad_grad::MaxPoolGradGrad>(n, false));
    pool_v2::register(r);
    r.add("AvgPool", |n| pool::pool_factory::<avg_pool::AvgPool>(n, false));
    r.add("AvgPoolGrad", |n| pool::pool_factory::<avg_pool::AvgPoolGrad>(n, false));
    for v in ["FusedBatchNorm", "FusedBatchNormV2", "FusedBatchNormV3", "_FusedBatchNormEx"] {
        r.add(v, batch_norm::fused_batch_norm_factory);
    }
    for v in ["FusedBatchNormGrad", "FusedBatchNormGradV2", "FusedBatchNormGradV3", "_FusedBatchNormGradEx"] {
        r.add(v, batch_norm_grad::fused_batch_norm_grad_factory);
    }
    r.add("DepthwiseConv2dNative", depthwise::depthwise_factory);
    r.add("DepthwiseConv2dNativeBackpropInput", depthwise_backprop::backprop_input_factory);
    r.add("DepthwiseConv2dNativeBackpropFilter", depthwise_backprop::backprop_filter_factory);
}
