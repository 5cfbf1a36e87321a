//! Op definitions written in TensorFlow's REGISTER_OP spec syntax, e.g.
//! `op("MatMul").input("a: T").input("b: T").output("product: T")
//!  .attr("transpose_a: bool = false").attr("T: {float, double, int32}")`.

use ferroflow_core::proto::AttrValue;
use ferroflow_core::{attr, DataType, Status};

use crate::shape_fn::ShapeFn;

/// How an input or output argument gets its type.
#[derive(Clone, Debug, PartialEq)]
pub enum ArgType {
    /// A fixed type, e.g. `int32`.
    Fixed(DataType),
    /// A `type` attr, e.g. `T`.
    Attr(String),
    /// `N * T` or `N * int32`: a list of N tensors of one type.
    Repeated { number_attr: String, elem: Box<ArgType> },
    /// A `list(type)` attr, e.g. `Tcomponents`.
    List(String),
}

/// One input or output argument.
#[derive(Clone, Debug, PartialEq)]
pub struct ArgDef {
    /// Argument name.
    pub name: String,
    /// Its type rule.
    pub ty: ArgType,
    /// Whether it is a reference (`Ref(T)`).
    pub is_ref: bool,
}

/// One attribute.
#[derive(Clone, Debug, PartialEq)]
pub struct AttrDef {
    /// Attr name.
    pub name: String,
    /// TensorFlow attr type: `type`, `int`, `float`, `bool`, `string`, `shape`, `tensor`,
    /// `func`, `list(type)`, `list(int)`, …
    pub ty: String,
    /// Default value, if optional.
    pub default: Option<AttrValue>,
    /// Allowed types for a `type` attr written as `{float, double}`.
    pub allowed: Option<Vec<DataType>>,
    /// The least value of an `int` attr, or the least length of a list attr (`N: int >= 1`,
    /// `strides: list(int) >= 4`).
    pub minimum: Option<i64>,
}

/// An op: TensorFlow's name, arguments and attrs, plus ferroflow's shape function.
#[derive(Clone)]
pub struct OpDef {
    /// Op name, e.g. `MatMul`.
    pub name: String,
    /// Inputs.
    pub inputs: Vec<ArgDef>,
    /// Outputs.
    pub outputs: Vec<ArgDef>,
    /// Attrs.
    pub attrs: Vec<AttrDef>,
    /// Stateful ops are never constant-folded or deduplicated.
    pub stateful: bool,
    /// Infers output shapes from input shapes and attrs.
    pub shape_fn: Option<ShapeFn>,
}

impl std::fmt::Debug for OpDef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpDef").field("name", &self.name).finish()
    }
}

/// Starts an op definition.
pub fn op(name: &str) -> OpDefBuilder {
    OpDefBuilder {
        def: OpDef {
            name: name.to_string(),
            inputs: vec![],
            outputs: vec![],
            attrs: vec![],
            stateful: false,
            shape_fn: None,
        },
    }
}

/// Builder for [`OpDef`]; a malformed spec is a bug in ferroflow and panics at registry
/// construction (covered by a test that builds the whole registry).
pub struct OpDefBuilder {
    def: OpDef,
}

impl OpDefBuilder {
    /// Adds an input, e.g. `"x: T"`, `"values: N * T"`, `"ref: Ref(T)"`, `"shape: int32"`.
    pub fn input(mut self, spec: &str) -> Self {
        self.def.inputs.push(parse_arg(&self.def.name, spec));
        self
    }
    /// Adds an output.
    pub fn output(mut self, spec: &str) -> Self {
        self.def.outputs.push(parse_arg(&self.def.name, spec));
        self
    }
    /// Adds the handle output `name` of a resource-creating op, with its shape: TensorFlow
    /// 1.x's `Ref(string)` handle (a string vector [container, name]) when `ref_form`,
    /// else a scalar `resource` handle.
    pub fn handle_output(self, name: &str, ref_form: bool) -> Self {
        if ref_form {
            self.output(&format!("{name}: Ref(string)")).shape_fn(|_| Ok(vec![Some(vec![2])]))
        } else {
            self.output(&format!("{name}: resource")).shape_fn(crate::shape_fn::scalar)
        }
    }
    /// Adds an attr, e.g. `"T: {float, double}"`, `"transpose_a: bool = false"`,
    /// `"strides: list(int)"`, `"padding: {'SAME', 'VALID'}"`.
    pub fn attr(mut self, spec: &str) -> Self {
        self.def.attrs.push(parse_attr(&self.def.name, spec));
        self
    }
    /// Applies `f` when `cond` holds: the variant of an op that has one more argument or
    /// attr than its sibling, or is stateful where the sibling is not.
    pub fn when(self, cond: bool, f: impl FnOnce(Self) -> Self) -> Self {
        if cond {
            f(self)
        } else {
            self
        }
    }
    /// Marks the op stateful.
    pub fn stateful(mut self) -> Self {
        self.def.stateful = true;
        self
    }
    /// Sets the shape function.
    pub fn shape_fn(mut self, f: ShapeFn) -> Self {
        self.def.shape_fn = Some(f);
        self
    }
    /// Finishes the definition (arguments typed by a `list(type)` attr become type lists).
    pub fn build(mut self) -> OpDef {
        let lists: Vec<String> =
            self.def.attrs.iter().filter(|a| a.ty == "list(type)").map(|a| a.name.clone()).collect();
        for arg in self.def.inputs.iter_mut().chain(self.def.outputs.iter_mut()) {
            if let ArgType::Attr(n) = &arg.ty {
                if lists.contains(n) {
                    arg.ty = ArgType::List(n.clone());
                }
            }
        }
        self.def
    }
}

/// Parses a TensorFlow type name (`float`, `int32`, `DT_FLOAT`, …).
pub fn parse_type(s: &str) -> Option<DataType> {
    let s = s.trim();
    let s = s.strip_prefix("DT_").map(|x| x.to_ascii_lowercase()).unwrap_or_else(|| s.to_string());
    Some(match s.as_str() {
        "float" | "float32" => DataType::Float,
        "double" | "float64" => DataType::Double,
        "int32" => DataType::Int32,
        "int64" => DataType::Int64,
        "uint8" => DataType::UInt8,
        "int8" => DataType::Int8,
        "int16" => DataType::Int16,
        "uint16" => DataType::UInt16,
        "uint32" => DataType::UInt32,
        "uint64" => DataType::UInt64,
        "bool" => DataType::Bool,
        "string" => DataType::String,
        "resource" => DataType::Resource,
        "variant" => DataType::Variant,
        "half" | "float16" => DataType::Half,
        "bfloat16" => DataType::BFloat16,
        "complex64" => DataType::Complex64,
        "complex128" => DataType::Complex128,
        "qint8" => DataType::QInt8,
        "quint8" => DataType::QUInt8,
        "qint16" => DataType::QInt16,
        "quint16" => DataType::QUInt16,
        "qint32" => DataType::QInt32,
        _ => return None,
    })
}

fn parse_arg(op: &str, spec: &str) -> ArgDef {
    let (name, ty) = spec.split_once(':').unwrap_or_else(|| panic!("op {op}: bad arg spec '{spec}'"));
    let mut ty = ty.trim();
    let mut is_ref = false;
    if let Some(inner) = ty.strip_prefix("Ref(").and_then(|t| t.strip_suffix(')')) {
        ty = inner.trim();
        is_ref = true;
    }
    let simple = |t: &str| match parse_type(t) {
        Some(d) => ArgType::Fixed(d),
        None => ArgType::Attr(t.trim().to_string()),
    };
    let ty = if let Some((n, elem)) = ty.split_once('*') {
        ArgType::Repeated { number_attr: n.trim().to_string(), elem: Box::new(simple(elem)) }
    } else {
        simple(ty)
    };
    ArgDef { name: name.trim().to_string(), ty, is_ref }
}

fn parse_attr(op: &str, spec: &str) -> AttrDef {
    let (name, rest) = spec.split_once(':').unwrap_or_else(|| panic!("op {op}: bad attr spec '{spec}'"));
    let eq = rest.char_indices().find(|&(i, c)| c == '=' && (i == 0 || rest.as_bytes()[i - 1] != b'>'));
    let (ty, default) = match eq {
        Some((i, _)) => (rest[..i].trim(), Some(rest[i + 1..].trim())),
        None => (rest.trim(), None),
    };
    // A minimum constraint such as `int >= 1`.
    let minimum = ty
        .split_once(">=")
        .map(|(_, m)| m.trim().parse::<i64>().unwrap_or_else(|_| panic!("op {op}: bad minimum in attr spec '{spec}'")));
    let ty = ty.split(">=").next().unwrap_or(ty).trim();
    let mut allowed = None;
    let ty_name = if ty.starts_with('{') {
        let inner = ty.trim_start_matches('{').trim_end_matches('}');
        if inner.contains('\'') || inner.contains('"') {
            "string".to_string()
        } else {
            allowed = Some(
                inner
                    .split(',')
                    .map(|t| parse_type(t).unwrap_or_else(|| panic!("op {op}: unknown type '{t}' in '{spec}'")))
                    .collect(),
            );
            "type".to_string()
        }
    } else {
        ty.to_string()
    };
    let default = default.map(|d| parse_default(op, &ty_name, d));
    AttrDef { name: name.trim().to_string(), ty: ty_name, default, allowed, minimum }
}

fn unquote(s: &str) -> String {
    s.trim().trim_matches(|c| c == '\'' || c == '"').to_string()
}

fn parse_default(op: &str, ty: &str, d: &str) -> AttrValue {
    let fail = || -> ! { panic!("op {op}: bad default '{d}' for attr type {ty}") };
    let list_items = || -> Vec<&str> {
        let inner = d.trim().trim_start_matches('[').trim_end_matches(']').trim();
        if inner.is_empty() {
            vec![]
        } else {
            inner.split(',').map(str::trim).collect()
        }
    };
    match ty {
        "type" => attr::ty(parse_type(d).unwrap_or_else(|| fail())),
        "int" => attr::int(d.parse().unwrap_or_else(|_| fail())),
        "float" => attr::float(d.parse().unwrap_or_else(|_| fail())),
        "bool" => attr::bool(d.parse().unwrap_or_else(|_| fail())),
        "string" => attr::string(unquote(d)),
        "shape" => {
            if d == "unknown" {
                attr::shape(None)
            } else {
                let dims: Vec<i64> = list_items().iter().map(|x| x.parse().unwrap_or_else(|_| fail())).collect();
                attr::shape(Some(&dims))
            }
        }
        "list(int)" => {
            attr::list_int(&list_items().iter().map(|x| x.parse().unwrap_or_else(|_| fail())).collect::<Vec<_>>())
        }
        "list(float)" => {
            attr::list_float(&list_items().iter().map(|x| x.parse().unwrap_or_else(|_| fail())).collect::<Vec<_>>())
        }
        "list(string)" => attr::list_string(&list_items().iter().map(|x| unquote(x)).collect::<Vec<_>>()),
        "list(type)" => {
            attr::list_type(&list_items().iter().map(|x| parse_type(x).unwrap_or_else(|| fail())).collect::<Vec<_>>())
        }
        "list(shape)" | "list(tensor)" if list_items().is_empty() => {
            AttrValue { value: Some(ferroflow_core::proto::attr_value::Value::List(Default::default())) }
        }
        _ => fail(),
    }
}

impl OpDef {
    /// The attr definition by name.
    pub fn attr_def(&self, name: &str) -> Option<&AttrDef> {
        self.attrs.iter().find(|a| a.name == name)
    }

    /// An error about a node of this op.
    pub fn err(&self, node: &str, msg: impl std::fmt::Display) -> Status {
        Status::invalid_argument(format!("node '{node}' (op {}): {msg}", self.name)).with_node(node)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_specs() {
        let d = op("AddN")
            .input("inputs: N * T")
            .output("sum: T")
            .attr("N: int >= 1")
            .attr("T: {float, double, int32}")
            .attr("padding: {'SAME', 'VALID'} = 'VALID'")
            .attr("strides: list(int) = [1, 1]")
            .attr("shape: shape = unknown")
            .build();
        assert_eq!(
            d.inputs[0].ty,
            ArgType::Repeated { number_attr: "N".into(), elem: Box::new(ArgType::Attr("T".into())) }
        );
        assert_eq!(d.attrs[1].allowed.as_ref().unwrap().len(), 3);
        assert_eq!(d.attrs[2].ty, "string");
        let r = op("Assign").input("ref: Ref(T)").build();
        assert!(r.inputs[0].is_ref);
    }
}
