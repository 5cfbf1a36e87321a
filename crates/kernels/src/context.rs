//! What a kernel sees while it computes: its node, its inputs and outputs, and the step.

use std::sync::Arc;

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{Status, Tensor};

use crate::{CancelToken, Rendezvous, ResourceMgr, Var};

/// A value flowing along an edge: a tensor, or a reference to a ref-variable (`VariableV2`
/// outputs feed `Assign`, `ApplyGradientDescent`, …).
#[derive(Clone, Debug)]
pub enum Value {
    /// A tensor.
    Tensor(Tensor),
    /// A reference to a mutable variable.
    Ref(Arc<Var>),
}

impl From<Tensor> for Value {
    fn from(t: Tensor) -> Value {
        Value::Tensor(t)
    }
}

impl Value {
    /// The tensor, reading the variable if this is a reference.
    pub fn tensor(&self) -> Result<Tensor, Status> {
        match self {
            Value::Tensor(t) => Ok(t.clone()),
            Value::Ref(v) => v.read(),
        }
    }
}

/// Per-step state shared by every kernel of a step on one task.
pub struct StepCtx {
    /// The step id (shared by all partitions of a distributed step).
    pub step_id: i64,
    /// Tensors between partitions and to/from the client.
    pub rendezvous: Arc<dyn Rendezvous>,
    /// The task's resources (variables, queues, …).
    pub resources: Arc<ResourceMgr>,
    /// Resources that live for this step only (TensorFlow's step container: TensorArrays,
    /// stacks); dropped with the step. Function calls share their caller's.
    pub step_container: Arc<ResourceMgr>,
    /// Cancelled when the step fails or passes its deadline.
    pub cancel: CancelToken,
    /// Full name of the device the partition runs on.
    pub device: String,
    /// Deadline of the step, if any.
    pub deadline: Option<std::time::Instant>,
    /// The session the step belongs to (names resources private to a session, such as an
    /// unshared `tf.data` iterator); empty for steps outside any session.
    pub session: Arc<str>,
    /// Where the executor records what ran, when the step is traced.
    pub trace: Option<Arc<crate::StepTrace>>,
}

impl StepCtx {
    /// A step of `step_id` on `device`: a fresh step container, not cancelled, no deadline,
    /// outside any session, not traced (set those fields with `..StepCtx::new(...)`).
    pub fn new(step_id: i64, rendezvous: Arc<dyn Rendezvous>, resources: Arc<ResourceMgr>, device: &str) -> StepCtx {
        StepCtx {
            step_id,
            rendezvous,
            resources,
            step_container: Default::default(),
            cancel: CancelToken::default(),
            device: device.to_string(),
            deadline: None,
            session: "".into(),
            trace: None,
        }
    }
}

/// The inputs, outputs and step of one kernel invocation.
pub struct OpContext {
    node: Arc<NodeDef>,
    inputs: Vec<Value>,
    outputs: Vec<Option<Value>>,
    /// Outputs marked dead (TensorFlow 1.x control flow); empty while none is.
    dead: Vec<bool>,
    step: Arc<StepCtx>,
    /// The loop frame instance's id and the iteration the node runs in (`(0, 0)` outside
    /// loops): the last part of the rendezvous keys of `_Send`/`_Recv`.
    frame_iter: (u64, u64),
}

impl OpContext {
    /// Builds a context (used by the executor and by tests).
    pub fn new(node: Arc<NodeDef>, inputs: Vec<Value>, num_outputs: usize, step: Arc<StepCtx>) -> OpContext {
        OpContext { node, inputs, outputs: vec![None; num_outputs], dead: Vec::new(), step, frame_iter: (0, 0) }
    }

    /// The context of a node running in iteration `iter` of the loop frame instance `frame_id`.
    pub fn with_frame_iter(mut self, frame_id: u64, iter: u64) -> OpContext {
        self.frame_iter = (frame_id, iter);
        self
    }

    /// The loop frame instance id and iteration the node runs in (`(0, 0)` outside loops).
    pub fn frame_iter(&self) -> (u64, u64) {
        self.frame_iter
    }

    /// The node being computed.
    pub fn node(&self) -> &NodeDef {
        &self.node
    }

    /// The device the node runs on: its assigned device when that is another device of the
    /// step's task (`CPU:1` of a task with several CPU devices), else the step's device.
    /// Resource handles made here name it.
    pub fn device(&self) -> &str {
        let here = self.step.device.as_str();
        let nd = self.node.device.as_str();
        if nd.is_empty() || nd == here {
            return here;
        }
        match (here.find("/device:"), nd.find("/device:")) {
            (Some(a), Some(b)) if here[..a] == nd[..b] => nd,
            _ => here,
        }
    }

    /// Shared handle to the node.
    pub fn node_arc(&self) -> &Arc<NodeDef> {
        &self.node
    }

    /// Number of inputs.
    pub fn num_inputs(&self) -> usize {
        self.inputs.len()
    }

    /// Input `i` as a tensor (reading the variable for ref inputs).
    pub fn input(&self, i: usize) -> Result<Tensor, Status> {
        self.inputs
            .get(i)
            .ok_or_else(|| self.error(format!("has no input {i} ({} inputs)", self.inputs.len())))?
            .tensor()
            .map_err(|e| e.context(format!("node '{}'", self.node.name)).with_node(&self.node.name))
    }

    /// The first `N` inputs as tensors, in order (`let [x, y] = ctx.inputs()?;`).
    pub fn inputs<const N: usize>(&self) -> Result<[Tensor; N], Status> {
        let mut all = Vec::with_capacity(N);
        for i in 0..N {
            all.push(self.input(i)?);
        }
        all.try_into().map_err(|_| self.error(format!("has fewer than {N} inputs")))
    }

    /// Input `i`, which must have rank `rank`: else an InvalidArgument error of `what` followed
    /// by the input's shape (`what` is the message up to the shape, e.g. `"sep must be a scalar,
    /// got shape: "`).
    pub fn input_of_rank(&self, i: usize, rank: usize, what: &str) -> Result<Tensor, Status> {
        let t = self.input(i)?;
        if t.rank() != rank {
            return Err(self.error(format!("{what}{}", t.shape())));
        }
        Ok(t)
    }

    /// Takes input `i` out of the context, so its buffer can be reused when unshared.
    pub fn take_input(&mut self, i: usize) -> Result<Tensor, Status> {
        let n = self.inputs.len();
        let name = self.node.name.clone();
        let v = self
            .inputs
            .get_mut(i)
            .ok_or_else(|| Status::internal(format!("node '{name}' has no input {i} ({n})")).with_node(&name))?;
        match std::mem::replace(v, Value::Tensor(Tensor::scalar(0u8))) {
            Value::Tensor(t) => Ok(t),
            Value::Ref(var) => {
                let t = var.read().map_err(|e| e.context(format!("node '{name}'")).with_node(&name));
                *v = Value::Ref(var);
                t
            }
        }
    }

    /// Input `i` as a raw value.
    pub fn input_value(&self, i: usize) -> Result<&Value, Status> {
        self.inputs.get(i).ok_or_else(|| self.error(format!("has no input {i} ({} inputs)", self.inputs.len())))
    }

    /// Input `i` as a ref-variable (for `Assign`, `Apply*`).
    pub fn input_ref(&self, i: usize) -> Result<Arc<Var>, Status> {
        match self.input_value(i)? {
            Value::Ref(v) => Ok(v.clone()),
            Value::Tensor(_) => Err(self.error(format!("input {i} must be a reference to a variable"))),
        }
    }

    /// Sets output `i` to a tensor.
    pub fn set_output(&mut self, i: usize, t: Tensor) -> Result<(), Status> {
        self.set_output_value(i, Value::Tensor(t))
    }

    /// Sets output `i` to a value.
    pub fn set_output_value(&mut self, i: usize, v: Value) -> Result<(), Status> {
        let n = self.outputs.len();
        match self.outputs.get_mut(i) {
            Some(slot) => {
                *slot = Some(v);
                Ok(())
            }
            None => Err(Status::internal(format!("node '{}' has no output {i} ({n} outputs)", self.node.name))
                .with_node(&self.node.name)),
        }
    }

    /// Number of outputs.
    pub fn num_outputs(&self) -> usize {
        self.outputs.len()
    }

    /// Marks output `i` dead: it carries no value, and the executor propagates deadness
    /// along it (`Switch`'s untaken branch, a `_Recv` of a dead tensor).
    pub fn set_output_dead(&mut self, i: usize) -> Result<(), Status> {
        let n = self.outputs.len();
        if i >= n {
            return Err(Status::internal(format!("node '{}' has no output {i} ({n} outputs)", self.node.name))
                .with_node(&self.node.name));
        }
        if self.dead.is_empty() {
            self.dead = vec![false; n];
        }
        self.dead[i] = true;
        self.outputs[i] = None;
        Ok(())
    }

    /// Takes the outputs with dead ones as `None`; every other output must be set.
    pub fn take_output_entries(&mut self) -> Result<Vec<Option<Value>>, Status> {
        let name = self.node.name.clone();
        let dead = std::mem::take(&mut self.dead);
        std::mem::take(&mut self.outputs)
            .into_iter()
            .enumerate()
            .map(|(i, o)| match o {
                Some(v) => Ok(Some(v)),
                None if dead.get(i).copied().unwrap_or(false) => Ok(None),
                None => Err(Status::internal(format!("node '{name}' did not set output {i}")).with_node(&name)),
            })
            .collect()
    }

    /// Takes the outputs; every output must be set.
    pub fn take_outputs(&mut self) -> Result<Vec<Value>, Status> {
        let name = self.node.name.clone();
        std::mem::take(&mut self.outputs)
            .into_iter()
            .enumerate()
            .map(|(i, o)| {
                o.ok_or_else(|| Status::internal(format!("node '{name}' did not set output {i}")).with_node(&name))
            })
            .collect()
    }

    /// The step.
    pub fn step(&self) -> &Arc<StepCtx> {
        &self.step
    }

    /// The task's resource manager.
    pub fn resources(&self) -> &ResourceMgr {
        &self.step.resources
    }

    /// An InvalidArgument error naming this node and op.
    pub fn error(&self, msg: impl std::fmt::Display) -> Status {
        Status::invalid_argument(format!("node '{}' (op {}): {msg}", self.node.name, self.node.op))
            .with_node(&self.node.name)
    }

    /// `e` (its code and payloads kept) with this node and op named (unless it names this
    /// node already).
    pub fn error_with(&self, e: Status) -> Status {
        e.in_node(&self.node.name, &self.node.op)
    }
}
