//! [`Variable`]: TensorFlow's `tf.Variable` for graphs. A resource variable is a
//! `VarHandleOp` named after the variable, an initializer `<name>/Assign`
//! (`AssignVariableOp` of the initial value), a read `<name>/Read/ReadVariableOp` and
//! `<name>/IsInitialized/VarIsInitializedOp`; a reference variable (`Variable::new_ref`) is
//! a `VariableV2` with `<name>/Assign` and `<name>/read` (`Identity`), exactly the nodes
//! TensorFlow 1.x creates. Variables are listed by node name in the graph collections
//! `variables` and (when trainable) `trainable_variables`; [`Variable::from_graph`] rebuilds
//! the handle from such a name, so optimizers and savers can find everything.
//!
//! ```
//! use ferroflow_graph::{ops, Scope, Variable, global_variables_initializer, trainable_variables};
//! let s = Scope::new_root();
//! let w = Variable::new(&s, "w", ops::constant(&s, vec![1.0f32, 2.0]));
//! assert_eq!(w.name(), "w");
//! assert_eq!(w.read().node, "w/Read/ReadVariableOp");
//! assert_eq!(w.shape(), Some(vec![2]));
//! let init = global_variables_initializer(&s);
//! assert_eq!(init.name, "init");
//! assert_eq!(trainable_variables(s.graph()).unwrap()[0].name(), "w");
//! ```

use ferroflow_core::{attr, DataType, NodeAttrs, Status};

use crate::graph::{parse_tensor_name, Graph};
use crate::ops::{constant_named, group_named, output_shapes_attr, OUTPUT_SHAPES_ATTR};
use crate::scope::{Operation, Output, Scope};
use crate::shape_fn::Dims;

/// Collection of all global variables (TensorFlow's `GraphKeys.GLOBAL_VARIABLES`).
pub const GLOBAL_VARIABLES: &str = "variables";
/// Collection of trainable variables (`GraphKeys.TRAINABLE_VARIABLES`).
pub const TRAINABLE_VARIABLES: &str = "trainable_variables";
/// Collection holding the global step (`GraphKeys.GLOBAL_STEP`).
pub const GLOBAL_STEP: &str = "global_step";

/// How to create a [`Variable`].
#[derive(Clone, Debug, PartialEq)]
pub struct VariableOptions {
    /// Also add to `trainable_variables` (default true).
    pub trainable: bool,
    /// Resource variable (`VarHandleOp`, default) or reference variable (`VariableV2`).
    pub use_resource: bool,
    /// Collections to add the variable to (default `["variables"]`).
    pub collections: Vec<String>,
    /// For one part of a partitioned variable: the full variable's name and the part's
    /// shape-and-slice (`"20 4 0,10:0,4"`), under which savers store it (see
    /// [`crate::PartitionedVariable`]). Default none.
    pub save_slice: Option<(String, String)>,
}

impl Default for VariableOptions {
    fn default() -> Self {
        VariableOptions {
            trainable: true,
            use_resource: true,
            collections: vec![GLOBAL_VARIABLES.to_string()],
            save_slice: None,
        }
    }
}

/// A variable in a graph: its handle, its read value and its initializer.
#[derive(Clone, Debug, PartialEq)]
pub struct Variable {
    name: String,
    handle: Output,
    value: Output,
    initializer: Operation,
    initial_value: Output,
    dtype: DataType,
    shape: Dims,
    trainable: bool,
    resource: bool,
    save_slice: Option<(String, String)>,
}

/// Attr on the variable node of one part of a partitioned variable: `<full name>` and the
/// part's shape-and-slice, separated by a tab (TensorFlow keeps this `SaveSliceInfo` in the
/// Python object; a graph carries it here).
pub const SAVE_SLICE_ATTR: &str = "_ferroflow_save_slice";

/// The name the builder will most likely give a node named `base`: the first of `base`,
/// `base_1`, … that no node has (a name scope may still hold it; that case is reported).
fn first_free(g: &Graph, base: &str) -> String {
    (0..)
        .map(|n| if n == 0 { base.to_string() } else { format!("{base}_{n}") })
        .find(|c| g.node(c).is_none())
        .unwrap_or_default()
}

fn relative<'a>(s: &Scope, full: &'a str) -> &'a str {
    if s.prefix().is_empty() {
        full
    } else {
        full.strip_prefix(s.prefix()).and_then(|r| r.strip_prefix('/')).unwrap_or(full)
    }
}

impl Variable {
    /// A trainable resource variable named `name` (uniquified in the scope) holding
    /// `initial_value` once its initializer has run.
    pub fn new(s: &Scope, name: &str, initial_value: Output) -> Variable {
        Variable::with_options(s, name, initial_value, &VariableOptions::default())
    }

    /// A trainable reference variable (`VariableV2`), TensorFlow 1.x's default.
    pub fn new_ref(s: &Scope, name: &str, initial_value: Output) -> Variable {
        let opts = VariableOptions { use_resource: false, ..Default::default() };
        Variable::with_options(s, name, initial_value, &opts)
    }

    /// A variable with explicit options. Construction errors are recorded in the graph.
    pub fn with_options(s: &Scope, name: &str, initial_value: Output, opts: &VariableOptions) -> Variable {
        // Variables ignore the caller's control dependencies, as `tf.init_scope` does.
        let s = s.without_control_deps();
        let dtype = initial_value.dtype;
        let shape = s.graph().shape_of(&initial_value);
        // Resource variables are shared by their full name: the node's name.
        let guess = if s.prefix().is_empty() { name.to_string() } else { format!("{}/{name}", s.prefix()) };
        let shared = if opts.use_resource { first_free(s.graph(), &guess) } else { String::new() };
        let mut b = s
            .op(if opts.use_resource { "VarHandleOp" } else { "VariableV2" })
            .name(name)
            .attr("dtype", attr::ty(dtype))
            .attr("shape", attr::shape(shape.as_deref()))
            .attr("shared_name", attr::string(&shared));
        if let Some((full, spec)) = &opts.save_slice {
            b = b.attr(SAVE_SLICE_ATTR, attr::string(format!("{full}\t{spec}")));
        }
        let handle_op = b.build();
        let full = handle_op.name.clone();
        if !shared.is_empty() && full != shared && s.status().is_ok() {
            s.graph().record_error(Status::invalid_argument(format!(
                "variable '{shared}' would be created as '{full}' because its name is already used (e.g. by a \
                 name scope); choose another variable name"
            )));
        }
        let handle = handle_op.output(0);
        let device = s.graph().node(&full).map(|e| e.def.device).unwrap_or_default();
        let vs = s.with_device(&device).colocate_with(&handle);
        let rel = relative(&s, &full).to_string();
        let (initializer, value) = if opts.use_resource {
            let init = vs
                .op("AssignVariableOp")
                .name(&format!("{rel}/Assign"))
                .input(handle.clone())
                .input(initial_value.clone())
                .build();
            vs.op("VarIsInitializedOp")
                .name(&format!("{rel}/IsInitialized/VarIsInitializedOp"))
                .input(handle.clone())
                .build();
            let read = vs
                .op("ReadVariableOp")
                .name(&format!("{rel}/Read/ReadVariableOp"))
                .input(handle.clone())
                .attr("dtype", attr::ty(dtype))
                .attr(OUTPUT_SHAPES_ATTR, output_shapes_attr(shape.as_deref()))
                .build();
            (init, read.output(0))
        } else {
            let init = vs
                .op("Assign")
                .name(&format!("{rel}/Assign"))
                .input(handle.clone())
                .input(initial_value.clone())
                .attr("validate_shape", attr::bool(true))
                .build();
            let read = vs.op("Identity").name(&format!("{rel}/read")).input(handle.clone()).build();
            (init, read.output(0))
        };
        for c in &opts.collections {
            s.graph().add_to_collection(c, &full);
        }
        if opts.trainable {
            s.graph().add_to_collection(TRAINABLE_VARIABLES, &full);
        }
        Variable {
            name: full,
            handle,
            value,
            initializer,
            initial_value,
            dtype,
            shape,
            trainable: opts.trainable,
            resource: opts.use_resource,
            save_slice: opts.save_slice.clone(),
        }
    }

    /// Rebuilds the variable whose handle node is `name` (a `VarHandleOp` or `VariableV2`
    /// created by [`Variable::with_options`] or imported from TensorFlow).
    pub fn from_graph(g: &Graph, name: &str) -> Result<Variable, Status> {
        let e = g.node(name).ok_or_else(|| Status::not_found(format!("variable '{name}' is not in the graph")))?;
        let resource = match e.def.op.as_str() {
            "VarHandleOp" => true,
            "VariableV2" => false,
            other => {
                return Err(Status::invalid_argument(format!(
                    "node '{name}' is a {other}, not a variable (VarHandleOp or VariableV2)"
                )))
            }
        };
        let dtype = e.def.attr_type("dtype")?;
        let shape = e.def.attr_shape("shape")?;
        let handle =
            Output { node: name.to_string(), index: 0, dtype: if resource { DataType::Resource } else { dtype } };
        let read_name = if resource { format!("{name}/Read/ReadVariableOp") } else { format!("{name}/read") };
        let value = g
            .output_by_name(&read_name)
            .map_err(|_| Status::not_found(format!("variable '{name}' has no read node '{read_name}' in the graph")))?;
        let init_name = format!("{name}/Assign");
        let initializer = g.operation(&init_name).ok_or_else(|| {
            Status::not_found(format!("variable '{name}' has no initializer '{init_name}' in the graph"))
        })?;
        let init_value_name = g
            .node(&init_name)
            .and_then(|n| n.def.input.get(1).cloned())
            .ok_or_else(|| Status::not_found(format!("initializer '{init_name}' has no value input")))?;
        let (n, i) = parse_tensor_name(&init_value_name)?;
        let initial_value = g.output_by_name(&format!("{n}:{i}"))?;
        let trainable = g.collection(TRAINABLE_VARIABLES).iter().any(|t| t == name);
        let save_slice = match e.def.attr.get(SAVE_SLICE_ATTR) {
            None => None,
            Some(_) => {
                let v = e.def.attr_string(SAVE_SLICE_ATTR)?;
                let (full, spec) = v.split_once('\t').ok_or_else(|| {
                    Status::invalid_argument(format!("variable '{name}': bad {SAVE_SLICE_ATTR} attr '{v}'"))
                })?;
                Some((full.to_string(), spec.to_string()))
            }
        };
        Ok(Variable {
            name: name.to_string(),
            handle,
            value,
            initializer,
            initial_value,
            dtype,
            shape,
            trainable,
            resource,
            save_slice,
        })
    }

    /// For a part of a partitioned variable: the full variable's name and this part's
    /// shape-and-slice, as savers store it.
    pub fn save_slice(&self) -> Option<(&str, &str)> {
        self.save_slice.as_ref().map(|(a, b)| (a.as_str(), b.as_str()))
    }

    /// The variable's node name (its handle's), e.g. `layer/w`.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The handle: a DT_RESOURCE output (resource variables) or the reference output.
    pub fn handle(&self) -> Output {
        self.handle.clone()
    }

    /// The value read by the variable's own read node; use it in the model so gradients
    /// and savers find it.
    pub fn read(&self) -> Output {
        self.value.clone()
    }

    /// Same as [`Variable::read`] (TensorFlow's `value()`).
    pub fn value(&self) -> Output {
        self.value.clone()
    }

    /// A new read of the variable in scope `s` (e.g. after a control dependency).
    pub fn read_value(&self, s: &Scope) -> Output {
        let vs = s.colocate_with(&self.handle);
        if self.resource {
            crate::ops::read_variable_op(&vs, self.handle.clone(), self.dtype)
        } else {
            crate::ops::identity(&vs, self.handle.clone())
        }
    }

    /// The initializer (`<name>/Assign`).
    pub fn initializer(&self) -> Operation {
        self.initializer.clone()
    }

    /// The initial value.
    pub fn initial_value(&self) -> Output {
        self.initial_value.clone()
    }

    /// Element type.
    pub fn dtype(&self) -> DataType {
        self.dtype
    }

    /// Declared shape (`None` = unknown rank, -1 = unknown dim).
    pub fn shape(&self) -> Dims {
        self.shape.clone()
    }

    /// Whether the variable is in `trainable_variables`.
    pub fn trainable(&self) -> bool {
        self.trainable
    }

    /// Resource (`VarHandleOp`) or reference (`VariableV2`) variable.
    pub fn is_resource(&self) -> bool {
        self.resource
    }

    /// A boolean scalar telling whether the variable holds a value.
    pub fn is_initialized(&self, s: &Scope) -> Output {
        let vs = s.colocate_with(&self.handle);
        if self.resource {
            crate::ops::var_is_initialized_op(&vs, self.handle.clone())
        } else {
            crate::ops::is_variable_initialized(&vs, self.handle.clone())
        }
    }

    fn check_dtype(&self, s: &Scope, value: &Output) {
        if value.dtype != self.dtype {
            s.graph().record_error(Status::invalid_argument(format!(
                "cannot update variable '{}' of type {} with a {} value ({})",
                self.name, self.dtype, value.dtype, value
            )));
        }
    }

    /// `var = value` (`AssignVariableOp`, or `Assign` whose output 0 is the reference).
    pub fn assign(&self, s: &Scope, value: Output) -> Operation {
        self.update(s, value, "AssignVariableOp", "Assign")
    }

    /// `var += value`.
    pub fn assign_add(&self, s: &Scope, value: Output) -> Operation {
        self.update(s, value, "AssignAddVariableOp", "AssignAdd")
    }

    /// `var -= value`.
    pub fn assign_sub(&self, s: &Scope, value: Output) -> Operation {
        self.update(s, value, "AssignSubVariableOp", "AssignSub")
    }

    /// An update colocated with the variable: `resource_op` on a resource variable, else
    /// `ref_op` on the reference.
    fn update(&self, s: &Scope, value: Output, resource_op: &str, ref_op: &str) -> Operation {
        self.check_dtype(s, &value);
        let op = if self.resource { resource_op } else { ref_op };
        s.colocate_with(&self.handle).op(op).input(self.handle.clone()).input(value).build()
    }
}

fn collection_vars(g: &Graph, key: &str) -> Result<Vec<Variable>, Status> {
    g.collection(key).iter().map(|n| Variable::from_graph(g, n)).collect()
}

/// The variables in `variables`.
pub fn global_variables(g: &Graph) -> Result<Vec<Variable>, Status> {
    collection_vars(g, GLOBAL_VARIABLES)
}

/// The variables in `trainable_variables`.
pub fn trainable_variables(g: &Graph) -> Result<Vec<Variable>, Status> {
    collection_vars(g, TRAINABLE_VARIABLES)
}

/// A `NoOp` named `init` running the initializers of `vars`.
pub fn variables_initializer(s: &Scope, vars: &[Variable]) -> Operation {
    let names: Vec<String> = vars.iter().map(|v| v.initializer.name.clone()).collect();
    let refs: Vec<&String> = names.iter().collect();
    group_named(&s.without_control_deps(), "init", &refs)
}

/// A `NoOp` named `init` running the initializer of every global variable
/// (`tf.compat.v1.global_variables_initializer()`).
pub fn global_variables_initializer(s: &Scope) -> Operation {
    match global_variables(s.graph()) {
        Ok(vars) => variables_initializer(s, &vars),
        Err(e) => {
            s.graph().record_error(e);
            group_named::<str>(s, "init", &[])
        }
    }
}

/// The global step variable, if the graph has one.
pub fn get_global_step(g: &Graph) -> Option<Variable> {
    g.collection(GLOBAL_STEP).first().and_then(|n| Variable::from_graph(g, n).ok())
}

/// The global step: an int64 scalar resource variable `global_step` (initial value 0,
/// not trainable, in `variables` and `global_step`), created on first call. Pass a root
/// scope: TensorFlow creates it outside any name scope.
pub fn get_or_create_global_step(s: &Scope) -> Variable {
    if let Some(v) = get_global_step(s.graph()) {
        return v;
    }
    let s = s.without_control_deps();
    let zero = constant_named(&s, "global_step/Initializer/zeros", 0i64);
    let opts = VariableOptions {
        trainable: false,
        use_resource: true,
        collections: vec![GLOBAL_VARIABLES.to_string(), GLOBAL_STEP.to_string()],
        save_slice: None,
    };
    Variable::with_options(&s, "global_step", zero, &opts)
}

#[cfg(test)]
mod tests;
