//! The builder API: [`Scope`] (name, device, control-dependency and colocation scopes),
//! [`OpBuilder`], and the [`Output`] / [`Operation`] handles ops return.
//!
//! Like TensorFlow's C++ API, construction errors are recorded in the graph (the first one
//! wins) and reported by [`Scope::status`], `Session::run` and `to_graph_def` callers, so op
//! functions return handles directly.

use std::collections::HashMap;
use std::sync::Arc;

use ferroflow_core::proto::{AttrValue, NodeDef};
use ferroflow_core::{attr, DataType, Status};

use crate::graph::Graph;
use crate::op_def::ArgType;
use crate::shape_fn::Dims;
use crate::signature::lookup_op;

/// One output of an operation: `node:index`, with its dtype.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Output {
    /// Producing node's name.
    pub node: String,
    /// Output index.
    pub index: usize,
    /// Element type.
    pub dtype: DataType,
}

impl Output {
    /// TensorFlow's tensor name, `node:index`.
    pub fn name(&self) -> String {
        format!("{}:{}", self.node, self.index)
    }

    /// The NodeDef input string: `node` for index 0, else `node:index`.
    pub fn input_string(&self) -> String {
        if self.index == 0 {
            self.node.clone()
        } else {
            self.name()
        }
    }

    /// The producing operation's name (for targets and control dependencies).
    pub fn op_name(&self) -> &str {
        &self.node
    }
}

impl std::fmt::Display for Output {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.node, self.index)
    }
}

/// A node in the graph.
#[derive(Clone, Debug, PartialEq)]
pub struct Operation {
    /// Node name.
    pub name: String,
    /// Op type.
    pub op_type: String,
    /// Output types.
    pub output_types: Vec<DataType>,
}

impl Operation {
    /// Output `i`. For an op whose construction failed (the error is in the graph's
    /// status) this returns a handle that later ops will reject.
    pub fn output(&self, i: usize) -> Output {
        Output {
            node: self.name.clone(),
            index: i,
            dtype: self.output_types.get(i).copied().unwrap_or(DataType::Float),
        }
    }

    /// Outputs `0..N` (an op with `N` outputs returns them this way).
    pub fn first_outputs<const N: usize>(&self) -> [Output; N] {
        std::array::from_fn(|i| self.output(i))
    }

    /// All outputs.
    pub fn outputs(&self) -> Vec<Output> {
        (0..self.output_types.len()).map(|i| self.output(i)).collect()
    }

    fn failed(op_type: &str) -> Operation {
        Operation { name: format!("<failed {op_type}>"), op_type: op_type.to_string(), output_types: vec![] }
    }
}

/// Something usable as a control dependency or target: an operation or an output's op.
pub trait AsOpName {
    /// The node name.
    fn op_name_str(&self) -> &str;
}
impl AsOpName for Operation {
    fn op_name_str(&self) -> &str {
        &self.name
    }
}
impl AsOpName for Output {
    fn op_name_str(&self) -> &str {
        &self.node
    }
}
impl AsOpName for str {
    fn op_name_str(&self) -> &str {
        self
    }
}
impl AsOpName for String {
    fn op_name_str(&self) -> &str {
        self
    }
}

/// Chooses a device for a new node from its op type and its requested device (used by
/// `replica_device_setter`).
pub type DeviceFn = Arc<dyn Fn(&NodeDef) -> String + Send + Sync>;

/// Where new ops go: graph, name prefix, device, control dependencies, colocation.
///
/// ```
/// use ferroflow_graph::{Scope, ops};
/// let root = Scope::new_root();
/// let ps = root.with_device("/job:ps/task:0");
/// let a = ops::constant(&ps, 3.0f32);
/// let b = ops::constant(&root.sub("layer"), 4.0f32);
/// let c = ops::identity(&root, a);
/// let _ = b;
/// assert!(root.status().is_ok());
/// assert_eq!(c.dtype, ferroflow_core::DataType::Float);
/// ```
#[derive(Clone)]
pub struct Scope {
    graph: Graph,
    prefix: String,
    device: String,
    control: Vec<String>,
    colocate: Option<String>,
    device_fn: Option<DeviceFn>,
}

impl Scope {
    /// A root scope over a new graph.
    pub fn new_root() -> Scope {
        Scope::for_graph(Graph::new())
    }

    /// A root scope over an existing graph.
    pub fn for_graph(graph: Graph) -> Scope {
        Scope { graph, prefix: String::new(), device: String::new(), control: vec![], colocate: None, device_fn: None }
    }

    /// The graph.
    pub fn graph(&self) -> &Graph {
        &self.graph
    }

    /// The first construction error in the graph, if any.
    pub fn status(&self) -> Result<(), Status> {
        self.graph.status()
    }

    /// The current name prefix (`a/b`), empty at the root.
    pub fn prefix(&self) -> &str {
        &self.prefix
    }

    /// The current device string.
    pub fn device(&self) -> &str {
        &self.device
    }

    fn full(&self, name: &str) -> String {
        if self.prefix.is_empty() {
            name.to_string()
        } else {
            format!("{}/{name}", self.prefix)
        }
    }

    /// A child name scope, uniquified like `tf.name_scope` (`layer`, `layer_1`, …).
    pub fn sub(&self, name: &str) -> Scope {
        let mut s = self.clone();
        s.prefix = self.graph.unique_name(&self.full(name));
        s
    }

    /// A child name scope used exactly as given (no uniquifying), like TensorFlow's
    /// `name_scope("a/b/")` with a trailing slash: ops under it are still uniquified.
    pub fn sub_exact(&self, name: &str) -> Scope {
        let mut s = self.clone();
        s.prefix = self.full(name);
        s
    }

    /// The root scope of this scope's graph (no name, device or dependencies).
    pub fn root(&self) -> Scope {
        Scope::for_graph(self.graph.clone())
    }

    /// A scope whose ops get exactly this device string (like `tf.device`); an empty string
    /// clears it. Invalid names are reported when an op is built.
    pub fn with_device(&self, device: &str) -> Scope {
        let mut s = self.clone();
        s.device = device.to_string();
        s
    }

    /// A scope whose ops get their device from `f` (e.g. `replica_device_setter`).
    pub fn with_device_fn(&self, f: DeviceFn) -> Scope {
        let mut s = self.clone();
        s.device_fn = Some(f);
        s
    }

    /// A scope whose ops run after `deps`.
    pub fn with_control_deps<T: AsOpName + ?Sized>(&self, deps: &[&T]) -> Scope {
        let mut s = self.clone();
        for d in deps {
            let n = d.op_name_str().to_string();
            if !s.control.contains(&n) {
                s.control.push(n);
            }
        }
        s
    }

    /// A scope with no control dependencies.
    pub fn without_control_deps(&self) -> Scope {
        let mut s = self.clone();
        s.control.clear();
        s
    }

    /// A scope whose ops are colocated with `op` (`_class: ["loc:@op"]`).
    pub fn colocate_with<T: AsOpName + ?Sized>(&self, op: &T) -> Scope {
        let mut s = self.clone();
        s.colocate = Some(op.op_name_str().to_string());
        s
    }

    /// Starts building an op of type `op_type`; its default name is the op type.
    pub fn op(&self, op_type: &str) -> OpBuilder {
        OpBuilder {
            scope: self.clone(),
            op_type: op_type.to_string(),
            name: None,
            inputs: vec![],
            attrs: HashMap::new(),
            control: vec![],
        }
    }
}

enum InputSpec {
    One(Output),
    List(Vec<Output>),
}

/// Builds one node: inputs, attrs (type attrs are inferred from inputs), name.
pub struct OpBuilder {
    scope: Scope,
    op_type: String,
    name: Option<String>,
    inputs: Vec<InputSpec>,
    attrs: HashMap<String, AttrValue>,
    control: Vec<String>,
}

impl OpBuilder {
    /// Sets the node name (relative to the scope; uniquified).
    pub fn name(mut self, name: &str) -> Self {
        self.name = Some(name.to_string());
        self
    }
    /// Adds a single-tensor input argument.
    pub fn input(mut self, o: Output) -> Self {
        self.inputs.push(InputSpec::One(o));
        self
    }
    /// Adds one single-tensor input argument per output, in order.
    pub fn inputs(self, os: impl IntoIterator<Item = Output>) -> Self {
        os.into_iter().fold(self, OpBuilder::input)
    }
    /// Adds a list input argument (`N * T` or a type list).
    pub fn input_list(mut self, os: Vec<Output>) -> Self {
        self.inputs.push(InputSpec::List(os));
        self
    }
    /// Sets an attr.
    pub fn attr(mut self, name: &str, v: AttrValue) -> Self {
        self.attrs.insert(name.to_string(), v);
        self
    }
    /// Adds a control input.
    pub fn control_input<T: AsOpName + ?Sized>(mut self, op: &T) -> Self {
        self.control.push(op.op_name_str().to_string());
        self
    }

    /// Adds the node to the graph. On error the error is recorded in the graph and a failed
    /// operation is returned.
    pub fn build(self) -> Operation {
        let graph = self.scope.graph.clone();
        let op_type = self.op_type.clone();
        match self.try_build() {
            Ok(op) => op,
            Err(e) => {
                graph.record_error(e);
                Operation::failed(&op_type)
            }
        }
    }

    /// Like [`OpBuilder::build`] but returns the error.
    pub fn try_build(self) -> Result<Operation, Status> {
        let s = &self.scope;
        s.graph.status()?;
        let def = lookup_op(&NodeDef { op: self.op_type.clone(), ..Default::default() })?;
        let base = s.full(self.name.as_deref().unwrap_or(&self.op_type));
        let name = s.graph.unique_name(&base);
        let mut node = NodeDef { name: name.clone(), op: self.op_type.clone(), ..Default::default() };
        node.attr = self.attrs;
        if self.inputs.len() != def.inputs.len() {
            return Err(
                def.err(&name, format!("expected {} input arguments, got {}", def.inputs.len(), self.inputs.len()))
            );
        }
        for (spec, arg) in self.inputs.iter().zip(&def.inputs) {
            let outs: Vec<&Output> = match spec {
                InputSpec::One(o) => vec![o],
                InputSpec::List(v) => v.iter().collect(),
            };
            let set_type =
                |attrs: &mut HashMap<String, AttrValue>, attr_name: &str, t: DataType| -> Result<(), Status> {
                    match attrs.get(attr_name).and_then(|v| v.value.as_ref()) {
                        Some(ferroflow_core::proto::attr_value::Value::Type(x)) if *x != t.as_i32() => Err(def.err(
                            &name,
                            format!(
                                "input '{}' is {t} but attr {attr_name} is {}",
                                arg.name,
                                DataType::from_i32(*x).map(|d| d.name()).unwrap_or("?")
                            ),
                        )),
                        _ => {
                            attrs.insert(attr_name.to_string(), attr::ty(t));
                            Ok(())
                        }
                    }
                };
            match (&arg.ty, spec) {
                (ArgType::Attr(t), InputSpec::One(o)) => set_type(&mut node.attr, t, o.dtype)?,
                (ArgType::Fixed(_), InputSpec::One(_)) => {}
                (ArgType::Repeated { number_attr, elem }, InputSpec::List(v)) => {
                    node.attr.insert(number_attr.clone(), attr::int(v.len() as i64));
                    if let ArgType::Attr(t) = &**elem {
                        for o in v {
                            set_type(&mut node.attr, t, o.dtype)?;
                        }
                    }
                }
                (ArgType::List(t), InputSpec::List(v)) => {
                    node.attr.insert(t.clone(), attr::list_type(&v.iter().map(|o| o.dtype).collect::<Vec<_>>()));
                }
                _ => {
                    return Err(def
                        .err(&name, format!("input argument '{}' given as the wrong kind (single vs list)", arg.name)))
                }
            }
            node.input.extend(outs.iter().map(|o| o.input_string()));
        }
        let mut control = s.control.clone();
        control.extend(self.control);
        for c in control {
            let c = format!("^{c}");
            if !node.input.contains(&c) {
                node.input.push(c);
            }
        }
        if let Some(c) = &s.colocate {
            node.attr.insert("_class".into(), attr::list_string(&[format!("loc:@{c}")]));
            if s.device.is_empty() {
                if let Some(e) = s.graph.node(c) {
                    node.device = e.def.device.clone();
                }
            }
        }
        if !s.device.is_empty() {
            ferroflow_core::DeviceName::parse(&s.device).map_err(|e| e.context(format!("node '{name}'")))?;
            node.device = s.device.clone();
        }
        // Inside a colocation scope the device functions do not apply (as in TensorFlow,
        // which clears its device function stack in `colocate_with`).
        if let (Some(f), None) = (&s.device_fn, &s.colocate) {
            node.device = f(&node);
        }
        let entry = s.graph.add_node(node)?;
        Ok(Operation {
            name: entry.def.name.clone(),
            op_type: entry.def.op.clone(),
            output_types: entry.sig.outputs.iter().map(|o| o.0).collect(),
        })
    }
}

impl Graph {
    /// Inferred shape of an output (`None` = unknown rank).
    pub fn shape_of(&self, o: &Output) -> Dims {
        self.node(&o.node).and_then(|e| e.shapes.get(o.index).cloned().flatten())
    }

    /// The operation for a node name.
    pub fn operation(&self, name: &str) -> Option<Operation> {
        self.node(name).map(|e| Operation {
            name: e.def.name.clone(),
            op_type: e.def.op.clone(),
            output_types: e.sig.outputs.iter().map(|o| o.0).collect(),
        })
    }

    /// Parses `node:idx` to an [`Output`] of this graph.
    pub fn output_by_name(&self, name: &str) -> Result<Output, Status> {
        let (n, i) = crate::graph::parse_tensor_name(name)?;
        let dtype =
            self.output_type(n, i).ok_or_else(|| Status::not_found(format!("tensor '{name}' is not in the graph")))?;
        Ok(Output { node: n.to_string(), index: i, dtype })
    }
}
