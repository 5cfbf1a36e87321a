//! Structure-aware values: tensors of every dtype and their mutations (huge declared
//! dims, dtype and value lists that disagree, dropped or doubled fields), node and tensor
//! names, and attr values of every kind.

use ferroflow_core::proto::attr_value::{ListValue, Value};
use ferroflow_core::proto::tensor_shape_proto::Dim;
use ferroflow_core::proto::{AttrValue, NameAttrList, ResourceHandleProto, TensorProto, TensorShapeProto};
use ferroflow_core::{half, DataType, Tensor, C64};

use super::Rng;

/// Dimensions a hostile peer declares: past i32, past the memory of any machine, negative.
pub const HUGE_DIMS: &[i64] = &[
    i32::MAX as i64,
    1 << 31,
    1 << 32,
    1 << 33,
    1 << 40,
    1 << 62,
    i64::MAX,
    -1,
    -5,
    i64::MIN,
    4_611_686_018_427_387_903,
    3_037_000_500,
];

/// A dimension: usually small, sometimes huge or negative.
pub fn dim(rng: &mut Rng) -> i64 {
    if rng.one_in(3) {
        *rng.pick(HUGE_DIMS)
    } else {
        rng.range(0, 5)
    }
}

/// An integer for an attr or a constant: small, a boundary, or huge.
pub fn int(rng: &mut Rng) -> i64 {
    match rng.below(4) {
        0 => *rng.pick(HUGE_DIMS),
        1 => *rng.pick(&[0, 1, -1, 2, i32::MIN as i64, u32::MAX as i64, 1 << 24, 1 << 20]),
        _ => rng.range(-3, 8),
    }
}

/// A dtype: a valid one, a reference one, or a number TensorFlow does not know.
pub fn dtype(rng: &mut Rng) -> i32 {
    match rng.below(8) {
        0 => rng.pick(&DataType::ALL).as_ref_i32(),
        1 => *rng.pick(&[0, -1, 24, 99, 100, 200, i32::MAX, i32::MIN]),
        _ => rng.pick(&DataType::ALL).as_i32(),
    }
}

/// Common dtypes (most kernels take one of them).
pub fn common_dtype(rng: &mut Rng) -> DataType {
    *rng.pick(&[DataType::Float, DataType::Int32, DataType::Int64, DataType::Double, DataType::Bool, DataType::String])
}

/// Valid tensors of several dtypes and both encodings.
pub fn seed_tensors() -> Vec<TensorProto> {
    let f = Tensor::new(vec![2, 3], vec![1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0]).unwrap();
    let h = Tensor::vec(vec![half::f16::from_f32(1.5), half::f16::from_f32(-2.0)]);
    vec![
        Tensor::scalar(2.5f32).to_proto(),
        f.to_proto(),
        f.to_proto_field(),
        Tensor::vec(vec![2i32, 2]).to_proto_field(),
        Tensor::vec(vec![1i32, 0, 3]).to_proto(),
        Tensor::vec(vec![7i64, -1]).to_proto_field(),
        Tensor::scalar(3i32).to_proto_field(),
        Tensor::vec(vec![b"ab".to_vec(), b"".to_vec()]).to_proto(),
        Tensor::vec(vec![b"x".to_vec()]).to_proto_field(),
        Tensor::vec(vec![true, false]).to_proto_field(),
        Tensor::scalar(0.25f64).to_proto(),
        h.to_proto_field(),
        Tensor::vec(vec![C64::new(1.0, 2.0)]).to_proto_field(),
        Tensor::vec(vec![1u8, 2, 3, 4]).to_proto(),
        Tensor::new(vec![2, 2], vec![1i32, 2, 3, 4]).unwrap().to_proto(),
        Tensor::vec(vec![1u64, 2]).to_proto_field(),
    ]
}

/// A seed tensor, mutated (or not, one time in four).
pub fn tensor(rng: &mut Rng) -> TensorProto {
    let seeds = seed_tensors();
    let mut t = rng.pick(&seeds).clone();
    if !rng.one_in(4) {
        for _ in 0..1 + rng.below(3) {
            mutate_tensor(rng, &mut t);
        }
    }
    t
}

/// A shape: a few dims, some of them huge; or of unknown rank.
pub fn shape(rng: &mut Rng) -> TensorShapeProto {
    let rank = if rng.one_in(10) { rng.below(40) } else { rng.below(4) };
    TensorShapeProto {
        dim: (0..rank).map(|_| Dim { size: dim(rng), name: String::new() }).collect(),
        unknown_rank: rng.one_in(12),
    }
}

/// One structure-aware change to `t`.
pub fn mutate_tensor(rng: &mut Rng, t: &mut TensorProto) {
    match rng.below(14) {
        0 | 1 => {
            // A huge (or negative) declared dim, the values left as they are.
            let s = t.tensor_shape.get_or_insert_with(Default::default);
            let d = Dim { size: *rng.pick(HUGE_DIMS), name: String::new() };
            if s.dim.is_empty() || rng.one_in(2) {
                s.dim.push(d);
            } else {
                let i = rng.below(s.dim.len());
                s.dim[i] = d;
            }
        }
        2 => t.tensor_shape = Some(shape(rng)),
        3 => t.dtype = dtype(rng),
        4 => t.tensor_shape = None,
        5 => {
            // Content of a length that fits no shape, next to or instead of the values.
            let n = *rng.pick(&[0, 1, 3, 7, 24, 4096]);
            t.tensor_content = rng.bytes(n).into();
        }
        6 => {
            let n = rng.below(6);
            t.float_val.extend((0..n).map(|i| i as f32 * 0.5));
            t.int_val.extend((0..rng.below(6)).map(|_| int(rng) as i32));
        }
        7 => {
            t.float_val.clear();
            t.int_val.clear();
            t.int64_val.clear();
            t.string_val.clear();
            t.bool_val.clear();
            t.double_val.clear();
        }
        8 => {
            t.int64_val.extend((0..1 + rng.below(4)).map(|_| int(rng)));
            t.half_val.push(rng.next_u64() as i32);
            t.scomplex_val.push(1.0);
        }
        9 => {
            let n = rng.below(4);
            t.string_val.extend((0..n).map(|_| rng.some_bytes(8)));
            t.bool_val.push(true);
        }
        10 => {
            t.resource_handle_val.push(ResourceHandleProto {
                device: name(rng),
                container: name(rng),
                name: name(rng),
                hash_code: rng.next_u64(),
                maybe_type_name: name(rng),
                dtypes_and_shapes: Vec::new(),
            });
        }
        11 => {
            // A variant element whose bytes are garbage or name an unknown type.
            t.variant_val.push(ferroflow_core::proto::VariantTensorDataProto {
                type_name: rng.pick(&["tensorflow::TensorList", "", "mystery"]).to_string(),
                metadata: rng.some_bytes(12),
                tensors: vec![TensorProto { dtype: dtype(rng), ..Default::default() }],
            });
        }
        12 => {
            // Encoded string lists whose lengths lie.
            let mut c = Vec::new();
            super::bytes::put_varint(&mut c, *rng.pick(&[1u64 << 31, u32::MAX as u64, 5, 1 << 40]));
            c.extend(rng.some_bytes(6));
            t.tensor_content = c.into();
        }
        _ => t.version_number = int(rng) as i32,
    }
}

/// A node name: mostly ordinary, sometimes empty, long, odd or shaped like a tensor name.
pub fn name(rng: &mut Rng) -> String {
    match rng.below(12) {
        0 => String::new(),
        1 => "x".repeat(1 + rng.below(3000)),
        2 => rng
            .pick(&["^ctrl", "a:99", "name:-1", ":", "a:b:c", "/", "a//b", "_SOURCE", "_SINK", "é∂", "\0", " "])
            .to_string(),
        3 => {
            let n = 1 + rng.below(12);
            String::from_utf8_lossy(&rng.bytes(n)).into_owned()
        }
        _ => format!("n{}", rng.below(50)),
    }
}

/// A tensor name built from `nodes`: ordinary, a control input, a huge or negative output
/// index, or a name of no node.
pub fn tensor_name(rng: &mut Rng, nodes: &[String]) -> String {
    let n = if nodes.is_empty() || rng.one_in(8) { name(rng) } else { rng.pick(nodes).clone() };
    match rng.below(10) {
        0 => format!("^{n}"),
        1 => format!("{n}:{}", rng.pick(&["99", "-1", "4294967296", "99999999999999999999", "", "x", "1:2"])),
        2 => format!("{n}:{}", rng.below(3)),
        3 => format!("{n}:0:0"),
        _ => format!("{n}:0"),
    }
}

/// An attr value of any kind: huge ints, mutated tensors and shapes, nested and mixed
/// lists, unknown functions, placeholders, or no value at all.
pub fn attr_value(rng: &mut Rng) -> AttrValue {
    let v = match rng.below(13) {
        0 => Value::I(int(rng)),
        1 => Value::Type(dtype(rng)),
        2 => Value::Shape(shape(rng)),
        3 => Value::Tensor(Box::new(tensor(rng))),
        4 => Value::B(rng.one_in(2)),
        5 => Value::F(*rng.pick(&[f32::NAN, f32::INFINITY, -0.0, 1e30, 0.5])),
        6 => Value::S(rng.some_bytes(10)),
        7 => Value::S(rng.pick(&["SAME", "VALID", "NHWC", "NCHW", "EXPLICIT", ""]).as_bytes().to_vec()),
        8 => Value::Func(Box::new(NameAttrList { name: name(rng), attr: Default::default() })),
        9 => Value::Placeholder(name(rng)),
        10 => return AttrValue { value: None },
        _ => Value::List(Box::new(list_value(rng))),
    };
    AttrValue { value: Some(v) }
}

/// A list attr: several kinds at once, huge ints, many or no elements.
pub fn list_value(rng: &mut Rng) -> ListValue {
    let n = if rng.one_in(10) { 64 + rng.below(1000) } else { rng.below(5) };
    let mut l = ListValue::default();
    match rng.below(6) {
        0 => l.i = (0..n).map(|_| int(rng)).collect(),
        1 => l.r#type = (0..n).map(|_| dtype(rng)).collect(),
        2 => l.shape = (0..n.min(8)).map(|_| shape(rng)).collect(),
        3 => l.tensor = (0..n.min(4)).map(|_| tensor(rng)).collect(),
        4 => l.s = (0..n).map(|_| rng.some_bytes(6)).collect(),
        _ => {
            l.i = (0..n).map(|_| int(rng)).collect();
            l.f = vec![1.0; n.min(3)];
            l.b = vec![true];
            l.r#type = vec![dtype(rng)];
        }
    }
    l
}
