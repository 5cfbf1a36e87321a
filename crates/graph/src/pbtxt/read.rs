//! Generic text-format fields → GraphDef and the messages inside it. Unknown fields are
//! skipped (as the binary decoder skips unknown field numbers); wrong value kinds and
//! out-of-range numbers are InvalidArgument naming the line and column.

use std::collections::HashMap;

use ferroflow_core::proto::{
    attr_value::{ListValue, Value as AV},
    resource_handle_proto::DtypeAndShape,
    tensor_shape_proto::Dim,
    AttrValue, CheckpointState, FunctionDef, FunctionDefLibrary, GradientDef, GraphDef, NameAttrList, NodeDef, OpDef,
    ResourceHandleProto, TensorProto, TensorShapeProto, VersionDef,
};
use ferroflow_core::Status;
use prost::bytes::Bytes;

use super::lex::{Field, Scalar, Val};

fn err(f: &Field, msg: impl std::fmt::Display) -> Status {
    Status::invalid_argument(format!("text proto {}: field '{}': {msg}", f.pos, f.name))
}

fn msg(f: &Field) -> Result<&[Field], Status> {
    match &f.val {
        Val::Msg(m) => Ok(m),
        Val::Scalar(_) => Err(err(f, "expected a message { … }")),
    }
}

fn bytes(f: &Field) -> Result<Vec<u8>, Status> {
    match &f.val {
        Val::Scalar(Scalar::Str(s)) => Ok(s.clone()),
        _ => Err(err(f, "expected a quoted string")),
    }
}

fn string(f: &Field) -> Result<String, Status> {
    String::from_utf8(bytes(f)?).map_err(|_| err(f, "string is not valid UTF-8"))
}

fn int(f: &Field) -> Result<i128, Status> {
    let Val::Scalar(Scalar::Num(n)) = &f.val else { return Err(err(f, "expected an integer")) };
    let (neg, s) = match n.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, n.as_str()),
    };
    let v = if let Some(h) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        i128::from_str_radix(h, 16)
    } else if s.len() > 1 && s.starts_with('0') {
        i128::from_str_radix(&s[1..], 8)
    } else {
        s.parse::<i128>()
    }
    .map_err(|_| err(f, format!("'{n}' is not an integer")))?;
    Ok(if neg { -v } else { v })
}

fn ranged<T: TryFrom<i128>>(f: &Field) -> Result<T, Status> {
    let v = int(f)?;
    T::try_from(v).map_err(|_| err(f, format!("{v} is out of range for {}", std::any::type_name::<T>())))
}

fn float(f: &Field) -> Result<f64, Status> {
    let s = match &f.val {
        Val::Scalar(Scalar::Num(n)) | Val::Scalar(Scalar::Ident(n)) => n.as_str(),
        _ => return Err(err(f, "expected a number")),
    };
    let (neg, body) = match s.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, s),
    };
    let lower = body.to_ascii_lowercase();
    let v = match lower.as_str() {
        "inf" | "infinity" | "inff" | "infinityf" => f64::INFINITY,
        "nan" | "nanf" => f64::NAN,
        _ => {
            let t = lower.trim_end_matches('f');
            match t.parse::<f64>() {
                Ok(v) => v,
                Err(_) => int(f).map(|i| i as f64).map_err(|_| err(f, format!("'{s}' is not a number")))?,
            }
        }
    };
    Ok(if neg { -v } else { v })
}

fn boolean(f: &Field) -> Result<bool, Status> {
    match &f.val {
        Val::Scalar(Scalar::Ident(s)) => match s.as_str() {
            "true" | "True" | "t" => Ok(true),
            "false" | "False" | "f" => Ok(false),
            _ => Err(err(f, format!("'{s}' is not a bool"))),
        },
        Val::Scalar(Scalar::Num(n)) if n == "0" || n == "1" => Ok(n == "1"),
        _ => Err(err(f, "expected true or false")),
    }
}

fn dtype(f: &Field) -> Result<i32, Status> {
    match &f.val {
        Val::Scalar(Scalar::Ident(s)) => ferroflow_core::proto::DataType::from_str_name(s)
            .map(|d| d as i32)
            .ok_or_else(|| err(f, format!("unknown DataType '{s}'"))),
        Val::Scalar(Scalar::Num(_)) => ranged::<i32>(f),
        _ => Err(err(f, "expected a DataType name such as DT_FLOAT")),
    }
}

/// The message of type `T` that `fields` spell: each field, in order, goes to `set` with
/// the message so far (starting from the default one); `set` decides what an unknown
/// field does.
fn message<T: Default>(
    fields: &[Field],
    mut set: impl FnMut(&mut T, &Field) -> Result<(), Status>,
) -> Result<T, Status> {
    let mut m = T::default();
    for f in fields {
        set(&mut m, f)?;
    }
    Ok(m)
}

/// Parsers of the messages whose known fields each set a part of the message:
/// `fn name -> T { |m, f| "field" => statement, … }` reads `fields` in order into a default
/// `T` (`m` the message so far, `f` the field), skipping the fields it does not name.
macro_rules! message_parsers {
    ($($(#[$doc:meta])* $vis:vis fn $name:ident -> $T:ty {
        |$m:ident, $f:ident| $($(#[$arm:meta])* $field:literal => $set:expr,)*
    })*) => {$(
        $(#[$doc])*
        $vis fn $name(fields: &[Field]) -> Result<$T, Status> {
            message(fields, |$m: &mut $T, $f| {
                match $f.name.as_str() {
                    $($(#[$arm])* $field => $set,)*
                    _ => {}
                }
                Ok(())
            })
        }
    )*};
}

message_parsers! {
    fn shape -> TensorShapeProto { |s, f|
        "dim" => s.dim.push(dim(msg(f)?)?),
        "unknown_rank" => s.unknown_rank = boolean(f)?,
    }

    fn dim -> Dim { |d, g|
        "size" => d.size = ranged(g)?,
        "name" => d.name = string(g)?,
    }

    fn resource -> ResourceHandleProto { |r, f|
        "device" => r.device = string(f)?,
        "container" => r.container = string(f)?,
        "name" => r.name = string(f)?,
        "hash_code" => r.hash_code = ranged(f)?,
        "maybe_type_name" => r.maybe_type_name = string(f)?,
        "dtypes_and_shapes" => r.dtypes_and_shapes.push(dtype_and_shape(msg(f)?)?),
    }

    fn dtype_and_shape -> DtypeAndShape { |ds, g|
        "dtype" => ds.dtype = dtype(g)?,
        "shape" => ds.shape = Some(shape(msg(g)?)?),
    }

    fn tensor -> TensorProto { |t, f|
        "dtype" => t.dtype = dtype(f)?,
        "tensor_shape" => t.tensor_shape = Some(shape(msg(f)?)?),
        "version_number" => t.version_number = ranged(f)?,
        "tensor_content" => t.tensor_content = Bytes::from(bytes(f)?),
        "float_val" => t.float_val.push(float(f)? as f32),
        "double_val" => t.double_val.push(float(f)?),
        "int_val" => t.int_val.push(ranged(f)?),
        "string_val" => t.string_val.push(bytes(f)?),
        "scomplex_val" => t.scomplex_val.push(float(f)? as f32),
        "int64_val" => t.int64_val.push(ranged(f)?),
        "bool_val" => t.bool_val.push(boolean(f)?),
        "dcomplex_val" => t.dcomplex_val.push(float(f)?),
        "half_val" => t.half_val.push(ranged(f)?),
        "resource_handle_val" => t.resource_handle_val.push(resource(msg(f)?)?),
        "uint32_val" => t.uint32_val.push(ranged(f)?),
        "uint64_val" => t.uint64_val.push(ranged(f)?),
        "float8_val" => t.float8_val = bytes(f)?,
    }

    fn list -> ListValue { |l, f|
        "s" => l.s.push(bytes(f)?),
        "i" => l.i.push(ranged(f)?),
        "f" => l.f.push(float(f)? as f32),
        "b" => l.b.push(boolean(f)?),
        "type" => l.r#type.push(dtype(f)?),
        "shape" => l.shape.push(shape(msg(f)?)?),
        "tensor" => l.tensor.push(tensor(msg(f)?)?),
        "func" => l.func.push(func(msg(f)?)?),
    }

    fn func -> NameAttrList { |n, f|
        "name" => n.name = string(f)?,
        "attr" => attr_map(f, &mut n.attr)?,
    }

    /// Parses a NodeDef's fields.
    pub fn node -> NodeDef { |n, f|
        "name" => n.name = string(f)?,
        "op" => n.op = string(f)?,
        "input" => n.input.push(string(f)?),
        "device" => n.device = string(f)?,
        "attr" => attr_map(f, &mut n.attr)?,
    }

    fn library -> FunctionDefLibrary { |lib, f|
        "function" => lib.function.push(function(msg(f)?)?),
        "gradient" => lib.gradient.push(gradient(msg(f)?)?),
    }

    fn function -> FunctionDef { |fd, g|
        "signature" => fd.signature = Some(signature_name(msg(g)?)?),
        "node_def" => fd.node_def.push(node(msg(g)?)?),
        "ret" => {
            let (k, v) = map_entry(g, string)?;
            fd.ret.insert(k, v.unwrap_or_default());
        },
    }

    fn gradient -> GradientDef { |gd, g|
        "function_name" => gd.function_name = string(g)?,
        "gradient_func" => gd.gradient_func = string(g)?,
    }

    fn versions -> VersionDef { |v, h|
        "producer" => v.producer = ranged(h)?,
        "min_consumer" => v.min_consumer = ranged(h)?,
        "bad_consumers" => v.bad_consumers.push(ranged(h)?),
    }

    /// Parses a GraphDef's fields.
    pub fn graph_def -> GraphDef { |g, f|
        "node" => g.node.push(node(msg(f)?)?),
        "library" => g.library = Some(library(msg(f)?)?),
        #[allow(deprecated)]
        "version" => g.version = ranged(f)?,
        "versions" => g.versions = Some(versions(msg(f)?)?),
    }
}

/// The key and value of a map entry (`value` parses the value field).
fn map_entry<V>(f: &Field, value: impl Fn(&Field) -> Result<V, Status>) -> Result<(String, Option<V>), Status> {
    message(msg(f)?, |(key, val): &mut (String, Option<V>), g| {
        match g.name.as_str() {
            "key" => *key = string(g)?,
            "value" => *val = Some(value(g)?),
            _ => {}
        }
        Ok(())
    })
}

fn attr_map(f: &Field, m: &mut HashMap<String, AttrValue>) -> Result<(), Status> {
    let (k, v) = map_entry(f, |g| attr_value(msg(g)?))?;
    m.insert(k, v.unwrap_or_default());
    Ok(())
}

fn attr_value(fields: &[Field]) -> Result<AttrValue, Status> {
    message(fields, |v: &mut AttrValue, f| {
        v.value = Some(match f.name.as_str() {
            "list" => AV::List(Box::new(list(msg(f)?)?)),
            "s" => AV::S(bytes(f)?),
            "i" => AV::I(ranged(f)?),
            "f" => AV::F(float(f)? as f32),
            "b" => AV::B(boolean(f)?),
            "type" => AV::Type(dtype(f)?),
            "shape" => AV::Shape(shape(msg(f)?)?),
            "tensor" => AV::Tensor(Box::new(tensor(msg(f)?)?)),
            "func" => AV::Func(Box::new(func(msg(f)?)?)),
            "placeholder" => AV::Placeholder(string(f)?),
            _ => return Ok(()),
        });
        Ok(())
    })
}

/// A FunctionDef's signature: only its name is read.
fn signature_name(fields: &[Field]) -> Result<OpDef, Status> {
    message(fields, |sig: &mut OpDef, h| {
        if h.name == "name" {
            sig.name = string(h)?;
        }
        Ok(())
    })
}

/// A `tensorflow.CheckpointState` (the `checkpoint` file of a checkpoint directory). Unlike
/// the graph messages, an unknown field is an error: the file has nothing else in it.
pub fn checkpoint_state(fields: &[Field]) -> Result<CheckpointState, Status> {
    message(fields, |s: &mut CheckpointState, f| {
        match f.name.as_str() {
            "model_checkpoint_path" => s.model_checkpoint_path = string(f)?,
            "all_model_checkpoint_paths" => s.all_model_checkpoint_paths.push(string(f)?),
            "all_model_checkpoint_timestamps" => s.all_model_checkpoint_timestamps.push(float(f)?),
            "last_preserved_timestamp" => s.last_preserved_timestamp = float(f)?,
            _ => return Err(err(f, "unknown field in CheckpointState")),
        }
        Ok(())
    })
}
