//! Slices of a tensor, as TensorFlow names them for partitioned variables.
//!
//! A slice has one extent per dimension: the whole dimension (`-`) or `start,length`.
//! `SaveV2`/`RestoreV2` take a "shape and slice" string per tensor: the full shape's
//! dimensions, then the slice, e.g. `"10 4 0,5:0,4"` for rows 0–4 of a 10×4 variable.
//! In a V2 checkpoint the full tensor's index entry lists its stored slices, and each
//! slice's bytes are an ordinary entry under [`TensorSlice::key`].

use ferroflow_core::proto::{tensor_slice_proto, TensorSliceProto};
use ferroflow_core::{Status, Storage, TensorType};

use super::ordered_code::{write_num_increasing, write_signed_num_increasing, write_string};

/// One dimension of a slice.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Extent {
    /// The whole dimension.
    Full,
    /// `start..start + length`.
    Range {
        /// First index.
        start: i64,
        /// Number of indices.
        length: i64,
    },
}

/// A slice of a tensor: one [`Extent`] per dimension.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TensorSlice {
    extents: Vec<Extent>,
}

/// A slice resolved against a full shape: `(start, length)` per dimension.
pub type Bounds = Vec<(usize, usize)>;

impl TensorSlice {
    /// The whole of a rank-`rank` tensor.
    pub fn full(rank: usize) -> TensorSlice {
        TensorSlice { extents: vec![Extent::Full; rank] }
    }

    /// Builds a slice from extents.
    pub fn new(extents: Vec<Extent>) -> TensorSlice {
        TensorSlice { extents }
    }

    /// Parses TensorFlow's slice syntax: extents separated by `:`, each `-` or
    /// `start,length` (`""` is the whole of a scalar).
    pub fn parse(spec: &str) -> Result<TensorSlice, Status> {
        let bad = |why: &str| {
            Status::invalid_argument(format!(
                "invalid tensor slice '{spec}': {why}; expected extents like '0,5:-' (start,length or - per dimension)"
            ))
        };
        let mut extents = Vec::new();
        for item in spec.split(':').filter(|s| !s.is_empty()) {
            if item == "-" {
                extents.push(Extent::Full);
                continue;
            }
            let (s, l) = item.split_once(',').ok_or_else(|| bad(&format!("extent '{item}' has no comma")))?;
            let start: i64 = s.trim().parse().map_err(|_| bad(&format!("'{s}' is not a start index")))?;
            let length: i64 = l.trim().parse().map_err(|_| bad(&format!("'{l}' is not a length")))?;
            if start < 0 || length < 0 {
                return Err(bad(&format!("extent '{item}' is negative")));
            }
            extents.push(Extent::Range { start, length });
        }
        Ok(TensorSlice { extents })
    }

    /// From a checkpoint index entry.
    pub fn from_proto(p: &TensorSliceProto) -> Result<TensorSlice, Status> {
        let extents = p
            .extent
            .iter()
            .map(|e| match e.has_length {
                Some(tensor_slice_proto::extent::HasLength::Length(length)) if e.start >= 0 && length >= 0 => {
                    Ok(Extent::Range { start: e.start, length })
                }
                None if e.start == 0 => Ok(Extent::Full),
                _ => Err(Status::data_loss(format!("bad slice extent {e:?} in a checkpoint index"))),
            })
            .collect::<Result<_, _>>()?;
        Ok(TensorSlice { extents })
    }

    /// For a checkpoint index entry (a whole dimension is an extent without a length).
    pub fn to_proto(&self) -> TensorSliceProto {
        TensorSliceProto {
            extent: self
                .extents
                .iter()
                .map(|e| match *e {
                    Extent::Full => tensor_slice_proto::Extent { start: 0, has_length: None },
                    Extent::Range { start, length } => tensor_slice_proto::Extent {
                        start,
                        has_length: Some(tensor_slice_proto::extent::HasLength::Length(length)),
                    },
                })
                .collect(),
        }
    }

    /// Number of dimensions.
    pub fn rank(&self) -> usize {
        self.extents.len()
    }

    /// The extents.
    pub fn extents(&self) -> &[Extent] {
        &self.extents
    }

    /// The slice resolved against `full` (whole dimensions filled in), checked to fit.
    pub fn bounds(&self, full: &[usize]) -> Result<Bounds, Status> {
        if full.len() != self.rank() {
            return Err(Status::invalid_argument(format!(
                "slice '{self}' has {} dimensions but the tensor's shape {full:?} has {}",
                self.rank(),
                full.len()
            )));
        }
        self.extents
            .iter()
            .zip(full)
            .map(|(e, &d)| match *e {
                Extent::Full => Ok((0, d)),
                Extent::Range { start, length } => {
                    let (s, l) = (start as u64, length as u64);
                    if s.checked_add(l).is_none_or(|end| end > d as u64) {
                        Err(Status::invalid_argument(format!(
                            "slice '{self}' does not fit in the tensor's shape {full:?}"
                        )))
                    } else {
                        Ok((s as usize, l as usize))
                    }
                }
            })
            .collect()
    }

    /// Whether the slice is all of a tensor of shape `full`.
    pub fn covers(&self, full: &[usize]) -> bool {
        self.bounds(full).is_ok_and(|b| b.iter().zip(full).all(|(&(s, l), &d)| s == 0 && l == d))
    }

    /// The index key of this slice of tensor `name` (TensorFlow's `EncodeTensorNameSlice`):
    /// 0, the name, the rank, then start and length per dimension (−1 for a whole one), in
    /// ordered code.
    pub fn key(&self, name: &str) -> Vec<u8> {
        let mut k = Vec::with_capacity(name.len() + 4 + 4 * self.rank());
        write_num_increasing(&mut k, 0);
        write_string(&mut k, name.as_bytes());
        write_num_increasing(&mut k, self.rank() as u64);
        for e in &self.extents {
            let (start, length) = match *e {
                Extent::Full => (0, -1),
                Extent::Range { start, length } => (start, length),
            };
            write_signed_num_increasing(&mut k, start);
            write_signed_num_increasing(&mut k, length);
        }
        k
    }
}

impl std::fmt::Display for TensorSlice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (i, e) in self.extents.iter().enumerate() {
            if i > 0 {
                f.write_str(":")?;
            }
            match e {
                Extent::Full => f.write_str("-")?,
                Extent::Range { start, length } => write!(f, "{start},{length}")?,
            }
        }
        Ok(())
    }
}

/// Parses a `SaveV2`/`RestoreV2` shape-and-slice string: `"d0 d1 … slice"`.
pub fn parse_shape_and_slice(s: &str) -> Result<(Vec<usize>, TensorSlice), Status> {
    let bad = |why: String| {
        Status::invalid_argument(format!(
            "invalid shape_and_slice '{s}': {why}; expected the full shape's dimensions and a slice, \
             e.g. '10 4 0,5:-'"
        ))
    };
    let items: Vec<&str> = s.split(' ').filter(|x| !x.is_empty()).collect();
    let Some((spec, dims)) = items.split_last() else {
        return Err(bad("it is empty".into()));
    };
    let full = dims
        .iter()
        .map(|d| d.parse::<usize>().map_err(|_| bad(format!("'{d}' is not a dimension"))))
        .collect::<Result<Vec<_>, _>>()?;
    let slice = TensorSlice::parse(spec).map_err(|e| bad(e.message))?;
    slice.bounds(&full).map_err(|e| bad(e.message))?;
    Ok((full, slice))
}

/// Number of elements in the overlap of two bounds (0 when they are disjoint).
pub fn overlap_len(a: &[(usize, usize)], b: &[(usize, usize)]) -> usize {
    a.iter()
        .zip(b)
        .map(|(&(s1, l1), &(s2, l2))| s1.saturating_add(l1).min(s2.saturating_add(l2)).saturating_sub(s1.max(s2)))
        .fold(1, usize::saturating_mul)
}

/// Copies the overlap of `src` (the elements of `src_box`, row-major) into `dst` (the
/// elements of `dst_box`); both boxes are in the full tensor's coordinates.
fn copy_overlap<T: Clone>(src: &[T], src_box: &[(usize, usize)], dst: &mut [T], dst_box: &[(usize, usize)]) {
    let rank = src_box.len();
    let lo: Vec<usize> = src_box.iter().zip(dst_box).map(|(a, b)| a.0.max(b.0)).collect();
    let hi: Vec<usize> = src_box.iter().zip(dst_box).map(|(a, b)| (a.0 + a.1).min(b.0 + b.1)).collect();
    if lo.iter().zip(&hi).any(|(l, h)| l >= h) {
        return;
    }
    if rank == 0 {
        dst[0] = src[0].clone();
        return;
    }
    let strides = |b: &[(usize, usize)]| {
        let mut s = vec![1usize; rank];
        for d in (0..rank - 1).rev() {
            s[d] = s[d + 1] * b[d + 1].1;
        }
        s
    };
    let (ss, ds) = (strides(src_box), strides(dst_box));
    let run = hi[rank - 1] - lo[rank - 1];
    // Walk every index of the overlap's outer dimensions; copy one innermost run each.
    let mut idx = lo.clone();
    loop {
        let so: usize = (0..rank).map(|d| (idx[d] - src_box[d].0) * ss[d]).sum();
        let d_o: usize = (0..rank).map(|d| (idx[d] - dst_box[d].0) * ds[d]).sum();
        dst[d_o..d_o + run].clone_from_slice(&src[so..so + run]);
        let mut d = rank - 1;
        loop {
            if d == 0 {
                return;
            }
            d -= 1;
            idx[d] += 1;
            if idx[d] < hi[d] {
                break;
            }
            idx[d] = lo[d];
        }
    }
}

/// [`copy_overlap`] for two storages of the same dtype.
pub fn copy_storage_overlap(
    src: &Storage,
    src_box: &[(usize, usize)],
    dst: &mut Storage,
    dst_box: &[(usize, usize)],
) -> Result<(), Status> {
    if src.dtype() != dst.dtype() {
        return Err(Status::internal("copying between slices of different dtypes"));
    }
    ferroflow_core::with_dtype!(src.dtype(), T => {
        match (T::slice(src), T::slice_mut(dst)) {
            (Some(s), Some(d)) => copy_overlap(s, src_box, d, dst_box),
            _ => return Err(Status::internal("slice storage does not match its dtype")),
        }
    });
    Ok(())
}
