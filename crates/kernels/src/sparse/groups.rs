//! Grouping of a sparse tensor's entries by all but the last index column, as TensorFlow's
//! `SparseTensor::group` walks them: runs of consecutive entries with an equal leading
//! index (sorted inputs give one run per group; unsorted ones may give a group twice).

use super::util::Indices;

/// A run of entries `start..end` sharing the leading `key_len` index columns.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Run {
    pub start: usize,
    pub end: usize,
}

impl Run {
    /// The run's group key: the leading columns of its first entry.
    pub fn key<'a>(&self, m: &'a Indices, key_len: usize) -> &'a [i64] {
        &m.row(self.start)[..key_len]
    }
}

/// The runs of `m`'s entries with equal leading `key_len` columns, in entry order.
pub(crate) fn runs(m: &Indices, key_len: usize) -> Vec<Run> {
    let mut out = Vec::new();
    let mut start = 0;
    for i in 1..=m.n {
        if i == m.n || m.row(i)[..key_len] != m.row(start)[..key_len] {
            out.push(Run { start, end: i });
            start = i;
        }
    }
    out
}

/// Row-major strides of `dims`.
pub(crate) fn strides(dims: &[i64]) -> Vec<i64> {
    let mut s = vec![1i64; dims.len()];
    for k in (0..dims.len().saturating_sub(1)).rev() {
        s[k] = s[k + 1].saturating_mul(dims[k + 1]);
    }
    s
}

/// The flat offset of `key` with `strides` (`None` on overflow).
pub(crate) fn flat_offset(key: &[i64], strides: &[i64]) -> Option<i64> {
    key.iter().zip(strides).try_fold(0i64, |acc, (&k, &s)| acc.checked_add(k.checked_mul(s)?))
}

/// Formats index values as TensorFlow does in its messages: `[a,b,c]`.
pub(crate) fn joined(v: &[i64]) -> String {
    format!("[{}]", v.iter().map(|x| x.to_string()).collect::<Vec<_>>().join(","))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_follow_entry_order() {
        let m = Indices { n: 5, rank: 2, v: vec![0, 0, 0, 3, 1, 0, 0, 1, 0, 2] };
        let r = runs(&m, 1);
        let spans: Vec<(usize, usize)> = r.iter().map(|r| (r.start, r.end)).collect();
        assert_eq!(spans, vec![(0, 2), (2, 3), (3, 5)]);
        assert_eq!(r[2].key(&m, 1), &[0]);
        assert!(runs(&Indices { n: 0, rank: 2, v: vec![] }, 1).is_empty());
        assert_eq!(strides(&[2, 3, 4]), vec![12, 4, 1]);
        assert_eq!(flat_offset(&[1, 2], &[3, 1]), Some(5));
        assert_eq!(joined(&[2, 3]), "[2,3]");
    }
}
