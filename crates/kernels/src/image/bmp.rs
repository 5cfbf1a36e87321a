//! `DecodeBmp`, and the BMP branch of `DecodeImage`: TensorFlow's own BMP reader. It reads
//! the pixel-data offset (byte 10), width (18), height (22, negative for top-down rows) and
//! bits per pixel (28) and nothing else: 8-bit files are gray (the palette is skipped, not
//! applied), 24-bit BGR and 32-bit BGRA become RGB / RGBA; no compression is understood.
//! The file must end exactly after `height` rows padded to 4 bytes.

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{check_tensor_alloc, DataType, Status, Tensor};

use super::codec::nonempty_contents;
use super::png_codec::channels_attr;
use crate::OpKernel;

fn le_i32(b: &[u8], at: usize) -> i32 {
    i32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

/// Decodes a BMP file to `[height, width, channels]` uint8 samples (`channels` 0: as stored)
/// with TensorFlow's checks and messages; `err` makes the node's InvalidArgument errors.
pub(crate) fn decode_bmp(
    bytes: &[u8],
    channels: usize,
    err: &dyn Fn(String) -> Status,
) -> Result<(Vec<u8>, [usize; 3]), Status> {
    if channels == 1 {
        return Err(err(format!("`channels` must be 0, 3 or 4 for BMP, but got {channels}")));
    }
    if bytes.len() < 32 {
        return Err(err(format!(
            "Incomplete bmp content, requires at least 32 bytes to find the header size, width, height, and bpp, \
             got {} bytes",
            bytes.len()
        )));
    }
    let header = le_i32(bytes, 10);
    let width = le_i32(bytes, 18);
    let height = le_i32(bytes, 22);
    let bpp = i16::from_le_bytes([bytes[28], bytes[29]]);
    let img_c = i32::from(bpp / 8);
    if !matches!(img_c, 1 | 3 | 4) {
        return Err(err(format!("Number of channels inherent in the image must be 1, 3 or 4, was {img_c}")));
    }
    let out_c = if channels == 0 { img_c as usize } else { channels };
    if width <= 0 {
        return Err(err("Width must be positive".into()));
    }
    if height == 0 {
        return Err(err("Height must be nonzero".into()));
    }
    if header < 0 {
        return Err(err("header size must be nonnegative".into()));
    }
    let abs_h = i64::from(height).abs();
    if i64::from(width) * abs_h >= i64::from(i32::MAX / 8) {
        return Err(err("Total possible pixel bytes must be less than 2^30".into()));
    }
    let row = (i64::from(img_c) * i64::from(width) + 3) / 4 * 4;
    let diff = bytes.len() as i64 - i64::from(header) - row * abs_h;
    if diff != 0 {
        // TensorFlow computes the difference in a C int.
        return Err(err(format!(
            "Input size should match (header_size + row_size * abs_height) but they differ by {}",
            diff as i32
        )));
    }
    let (w, h, ic, row, header) = (width as usize, abs_h as usize, img_c as usize, row as usize, header as usize);
    let dims = [h, w, out_c];
    check_tensor_alloc(&dims, DataType::UInt8)?;
    let pixels = &bytes[header..];
    let top_down = height < 0;
    let mut out = ferroflow_core::alloc::with_capacity::<u8>(&dims)?;
    for i in 0..h {
        let src_row = if top_down { i } else { h - 1 - i };
        let line = &pixels[src_row * row..src_row * row + w * ic];
        for px in line.chunks_exact(ic) {
            match (ic, out_c) {
                (1, 1) => out.push(px[0]),
                (1, 3) => out.extend([px[0]; 3]),
                (1, _) => out.extend([px[0], px[0], px[0], u8::MAX]),
                (3, 3) | (4, 3) => out.extend([px[2], px[1], px[0]]),
                (3, _) => out.extend([px[2], px[1], px[0], u8::MAX]),
                _ => out.extend([px[2], px[1], px[0], px[3]]),
            }
        }
    }
    Ok((out, dims))
}

/// The message TensorFlow gives when `DecodeBmp` is handed another format.
fn wrong_format(bytes: &[u8]) -> Option<&'static str> {
    if bytes.starts_with(&[0xff, 0xd8, 0xff]) {
        Some("Trying to decode JPEG format using DecodeBmp op. Use `decode_jpeg` or `decode_image` instead.")
    } else if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
        Some("Trying to decode PNG format using DecodeBmp op. Use `decode_png` or `decode_image` instead.")
    } else if bytes.starts_with(b"GIF8") {
        Some("Trying to decode GIF format using DecodeBmp op. Use `decode_gif` or `decode_image` instead.")
    } else {
        None
    }
}

/// TensorFlow's message for bytes of no known image format.
pub(crate) const UNKNOWN_FORMAT: &str =
    "Unknown image file format. One of JPEG, JPEG XL, PNG, GIF, BMP, WebP required.";

op_kernel! {
    struct DecodeBmp { channels: usize }
    fn compute(&self, ctx) {
        let bytes = nonempty_contents(ctx)?;
        if let Some(m) = wrong_format(&bytes) {
            return Err(ctx.error(m));
        }
        if !bytes.starts_with(b"BM") {
            return Err(ctx.error(UNKNOWN_FORMAT));
        }
        let (v, dims) = decode_bmp(&bytes, self.channels, &|m| ctx.error(m))?;
        ctx.set_output(0, Tensor::new(dims.to_vec(), v)?)
    }
}

pub(crate) fn decode_bmp_factory(node: &NodeDef) -> Result<Box<dyn OpKernel>, Status> {
    Ok(Box::new(DecodeBmp { channels: channels_attr(node)? }))
}

#[cfg(test)]
mod tests {
    use ferroflow_core::{attr, Code, Tensor};

    use crate::testutil::{node, run_kernel};

    /// A 24-bit 3×2 bottom-up BMP (rows of 9 bytes padded to 12).
    fn good() -> Vec<u8> {
        let mut f = b"BM".to_vec();
        f.extend_from_slice(&(54u32 + 24).to_le_bytes());
        f.extend_from_slice(&[0; 4]);
        f.extend_from_slice(&54u32.to_le_bytes());
        f.extend_from_slice(&40u32.to_le_bytes());
        f.extend_from_slice(&3i32.to_le_bytes());
        f.extend_from_slice(&2i32.to_le_bytes());
        f.extend_from_slice(&1u16.to_le_bytes());
        f.extend_from_slice(&24u16.to_le_bytes());
        f.resize(54, 0);
        f.extend((0..24).map(|i| i as u8));
        f
    }

    fn run(op: &str, channels: i64, bytes: Vec<u8>) -> Result<Vec<Tensor>, ferroflow_core::Status> {
        let mut attrs = vec![("channels", attr::int(channels))];
        if op == "DecodeImage" {
            attrs.push(("dtype", attr::ty(ferroflow_core::DataType::UInt8)));
            attrs.push(("expand_animations", attr::bool(true)));
        }
        run_kernel(node(op, &attrs), vec![Tensor::scalar(bytes)], 1)
    }

    fn err(op: &str, channels: i64, bytes: Vec<u8>, want: &str) {
        let e = run(op, channels, bytes).unwrap_err();
        assert_eq!(e.code, Code::InvalidArgument, "{e}");
        assert!(e.message.contains(want), "{e} does not say {want}");
    }

    fn with(mut f: Vec<u8>, at: usize, v: i32) -> Vec<u8> {
        f[at..at + 4].copy_from_slice(&v.to_le_bytes());
        f
    }

    #[test]
    fn decodes_bottom_up_bgr_rows() {
        let out = run("DecodeBmp", 0, good()).unwrap();
        assert_eq!(out[0].dims(), &[2, 3, 3]);
        // The last stored row (bytes 12..21) comes first, each pixel BGR → RGB.
        assert_eq!(&out[0].as_slice::<u8>().unwrap()[..6], &[14, 13, 12, 17, 16, 15]);
        let img = run("DecodeImage", 4, good()).unwrap();
        assert_eq!(&img[0].as_slice::<u8>().unwrap()[..8], &[14, 13, 12, 255, 17, 16, 15, 255]);
    }

    #[test]
    fn tensorflows_errors() {
        let g = good();
        err(
            "DecodeBmp",
            0,
            g[..31].to_vec(),
            "requires at least 32 bytes to find the header size, width, height, and bpp, got 31 bytes",
        );
        err("DecodeBmp", 0, vec![], "Input is empty.");
        err(
            "DecodeBmp",
            0,
            vec![b'x'; 40],
            "Unknown image file format. One of JPEG, JPEG XL, PNG, GIF, BMP, WebP required.",
        );
        err("DecodeBmp", 0, b"\x89PNG\r\n\x1a\nxxxx".to_vec(), "Trying to decode PNG format using DecodeBmp op.");
        err("DecodeBmp", 1, g.clone(), "`channels` must be 0, 3 or 4 for BMP, but got 1");
        err("DecodeImage", 1, g.clone(), "`channels` must be 0, 3 or 4 for BMP, but got 1");
        let mut b16 = g.clone();
        b16[28] = 16;
        err("DecodeBmp", 0, b16, "Number of channels inherent in the image must be 1, 3 or 4, was 2");
        err("DecodeBmp", 0, with(g.clone(), 18, 0), "Width must be positive");
        err("DecodeBmp", 0, with(g.clone(), 18, -1), "Width must be positive");
        err("DecodeBmp", 0, with(g.clone(), 22, 0), "Height must be nonzero");
        err("DecodeBmp", 0, with(g.clone(), 10, -1), "header size must be nonnegative");
        err(
            "DecodeBmp",
            0,
            with(with(g.clone(), 18, 1 << 20), 22, 1 << 10),
            "Total possible pixel bytes must be less than 2^30",
        );
        err(
            "DecodeBmp",
            0,
            g[..g.len() - 1].to_vec(),
            "Input size should match (header_size + row_size * abs_height) but they differ by -1",
        );
        let mut long = g.clone();
        long.push(0);
        err("DecodeBmp", 0, long, "they differ by 1");
        err("DecodeBmp", 0, with(g, 10, i32::MAX), "they differ by");
        let e = crate::create_kernel(&node("DecodeBmp", &[("channels", attr::int(2))])).err().unwrap();
        assert!(e.message.contains("`channels` must be 0, 1, 3 or 4 but got 2"), "{e}");
    }
}
