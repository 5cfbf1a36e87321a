//! A ragged tensor boxed in one `DT_VARIANT` element (TensorFlow's `RaggedTensorVariant`,
//! what `RaggedTensorToVariant` makes and `tf.data` carries ragged elements in). In a process
//! it is an [`Opaque`] value; across processes and in files (a `tf.data` cache, a
//! checkpoint) it takes TensorFlow's encoding: a `VariantTensorDataProto` named
//! `RaggedTensorVariant` holding the row splits, outermost first, then the flat values.

use std::sync::Arc;

use crate::proto::VariantTensorDataProto;
use crate::{DataType, Opaque, Shape, Status, Tensor, Variant};

/// TensorFlow's type name of a boxed ragged tensor.
pub const RAGGED_TYPE_NAME: &str = "RaggedTensorVariant";

/// One boxed ragged tensor.
#[derive(Clone, Debug)]
pub struct RaggedVariant {
    /// Row splits, outermost first (each starts at 0 and never decreases).
    pub splits: Vec<Vec<i64>>,
    /// The dtype the row splits had (`Tsplits`): int32 or int64.
    pub split_type: DataType,
    /// The flat values.
    pub values: Tensor,
}

impl RaggedVariant {
    /// This value as a variant element.
    pub fn into_variant(self) -> Variant {
        Variant::Opaque(Opaque { type_name: RAGGED_TYPE_NAME, value: Arc::new(self) })
    }

    /// The boxed ragged tensor `v` holds, if it holds one.
    pub fn of(v: &Variant) -> Option<&RaggedVariant> {
        match v {
            Variant::Opaque(o) if o.type_name == RAGGED_TYPE_NAME => o.value.downcast_ref::<RaggedVariant>(),
            _ => None,
        }
    }

    /// Row splits as a tensor of `dtype` (int32 splits that do not fit are an error).
    pub fn splits_tensor(splits: &[i64], dtype: DataType) -> Result<Tensor, Status> {
        let shape = Shape::new(vec![splits.len()]);
        match dtype {
            DataType::Int32 => {
                let narrow = splits.iter().map(|&x| {
                    i32::try_from(x).map_err(|_| {
                        Status::invalid_argument(format!(
                            "row split {x} does not fit Tsplits=int32 (the ragged tensor has more values than int32 \
                             can index; use int64 row splits)"
                        ))
                    })
                });
                Tensor::new(shape, narrow.collect::<Result<Vec<i32>, Status>>()?)
            }
            DataType::Int64 => Tensor::new(shape, splits.to_vec()),
            other => Err(Status::invalid_argument(format!("row splits must be int32 or int64, got {other}"))),
        }
    }

    /// TensorFlow's encoding: the splits tensors, then the values.
    pub fn encode(&self) -> Result<VariantTensorDataProto, Status> {
        let mut tensors = Vec::with_capacity(self.splits.len() + 1);
        for s in &self.splits {
            tensors.push(Self::splits_tensor(s, self.split_type)?.to_proto_field());
        }
        tensors.push(self.values.to_proto_field());
        Ok(VariantTensorDataProto { type_name: RAGGED_TYPE_NAME.into(), metadata: Vec::new(), tensors })
    }

    /// Decodes TensorFlow's encoding, checking that every level's splits start at 0, never
    /// decrease and end at the row count of the level below.
    pub fn decode(p: &VariantTensorDataProto) -> Result<RaggedVariant, Status> {
        let bad = |m: String| Status::invalid_argument(format!("malformed {RAGGED_TYPE_NAME} variant: {m}"));
        let Some((values, splits)) = p.tensors.split_last() else {
            return Err(bad("no values tensor".into()));
        };
        let values = Tensor::from_proto(values)?;
        let mut split_type = DataType::Int64;
        let mut out = Vec::with_capacity(splits.len());
        for (i, s) in splits.iter().enumerate() {
            let t = Tensor::from_proto(s)?;
            split_type = t.dtype();
            let v: Vec<i64> = match t.dtype() {
                DataType::Int64 => t.as_slice::<i64>()?.to_vec(),
                DataType::Int32 => t.as_slice::<i32>()?.iter().map(|&x| x as i64).collect(),
                d => return Err(bad(format!("row splits {i} have dtype {d}, expected int32 or int64"))),
            };
            if t.rank() != 1 || v.first() != Some(&0) || v.windows(2).any(|w| w[1] < w[0]) {
                return Err(bad(format!("row splits {i} must be a vector starting at 0 that never decreases")));
            }
            out.push(v);
        }
        let r = RaggedVariant { splits: out, split_type, values };
        r.check_rows().map_err(bad)?;
        Ok(r)
    }

    /// Each level's last split is the row count of the level below (the values' first
    /// dimension for the innermost level).
    pub fn check_rows(&self) -> Result<(), String> {
        let nvals = self.values.dims().first().copied().unwrap_or(0) as i64;
        if !self.splits.is_empty() && self.values.rank() == 0 {
            return Err("the values of a ragged tensor must have rank 1 or more".into());
        }
        for (i, s) in self.splits.iter().enumerate() {
            let below = self.splits.get(i + 1).map_or(nvals, |n| n.len() as i64 - 1);
            let last = s.last().copied().unwrap_or(0);
            if last != below {
                return Err(format!(
                    "Invalid ragged splits: last element of ragged splits must be the number of ragged \
                     values({below}) but is {last}"
                ));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_through_tensorflows_encoding() {
        let r = RaggedVariant {
            splits: vec![vec![0, 2, 3]],
            split_type: DataType::Int32,
            values: Tensor::vec(vec![1.5f32, 2.5, 3.5]),
        };
        let p = r.clone().into_variant().encode();
        assert_eq!(p.type_name, "RaggedTensorVariant");
        assert_eq!(p.tensors.len(), 2);
        let back = Variant::decode(&p).unwrap();
        let b = RaggedVariant::of(&back).unwrap();
        assert_eq!((b.splits.clone(), b.split_type), (vec![vec![0, 2, 3]], DataType::Int32));
        assert_eq!(b.values.as_slice::<f32>().unwrap(), [1.5, 2.5, 3.5]);
    }

    #[test]
    fn malformed_encodings_are_errors_not_panics() {
        let good = RaggedVariant {
            splits: vec![vec![0, 1, 3]],
            split_type: DataType::Int64,
            values: Tensor::vec(vec![1i64, 2, 3]),
        };
        let p = good.encode().unwrap();
        let mut no_values = p.clone();
        no_values.tensors.clear();
        assert!(RaggedVariant::decode(&no_values).is_err());
        let mut short = p.clone();
        short.tensors[1] = Tensor::vec(vec![1i64, 2]).to_proto();
        let e = RaggedVariant::decode(&short).unwrap_err();
        assert!(e.message.contains("number of ragged values(2) but is 3"), "{e}");
        let mut backwards = p;
        backwards.tensors[0] = Tensor::vec(vec![0i64, 3, 1]).to_proto();
        assert!(RaggedVariant::decode(&backwards).is_err());
        let wide = RaggedVariant::splits_tensor(&[0, i32::MAX as i64 + 1], DataType::Int32).unwrap_err();
        assert!(wide.message.contains("2147483648"), "{wide}");
    }
}
