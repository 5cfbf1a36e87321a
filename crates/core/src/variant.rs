//! `DT_VARIANT` elements. ferroflow knows the variant TensorFlow's control flow uses:
//! `TensorList` (what `EmptyTensorList`, `TensorListPushBack`, … and `tf.TensorArray` in
//! TensorFlow 2 graphs pass around, and what `tf.while_loop` gradients accumulate
//! intermediate values in). Lists are immutable values: an op that changes a list builds a
//! new one (sharing the tensors, which are reference counted).

use std::sync::Arc;

use prost::Message;

use crate::proto::{TensorProto, TensorShapeProto, VariantTensorDataProto};
use crate::ragged_variant::{RaggedVariant, RAGGED_TYPE_NAME};
use crate::{DataType, Status, Tensor};

/// TensorFlow's type name of an encoded TensorList.
pub const TENSOR_LIST_TYPE_NAME: &str = "tensorflow::TensorList";

/// TensorFlow's type name of a variant holding one tensor (what `SerializeSparse` with
/// `out_type=variant` boxes a sparse tensor's parts in).
pub const TENSOR_TYPE_NAME: &str = "tensorflow::Tensor";

/// One element of a `DT_VARIANT` tensor.
#[derive(Clone, Debug, PartialEq, Default)]
pub enum Variant {
    /// A variant holding nothing (TensorFlow's default-constructed `Variant`).
    #[default]
    Empty,
    /// A list of tensors.
    TensorList(Arc<TensorList>),
    /// One tensor, boxed (TensorFlow's `Variant` holding a `Tensor`).
    Tensor(Arc<Tensor>),
    /// A value only this process understands (a `tf.data` dataset): it flows between the
    /// nodes of one task but cannot be encoded for another.
    Opaque(Opaque),
}

/// An in-process variant value: a type name (for messages) and the value.
#[derive(Clone)]
pub struct Opaque {
    /// What the value is, e.g. `tensorflow::data::DatasetVariant`.
    pub type_name: &'static str,
    /// The value.
    pub value: Arc<dyn std::any::Any + Send + Sync>,
}

impl std::fmt::Debug for Opaque {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Opaque({})", self.type_name)
    }
}

impl PartialEq for Opaque {
    fn eq(&self, other: &Opaque) -> bool {
        Arc::ptr_eq(&self.value, &other.value)
    }
}

/// A list of tensors of one dtype, with a (possibly partial) element shape.
#[derive(Clone, Debug, PartialEq)]
pub struct TensorList {
    /// The elements; `None` for a reserved slot not set yet.
    pub tensors: Vec<Option<Tensor>>,
    /// Type of every element.
    pub element_dtype: DataType,
    /// Shape every element must have: `None` = unknown rank, `-1` = unknown dimension.
    pub element_shape: Option<Vec<i64>>,
    /// Most elements the list may hold (`-1`: no limit).
    pub max_num_elements: i64,
}

impl TensorList {
    /// An empty list.
    pub fn new(element_dtype: DataType, element_shape: Option<Vec<i64>>, max_num_elements: i64) -> TensorList {
        TensorList { tensors: Vec::new(), element_dtype, element_shape, max_num_elements }
    }

    /// Whether `dims` fits the element shape (unknown rank and `-1` match anything).
    pub fn shape_fits(&self, dims: &[usize]) -> bool {
        match &self.element_shape {
            None => true,
            Some(want) => want.len() == dims.len() && want.iter().zip(dims).all(|(&w, &d)| w < 0 || w as usize == d),
        }
    }

    /// The element shape as text (`<unknown>`, `[2,?]`).
    pub fn shape_text(&self) -> String {
        match &self.element_shape {
            None => "<unknown>".into(),
            Some(d) => {
                let parts: Vec<String> =
                    d.iter().map(|&x| if x < 0 { "?".to_string() } else { x.to_string() }).collect();
                format!("[{}]", parts.join(","))
            }
        }
    }

    /// TensorFlow's encoding (`TensorList::Encode`): the set tensors, and metadata holding
    /// the unset positions, the dtype, the size limit and the element shape.
    pub fn encode(&self) -> VariantTensorDataProto {
        let mut tensors = Vec::new();
        let mut unset = Vec::new();
        for (i, t) in self.tensors.iter().enumerate() {
            match t {
                Some(t) => tensors.push(t.to_proto()),
                None => unset.push(i as u64),
            }
        }
        let mut metadata = Vec::new();
        put_varint(&mut metadata, unset.len() as u64);
        for i in unset {
            put_varint(&mut metadata, i);
        }
        put_varint(&mut metadata, self.element_dtype.as_i32() as u64);
        put_varint(&mut metadata, self.max_num_elements as u64);
        let shape = match &self.element_shape {
            None => TensorShapeProto { unknown_rank: true, ..Default::default() },
            Some(d) => TensorShapeProto {
                dim: d
                    .iter()
                    .map(|&size| crate::proto::tensor_shape_proto::Dim { size, ..Default::default() })
                    .collect(),
                ..Default::default()
            },
        };
        metadata.extend(shape.encode_to_vec());
        VariantTensorDataProto { type_name: TENSOR_LIST_TYPE_NAME.into(), metadata, tensors }
    }

    /// Decodes [`TensorList::encode`]'s format; malformed data is InvalidArgument.
    pub fn decode(p: &VariantTensorDataProto) -> Result<TensorList, Status> {
        let bad = |what: &str| Status::invalid_argument(format!("malformed TensorList variant: {what}"));
        if p.type_name != TENSOR_LIST_TYPE_NAME {
            return Err(Status::unimplemented(format!(
                "variant type '{}' is not supported (ferroflow knows {TENSOR_LIST_TYPE_NAME})",
                p.type_name
            )));
        }
        let mut m: &[u8] = &p.metadata;
        let n_unset = get_varint(&mut m).ok_or_else(|| bad("no count of unset elements"))?;
        let total = (p.tensors.len() as u64).checked_add(n_unset).ok_or_else(|| bad("too many elements"))?;
        let mut unset = Vec::new();
        for _ in 0..n_unset {
            let i = get_varint(&mut m).ok_or_else(|| bad("truncated unset positions"))?;
            if i >= total {
                return Err(bad("unset position out of range"));
            }
            unset.push(i as usize);
        }
        let dtype_code = get_varint(&mut m).ok_or_else(|| bad("no element dtype"))?;
        let (element_dtype, _) = DataType::from_proto(dtype_code as i32)?;
        let max_num_elements = get_varint(&mut m).ok_or_else(|| bad("no size limit"))? as i64;
        let shape = TensorShapeProto::decode(m).map_err(|e| bad(&format!("element shape: {e}")))?;
        let element_shape = crate::shape_proto_dims(&shape);
        let mut given = p.tensors.iter();
        let mut tensors = Vec::with_capacity(total as usize);
        for i in 0..total as usize {
            if unset.contains(&i) {
                tensors.push(None);
            } else {
                let t = given.next().ok_or_else(|| bad("fewer tensors than elements"))?;
                tensors.push(Some(Tensor::from_proto(t)?));
            }
        }
        Ok(TensorList { tensors, element_dtype, element_shape, max_num_elements })
    }
}

impl Variant {
    /// TensorFlow's encoding of one element (`VariantTensorDataProto`). An in-process value
    /// with no encoding of TensorFlow's gives only its type name (decoding it elsewhere
    /// reports what could not cross).
    pub fn encode(&self) -> VariantTensorDataProto {
        self.try_encode().unwrap_or_else(|_| VariantTensorDataProto {
            type_name: self.type_name().to_string(),
            ..Default::default()
        })
    }

    /// TensorFlow's encoding of one element, or an error for a value that has none (a
    /// dataset, an optional): what a file that must be read back needs.
    pub fn try_encode(&self) -> Result<VariantTensorDataProto, Status> {
        if let Some(r) = RaggedVariant::of(self) {
            return r.encode();
        }
        if let Variant::Opaque(o) = self {
            return Err(Status::unimplemented(format!(
                "a '{}' variant has no encoding outside the process that made it",
                o.type_name
            )));
        }
        Ok(match self {
            Variant::Empty => VariantTensorDataProto::default(),
            Variant::TensorList(l) => l.encode(),
            Variant::Tensor(t) => VariantTensorDataProto {
                type_name: TENSOR_TYPE_NAME.into(),
                metadata: Vec::new(),
                tensors: vec![t.to_proto()],
            },
            Variant::Opaque(o) => VariantTensorDataProto { type_name: o.type_name.to_string(), ..Default::default() },
        })
    }

    /// What the element holds, by TensorFlow's type name ("" for an empty variant).
    pub fn type_name(&self) -> &str {
        match self {
            Variant::Empty => "",
            Variant::TensorList(_) => TENSOR_LIST_TYPE_NAME,
            Variant::Tensor(_) => TENSOR_TYPE_NAME,
            Variant::Opaque(o) => o.type_name,
        }
    }

    /// Decodes one element.
    pub fn decode(p: &VariantTensorDataProto) -> Result<Variant, Status> {
        if p.type_name.is_empty() && p.metadata.is_empty() && p.tensors.is_empty() {
            return Ok(Variant::Empty);
        }
        if p.type_name == TENSOR_TYPE_NAME {
            return match p.tensors.as_slice() {
                [t] => Ok(Variant::Tensor(Arc::new(Tensor::from_proto(t)?))),
                ts => Err(Status::invalid_argument(format!(
                    "malformed {TENSOR_TYPE_NAME} variant: {} tensors, expected 1",
                    ts.len()
                ))),
            };
        }
        if p.type_name == RAGGED_TYPE_NAME {
            return Ok(RaggedVariant::decode(p)?.into_variant());
        }
        if p.type_name != TENSOR_LIST_TYPE_NAME && p.metadata.is_empty() && p.tensors.is_empty() {
            return Err(Status::unimplemented(format!(
                "a '{}' variant cannot be sent between processes: ferroflow keeps it on the task that made it \
                 (place its producer and its consumers on one device)",
                p.type_name
            )));
        }
        Ok(Variant::TensorList(Arc::new(TensorList::decode(p)?)))
    }

    /// The list, or an error naming what the variant holds instead.
    pub fn as_list(&self) -> Result<&Arc<TensorList>, Status> {
        match self {
            Variant::TensorList(l) => Ok(l),
            Variant::Empty => Err(Status::invalid_argument("expected a TensorList variant, got an empty variant")),
            Variant::Tensor(_) => Err(Status::invalid_argument("expected a TensorList variant, got a boxed tensor")),
            Variant::Opaque(o) => {
                Err(Status::invalid_argument(format!("expected a TensorList variant, got a {}", o.type_name)))
            }
        }
    }
}

/// Encodes a `DT_VARIANT` tensor's elements into `variant_val`.
pub(crate) fn to_variant_val(v: &[Variant]) -> Vec<VariantTensorDataProto> {
    v.iter().map(Variant::encode).collect()
}

/// A `TensorProto`'s `variant_val` as elements (`n` of them).
pub(crate) fn from_variant_val(p: &TensorProto, n: usize) -> Result<Vec<Variant>, Status> {
    if p.variant_val.len() != n {
        return Err(Status::invalid_argument(format!(
            "variant tensor of {n} elements has {} variant_val entries",
            p.variant_val.len()
        )));
    }
    p.variant_val.iter().map(Variant::decode).collect()
}

fn put_varint(out: &mut Vec<u8>, v: u64) {
    crate::varint::put(out, v)
}

fn get_varint(b: &mut &[u8]) -> Option<u64> {
    prost::encoding::decode_varint(b).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_round_trip_through_tensorflows_encoding() {
        let mut l = TensorList::new(DataType::Float, Some(vec![2, -1]), -1);
        l.tensors.push(Some(Tensor::new(vec![2, 1], vec![1.0f32, 2.0]).unwrap()));
        l.tensors.push(None);
        l.tensors.push(Some(Tensor::new(vec![2, 3], vec![0.5f32; 6]).unwrap()));
        let p = l.encode();
        assert_eq!(p.type_name, "tensorflow::TensorList");
        assert_eq!(p.tensors.len(), 2);
        // One unset element (position 1), dtype 1 (float), no limit (u64::MAX).
        assert_eq!(&p.metadata[..3], &[1, 1, 1]);
        assert_eq!(TensorList::decode(&p).unwrap(), l);
        let unknown = TensorList::new(DataType::Int32, None, 5);
        assert_eq!(TensorList::decode(&unknown.encode()).unwrap(), unknown);
        assert!(l.shape_fits(&[2, 7]) && !l.shape_fits(&[3, 1]) && !l.shape_fits(&[2]));
        assert_eq!(l.shape_text(), "[2,?]");
    }

    #[test]
    fn boxed_tensors_round_trip_through_tensorflows_encoding() {
        let t = Tensor::new(vec![2], vec![3i64, 4]).unwrap();
        let v = Variant::Tensor(Arc::new(t.clone()));
        let p = v.encode();
        assert_eq!(p.type_name, "tensorflow::Tensor");
        assert_eq!(p.tensors.len(), 1);
        assert_eq!(Variant::decode(&p).unwrap(), v);
        let two = VariantTensorDataProto { tensors: vec![t.to_proto(), t.to_proto()], ..p };
        assert!(Variant::decode(&two).unwrap_err().message.contains("2 tensors, expected 1"));
    }

    #[test]
    fn malformed_lists_are_errors_not_panics() {
        let mut p = TensorList::new(DataType::Float, None, -1).encode();
        p.metadata.truncate(1);
        assert!(TensorList::decode(&p).unwrap_err().message.contains("malformed TensorList"));
        p.metadata = vec![0xff; 12];
        assert!(TensorList::decode(&p).is_err());
        p.type_name = "tensorflow::Other".into();
        assert_eq!(TensorList::decode(&p).unwrap_err().code, crate::Code::Unimplemented);
    }
}
