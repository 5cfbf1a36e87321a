//! Which function is each op's gradient, in one list: the ops this crate differentiates, and the
//! ops marked not differentiable (a gradient stops there, as `tf.no_gradient` does).

use super::nn_grad_norm as norm;
use super::registry::GradRegistry;
use super::{
    array_grad as array, array_grad_gather as gather, array_grad_slice as slice, array_grad_sparse as sparse,
    control_flow_grad as control_flow, math_grad_binary as binary, math_grad_ext as ext, math_grad_reduce as reduce,
    math_grad_unary as unary, nn_grad as nn, nn_grad_conv as conv, nn_grad_matmul as matmul, nn_grad_volume as volume,
    tensor_array_grad as tensor_array,
};
use crate::ops;
use crate::tensor_array::TensorArray;

/// Registers every family's gradient functions.
pub(super) fn register(r: &mut GradRegistry) {
    // Shapes, copies, concatenation and packing. (array_grad.rs)
    r.no_gradient(&[
        "Shape",
        "ShapeN",
        "Size",
        "Rank",
        "ZerosLike",
        "OnesLike",
        "OneHot",
        "Range",
        "InvertPermutation",
        "ConcatOffset",
        "RandomUniform",
        "RandomStandardNormal",
        "TruncatedNormal",
        "RandomUniformInt",
        "RandomShuffle",
        "Multinomial",
        "LogUniformCandidateSampler",
        "UniformCandidateSampler",
        "LearnedUnigramCandidateSampler",
        "ThreadUnsafeUnigramCandidateSampler",
        "FixedUnigramCandidateSampler",
        "AllCandidateSampler",
        "ComputeAccidentalHits",
        "StatelessMultinomial",
        "StatelessRandomGetKeyCounter",
        "StatelessRandomGetKeyCounterAlg",
        "StatelessRandomGetAlg",
        "StatelessRandomUniformV2",
        "StatelessRandomNormalV2",
        "StatelessTruncatedNormalV2",
        "StatelessRandomUniformIntV2",
        "StatelessRandomUniformFullIntV2",
        "StatelessRandomUniform",
        "StatelessRandomNormal",
        "StatelessTruncatedNormal",
        "StatelessRandomUniformInt",
        "StatelessRandomUniformFullInt",
        "RandomPoisson",
        "RandomPoissonV2",
        "StatelessRandomPoisson",
        "StatelessRandomBinomial",
        "RngReadAndSkip",
        "RngSkip",
        "StatefulUniform",
        "StatefulUniformInt",
        "StatefulUniformFullInt",
        "StatefulStandardNormalV2",
        "StatefulTruncatedNormal",
        "StatefulRandomBinomial",
        "Bitcast",
        "AssignVariableOp",
        "AssignAddVariableOp",
        "AssignSubVariableOp",
        "DestroyResourceOp",
        "Assign",
        "AssignAdd",
        "AssignSub",
    ]);
    r.no_gradient(&array::APPLY_OPS);
    // The gamma samplers, through RandomGammaGrad. (random_grad.rs)
    r.add("RandomGamma", super::random_grad::random_gamma_grad);
    r.add("StatelessRandomGammaV2", super::random_grad::stateless_random_gamma_grad);
    r.add("StatelessRandomGammaV3", super::random_grad::stateless_random_gamma_grad);
    r.add("Reshape", array::reshape_to_input_grad);
    r.add("ExpandDims", array::reshape_to_input_grad);
    r.add("Squeeze", array::reshape_to_input_grad);
    r.add("Snapshot", |_, _, g| Ok(vec![Some(g[0].clone())]));
    r.add("PreventGradient", array::prevent_gradient_grad);
    r.add("Transpose", array::transpose_grad);
    r.add("ConcatV2", array::concat_grad);
    r.add("Pack", array::pack_grad);
    r.add("Unpack", array::unpack_grad);
    r.add("Fill", array::fill_grad);
    // Slicing, padding and tiling. (array_grad_slice.rs)
    r.add("Slice", slice::slice_grad);
    r.add("StridedSlice", slice::strided_slice_grad);
    r.add("StridedSliceGrad", slice::strided_slice_grad_grad);
    r.add("Pad", slice::pad_grad);
    r.add("PadV2", slice::pad_grad);
    r.add("Tile", slice::tile_grad);
    r.add("BroadcastTo", slice::broadcast_to_grad);
    // Gathers. (array_grad_gather.rs)
    r.add("Gather", gather::gather_grad);
    r.add("GatherV2", gather::gather_v2_grad);
    // Sparse reads and stitches. (array_grad_sparse.rs)
    r.add("ResourceGather", sparse::resource_gather_grad);
    r.add("DynamicStitch", sparse::stitch_grad);
    r.add("ParallelDynamicStitch", sparse::stitch_grad);
    // Comparisons, logic and rounding: not differentiable. (math_grad.rs)
    r.no_gradient(&ops::COMPARISON_AND_LOGIC_OPS);
    r.no_gradient(&["ArgMax", "ArgMin", "BroadcastGradientArgs", "Floor", "Ceil", "Round", "FloorDiv"]);
    // Binary and n-ary arithmetic. (math_grad_binary.rs)
    r.add("Add", binary::add_grad);
    r.add("AddV2", binary::add_grad);
    r.add("Sub", binary::sub_grad);
    r.add("Mul", binary::mul_grad);
    r.add("Div", |s, op, g| binary::div_like(s, op, g, super::math_grad::divide));
    r.add("RealDiv", |s, op, g| binary::div_like(s, op, g, ops::real_div));
    r.add("DivNoNan", |s, op, g| binary::div_like(s, op, g, ops::div_no_nan));
    r.add("FloorMod", binary::floor_mod_grad);
    r.add("Pow", binary::pow_grad);
    r.add("Maximum", |s, op, g| binary::max_min(s, op, g, ops::greater_equal));
    r.add("Minimum", |s, op, g| binary::max_min(s, op, g, ops::less_equal));
    r.add("SquaredDifference", binary::squared_difference_grad);
    r.add("AddN", binary::add_n_grad);
    r.add("Select", binary::select_grad);
    r.add("SelectV2", binary::select_v2_grad);
    // Unary math. (math_grad_unary.rs)
    r.add("Neg", unary::neg_grad);
    r.add("Abs", unary::abs_grad);
    r.add("Sign", unary::sign_grad);
    r.add("Reciprocal", unary::reciprocal_grad);
    r.add("Inv", unary::reciprocal_grad);
    r.add("Square", unary::square_grad);
    r.add("Sqrt", unary::sqrt_grad);
    r.add("Rsqrt", unary::rsqrt_grad);
    r.add("Exp", unary::exp_grad);
    r.add("Log", unary::log_grad);
    r.add("Log1p", unary::log1p_grad);
    r.add("Tanh", unary::tanh_grad);
    r.add("Sigmoid", unary::sigmoid_grad);
    r.add("TanhGrad", unary::tanh_grad_grad);
    r.add("SigmoidGrad", unary::sigmoid_grad_grad);
    r.add("SqrtGrad", unary::sqrt_grad_grad);
    r.add("RsqrtGrad", unary::rsqrt_grad_grad);
    r.add("ReciprocalGrad", unary::reciprocal_grad_grad);
    r.add("InvGrad", unary::reciprocal_grad_grad);
    r.add("Cast", unary::cast_grad);
    // Reductions. (math_grad_reduce.rs)
    r.add("Sum", reduce::sum_grad);
    r.add("Mean", reduce::mean_grad);
    r.add("Max", reduce::min_or_max_grad);
    r.add("Min", reduce::min_or_max_grad);
    r.add("Prod", reduce::prod_grad);
    // Bias, activations, softmax and cross-entropy. (nn_grad.rs)
    r.add("BiasAdd", nn::bias_add_grad);
    r.add("BiasAddGrad", nn::bias_add_grad_grad);
    r.add("Relu", nn::relu_grad);
    r.add("Relu6", nn::relu6_grad);
    r.add("Elu", nn::elu_grad);
    r.add("ReluGrad", nn::relu_grad_grad);
    r.add("Relu6Grad", nn::relu6_grad_grad);
    r.add("EluGrad", nn::elu_grad_grad);
    r.add("Softmax", nn::softmax_grad);
    r.add("LogSoftmax", nn::log_softmax_grad);
    r.add("SoftmaxCrossEntropyWithLogits", nn::xent_grad);
    r.add("SparseSoftmaxCrossEntropyWithLogits", nn::sparse_xent_grad);
    // More unary and binary math, special functions, L2Loss, EuclideanNorm and the smooth and
    // leaky activations: their list is `math_grad_ext::register`. (math_grad_ext.rs)
    ext::register(r);
    // Matrix products. (nn_grad_matmul.rs)
    r.add("MatMul", matmul::matmul_grad);
    r.add("BatchMatMulV2", matmul::batch_matmul_grad);
    // Convolutions and pooling. (nn_grad_conv.rs)
    r.add("Conv2D", conv::conv2d_grad);
    r.add("Conv2DBackpropInput", conv::conv2d_backprop_input_grad);
    r.add("Conv2DBackpropFilter", conv::conv2d_backprop_filter_grad);
    r.add("MaxPool", conv::max_pool_grad);
    r.add("MaxPoolGrad", conv::max_pool_grad_grad);
    r.add("MaxPoolGradGrad", conv::max_pool_grad_grad_grad);
    r.add("MaxPoolWithArgmax", conv::max_pool_with_argmax_grad);
    r.add("RaggedTensorToTensor", super::ragged_grad::ragged_tensor_to_tensor_grad);
    r.add("RaggedTensorToSparse", super::ragged_grad::ragged_tensor_to_sparse_grad);
    r.add("SparseDenseCwiseMul", super::sparse_cwise_grad::sparse_dense_cwise_mul_grad);
    r.add("SparseAdd", super::sparse_combine_grad::sparse_add_grad);
    r.add("SparseSlice", super::sparse_combine_grad::sparse_slice_grad);
    r.add("SparseDenseCwiseDiv", super::sparse_cwise_grad::sparse_dense_cwise_div_grad);
    r.add("MaxPoolGradWithArgmax", conv::max_pool_grad_with_argmax_grad);
    r.add("MaxPoolGradGradWithArgmax", conv::max_pool_grad_grad_with_argmax_grad);
    r.add("AvgPool", conv::avg_pool_grad);
    r.add("FractionalMaxPool", conv::fractional_max_pool_grad);
    r.add("FractionalAvgPool", conv::fractional_avg_pool_grad);
    r.add("AvgPoolGrad", conv::avg_pool_grad_grad);
    // The 3-D forms. (nn_grad_volume.rs)
    r.add("Conv3D", volume::conv3d_grad);
    r.add("Conv3DBackpropInputV2", volume::conv3d_backprop_input_grad);
    r.add("Conv3DBackpropFilterV2", volume::conv3d_backprop_filter_grad);
    r.add("MaxPool3D", volume::max_pool3d_grad);
    r.add("MaxPool3DGrad", volume::max_pool3d_grad_grad);
    r.add("MaxPool3DGradGrad", volume::max_pool3d_grad_grad_grad);
    r.add("AvgPool3D", volume::avg_pool3d_grad);
    r.add("AvgPool3DGrad", volume::avg_pool3d_grad_grad);
    // Resizing and crops; selections, colour conversions and codecs. (image_grad.rs)
    r.add("ResizeBilinear", super::image_grad::resize_bilinear_grad);
    r.add("ResizeBicubic", super::image_grad::resize_bicubic_grad);
    r.add("ResizeNearestNeighbor", super::image_grad::resize_nearest_neighbor_grad);
    r.add("CropAndResize", super::image_grad::crop_and_resize_grad);
    r.add("ScaleAndTranslate", super::image_grad::scale_and_translate_grad);
    r.add("AdjustContrastv2", super::image_grad::adjust_contrast_grad);
    r.no_gradient(&[
        "ResizeBilinearGrad",
        "NonMaxSuppressionV3",
        "NonMaxSuppressionV4",
        "NonMaxSuppressionV5",
        "CombinedNonMaxSuppression",
        "SampleDistortedBoundingBox",
        "SampleDistortedBoundingBoxV2",
        "StatelessSampleDistortedBoundingBox",
        "ExtractGlimpse",
        "ExtractGlimpseV2",
        "HSVToRGB",
    ]);
    // Batch normalization and depthwise convolution. (nn_grad_norm.rs)
    r.add("FusedBatchNorm", norm::fused_batch_norm_grad);
    r.add("FusedBatchNormV2", norm::fused_batch_norm_grad);
    r.add("FusedBatchNormV3", norm::fused_batch_norm_grad);
    r.add("DepthwiseConv2dNative", norm::depthwise_grad);
    r.add("DepthwiseConv2dNativeBackpropInput", norm::depthwise_backprop_input_grad);
    r.add("DepthwiseConv2dNativeBackpropFilter", norm::depthwise_backprop_filter_grad);
    // TensorArrays and stacks. (tensor_array_grad.rs)
    r.no_gradient(&[
        "TensorArrayV3",
        "TensorArrayGradV3",
        "TensorArrayGradWithShape",
        "TensorArraySizeV3",
        "TensorArrayCloseV3",
        "StackV2",
        "StackPushV2",
        "StackPopV2",
        "StackCloseV2",
    ]);
    r.add("TensorArrayReadV3", |s, op, g| tensor_array::read_grad(s, op, g, TensorArray::write));
    r.add("TensorArrayWriteV3", |s, op, g| tensor_array::write_grad(s, op, g, TensorArray::read));
    r.add("TensorArrayGatherV3", |s, op, g| tensor_array::read_grad(s, op, g, TensorArray::scatter));
    r.add("TensorArrayScatterV3", |s, op, g| tensor_array::write_grad(s, op, g, TensorArray::gather));
    r.add("TensorArrayConcatV3", tensor_array::concat_grad);
    r.add("TensorArraySplitV3", tensor_array::split_grad);
    // TF 1.x control flow. (control_flow_grad.rs)
    r.add("Switch", control_flow::switch_grad);
    r.add("RefSwitch", control_flow::switch_grad);
    r.add("Merge", control_flow::merge_grad);
    r.add("RefMerge", control_flow::merge_grad);
    for op in ["Enter", "RefEnter", "Exit", "RefExit", "NextIteration", "RefNextIteration"] {
        r.add(op, control_flow::loop_grad);
    }
    // Segment reductions and sparse ops. (sparse_grad.rs)
    super::sparse_grad::register(r);
    // Splits, scans, top-k, N-d gathers and scatters, einsum … (array_grad_ext.rs)
    super::array_grad_ext::register(r);
    // Space/batch/depth block moves, ReverseSequence, LRN, Cross. (array_grad_space.rs)
    super::array_grad_space::register(r);
    // Determinants, inverses, solves, Cholesky. (linalg_grad.rs)
    super::linalg_grad::register(r);
    // QR and SVD. (decomposition_grad.rs)
    super::decomposition_grad::register(r);
    // Tridiagonal and banded solves, tridiagonal products, sqrtm. (linalg_more_grad.rs)
    super::linalg_more_grad::register(r);
    // CTC loss (its fused gradient) and the CTC decoders. (ctc_grad.rs)
    super::ctc_grad::register(r);
    // Fake quantization (straight-through). (quant_grad.rs)
    super::quant_grad::register(r);
    // Quantize-and-dequantize (straight-through; V4 clipped to the range). (qdq_grad.rs)
    super::qdq_grad::register(r);
    // tf.math.special: Bessel J, Y, K, Dawson, Ei, Fresnel, Spence. (special_grad.rs)
    super::special_grad::register(r);
    // Grayscale morphology: Dilation2D. (dilation_grad.rs)
    super::dilation_grad::register(r);
    r.no_gradient(&["DecodeWav", "EncodeWav", "AudioSpectrogram", "Mfcc"]);
}
