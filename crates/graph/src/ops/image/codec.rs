//! Image codecs: `DecodePng`, `EncodePng`, `DecodeJpeg`, `DecodeAndCropJpeg`, `EncodeJpeg`,
//! `EncodeJpegVariableQuality`, `ExtractJpegShape`, `DecodeGif`, `DecodeBmp`, `DecodeImage`.

use ferroflow_core::{attr, DataType, NodeAttrs, Status};

use crate::op_def::op;
use crate::ops::op_output;
use crate::registry::OpRegistry;
use crate::scope::{Output, Scope};
use crate::shape_fn::{Dims, ShapeCtx};

/// [height, width, channels] with channels from the attr (unknown when 0).
fn decoded(c: &ShapeCtx) -> Result<Vec<Dims>, Status> {
    let ch = c.node.attr_int("channels").unwrap_or(0);
    Ok(vec![Some(vec![-1, -1, if ch == 0 { -1 } else { ch }])])
}

/// `EncodePng`: one string per image of the batch, the image's dims before [h, w, c].
fn encoded_png(c: &ShapeCtx) -> Result<Vec<Dims>, Status> {
    Ok(vec![c.input(0).map(|d| d[..d.len().saturating_sub(3)].to_vec())])
}

pub(super) fn register(r: &mut OpRegistry) {
    r.add(
        op("DecodePng")
            .input("contents: string")
            .output("image: dtype")
            .attr("channels: int = 0")
            .attr("dtype: {uint8, uint16} = DT_UINT8")
            .shape_fn(decoded)
            .build(),
    );
    r.add(
        op("EncodePng")
            .input("image: T")
            .output("contents: string")
            .attr("compression: int = -1")
            .attr("T: {uint8, uint16} = DT_UINT8")
            .shape_fn(encoded_png)
            .build(),
    );
    r.add(
        op("EncodeJpegVariableQuality")
            .input("images: uint8")
            .input("quality: int32")
            .output("contents: string")
            .shape_fn(crate::shape_fn::scalar)
            .build(),
    );
    // DecodeAndCropJpeg is DecodeJpeg with a crop window [y, x, height, width].
    for (name, cropped) in [("DecodeJpeg", false), ("DecodeAndCropJpeg", true)] {
        r.add(
            op(name)
                .input("contents: string")
                .when(cropped, |b| b.input("crop_window: int32"))
                .output("image: uint8")
                .attr("channels: int = 0")
                .attr("ratio: int = 1")
                .attr("fancy_upscaling: bool = true")
                .attr("try_recover_truncated: bool = false")
                .attr("acceptable_fraction: float = 1")
                .attr("dct_method: string = ''")
                .shape_fn(decoded)
                .build(),
        );
    }
    r.add(
        op("EncodeJpeg")
            .input("image: uint8")
            .output("contents: string")
            .attr("format: {'', 'grayscale', 'rgb'} = ''")
            .attr("quality: int = 95")
            .attr("progressive: bool = false")
            .attr("optimize_size: bool = false")
            .attr("chroma_downsampling: bool = true")
            .attr("density_unit: {'in', 'cm'} = 'in'")
            .attr("x_density: int = 300")
            .attr("y_density: int = 300")
            .attr("xmp_metadata: string = ''")
            .shape_fn(crate::shape_fn::scalar)
            .build(),
    );
    r.add(
        op("ExtractJpegShape")
            .input("contents: string")
            .output("image_shape: output_type")
            .attr("output_type: {int32, int64} = DT_INT32")
            .shape_fn(|_| Ok(vec![Some(vec![3])]))
            .build(),
    );
    r.add(
        op("DecodeGif")
            .input("contents: string")
            .output("image: uint8")
            .shape_fn(|_| Ok(vec![Some(vec![-1, -1, -1, 3])]))
            .build(),
    );
    r.add(
        op("DecodeBmp")
            .input("contents: string")
            .output("image: uint8")
            .attr("channels: int = 0")
            .shape_fn(decoded)
            .build(),
    );
    r.add(
        op("DecodeImage")
            .input("contents: string")
            .output("image: dtype")
            .attr("channels: int = 0")
            .attr("dtype: {uint8, uint16, float} = DT_UINT8")
            .attr("expand_animations: bool = true")
            .shape_fn(|_| Ok(vec![None]))
            .build(),
    );
}

/// `DecodePng` to `channels` (0: as stored) of `dtype` (uint8 or uint16).
pub fn decode_png(s: &Scope, contents: Output, channels: i64, dtype: DataType) -> Output {
    let attrs = [("channels", attr::int(channels)), ("dtype", attr::ty(dtype))];
    op_output(s, "DecodePng", [contents], attrs)
}

/// `EncodePng` of a [..., height, width, channels] uint8 or uint16 image (batch dims give
/// one string per image).
pub fn encode_png(s: &Scope, image: Output, compression: i64) -> Output {
    s.op("EncodePng").input(image).attr("compression", attr::int(compression)).build().output(0)
}

/// `DecodeJpeg` to `channels` (0: as stored, 1 or 3).
pub fn decode_jpeg(s: &Scope, contents: Output, channels: i64) -> Output {
    s.op("DecodeJpeg").input(contents).attr("channels", attr::int(channels)).build().output(0)
}

/// `EncodeJpeg` of a [height, width, 1 or 3] uint8 image at `quality` (0-100).
pub fn encode_jpeg(s: &Scope, image: Output, quality: i64) -> Output {
    s.op("EncodeJpeg").input(image).attr("quality", attr::int(quality)).build().output(0)
}

/// `DecodeBmp` to `channels` (0: as stored, 3 or 4).
pub fn decode_bmp(s: &Scope, contents: Output, channels: i64) -> Output {
    s.op("DecodeBmp").input(contents).attr("channels", attr::int(channels)).build().output(0)
}

/// `DecodeImage` (PNG, JPEG, GIF or BMP) to `channels` of `dtype`.
pub fn decode_image(s: &Scope, contents: Output, channels: i64, dtype: DataType) -> Output {
    let attrs = [("channels", attr::int(channels)), ("dtype", attr::ty(dtype))];
    op_output(s, "DecodeImage", [contents], attrs)
}
