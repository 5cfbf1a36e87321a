//! The task's memory budget: every buffer sized from remote input (a TensorProto's shape, a
//! kernel's shape or size input) is checked against it before it is allocated, so a small
//! request that declares a huge tensor gets RESOURCE_EXHAUSTED instead of aborting the
//! process. One tensor may not exceed the budget, and a large one (at least
//! [`RESIDENT_CHECK_BYTES`]) may not take the task's resident memory (every live tensor,
//! variable and queue, plus the process itself) over it. The default is three quarters of
//! the machine's physical memory; `ferroflow server --memory_limit` sets it.

use std::sync::atomic::{AtomicU64, Ordering};

use crate::{DataType, Status};

/// 0 = not set yet (the default is computed on first use).
static LIMIT: AtomicU64 = AtomicU64::new(0);

/// Bytes admitted by small checks since the resident memory was last read: once they add up
/// to [`RESIDENT_CHECK_BYTES`] the next check reads it, so many small tensors held across
/// steps (a queue of 15 MiB tensors, a growing tensor list) count as one large one would.
static UNCHECKED: AtomicU64 = AtomicU64::new(0);

/// When physical memory cannot be read.
const FALLBACK: u64 = 16 << 30;

/// Allocations from this size on are also checked against the task's resident memory (the
/// check reads `/proc/self/statm`, a few microseconds: nothing next to filling 16 MiB).
pub const RESIDENT_CHECK_BYTES: u64 = 16 << 20;

/// This process's resident memory in bytes (Linux: the resident pages of `/proc/self/statm`,
/// a fraction of the cost of parsing `/proc/self/status`, which the budget paid on every large
/// allocation), if known.
pub fn resident_bytes() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = s.split_whitespace().nth(1)?.parse().ok()?;
    pages.checked_mul(page_size())
}

/// The system's page size: the `AT_PAGESZ` entry of `/proc/self/auxv`, 4 KiB where that cannot
/// be read.
fn page_size() -> u64 {
    static SIZE: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    *SIZE.get_or_init(|| std::fs::read("/proc/self/auxv").ok().and_then(|a| auxv_page_size(&a)).unwrap_or(4096))
}

/// `AT_PAGESZ` (type 6) of an auxiliary vector: (type, value) pairs of native-endian words.
fn auxv_page_size(auxv: &[u8]) -> Option<u64> {
    const AT_PAGESZ: u64 = 6;
    let w = std::mem::size_of::<usize>();
    let word = |b: &[u8]| -> Option<u64> {
        match w {
            8 => Some(u64::from_ne_bytes(b.try_into().ok()?)),
            4 => Some(u32::from_ne_bytes(b.try_into().ok()?) as u64),
            _ => None,
        }
    };
    auxv.chunks_exact(2 * w).find_map(|p| match word(&p[..w])? {
        AT_PAGESZ => word(&p[w..]).filter(|&v| v > 0),
        _ => None,
    })
}

/// Memory the machine can still give without swapping (Linux `/proc/meminfo` MemAvailable).
fn available_bytes() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = s.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kb.checked_mul(1024)
}

/// What a large allocation is weighed against: this process's resident memory and what the
/// machine has available.
#[derive(Clone, Copy, Debug, Default)]
struct Held {
    resident: Option<u64>,
    available: Option<u64>,
}

fn held_now() -> Held {
    Held { resident: resident_bytes(), available: available_bytes() }
}

/// Physical memory in bytes (Linux `/proc/meminfo` MemTotal), if known, or the memory
/// limit of this process's control group (cgroup v2 `memory.max`, v1
/// `memory.limit_in_bytes`) when that is smaller: a container's limit is the real one.
fn physical_memory() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = s.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    let total = kb.checked_mul(1024)?;
    let group = ["/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"]
        .iter()
        .filter_map(|p| std::fs::read_to_string(p).ok())
        .filter_map(|v| v.trim().parse::<u64>().ok())
        .min();
    Some(group.map_or(total, |g| g.min(total)))
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
/// tensor of `dims` and `dtype` fits this task's memory limit, and, when large, fits beside
/// what the task already holds.
pub fn check_tensor_alloc(dims: &[usize], dtype: DataType) -> Result<(), Status> {
    let bytes = dims.iter().try_fold(element_bytes(dtype), |a, &d| a.checked_mul(d)).map(|b| b as u64);
    check_alloc_bytes(bytes, || tensor_desc(dims, dtype))
}

/// "tensor with shape[2,3] and type float", as TensorFlow's OOM messages name a tensor.
pub(crate) fn tensor_desc(dims: &[usize], dtype: DataType) -> String {
    let dims: Vec<String> = dims.iter().map(|d| d.to_string()).collect();
    format!("tensor with shape[{}] and type {}", dims.join(","), dtype.tf_name())
}

/// RESOURCE_EXHAUSTED ("OOM when allocating {what}") unless `bytes` (None: more than 2^64)
/// fit this task's memory limit beside what it already holds.
pub fn check_alloc_bytes(bytes: Option<u64>, what: impl FnOnce() -> String) -> Result<(), Status> {
    check_bytes(bytes, memory_limit(), held_now, &UNCHECKED).map_err(|why| {
        Status::resource_exhausted(format!("OOM when allocating {}: {why} (ferroflow server --memory_limit)", what()))
    })
}

/// Why `bytes` (None: more than 2^64) do not fit `limit`, given what the task holds and
/// the machine has available (read for a large allocation, and for a small one once
/// `unchecked` small ones add up to a large one).
fn check_bytes(
    bytes: Option<u64>,
    limit: u64,
    held: impl FnOnce() -> Held,
    unchecked: &AtomicU64,
) -> Result<(), String> {
    let Some(b) = bytes.filter(|&b| b <= limit) else {
        return Err(format!(
            "{} bytes is more than this task's memory limit of {limit} bytes",
            bytes.map_or_else(|| "more than 2^64".to_string(), |b| b.to_string())
        ));
    };
    let due = b >= RESIDENT_CHECK_BYTES || {
        let before = unchecked.fetch_add(b, Ordering::Relaxed);
        before.saturating_add(b) >= RESIDENT_CHECK_BYTES
    };
    if due {
        unchecked.store(0, Ordering::Relaxed);
        let now = held();
        if let Some(held) = now.resident {
            if held.saturating_add(b) > limit {
                return Err(format!(
                    "the task already holds {held} bytes, and {b} more would exceed its memory limit of {limit} bytes"
                ));
            }
        }
        // Under the limit but more than the machine has left (other processes, a limit set
        // above physical memory): refused rather than left to the kernel's OOM killer.
        if let Some(free) = now.available {
            if b > free {
                return Err(format!("{b} bytes is more than the {free} bytes this machine has available"));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Code;

    #[test]
    fn large_allocations_count_what_the_task_holds() {
        let limit = 1 << 30;
        let big = Some(RESIDENT_CHECK_BYTES * 4);
        let acc = AtomicU64::new(0);
        let holds = |r: u64| move || Held { resident: Some(r), available: None };
        assert!(check_bytes(big, limit, holds(100 << 20), &acc).is_ok());
        let e = check_bytes(big, limit, holds(limit - (32 << 20)), &acc).unwrap_err();
        assert!(e.contains("already holds") && e.contains(&limit.to_string()), "{e}");
        // Small ones do not read the resident size until they add up to a large one, then
        // the next one does (a queue filled with 15 MiB tensors is counted).
        let full = holds(limit - (1 << 19));
        let unread = || -> Held { panic!("read for a small tensor") };
        for _ in 0..15 {
            assert!(check_bytes(Some(1 << 20), limit, unread, &acc).is_ok());
        }
        let e = check_bytes(Some(1 << 20), limit, full, &acc).unwrap_err();
        assert!(e.contains("already holds"), "{e}");
        assert_eq!(acc.load(Ordering::Relaxed), 0, "the count restarts after a read");
        let fifteen = Some(15 << 20);
        assert!(check_bytes(fifteen, limit, unread, &acc).is_ok());
        assert!(check_bytes(fifteen, limit, full, &acc).is_err());
        // More than the machine has available is refused under the limit too.
        let scarce = || Held { resident: Some(1 << 20), available: Some(RESIDENT_CHECK_BYTES * 2) };
        let e = check_bytes(big, limit, scarce, &acc).unwrap_err();
        assert!(e.contains("this machine has available"), "{e}");
        // Unknown memory is no refusal.
        assert!(check_bytes(big, limit, Held::default, &acc).is_ok());
        assert!(check_bytes(Some(limit + 1), limit, Held::default, &acc).unwrap_err().contains("more than"));
        assert!(check_bytes(None, limit, Held::default, &acc).unwrap_err().contains("2^64"));
    }

    #[test]
    fn page_size_from_the_auxiliary_vector() {
        let w = std::mem::size_of::<usize>();
        let mut v = Vec::new();
        for (t, x) in [(33usize, 7usize), (6, 16384), (0, 0)] {
            v.extend_from_slice(&t.to_ne_bytes());
            v.extend_from_slice(&x.to_ne_bytes());
        }
        assert_eq!(auxv_page_size(&v), Some(16384));
        assert_eq!(auxv_page_size(&v[..2 * w]), None);
        assert_eq!(auxv_page_size(&[]), None);
        #[cfg(target_os = "linux")]
        assert!(page_size().is_power_of_two() && page_size() >= 4096);
    }

    #[test]
    fn limit_and_sizes() {
        assert!(memory_limit() >= 1 << 20);
        assert!(check_tensor_alloc(&[1 << 10, 4], DataType::Float).is_ok());
        let e = check_tensor_alloc(&[1 << 20, 1 << 20], DataType::Float).unwrap_err();
        assert_eq!(e.code, Code::ResourceExhausted);
        assert!(e.message.contains("shape[1048576,1048576] and type float"), "{e}");
        assert!(check_tensor_alloc(&[usize::MAX, 2], DataType::UInt8).is_err());
        assert!(check_tensor_alloc(&[1 << 40], DataType::String).is_err());
        assert!(resident_bytes().is_some_and(|r| r > 0));
        #[cfg(target_os = "linux")]
        {
            // The page count times the page size is the kernel's own `VmRSS` (to within what
            // other test threads allocate in between).
            let status = std::fs::read_to_string("/proc/self/status").unwrap();
            let line = status.lines().find(|l| l.starts_with("VmRSS:")).unwrap();
            let kb: u64 = line.split_whitespace().nth(1).unwrap().parse().unwrap();
            let r = resident_bytes().unwrap();
            assert!(r / 2 < kb * 1024 && kb * 1024 < r * 2, "statm {r} bytes, VmRSS {kb} kB");
        }
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
