//! Gradient functions by op type.

use std::collections::HashMap;
use std::sync::OnceLock;

use ferroflow_core::proto::NodeDef;
use ferroflow_core::Status;

use crate::scope::{Output, Scope};

/// The forward op a gradient function differentiates.
#[derive(Clone, Debug)]
pub struct GradOp {
    /// The forward node (with default attrs filled).
    pub node: NodeDef,
    /// Its data inputs.
    pub inputs: Vec<Output>,
    /// Its outputs.
    pub outputs: Vec<Output>,
}

/// What a gradient function returns: one gradient per input of the op (`None`: none flows).
pub type Grads = Result<Vec<Option<Output>>, Status>;

/// Given the forward op and the gradient of each of its outputs (zeros where an output
/// has no gradient), returns the gradient of each data input (`None` = no gradient).
pub type GradFn = fn(&Scope, &GradOp, &[Output]) -> Grads;

/// Op type → gradient function; `None` marks an op as not differentiable.
#[derive(Default)]
pub struct GradRegistry {
    fns: HashMap<&'static str, Option<GradFn>>,
}

impl GradRegistry {
    /// Registers a gradient function.
    pub fn add(&mut self, op: &'static str, f: GradFn) {
        if self.fns.insert(op, Some(f)).is_some() {
            panic!("gradient for {op} registered twice");
        }
    }

    /// Marks ops as not differentiable (gradients stop there, like `tf.no_gradient`).
    pub fn no_gradient(&mut self, ops: &[&'static str]) {
        for op in ops {
            if self.fns.insert(op, None).is_some() {
                panic!("gradient for {op} registered twice");
            }
        }
    }

    /// `Some(Some(f))` if differentiable, `Some(None)` if marked not differentiable,
    /// `None` if unknown.
    pub fn get(&self, op: &str) -> Option<Option<GradFn>> {
        self.fns.get(op).copied()
    }

    /// Ops with a registered gradient function, sorted.
    pub fn differentiable_ops(&self) -> Vec<&'static str> {
        let mut v: Vec<_> = self.fns.iter().filter(|(_, f)| f.is_some()).map(|(k, _)| *k).collect();
        v.sort();
        v
    }
}

fn build() -> GradRegistry {
    let mut r = GradRegistry::default();
    r.no_gradient(&[
        "Const",
        "Placeholder",
        "StopGradient",
        "NoOp",
        "_Send",
        "_Recv",
        "VarHandleOp",
        "VariableV2",
        "VarIsInitializedOp",
        "IsVariableInitialized",
    ]);
    r.add("Identity", |_, _, g| Ok(vec![Some(g[0].clone())]));
    r.add("PlaceholderWithDefault", |_, _, g| Ok(vec![Some(g[0].clone())]));
    r.add("IdentityN", |_, _, g| Ok(g.iter().cloned().map(Some).collect()));
    r.add("ReadVariableOp", |_, _, g| Ok(vec![Some(g[0].clone())]));
    // TensorFlow checks the gradient too, naming the forward check.
    r.add("CheckNumerics", |s, op, g| {
        use ferroflow_core::NodeAttrs;
        let m = op.node.attr_string("message")?;
        let msg = format!("Not a number (NaN) or infinity (Inf) values detected in gradient. {m}");
        let c = s.op("CheckNumerics").input(g[0].clone()).attr("message", ferroflow_core::attr::string(msg));
        Ok(vec![Some(c.try_build()?.output(0))])
    });
    super::table::register(&mut r);
    r
}

/// The global gradient registry.
pub fn grad_registry() -> &'static GradRegistry {
    static R: OnceLock<GradRegistry> = OnceLock::new();
    R.get_or_init(build)
}
