//! Structure-aware graphs: a small valid GraphDef placed on a ps and a worker (constants
//! of the common dtypes feeding MatMul, Fill, Reshape, Tile, OneHot, Range,
//! UnsortedSegmentSum, ...), nodes of any registered op built from its OpDef with generated
//! attrs and inputs, and mutations of a GraphDef (huge constants, wrong or missing attrs,
//! odd inputs and names, unknown ops and devices, duplicated nodes).

use ferroflow_core::proto::{AttrValue, GraphDef, NodeDef};
use ferroflow_core::{attr, DataType, Tensor};
use ferroflow_graph::{op_registry, ops, ArgType, AttrDef, Scope};

use super::values::{self, HUGE_DIMS};
use super::Rng;

/// A small valid graph: constants on `ps`, the rest on `worker` (full or partial device
/// names; empty for no placement). Feed `p:0` (float [2, 2]).
pub fn seed_graph(ps: &str, worker: &str) -> GraphDef {
    let root = Scope::new_root();
    let s = root.with_device(ps);
    let a = ops::constant(&s.sub_exact("a"), Tensor::new(vec![2, 2], vec![1.0f32, 2.0, 3.0, 4.0]).unwrap());
    let ids = ops::constant(&s.sub_exact("ids"), Tensor::vec(vec![0i32, 1]));
    let v = ops::variable_v2(&s.sub_exact("v"), DataType::Float, Some(&[2, 2]), "", "");
    ops::assign(&s.sub_exact("v_init"), v.clone(), a.clone(), true, false);
    ops::constant(&s.sub_exact("i64"), Tensor::vec(vec![3i64, 1]));
    ops::constant(&s.sub_exact("f64"), Tensor::scalar(0.5f64));
    ops::constant(&s.sub_exact("flag"), Tensor::vec(vec![true, false]));
    ops::constant(&s.sub_exact("str"), Tensor::vec(vec![b"a".to_vec(), b"bc".to_vec()]));
    let s = root.with_device(worker);
    let p = ops::placeholder(&s.sub_exact("p"), DataType::Float, Some(&[2, 2]));
    let mm = ops::mat_mul(&s.sub_exact("mm"), p, a.clone(), false, false);
    let add = ops::add(&s.sub_exact("add"), mm, a.clone());
    let dims = ops::constant(&s.sub_exact("dims"), Tensor::vec(vec![2i32, 2]));
    let one = ops::constant(&s.sub_exact("one"), Tensor::scalar(1.0f32));
    let zero = ops::constant(&s.sub_exact("zero"), Tensor::scalar(0.0f32));
    ops::fill(&s.sub_exact("fill"), dims.clone(), one.clone());
    let four = ops::constant(&s.sub_exact("four"), Tensor::vec(vec![4i32]));
    ops::reshape(&s.sub_exact("reshape"), add.clone(), four);
    let multiples = ops::constant(&s.sub_exact("multiples"), Tensor::vec(vec![2i32, 1]));
    ops::tile(&s.sub_exact("tile"), a.clone(), multiples);
    let nseg = ops::constant(&s.sub_exact("num_segments"), Tensor::scalar(2i32));
    ops::unsorted_segment_sum(&s.sub_exact("segsum"), a.clone(), ids.clone(), nseg);
    let depth = ops::constant(&s.sub_exact("depth"), Tensor::scalar(3i32));
    ops::one_hot(&s.sub_exact("one_hot"), ids.clone(), depth, one, zero, -1);
    let start = ops::constant(&s.sub_exact("start"), Tensor::scalar(0i32));
    let limit = ops::constant(&s.sub_exact("limit"), Tensor::scalar(5i32));
    let delta = ops::constant(&s.sub_exact("delta"), Tensor::scalar(1i32));
    ops::range(&s.sub_exact("range"), start, limit, delta);
    let axis = ops::constant(&s.sub_exact("axis"), Tensor::vec(vec![0i32]));
    ops::sum(&s.sub_exact("sum"), add.clone(), axis.clone(), false);
    ops::gather(&s.sub_exact("gather"), a.clone(), ids);
    ops::random_uniform(&s.sub_exact("random"), dims.clone(), DataType::Float, 1, 2);
    ops::broadcast_to(&s.sub_exact("broadcast"), add.clone(), dims);
    let perm = ops::constant(&s.sub_exact("perm"), Tensor::vec(vec![1i32, 0]));
    ops::transpose(&s.sub_exact("transpose"), add.clone(), perm);
    ops::identity(&s.sub_exact("read"), v);
    ops::cast(&s.sub_exact("cast"), add, DataType::Int32);
    short_names(root.graph().to_graph_def())
}

/// `g` with each node `scope/Op` renamed `scope` (the names above: `p`, `add`, ...).
fn short_names(mut g: GraphDef) -> GraphDef {
    let short = |name: &str| -> String { name.split('/').next().unwrap_or(name).to_string() };
    for n in &mut g.node {
        n.name = short(&n.name);
        for input in &mut n.input {
            let (ctrl, rest) = match input.strip_prefix('^') {
                Some(r) => ("^", r.to_string()),
                None => ("", input.clone()),
            };
            let (node, port) = match rest.rsplit_once(':') {
                Some((node, port)) => (node.to_string(), format!(":{port}")),
                None => (rest, String::new()),
            };
            *input = format!("{ctrl}{}{port}", short(&node));
        }
    }
    g
}

/// Ops whose kernels a fuzzed graph must not run in the test process: they end it or
/// write outside a file root on purpose.
const EXCLUDED: &[&str] = &["Abort"];

/// Every registered op that has a CPU kernel, in a fixed order.
pub fn op_names() -> Vec<String> {
    op_registry()
        .names()
        .into_iter()
        .filter(|n| ferroflow_kernels::has_kernel(n) && !EXCLUDED.contains(n))
        .map(str::to_string)
        .collect()
}

/// A node's first output as an input for generated nodes: its name, dtype (when known)
/// and whether it is a reference.
#[derive(Clone, Debug)]
pub struct Source {
    pub name: String,
    pub dtype: Option<DataType>,
    pub is_ref: bool,
}

/// The nodes of `g` with what their op's definition says of their first output.
pub fn typed_nodes(g: &GraphDef) -> Vec<Source> {
    g.node
        .iter()
        .map(|n| {
            let attr_type = |name: &str| match n.attr.get(name).and_then(|a| a.value.as_ref()) {
                Some(ferroflow_core::proto::attr_value::Value::Type(t)) => DataType::from_i32(*t).ok(),
                _ => None,
            };
            let out = op_registry().get(&n.op).and_then(|d| d.outputs.first().cloned());
            let (dtype, is_ref) = match out {
                Some(o) => (
                    match &o.ty {
                        ArgType::Fixed(d) => Some(*d),
                        ArgType::Attr(t) => attr_type(t),
                        _ => None,
                    },
                    o.is_ref,
                ),
                None => (attr_type("dtype").or_else(|| attr_type("T")), false),
            };
            Source { name: n.name.clone(), dtype, is_ref }
        })
        .collect()
}

/// A value for attr `a` (usually well-typed; sometimes anything at all).
fn attr_for(rng: &mut Rng, a: &AttrDef) -> AttrValue {
    if rng.one_in(25) {
        return values::attr_value(rng);
    }
    match a.ty.as_str() {
        "type" => {
            // Usually a dtype the generated constants have.
            let common: Vec<DataType> = (0..6).map(|_| values::common_dtype(rng)).collect();
            let allowed = a.allowed.clone().unwrap_or_default();
            let fits: Vec<DataType> = allowed.iter().copied().filter(|d| common.contains(d)).collect();
            if !fits.is_empty() && !rng.one_in(6) {
                attr::ty(*rng.pick(&fits))
            } else if !allowed.is_empty() && !rng.one_in(8) {
                attr::ty(*rng.pick(&allowed))
            } else {
                attr::ty(values::common_dtype(rng))
            }
        }
        "int" if rng.one_in(3) => attr::int(values::int(rng)),
        "int" => attr::int(rng.range(0, 3)),
        "float" => attr::float(*rng.pick(&[0.5, 1.0, 0.0, -1.0, f32::NAN, 1e38])),
        "bool" => attr::bool(rng.one_in(2)),
        "string" => attr::string(*rng.pick(&["", "SAME", "VALID", "NHWC", "x", "/tmp/../etc/passwd"])),
        "shape" => AttrValue { value: Some(ferroflow_core::proto::attr_value::Value::Shape(values::shape(rng))) },
        "tensor" => {
            AttrValue { value: Some(ferroflow_core::proto::attr_value::Value::Tensor(Box::new(values::tensor(rng)))) }
        }
        "list(type)" => {
            let n = rng.range(0, 3) as usize;
            attr::list_type(&(0..n).map(|_| values::common_dtype(rng)).collect::<Vec<_>>())
        }
        "list(int)" => {
            let n = rng.range(0, 5) as usize;
            attr::list_int(
                &(0..n).map(|_| if rng.one_in(3) { values::int(rng) } else { rng.range(1, 3) }).collect::<Vec<_>>(),
            )
        }
        _ => a.default.clone().unwrap_or_else(|| values::attr_value(rng)),
    }
}

/// A node of op `op` named `name`, with attrs from its OpDef and inputs from `nodes`
/// (of the right dtype when one is known).
pub fn synth_node(rng: &mut Rng, op: &str, name: String, nodes: &[Source]) -> NodeDef {
    let mut n = NodeDef { name, op: op.to_string(), ..Default::default() };
    let Some(def) = op_registry().get(op) else { return n };
    for a in &def.attrs {
        if a.default.is_some() && rng.one_in(3) {
            continue;
        }
        n.attr.insert(a.name.clone(), attr_for(rng, a));
    }
    let type_of = |n: &NodeDef, attr_name: &str| match n.attr.get(attr_name).and_then(|a| a.value.as_ref()) {
        Some(ferroflow_core::proto::attr_value::Value::Type(t)) => DataType::from_i32(*t).ok(),
        _ => None,
    };
    // An input of dtype `want` (a reference if `is_ref`): usually a node that fits.
    let input = |rng: &mut Rng, want: Option<DataType>, is_ref: bool| -> String {
        if nodes.is_empty() {
            return values::name(rng);
        }
        if rng.one_in(20) {
            let names: Vec<String> = nodes.iter().map(|n| n.name.clone()).collect();
            return values::tensor_name(rng, &names);
        }
        let fits = |s: &&Source| (want.is_none() || s.dtype == want) && s.is_ref == is_ref;
        let fitting: Vec<&Source> = nodes.iter().filter(fits).collect();
        let typed_alike: Vec<&Source> = nodes.iter().filter(|s| want.is_some() && s.dtype == want).collect();
        let pick = if !fitting.is_empty() && !rng.one_in(10) {
            rng.pick(&fitting)
        } else if !typed_alike.is_empty() && !rng.one_in(4) {
            rng.pick(&typed_alike)
        } else {
            &rng.pick(nodes)
        };
        format!("{}:0", pick.name)
    };
    for arg in &def.inputs {
        let r = arg.is_ref;
        match &arg.ty {
            ArgType::Fixed(d) => n.input.push(input(rng, Some(*d), r)),
            ArgType::Attr(t) => {
                let want = type_of(&n, t);
                n.input.push(input(rng, want, r));
            }
            ArgType::Repeated { number_attr, elem } => {
                let count = match n.attr.get(number_attr).and_then(|a| a.value.as_ref()) {
                    Some(ferroflow_core::proto::attr_value::Value::I(i)) => (*i).clamp(0, 4) as usize,
                    _ => rng.below(3),
                };
                let want = match elem.as_ref() {
                    ArgType::Fixed(d) => Some(*d),
                    ArgType::Attr(t) => type_of(&n, t),
                    _ => None,
                };
                for _ in 0..count {
                    n.input.push(input(rng, want, r));
                }
            }
            ArgType::List(_) => {
                for _ in 0..rng.below(3) {
                    n.input.push(input(rng, None, r));
                }
            }
        }
    }
    n
}

/// A tensor of integers for a shape, size or count input: huge, negative or ordinary.
fn huge_ints(rng: &mut Rng, like: &Tensor) -> Tensor {
    let n = like.num_elements().clamp(1, 4);
    let pick = |rng: &mut Rng| if rng.one_in(3) { rng.range(0, 4) } else { *rng.pick(HUGE_DIMS) };
    let vals: Vec<i64> = (0..n).map(|_| pick(rng)).collect();
    let shape: Vec<usize> = if like.rank() == 0 { vec![] } else { vec![n] };
    if like.dtype() == DataType::Int64 {
        Tensor::new(shape, vals).unwrap()
    } else {
        Tensor::new(shape, vals.iter().map(|&v| v.clamp(i32::MIN as i64, i32::MAX as i64) as i32).collect()).unwrap()
    }
}

/// Devices a node may ask for: the cluster's tasks, absent tasks and devices, garbage.
const DEVICES: &[&str] = &[
    "",
    "/job:ps/task:0",
    "/job:worker/task:0",
    "/job:worker/replica:0/task:0/device:CPU:0",
    "/job:ps/replica:0/task:0/device:CPU:7",
    "/job:worker/task:99",
    "/job:nope",
    "/device:GPU:0",
    "/job:ps/task:-1",
    "/job:ps/task:99999999999",
    "garbage!!",
    "/cpu:0",
];

/// One structure-aware change to `g`; `ops` are the op names to draw from.
pub fn mutate_graph(rng: &mut Rng, g: &mut GraphDef, ops: &[String]) {
    let names: Vec<String> = g.node.iter().map(|n| n.name.clone()).collect();
    if g.node.is_empty() {
        let op = rng.pick(ops).clone();
        let name = values::name(rng);
        g.node.push(synth_node(rng, &op, name, &[]));
        return;
    }
    let i = rng.below(g.node.len());
    match rng.below(16) {
        0..=2 => {
            // A constant's value: a huge count or shape, or a mutated tensor.
            let consts: Vec<usize> = (0..g.node.len()).filter(|&k| g.node[k].op == "Const").collect();
            let k = if consts.is_empty() { i } else { *rng.pick(&consts) };
            let n = &mut g.node[k];
            let old = n.attr.get("value").and_then(|v| match &v.value {
                Some(ferroflow_core::proto::attr_value::Value::Tensor(t)) => Tensor::from_proto(t).ok(),
                _ => None,
            });
            match old {
                Some(t) if matches!(t.dtype(), DataType::Int32 | DataType::Int64) && !rng.one_in(4) => {
                    n.attr.insert("value".into(), attr::tensor(&huge_ints(rng, &t)));
                }
                _ => {
                    let mut t = values::tensor(rng);
                    values::mutate_tensor(rng, &mut t);
                    n.attr.insert(
                        "value".into(),
                        AttrValue { value: Some(ferroflow_core::proto::attr_value::Value::Tensor(Box::new(t))) },
                    );
                }
            }
        }
        3 | 4 => {
            let n = &mut g.node[i];
            let keys: Vec<String> = n.attr.keys().cloned().collect();
            let key = if keys.is_empty() || rng.one_in(4) {
                rng.pick(&["T", "dtype", "shape", "N", "value", "Tidx", "axis", "transpose_a", "_class"]).to_string()
            } else {
                rng.pick(&keys).clone()
            };
            n.attr.insert(key, values::attr_value(rng));
        }
        5 => {
            let n = &mut g.node[i];
            let keys: Vec<String> = n.attr.keys().cloned().collect();
            if !keys.is_empty() {
                n.attr.remove(rng.pick(&keys).as_str());
            }
        }
        6 => g.node[i].op = if rng.one_in(4) { values::name(rng) } else { rng.pick(ops).clone() },
        7 => {
            let t = values::tensor_name(rng, &names);
            let n = &mut g.node[i];
            if n.input.is_empty() || rng.one_in(2) {
                n.input.push(t);
            } else {
                let k = rng.below(n.input.len());
                n.input[k] = t;
            }
        }
        8 => {
            let n = &mut g.node[i];
            if !n.input.is_empty() {
                n.input.remove(rng.below(n.input.len()));
            }
        }
        9 => {
            let dup = g.node[i].clone();
            g.node.push(dup);
        }
        10 => g.node[i].name = values::name(rng),
        11 => g.node[i].device = rng.pick(DEVICES).to_string(),
        12 => {
            // A self loop or a cycle through an earlier node.
            let j = rng.below(g.node.len());
            let back = format!("{}:0", g.node[i].name);
            g.node[j].input.push(back);
        }
        13 => {
            g.node.remove(i);
        }
        _ => {
            let op = rng.pick(ops).clone();
            let typed = typed_nodes(g);
            let name = format!("fz{}_{}", g.node.len(), rng.below(1000));
            let mut n = synth_node(rng, &op, name, &typed);
            n.device = if rng.one_in(3) { rng.pick(DEVICES).to_string() } else { g.node[i].device.clone() };
            g.node.push(n);
        }
    }
}

/// `g` with one to four mutations.
pub fn mutated(rng: &mut Rng, g: &GraphDef, ops: &[String]) -> GraphDef {
    let mut g = g.clone();
    for _ in 0..1 + rng.below(4) {
        mutate_graph(rng, &mut g, ops);
    }
    g
}
