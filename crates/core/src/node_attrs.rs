//! Typed access to a NodeDef's attributes, with errors that name the node and attr.

use std::collections::HashMap;

use crate::proto::{attr_value::Value as AV, AttrValue, NodeDef, TensorShapeProto};
use crate::{DataType, Status, Tensor};

/// Attribute accessors on a `NodeDef`.
pub trait NodeAttrs {
    /// The raw attr.
    fn attr_value(&self, name: &str) -> Result<&AttrValue, Status>;
    /// Whether the attr is present.
    fn has_attr(&self, name: &str) -> bool;
    /// A `type` attr.
    fn attr_type(&self, name: &str) -> Result<DataType, Status>;
    /// An `int` attr.
    fn attr_int(&self, name: &str) -> Result<i64, Status>;
    /// A `float` attr.
    fn attr_float(&self, name: &str) -> Result<f32, Status>;
    /// A `bool` attr.
    fn attr_bool(&self, name: &str) -> Result<bool, Status>;
    /// A `string` attr (as UTF-8).
    fn attr_string(&self, name: &str) -> Result<String, Status>;
    /// A `list(int)` attr.
    fn attr_list_int(&self, name: &str) -> Result<Vec<i64>, Status>;
    /// A `list(type)` attr.
    fn attr_list_type(&self, name: &str) -> Result<Vec<DataType>, Status>;
    /// A `list(string)` attr.
    fn attr_list_string(&self, name: &str) -> Result<Vec<String>, Status>;
    /// A `shape` attr (dims, -1 = unknown; `None` = unknown rank).
    fn attr_shape(&self, name: &str) -> Result<Option<Vec<i64>>, Status>;
    /// A `tensor` attr.
    fn attr_tensor(&self, name: &str) -> Result<Tensor, Status>;
    /// An error about this node.
    fn node_error(&self, msg: impl std::fmt::Display) -> Status;
}

fn wrong(node: &NodeDef, name: &str, want: &str, got: &AttrValue) -> Status {
    let got = match &got.value {
        None => "nothing".to_string(),
        Some(AV::List(_)) => "a list".to_string(),
        Some(AV::S(_)) => "a string".to_string(),
        Some(AV::I(_)) => "an int".to_string(),
        Some(AV::F(_)) => "a float".to_string(),
        Some(AV::B(_)) => "a bool".to_string(),
        Some(AV::Type(_)) => "a type".to_string(),
        Some(AV::Shape(_)) => "a shape".to_string(),
        Some(AV::Tensor(_)) => "a tensor".to_string(),
        Some(AV::Func(_)) => "a function".to_string(),
        Some(AV::Placeholder(_)) => "a placeholder".to_string(),
    };
    Status::invalid_argument(format!(
        "node '{}' (op {}): attr '{name}' should be {want}, got {got}",
        node.name, node.op
    ))
    .with_node(&node.name)
}

/// Attr `name` of `node` holds a value that does not decode (`e` says why).
fn unreadable(node: &NodeDef, name: &str, e: Status) -> Status {
    e.context(format!("node '{}' attr '{name}'", node.name)).with_node(&node.name)
}

/// Converts a shape proto to dims (`None` for unknown rank).
pub fn shape_proto_dims(s: &TensorShapeProto) -> Option<Vec<i64>> {
    if s.unknown_rank {
        None
    } else {
        Some(s.dim.iter().map(|d| d.size).collect())
    }
}

/// `NodeAttrs` accessors that take one kind of attr value: each row names the method, its
/// result, the kind as the error says it, and the value's pattern and conversion.
macro_rules! typed_attrs {
    ($($method:ident -> $t:ty, $want:literal, $pat:pat => $val:expr;)*) => {
        $(
            fn $method(&self, name: &str) -> Result<$t, Status> {
                let v = self.attr_value(name)?;
                match &v.value {
                    Some($pat) => $val,
                    _ => Err(wrong(self, name, $want, v)),
                }
            }
        )*
    };
}

impl NodeAttrs for NodeDef {
    fn attr_value(&self, name: &str) -> Result<&AttrValue, Status> {
        self.attr.get(name).ok_or_else(|| {
            Status::invalid_argument(format!("node '{}' (op {}) is missing attr '{name}'", self.name, self.op))
                .with_node(&self.name)
        })
    }
    fn has_attr(&self, name: &str) -> bool {
        self.attr.contains_key(name)
    }
    fn attr_type(&self, name: &str) -> Result<DataType, Status> {
        let v = self.attr_value(name)?;
        match &v.value {
            Some(AV::Type(t)) => DataType::from_i32(*t).map_err(|e| unreadable(self, name, e)),
            _ => Err(wrong(self, name, "a type", v)),
        }
    }
    typed_attrs! {
        attr_int -> i64, "an int", AV::I(i) => Ok(*i);
        attr_float -> f32, "a float", AV::F(f) => Ok(*f);
        attr_bool -> bool, "a bool", AV::B(b) => Ok(*b);
        attr_string -> String, "a string", AV::S(s) => Ok(String::from_utf8_lossy(s).into_owned());
        attr_list_int -> Vec<i64>, "list(int)", AV::List(l) => Ok(l.i.clone());
        attr_list_type -> Vec<DataType>, "list(type)",
            AV::List(l) => l.r#type.iter().map(|&t| DataType::from_i32(t)).collect();
        attr_list_string -> Vec<String>, "list(string)",
            AV::List(l) => Ok(l.s.iter().map(|s| String::from_utf8_lossy(s).into_owned()).collect());
        attr_shape -> Option<Vec<i64>>, "a shape", AV::Shape(s) => Ok(shape_proto_dims(s));
    }
    fn attr_tensor(&self, name: &str) -> Result<Tensor, Status> {
        let v = self.attr_value(name)?;
        match &v.value {
            Some(AV::Tensor(t)) => Tensor::from_proto(t).map_err(|e| unreadable(self, name, e)),
            _ => Err(wrong(self, name, "a tensor", v)),
        }
    }
    fn node_error(&self, msg: impl std::fmt::Display) -> Status {
        Status::invalid_argument(format!("node '{}' (op {}): {msg}", self.name, self.op)).with_node(&self.name)
    }
}

/// Constructors for `AttrValue`s.
pub mod attr {
    use super::*;
    use crate::proto::attr_value::ListValue;

    fn v(x: AV) -> AttrValue {
        AttrValue { value: Some(x) }
    }
    /// `type` attr.
    pub fn ty(d: DataType) -> AttrValue {
        v(AV::Type(d.as_i32()))
    }
    /// `int` attr.
    pub fn int(i: i64) -> AttrValue {
        v(AV::I(i))
    }
    /// `float` attr.
    pub fn float(f: f32) -> AttrValue {
        v(AV::F(f))
    }
    /// `bool` attr.
    pub fn bool(b: bool) -> AttrValue {
        v(AV::B(b))
    }
    /// `string` attr.
    pub fn string(s: impl AsRef<[u8]>) -> AttrValue {
        v(AV::S(s.as_ref().to_vec()))
    }
    /// `tensor` attr.
    pub fn tensor(t: &Tensor) -> AttrValue {
        v(AV::Tensor(Box::new(t.to_proto())))
    }
    /// The shape proto of `dims` (`None` = unknown rank, -1 = unknown dim).
    fn shape_proto(dims: Option<&[i64]>) -> TensorShapeProto {
        match dims {
            None => TensorShapeProto { dim: vec![], unknown_rank: true },
            Some(d) => TensorShapeProto {
                dim: d
                    .iter()
                    .map(|&size| crate::proto::tensor_shape_proto::Dim { size, name: String::new() })
                    .collect(),
                unknown_rank: false,
            },
        }
    }
    /// `shape` attr (`None` = unknown rank, -1 = unknown dim).
    pub fn shape(dims: Option<&[i64]>) -> AttrValue {
        v(AV::Shape(shape_proto(dims)))
    }
    /// `list(shape)` attr, each shape as in [`shape`].
    pub fn list_shape<'a>(shapes: impl IntoIterator<Item = Option<&'a [i64]>>) -> AttrValue {
        v(AV::List(Box::new(ListValue { shape: shapes.into_iter().map(shape_proto).collect(), ..Default::default() })))
    }
    /// `func` attr naming a function of the library (no attrs bound).
    pub fn func(name: &str) -> AttrValue {
        v(AV::Func(Box::new(crate::proto::NameAttrList { name: name.to_string(), attr: Default::default() })))
    }
    /// `list(int)` attr.
    pub fn list_int(i: &[i64]) -> AttrValue {
        v(AV::List(Box::new(ListValue { i: i.to_vec(), ..Default::default() })))
    }
    /// `list(type)` attr.
    pub fn list_type(t: &[DataType]) -> AttrValue {
        v(AV::List(Box::new(ListValue { r#type: t.iter().map(|d| d.as_i32()).collect(), ..Default::default() })))
    }
    /// `list(string)` attr.
    pub fn list_string<S: AsRef<[u8]>>(s: &[S]) -> AttrValue {
        v(AV::List(Box::new(ListValue { s: s.iter().map(|x| x.as_ref().to_vec()).collect(), ..Default::default() })))
    }
    /// `list(float)` attr.
    pub fn list_float(f: &[f32]) -> AttrValue {
        v(AV::List(Box::new(ListValue { f: f.to_vec(), ..Default::default() })))
    }
    /// Empty attr map helper.
    pub fn map() -> HashMap<String, AttrValue> {
        HashMap::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Attr errors name the node in their text and as the status's node, so a kernel
    /// registry that names the failing node does not name it twice.
    #[test]
    fn attr_errors_name_the_node_in_text_and_payload() {
        let mut n = NodeDef { name: "n".into(), op: "Op".into(), ..Default::default() };
        n.attr.insert("i".into(), attr::int(1));
        n.attr.insert("t".into(), AttrValue { value: Some(AV::Type(9999)) });
        let errors = [
            n.attr_int("missing").unwrap_err(),
            n.attr_bool("i").unwrap_err(),
            n.attr_type("t").unwrap_err(),
            n.node_error("bad"),
        ];
        assert_eq!(errors[0].message, "node 'n' (op Op) is missing attr 'missing'");
        assert_eq!(errors[1].message, "node 'n' (op Op): attr 'i' should be a bool, got an int");
        assert!(errors[2].message.starts_with("node 'n' attr 't': "), "{}", errors[2].message);
        assert_eq!(errors[3].message, "node 'n' (op Op): bad");
        for e in &errors {
            assert_eq!(e.node(), Some("n"), "{e}");
        }
    }
}
