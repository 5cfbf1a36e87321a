//! The task's memory budget for one tensor: every buffer sized from remote input (a
//! TensorProto's shape, a kernel's shape or size input) is checked against it before it is
//! allocated, so a small request that declares a huge tensor gets RESOURCE_EXHAUSTED instead
//! of aborting the process. The default is three quarters of the machine's physical memory;
//! `ferroflow server --memory_limit` sets it.

use std::sync::atomic::{AtomicU64, Ordering};

use crate::{DataType, Status};

/// 0 = not set yet (the default is computed on first use).
static LIMIT: AtomicU64 = AtomicU64::new(0);

/// When physical memory cannot be read.
const FALLBACK: u64 = 16 << 30;

/// Physical memory in bytes (Linux `/proc/meminfo` MemTotal), if known.
fn physical_memory() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = s.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kb.checked_mul(1024)
}

/// The largest tensor buffer this task allocates, in bytes.
pub fn memory_limit() -> u64 {
    match LIMIT.load(Ordering::Relaxed) {
        0 => {
            let d = physical_memory().map_or(FALLBACK, |m| m / 4 * 3).max(1 << 20);
            let _ = LIMIT.compare_exchange(0, d, Ordering::Relaxed, Ordering::Relaxed);
            LIMIT.load(Ordering::Relaxed)
        }
        v => v,
    }
}

/// Sets the largest tensor buffer this task allocates (at least 1 MiB).
pub fn set_memory_limit(bytes: u64) {
    LIMIT.store(bytes.max(1 << 20), Ordering::Relaxed);
}

/// Parses a size: bytes, or a number with a `K`/`M`/`G`/`T` (or `KiB`… `TiB`, `KB`… `TB`:
/// all powers of 1024) suffix, e.g. `8G`, `512MiB`.
pub fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let split = t.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let v: f64 = num.parse().map_err(|_| format!("'{s}' is not a size (e.g. 8G, 512MiB, 1073741824)"))?;
    let mult: u64 = match unit.trim().to_ascii_uppercase().as_str() {
        "" | "B" => 1,
        "K" | "KB" | "KIB" => 1 << 10,
        "M" | "MB" | "MIB" => 1 << 20,
        "G" | "GB" | "GIB" => 1 << 30,
        "T" | "TB" | "TIB" => 1 << 40,
        u => return Err(format!("'{s}': unknown size unit '{u}' (use K, M, G or T)")),
    };
    let b = v * mult as f64;
    if !b.is_finite() || b < 1.0 || b > u64::MAX as f64 {
        return Err(format!("'{s}' is not a positive size"));
    }
    Ok(b as u64)
}

/// Bytes one element of `dtype` takes in memory (a string or variant counts its header).
fn element_bytes(dtype: DataType) -> usize {
    dtype.byte_size().unwrap_or(std::mem::size_of::<Vec<u8>>())
}

/// RESOURCE_EXHAUSTED ("OOM when allocating tensor with shape[...] and type ...") unless a
/// tensor of `dims` and `dtype` fits this task's memory limit.
pub fn check_tensor_alloc(dims: &[usize], dtype: DataType) -> Result<(), Status> {
    let bytes = dims.iter().try_fold(element_bytes(dtype), |a, &d| a.checked_mul(d));
    let limit = memory_limit();
    match bytes {
        Some(b) if (b as u64) <= limit => Ok(()),
        _ => Err(Status::resource_exhausted(format!(
            "OOM when allocating tensor with shape[{}] and type {}: {} bytes is more than this task's memory limit of \
             {limit} bytes (ferroflow server --memory_limit)",
            dims.iter().map(|d| d.to_string()).collect::<Vec<_>>().join(","),
            dtype.tf_name(),
            bytes.map_or_else(|| "more than 2^64".to_string(), |b| b.to_string()),
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Code;

    #[test]
    fn limit_and_sizes() {
        assert!(memory_limit() >= 1 << 20);
        assert!(check_tensor_alloc(&[1 << 10, 4], DataType::Float).is_ok());
        let e = check_tensor_alloc(&[1 << 20, 1 << 20], DataType::Float).unwrap_err();
        assert_eq!(e.code, Code::ResourceExhausted);
        assert!(e.message.contains("shape[1048576,1048576] and type float"), "{e}");
        assert!(check_tensor_alloc(&[usize::MAX, 2], DataType::UInt8).is_err());
        assert!(check_tensor_alloc(&[1 << 40], DataType::String).is_err());
        assert_eq!(parse_size("8G").unwrap(), 8 << 30);
        assert_eq!(parse_size("512MiB").unwrap(), 512 << 20);
        assert_eq!(parse_size("1.5k").unwrap(), 1536);
        assert_eq!(parse_size("4096").unwrap(), 4096);
        assert!(parse_size("lots").is_err());
        assert!(parse_size("3Q").is_err());
        assert!(parse_size("0").is_err());
    }

    #[test]
    fn a_small_proto_cannot_declare_a_huge_tensor() {
        use crate::proto::{tensor_shape_proto::Dim, TensorProto, TensorShapeProto};
        let p = TensorProto {
            dtype: DataType::Float.as_i32(),
            tensor_shape: Some(TensorShapeProto {
                dim: vec![Dim { size: 1 << 36, name: String::new() }],
                unknown_rank: false,
            }),
            float_val: vec![1.0],
            ..Default::default()
        };
        let e = crate::Tensor::from_proto(&p).unwrap_err();
        assert_eq!(e.code, Code::InvalidArgument);
        assert!(e.message.contains("cannot be expanded") && e.message.contains("memory limit"), "{e}");
        // Within the limit the last value repeats, as in TensorFlow.
        let p = TensorProto {
            tensor_shape: Some(TensorShapeProto {
                dim: vec![Dim { size: 3, name: String::new() }],
                unknown_rank: false,
            }),
            ..p
        };
        assert_eq!(crate::Tensor::from_proto(&p).unwrap().as_slice::<f32>().unwrap(), &[1.0, 1.0, 1.0]);
    }
}
