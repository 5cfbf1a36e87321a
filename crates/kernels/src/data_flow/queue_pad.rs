//! `PaddingFIFOQueue`'s batches: elements whose shapes differ in the queue's unknown
//! dimensions are stacked into the smallest shape that holds them all, the rest zeros
//! (empty strings, false).

use ferroflow_core::{DataType, Status, Tensor};

/// Row-major strides of `dims`.
fn strides(dims: &[usize]) -> Vec<usize> {
    let mut s = vec![1; dims.len()];
    for i in (0..dims.len().saturating_sub(1)).rev() {
        s[i] = s[i + 1] * dims[i + 1];
    }
    s
}

/// Stacks `parts` (each matching `shape`, where -1 is unknown) along a new dimension 0,
/// each unknown dimension as large as the largest part's.
pub(crate) fn stack_padded(parts: &[Tensor], dtype: DataType, shape: &[i64]) -> Result<Tensor, Status> {
    let elem: Vec<usize> = shape
        .iter()
        .enumerate()
        .map(|(i, &d)| if d >= 0 { d as usize } else { parts.iter().map(|p| p.dims()[i]).max().unwrap_or(0) })
        .collect();
    let mut dims = vec![parts.len()];
    dims.extend_from_slice(&elem);
    let out = Tensor::zeros(dtype, dims.clone())?;
    let per: usize = elem.iter().product();
    let ostr = strides(&elem);
    ferroflow_core::with_dtype!(dtype, T => {
        let mut v: Vec<T> = out.as_slice::<T>()?.to_vec();
        for (b, p) in parts.iter().enumerate() {
            let src = p.as_slice::<T>()?;
            let pd = p.dims();
            if pd.len() != elem.len() {
                return Err(Status::invalid_argument(format!(
                    "PaddingFIFOQueue: element of rank {} in a component of rank {}",
                    pd.len(),
                    elem.len()
                )));
            }
            let pstr = strides(pd);
            for (k, x) in src.iter().enumerate() {
                let mut off = b * per;
                for d in 0..pd.len() {
                    off += (k / pstr[d]) % pd[d] * ostr[d];
                }
                v[off..off + 1].clone_from_slice(std::slice::from_ref(x));
            }
        }
        Tensor::new(dims, v)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pads_unknown_dimensions_with_zeros() {
        let a = Tensor::new(vec![1, 2], vec![1i32, 2]).unwrap();
        let b = Tensor::new(vec![2, 1], vec![3i32, 4]).unwrap();
        let t = stack_padded(&[a, b], DataType::Int32, &[-1, -1]).unwrap();
        assert_eq!(t.dims(), &[2, 2, 2]);
        assert_eq!(t.as_slice::<i32>().unwrap(), &[1, 2, 0, 0, 3, 0, 4, 0]);
    }

    #[test]
    fn pads_strings_with_empty_and_keeps_known_dimensions() {
        let a = Tensor::new(vec![1], vec![b"x".to_vec()]).unwrap();
        let b = Tensor::new(vec![3], vec![b"a".to_vec(), b"b".to_vec(), b"c".to_vec()]).unwrap();
        let t = stack_padded(&[a, b], DataType::String, &[-1]).unwrap();
        assert_eq!(t.dims(), &[2, 3]);
        let v = t.as_slice::<Vec<u8>>().unwrap();
        assert_eq!(v[0], b"x".to_vec());
        assert!(v[1].is_empty() && v[2].is_empty());
        assert_eq!(v[5], b"c".to_vec());
        let none = stack_padded(&[], DataType::Float, &[-1, 4]).unwrap();
        assert_eq!(none.dims(), &[0, 0, 4]);
    }
}
