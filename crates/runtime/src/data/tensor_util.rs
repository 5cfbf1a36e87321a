//! Tensor plumbing of the dataset stages, for every dtype: the `i`-th row of a tensor
//! (slicing datasets), rows stacked into a batch, and rows padded to one shape.

use ferroflow_core::{storage_map, storage_match, DataType, Shape, Status, Storage, Tensor, TensorType};

/// Row `i` of `t` (its slice along the first dimension).
pub(crate) fn row(t: &Tensor, i: usize) -> Result<Tensor, Status> {
    let dims = t.dims();
    if dims.is_empty() || i >= dims[0] {
        return Err(Status::invalid_argument(format!("row {i} of a tensor of shape {}", t.shape())));
    }
    let inner: usize = dims[1..].iter().product();
    let s = storage_map!(t.storage(), v => v[i * inner..(i + 1) * inner].to_vec());
    Tensor::from_storage(Shape::new(dims[1..].to_vec()), s)
}

fn stack_typed<T: TensorType>(_: &[T], items: &[Tensor], n: usize) -> Result<Vec<T>, Status> {
    let mut out = Vec::with_capacity(n);
    for t in items {
        out.extend_from_slice(t.as_slice::<T>()?);
    }
    Ok(out)
}

/// Tensors of one dtype and shape stacked along a new first dimension.
pub(crate) fn stack(items: &[Tensor]) -> Result<Tensor, Status> {
    let Some(first) = items.first() else {
        return Err(Status::internal("stacking no tensors"));
    };
    for t in items {
        if t.dtype() != first.dtype() || t.dims() != first.dims() {
            return Err(Status::invalid_argument(format!(
                "Cannot batch tensors with different shapes in component: first element had shape {} and \
                 another element had shape {}",
                first.shape(),
                t.shape()
            )));
        }
    }
    let mut dims = vec![items.len()];
    dims.extend_from_slice(first.dims());
    let n = first.num_elements() * items.len();
    let s = storage_map!(first.storage(), v => stack_typed(v, items, n)?);
    Tensor::from_storage(Shape::new(dims), s)
}

fn pad_typed<T: TensorType>(pad: &[T], items: &[Tensor], row: &[usize]) -> Result<Vec<T>, Status> {
    let row_len: usize = row.iter().product();
    let fill = pad.first().cloned().unwrap_or_default();
    let mut out = vec![fill; row_len * items.len()];
    let strides = Shape::new(row.to_vec()).strides();
    for (k, t) in items.iter().enumerate() {
        let src = t.as_slice::<T>()?;
        let d = t.dims();
        if d.iter().product::<usize>() == 0 {
            continue;
        }
        let inner = *d.last().unwrap_or(&1);
        let outer = if d.is_empty() { 1 } else { src.len() / inner.max(1) };
        // Copy each innermost run of the element to its place in the padded row.
        let src_strides = Shape::new(d.to_vec()).strides();
        for o in 0..outer {
            let mut at = k * row_len;
            let mut rem = o * inner;
            for (ax, s) in src_strides.iter().enumerate() {
                let idx = rem / s;
                rem %= s;
                at += idx * strides[ax];
            }
            out[at..at + inner].clone_from_slice(&src[o * inner..(o + 1) * inner]);
        }
    }
    Ok(out)
}

/// Tensors of one dtype and rank, each padded at the end of every dimension to `row` with
/// `pad` (a scalar), stacked along a new first dimension.
pub(crate) fn pad_stack(items: &[Tensor], row: &[usize], pad: &Tensor) -> Result<Tensor, Status> {
    let Some(first) = items.first() else {
        return Err(Status::internal("padding no tensors"));
    };
    for t in items {
        if t.dtype() != pad.dtype() {
            return Err(Status::invalid_argument(format!(
                "padding value of type {} for a component of type {}",
                pad.dtype(),
                t.dtype()
            )));
        }
        if t.rank() != row.len() || t.dims().iter().zip(row).any(|(&a, &b)| a > b) {
            return Err(Status::invalid_argument(format!(
                "Attempted to pad to a smaller size than the input element: element shape {} but padded shape {:?}",
                t.shape(),
                row
            )));
        }
    }
    let mut dims = vec![items.len()];
    dims.extend_from_slice(row);
    let shape = Shape::new(dims);
    let n = shape.checked_num_elements()?;
    if n > MAX_PADDED_ELEMENTS {
        return Err(Status::resource_exhausted(format!(
            "padded batch of shape {shape} has {n} elements, more than ferroflow allocates at once ({MAX_PADDED_ELEMENTS})"
        )));
    }
    let _ = first;
    let s = storage_map!(pad.storage(), v => pad_typed(v, items, row)?);
    Tensor::from_storage(shape, s)
}

/// Most elements one padded batch may hold (its size comes from the data).
const MAX_PADDED_ELEMENTS: usize = 1 << 31;

/// Number of bytes a tensor's elements take (strings by length), for buffer accounting.
#[allow(dead_code)]
pub(crate) fn approx_bytes(t: &Tensor) -> usize {
    match t.storage() {
        Storage::Str(v) => v.iter().map(Vec::len).sum(),
        s => storage_match!(s, v => std::mem::size_of_val(v.as_slice())),
    }
}

/// A tensor's values as i64 (an int32 or int64 tensor).
pub(crate) fn to_i64s(t: &Tensor, what: &str) -> Result<Vec<i64>, Status> {
    match t.dtype() {
        DataType::Int64 => Ok(t.as_slice::<i64>()?.to_vec()),
        DataType::Int32 => Ok(t.as_slice::<i32>()?.iter().map(|&x| i64::from(x)).collect()),
        d => Err(Status::invalid_argument(format!("{what} must be int64, got {d}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_stack_and_pad() {
        let t = Tensor::new(vec![3, 2], vec![1i64, 2, 3, 4, 5, 6]).unwrap();
        let r = row(&t, 1).unwrap();
        assert_eq!(r.as_slice::<i64>().unwrap(), &[3, 4]);
        assert_eq!(r.dims(), &[2]);
        let s = stack(&[row(&t, 2).unwrap(), row(&t, 0).unwrap()]).unwrap();
        assert_eq!(s.dims(), &[2, 2]);
        assert_eq!(s.as_slice::<i64>().unwrap(), &[5, 6, 1, 2]);
        assert!(row(&t, 3).is_err());
        let a = Tensor::new(vec![1, 2], vec![1.0f32, 2.0]).unwrap();
        let b = Tensor::new(vec![2, 1], vec![3.0f32, 4.0]).unwrap();
        let p = pad_stack(&[a, b], &[2, 3], &Tensor::scalar(-1.0f32)).unwrap();
        assert_eq!(p.dims(), &[2, 2, 3]);
        assert_eq!(p.as_slice::<f32>().unwrap(), &[1.0, 2.0, -1.0, -1.0, -1.0, -1.0, 3.0, -1.0, -1.0, 4.0, -1.0, -1.0]);
        let s = Tensor::new(vec![2], vec![b"a".to_vec(), b"b".to_vec()]).unwrap();
        let q = pad_stack(&[s], &[3], &Tensor::scalar(b"".to_vec())).unwrap();
        assert_eq!(q.as_slice::<Vec<u8>>().unwrap(), &[b"a".to_vec(), b"b".to_vec(), vec![]]);
        let bad = Tensor::new(vec![4], vec![1i64, 2, 3, 4]).unwrap();
        assert!(pad_stack(&[bad], &[3], &Tensor::scalar(0i64)).is_err());
        assert!(stack(&[Tensor::vec(vec![1i64]), Tensor::vec(vec![1i64, 2])]).is_err());
    }
}
