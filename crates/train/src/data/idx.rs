//! The IDX file format of MNIST (big-endian header, then raw bytes), gzip-compressed:
//! images are streamed through a small buffer, keeping only the examples asked for, so a
//! worker that trains on a shard never holds (or faults in) the whole training set.

use std::io::{ErrorKind, Read};
use std::path::Path;

use ferroflow_core::Status;

/// Images read from an IDX image file.
#[derive(Debug)]
pub(crate) struct Images {
    /// The kept images' pixels, one byte each, image after image.
    pub pixels: Vec<u8>,
    /// Pixels per image (rows × columns).
    pub per_image: usize,
    /// Images in the file (kept or not).
    pub count: usize,
}

/// Bytes decoded per read while streaming images.
const CHUNK_BYTES: usize = 1 << 20;

fn open_gz(path: &Path) -> Result<impl Read, Status> {
    let f = std::fs::File::open(path).map_err(|e| Status::not_found(format!("cannot open {}: {e}", path.display())))?;
    Ok(flate2::read::GzDecoder::new(std::io::BufReader::new(f)))
}

fn read_err(path: &Path, what: &str, e: std::io::Error) -> Status {
    match e.kind() {
        ErrorKind::UnexpectedEof => Status::data_loss(format!("{}: {what}", path.display())),
        _ => Status::data_loss(format!("{} is not valid gzip: {e}", path.display())),
    }
}

fn be32(b: &[u8], at: usize) -> usize {
    u32::from_be_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]]) as usize
}

/// Fails unless `r` is at its end.
fn expect_end(mut r: impl Read, path: &Path, what: &str) -> Result<(), Status> {
    let mut one = [0u8; 1];
    match r.read(&mut one) {
        Ok(0) => Ok(()),
        Ok(_) => Err(Status::data_loss(format!("{}: more bytes than {what}", path.display()))),
        Err(e) => Err(read_err(path, "truncated", e)),
    }
}

/// Reads an IDX image stream (magic 2051), keeping image `i` when `keep(i)`.
fn images_from(mut r: impl Read, path: &Path, keep: &dyn Fn(usize) -> bool) -> Result<Images, Status> {
    let mut hdr = [0u8; 16];
    r.read_exact(&mut hdr).map_err(|e| read_err(path, "truncated IDX header", e))?;
    if be32(&hdr, 0) != 2051 {
        return Err(Status::data_loss(format!("{}: not an IDX image file (magic != 2051)", path.display())));
    }
    let (n, rows, cols) = (be32(&hdr, 4), be32(&hdr, 8), be32(&hdr, 12));
    let per_image = rows * cols;
    if per_image == 0 {
        return Err(Status::data_loss(format!("{}: images of {rows}x{cols} pixels", path.display())));
    }
    let kept = (0..n).filter(|&i| keep(i)).count();
    let total = kept.checked_mul(per_image).filter(|&t| t <= isize::MAX as usize).ok_or_else(|| {
        Status::data_loss(format!("{}: header says {n} images of {rows}x{cols}: too large", path.display()))
    })?;
    let mut pixels = Vec::with_capacity(total);
    let per_chunk = (CHUNK_BYTES / per_image).max(1);
    let mut buf = vec![0u8; per_chunk.min(n.max(1)) * per_image];
    let mut start = 0;
    while start < n {
        let m = per_chunk.min(n - start);
        let part = &mut buf[..m * per_image];
        r.read_exact(part).map_err(|e| {
            read_err(
                path,
                &format!("header says {n} images of {rows}x{cols} but the file ends before image {}", start + m),
                e,
            )
        })?;
        for (j, image) in part.chunks_exact(per_image).enumerate() {
            if keep(start + j) {
                pixels.extend_from_slice(image);
            }
        }
        start += m;
    }
    expect_end(r, path, &format!("{n} images of {rows}x{cols}"))?;
    Ok(Images { pixels, per_image, count: n })
}

/// Reads an IDX label stream (magic 2049).
fn labels_from(mut r: impl Read, path: &Path) -> Result<Vec<i64>, Status> {
    let mut hdr = [0u8; 8];
    r.read_exact(&mut hdr).map_err(|e| read_err(path, "truncated IDX header", e))?;
    if be32(&hdr, 0) != 2049 {
        return Err(Status::data_loss(format!("{}: not an IDX label file (magic != 2049)", path.display())));
    }
    let n = be32(&hdr, 4);
    let mut bytes = Vec::with_capacity(n.min(CHUNK_BYTES));
    (&mut r).take(n as u64).read_to_end(&mut bytes).map_err(|e| read_err(path, "truncated", e))?;
    if bytes.len() != n {
        return Err(Status::data_loss(format!("{}: header says {n} labels, file has {}", path.display(), bytes.len())));
    }
    expect_end(r, path, &format!("{n} labels"))?;
    if let Some(bad) = bytes.iter().find(|&&l| l > 9) {
        return Err(Status::data_loss(format!("{}: label {bad} is not a digit", path.display())));
    }
    Ok(bytes.into_iter().map(i64::from).collect())
}

/// Reads a gzip IDX image file, keeping image `i` when `keep(i)`.
pub(crate) fn read_images(path: &Path, keep: &dyn Fn(usize) -> bool) -> Result<Images, Status> {
    images_from(open_gz(path)?, path, keep)
}

/// Reads a gzip IDX label file.
pub(crate) fn read_labels(path: &Path) -> Result<Vec<i64>, Status> {
    labels_from(open_gz(path)?, path)
}

/// Parses an uncompressed IDX image file (magic 2051): every image's pixel bytes, and the
/// pixels per image.
pub fn parse_images(bytes: &[u8], path: &Path) -> Result<(Vec<u8>, usize), Status> {
    let images = images_from(bytes, path, &|_| true)?;
    Ok((images.pixels, images.per_image))
}

/// Parses an uncompressed IDX label file (magic 2049).
pub fn parse_labels(bytes: &[u8], path: &Path) -> Result<Vec<i64>, Status> {
    labels_from(bytes, path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ferroflow_core::Code;

    fn images(n: u8, rows: u8, cols: u8, body: usize) -> Vec<u8> {
        let mut b = vec![0, 0, 8, 3, 0, 0, 0, n, 0, 0, 0, rows, 0, 0, 0, cols];
        b.extend((0..body).map(|i| i as u8));
        b
    }

    #[test]
    fn parses_and_filters_images() {
        let p = Path::new("x");
        let (px, per) = parse_images(&images(3, 2, 2, 12), p).unwrap();
        assert_eq!((px.len(), per), (12, 4));
        let odd = images_from(&images(3, 2, 2, 12)[..], p, &|i| i % 2 == 1).unwrap();
        assert_eq!((odd.pixels, odd.count), (vec![4, 5, 6, 7], 3));
    }

    #[test]
    fn bad_image_files_are_data_loss() {
        let p = Path::new("x");
        for (bytes, what) in [
            (vec![0, 0, 8, 3, 0, 0, 0, 1], "truncated IDX header"),
            (images(3, 2, 2, 12)[..4].to_vec(), "truncated IDX header"),
            (images(2, 2, 2, 7), "ends before image 2"),
            (images(2, 2, 2, 9), "more bytes than 2 images of 2x2"),
            (images(2, 0, 28, 0), "images of 0x28 pixels"),
            (
                {
                    let mut b = images(1, 1, 1, 1);
                    b[3] = 1;
                    b
                },
                "magic != 2051",
            ),
        ] {
            let e = parse_images(&bytes, p).unwrap_err();
            assert_eq!(e.code, Code::DataLoss, "{what}");
            assert!(e.message.contains(what), "{what}: {}", e.message);
        }
    }

    #[test]
    fn bad_label_files_are_data_loss() {
        let p = Path::new("x");
        assert_eq!(parse_labels(&[0, 0, 8, 1, 0, 0, 0, 2, 3, 7], p).unwrap(), vec![3, 7]);
        for (bytes, what) in [
            (vec![0, 0, 8, 1, 0, 0, 0, 1, 12], "label 12 is not a digit"),
            (vec![0, 0, 8, 1, 0, 0, 0, 2, 1], "header says 2 labels, file has 1"),
            (vec![0, 0, 8, 1, 0, 0, 0, 1, 1, 1], "more bytes than 1 labels"),
            (vec![0, 0, 8, 3, 0, 0, 0, 1, 1], "magic != 2049"),
            (vec![0, 0, 8], "truncated IDX header"),
        ] {
            let e = parse_labels(&bytes, p).unwrap_err();
            assert_eq!(e.code, Code::DataLoss, "{what}");
            assert!(e.message.contains(what), "{what}: {}", e.message);
        }
    }

    #[test]
    fn corrupt_gzip_is_data_loss() {
        let dir = std::env::temp_dir().join(format!("ff-idx-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("bad.gz");
        std::fs::write(&f, [0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3, 0xff, 0xff, 0xff]).unwrap();
        let e = read_images(&f, &|_| true).unwrap_err();
        assert_eq!(e.code, Code::DataLoss, "{}", e.message);
        assert_eq!(read_labels(&dir.join("missing.gz")).unwrap_err().code, Code::NotFound);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
