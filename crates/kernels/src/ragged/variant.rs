//! `RaggedTensorToVariant` / `RaggedTensorFromVariant`: a ragged tensor boxed in a variant
//! scalar and unboxed again, as `tf.data` carries ragged elements (a map function that
//! returns a `RaggedTensor`, e.g. `parse_example` with a `RaggedFeature`). Unboxing a
//! vector of boxed ragged tensors stacks them as the rows of one ragged tensor with one more
//! ragged dimension (a batch of ragged elements); boxing with `batched_input=True` cuts a
//! ragged tensor into its rows (how `unbatch` and `from_tensor_slices` carry them). The
//! boxed value is [`RaggedVariant`], which crosses tasks and files in TensorFlow's encoding.

use ferroflow_core::{DataType, NodeAttrs, RaggedVariant, Shape, Status, Tensor, Variant};

use crate::array::util::{index_vec, node_context, split_rows};
use crate::{KernelRegistry, OpContext, OpKernel};

/// One boxed ragged tensor (ferroflow_core's, which also knows TensorFlow's encoding).
type Boxed = RaggedVariant;

fn boxed(v: &Variant) -> Option<&Boxed> {
    RaggedVariant::of(v)
}

op_kernel! {
    struct ToVariant { ragged_rank: usize, batched: bool, split_type: DataType }
    fn compute(&self, ctx) {
        let mut splits = Vec::with_capacity(self.ragged_rank);
        for i in 0..self.ragged_rank {
            let t = ctx.input(i)?;
            let v = index_vec(&t).map_err(|e| ctx.error(e.message))?;
            if t.rank() != 1 || v.first() != Some(&0) || v.windows(2).any(|p| p[1] < p[0]) {
                return Err(ctx.error(format!(
                    "rt_nested_splits[{i}] must be a vector starting at 0 that never decreases, got {:?}",
                    &v[..v.len().min(8)]
                )));
            }
            splits.push(v);
        }
        let values = ctx.input(self.ragged_rank)?;
        if !self.batched {
            let b = Boxed { splits, split_type: self.split_type, values };
            b.check_rows().map_err(|e| ctx.error(e))?;
            return ctx.set_output(0, Tensor::scalar(b.into_variant()));
        }
        let rows = unbatch(splits, &values, self.split_type).map_err(|e| ctx.error(e))?;
        let n = rows.len();
        let rows = rows.into_iter().map(Boxed::into_variant).collect::<Vec<_>>();
        ctx.set_output(0, Tensor::new(Shape::new(vec![n]), rows)?)
    }
}

/// A batched ragged tensor cut along its outermost dimension: one ragged tensor of one
/// ragged rank less per row (`batched_input=True`, how `unbatch` carries ragged elements).
/// A ragged rank of 0 cuts the dense values into their rows.
fn unbatch(splits: Vec<Vec<i64>>, values: &Tensor, split_type: DataType) -> Result<Vec<Boxed>, String> {
    let Some(&nvals) = values.dims().first() else {
        return Err("Can't unbatch rank-0 tensor.".into());
    };
    let whole = Boxed { splits, split_type, values: values.clone() };
    whole.check_rows()?;
    let splits = whole.splits;
    let Some((outer, inner)) = splits.split_first() else {
        let ones = vec![1usize; nvals];
        let rows = split_rows(values, &ones).map_err(|e| e.message)?;
        let dims = values.dims()[1..].to_vec();
        return rows
            .into_iter()
            .map(|r| {
                r.reshape(dims.clone())
                    .map(|values| Boxed { splits: vec![], split_type, values })
                    .map_err(|e| e.message)
            })
            .collect();
    };
    let mut parts = Vec::with_capacity(outer.len().saturating_sub(1));
    let mut lens = Vec::with_capacity(parts.capacity());
    for w in outer.windows(2) {
        let (mut lo, mut hi) = (w[0] as usize, w[1] as usize);
        let mut own = Vec::with_capacity(inner.len());
        for s in inner {
            let base = s[lo];
            own.push(s[lo..=hi].iter().map(|&x| x - base).collect::<Vec<i64>>());
            (lo, hi) = (s[lo] as usize, s[hi] as usize);
        }
        parts.push(own);
        lens.push(hi - lo);
    }
    let rows = split_rows(values, &lens).map_err(|e| e.message)?;
    Ok(parts.into_iter().zip(rows).map(|(splits, values)| Boxed { splits, split_type, values }).collect())
}

struct FromVariant {
    input_ragged_rank: i64,
    output_ragged_rank: usize,
    split_type: DataType,
}

impl FromVariant {
    fn splits_tensor(&self, v: Vec<i64>) -> Result<Tensor, Status> {
        RaggedVariant::splits_tensor(&v, self.split_type)
    }

    /// Stacks boxed ragged tensors of one ragged rank as the rows of one ragged tensor.
    fn stack(&self, ctx: &OpContext, parts: &[&Boxed], rank: usize) -> Result<(Vec<Vec<i64>>, Tensor), Status> {
        let mut splits = vec![vec![0i64]; rank + 1];
        let mut values = Vec::with_capacity(parts.len());
        for p in parts {
            if p.splits.len() != rank {
                return Err(ctx.error(format!(
                    "Expected all boxed ragged tensors to have ragged rank {rank}, got {}",
                    p.splits.len()
                )));
            }
            let nrows = match p.splits.first() {
                Some(s) => s.len().saturating_sub(1),
                None => p.values.dims().first().copied().unwrap_or(0),
            };
            let last = *splits[0].last().unwrap_or(&0);
            splits[0].push(last + nrows as i64);
            for (level, s) in p.splits.iter().enumerate() {
                let out = &mut splits[level + 1];
                let base = *out.last().unwrap_or(&0);
                out.extend(s[1..].iter().map(|&x| base + x));
            }
            values.push(p.values.clone());
        }
        let first = parts.first().map(|p| &p.values);
        let (dtype, inner) = match first {
            Some(v) if v.rank() > 0 => (v.dtype(), v.dims()[1..].to_vec()),
            Some(_) => return Err(ctx.error("cannot stack boxed ragged tensors whose values are scalars")),
            None => return Err(ctx.error("cannot stack zero boxed ragged tensors (their values' type is unknown)")),
        };
        if values.iter().any(|v| v.dtype() != dtype || v.rank() == 0 || v.dims()[1..] != inner[..]) {
            return Err(ctx.error("boxed ragged tensors' values differ in dtype or inner shape"));
        }
        let n: usize = values.iter().map(|v| v.dims()[0]).sum();
        let mut dims = vec![n];
        dims.extend_from_slice(&inner);
        let values = crate::data_flow::tensor_array::concat_rows(dtype, dims, &values)?;
        Ok((splits, values))
    }
}

impl OpKernel for FromVariant {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let encoded = ctx.input(0)?;
        let items = encoded.as_slice::<Variant>()?;
        let parts = items
            .iter()
            .map(|v| {
                boxed(v).ok_or_else(|| {
                    ctx.error(format!("Expected a boxed ragged tensor (RaggedTensorToVariant), got {v:?}"))
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        let inferred = self.output_ragged_rank as i64 - encoded.rank() as i64;
        if inferred < 0 || (self.input_ragged_rank >= 0 && self.input_ragged_rank != inferred) {
            return Err(ctx.error(format!(
                "Expected input_ragged_rank {} + the rank of encoded_ragged ({}) to equal output_ragged_rank {}",
                self.input_ragged_rank,
                encoded.rank(),
                self.output_ragged_rank
            )));
        }
        let (splits, values) = match encoded.rank() {
            0 => {
                let p = parts[0];
                if p.splits.len() != self.output_ragged_rank {
                    return Err(ctx.error(format!(
                        "Expected a boxed ragged tensor of ragged rank {}, got {}",
                        self.output_ragged_rank,
                        p.splits.len()
                    )));
                }
                (p.splits.clone(), p.values.clone())
            }
            1 => self.stack(ctx, &parts, self.output_ragged_rank - 1)?,
            r => {
                return Err(node_context(
                    &ctx.node().name,
                    Status::unimplemented(format!(
                        "RaggedTensorFromVariant of a rank-{r} encoded_ragged is not supported by ferroflow yet"
                    )),
                ))
            }
        };
        let k = splits.len();
        for (i, s) in splits.into_iter().enumerate() {
            ctx.set_output(i, self.splits_tensor(s).map_err(|e| ctx.error_with(e))?)?;
        }
        ctx.set_output(k, values)
    }
}

pub(crate) fn register(r: &mut KernelRegistry) {
    r.add("RaggedTensorToVariant", |n| {
        let k = n.attr_int("RAGGED_RANK")?;
        Ok(Box::new(ToVariant {
            ragged_rank: k.max(0) as usize,
            batched: n.attr_bool("batched_input")?,
            split_type: n.attr_type("Tsplits")?,
        }))
    });
    r.add("RaggedTensorFromVariant", |n| {
        let out = n.attr_int("output_ragged_rank")?;
        if out < 0 {
            return Err(Status::invalid_argument(format!("output_ragged_rank must be >= 0, got {out}")));
        }
        Ok(Box::new(FromVariant {
            input_ragged_rank: n.attr_int("input_ragged_rank")?,
            output_ragged_rank: out as usize,
            split_type: n.attr_type("Tsplits")?,
        }))
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{node, run_kernel};
    use ferroflow_core::{attr, Code};

    fn to_variant(splits: Vec<i64>, values: Vec<i64>) -> Tensor {
        let n = node(
            "RaggedTensorToVariant",
            &[
                ("RAGGED_RANK", attr::int(1)),
                ("Tvalues", attr::ty(DataType::Int64)),
                ("Tsplits", attr::ty(DataType::Int64)),
                ("batched_input", attr::bool(false)),
            ],
        );
        let (ns, nv) = (splits.len(), values.len());
        let inputs = vec![Tensor::new(vec![ns], splits).unwrap(), Tensor::new(vec![nv], values).unwrap()];
        run_kernel(n, inputs, 1).unwrap().remove(0)
    }

    fn from_variant(encoded: Tensor, input: i64, output: i64) -> Result<Vec<Tensor>, Status> {
        let n = node(
            "RaggedTensorFromVariant",
            &[
                ("input_ragged_rank", attr::int(input)),
                ("output_ragged_rank", attr::int(output)),
                ("Tvalues", attr::ty(DataType::Int64)),
                ("Tsplits", attr::ty(DataType::Int32)),
            ],
        );
        run_kernel(n, vec![encoded], output as usize + 1)
    }

    #[test]
    fn boxed_ragged_tensors_unbox_and_stack_as_rows() {
        let a = to_variant(vec![0, 2, 2, 3], vec![3, 1, 7]);
        assert_eq!(a.rank(), 0);
        let out = from_variant(a.clone(), 1, 1).unwrap();
        assert_eq!(out[0].as_slice::<i32>().unwrap(), [0, 2, 2, 3]);
        assert_eq!(out[1].as_slice::<i64>().unwrap(), [3, 1, 7]);
        // Two boxed [[x], [y, z]]-like values stacked: one more ragged level, rows renumbered.
        let b = to_variant(vec![0, 1], vec![9]);
        let both = [a.as_slice::<Variant>().unwrap()[0].clone(), b.as_slice::<Variant>().unwrap()[0].clone()];
        let out = from_variant(Tensor::new(vec![2], both.to_vec()).unwrap(), -1, 2).unwrap();
        assert_eq!(out[0].as_slice::<i32>().unwrap(), [0, 3, 4]);
        assert_eq!(out[1].as_slice::<i32>().unwrap(), [0, 2, 2, 3, 4]);
        assert_eq!(out[2].as_slice::<i64>().unwrap(), [3, 1, 7, 9]);
        // A rank that does not add up, and a variant that holds no ragged tensor.
        assert_eq!(from_variant(a, 2, 1).unwrap_err().code, Code::InvalidArgument);
        let empty = Tensor::scalar(Variant::Empty);
        assert_eq!(from_variant(empty, 1, 1).unwrap_err().code, Code::InvalidArgument);
    }

    #[test]
    fn int32_row_splits_that_overflow_are_an_error_not_a_wrap() {
        let k = FromVariant { input_ragged_rank: 1, output_ragged_rank: 1, split_type: DataType::Int32 };
        let ok = k.splits_tensor(vec![0, 5, i32::MAX as i64]).unwrap();
        assert_eq!(ok.as_slice::<i32>().unwrap(), [0, 5, i32::MAX]);
        let e = k.splits_tensor(vec![0, i32::MAX as i64 + 1]).unwrap_err();
        assert_eq!(e.code, Code::InvalidArgument);
        assert!(e.message.contains("2147483648"), "{e}");
    }

    fn batched_to_variant(splits: Vec<Vec<i64>>, values: Tensor) -> Result<Tensor, Status> {
        let n = node(
            "RaggedTensorToVariant",
            &[
                ("RAGGED_RANK", attr::int(splits.len() as i64)),
                ("Tvalues", attr::ty(values.dtype())),
                ("Tsplits", attr::ty(DataType::Int64)),
                ("batched_input", attr::bool(true)),
            ],
        );
        let mut inputs: Vec<Tensor> = splits.into_iter().map(Tensor::vec).collect();
        inputs.push(values);
        Ok(run_kernel(n, inputs, 1)?.remove(0))
    }

    #[test]
    fn batched_input_unbatches_rows_as_tensorflow_does() {
        // [[[1, 2], [3]], [], [[4]]]: ragged rank 2, three rows of ragged rank 1 each.
        let v = batched_to_variant(vec![vec![0, 2, 2, 3], vec![0, 2, 3, 4]], Tensor::vec(vec![1i64, 2, 3, 4])).unwrap();
        assert_eq!(v.dims(), [3]);
        let rows = v.as_slice::<Variant>().unwrap();
        let want: [(&[i32], &[i64]); 3] = [(&[0, 2, 3], &[1, 2, 3]), (&[0], &[]), (&[0, 1], &[4])];
        for (row, (splits, values)) in rows.iter().zip(want) {
            let out = from_variant(Tensor::scalar(row.clone()), 1, 1).unwrap();
            assert_eq!(out[0].as_slice::<i32>().unwrap(), splits);
            assert_eq!(out[1].as_slice::<i64>().unwrap(), values);
        }
        // Stacking the rows again gives the batch back.
        let out = from_variant(v, -1, 2).unwrap();
        assert_eq!(out[0].as_slice::<i32>().unwrap(), [0, 2, 2, 3]);
        assert_eq!(out[1].as_slice::<i32>().unwrap(), [0, 2, 3, 4]);
        assert_eq!(out[2].as_slice::<i64>().unwrap(), [1, 2, 3, 4]);
        // Ragged rank 0: the dense rows; TensorFlow's errors for a scalar and bad splits.
        let v = batched_to_variant(vec![], Tensor::new(vec![3, 2], vec![1i64, 2, 3, 4, 5, 6]).unwrap()).unwrap();
        let out = from_variant(Tensor::scalar(v.as_slice::<Variant>().unwrap()[1].clone()), 0, 0).unwrap();
        assert_eq!((out[0].dims(), out[0].as_slice::<i64>().unwrap()), (&[2][..], &[3i64, 4][..]));
        let e = batched_to_variant(vec![], Tensor::scalar(3i64)).unwrap_err();
        assert!(e.code == Code::InvalidArgument && e.message.contains("Can't unbatch rank-0 tensor."), "{e}");
        let e = batched_to_variant(vec![vec![0, 2, 9]], Tensor::vec(vec![1i64, 2, 3])).unwrap_err();
        assert!(e.code == Code::InvalidArgument && e.message.contains("number of ragged values(3) but is 9"), "{e}");
    }
}
