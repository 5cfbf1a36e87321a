//! Image kernels (NHWC): resizing (bilinear, nearest, bicubic, area), crop-and-resize, and their
//! gradients, colour adjustments, non-max suppression, projective transforms, patches,
//! and the PNG / JPEG / GIF / BMP codecs.

mod bmp;
mod codec;
mod color;
mod combined_nms;
mod common;
mod crop_and_resize;
mod decode_image;
mod dilation;
mod draw_boxes;
mod gif_codec;
mod glimpse;
mod jpeg_codec;
mod nms;
mod patches;
pub(crate) mod png_codec;
mod resize;
mod resize_area;
mod resize_bicubic;
mod sample_bbox;
mod scale_translate;
pub(crate) mod stl_order;
mod transform;

use crate::KernelRegistry;

/// Registers this family's kernels.
pub(crate) fn register(r: &mut KernelRegistry) {
    r.add("ResizeBilinear", resize::bilinear_factory);
    r.add("ResizeBilinearGrad", resize::bilinear_grad_factory);
    r.add("ResizeNearestNeighbor", resize::nearest_factory);
    r.add("ResizeNearestNeighborGrad", resize::nearest_grad_factory);
    r.add("ResizeBicubic", resize_bicubic::bicubic_factory);
    r.add("ResizeBicubicGrad", resize_bicubic::bicubic_grad_factory);
    r.add("ResizeArea", resize_area::area_factory);
    r.add("RGBToHSV", color::rgb_to_hsv_factory);
    r.add("HSVToRGB", color::hsv_to_rgb_factory);
    r.add("AdjustHue", color::adjust_hue_factory);
    r.add("AdjustSaturation", color::adjust_saturation_factory);
    r.add("AdjustContrastv2", color::adjust_contrast_factory);
    nms::register(r);
    combined_nms::register(r);
    sample_bbox::register(r);
    dilation::register(r);
    glimpse::register(r);
    r.add("ImageProjectiveTransformV2", transform::v2_factory);
    r.add("ImageProjectiveTransformV3", transform::v3_factory);
    r.add("ExtractImagePatches", patches::factory);
    r.add("DecodePng", png_codec::decode_png_factory);
    r.add("EncodePng", png_codec::encode_png_factory);
    r.add("DecodeJpeg", jpeg_codec::decode_jpeg_factory);
    r.add("EncodeJpeg", jpeg_codec::encode_jpeg_factory);
    r.add("EncodeJpegVariableQuality", jpeg_codec::encode_jpeg_variable_quality_factory);
    r.add("DecodeAndCropJpeg", jpeg_codec::decode_and_crop_jpeg_factory);
    r.add("ExtractJpegShape", jpeg_codec::extract_jpeg_shape_factory);
    r.add("DecodeGif", gif_codec::decode_gif_factory);
    r.add("DecodeImage", decode_image::decode_image_factory);
    r.add("DecodeBmp", bmp::decode_bmp_factory);
    r.add("DrawBoundingBoxesV2", draw_boxes::factory);
    r.add("ScaleAndTranslate", scale_translate::factory);
    r.add("ScaleAndTranslateGrad", scale_translate::grad_factory);
    r.add("CropAndResize", crop_and_resize::crop_and_resize_factory);
    r.add("CropAndResizeGradImage", crop_and_resize::grad_image_factory);
    r.add("CropAndResizeGradBoxes", crop_and_resize::grad_boxes_factory);
}
