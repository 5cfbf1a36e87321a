//! Kernel registry: op name → factory that builds the kernel from its `NodeDef`.

use std::collections::HashMap;
use std::sync::OnceLock;

use ferroflow_core::proto::NodeDef;
use ferroflow_core::Status;

use crate::OpKernel;

/// Builds a kernel from a node whose attrs already include the op's defaults.
pub type KernelFactory = fn(&NodeDef) -> Result<Box<dyn OpKernel>, Status>;

/// Op name → kernel factory.
#[derive(Default)]
pub struct KernelRegistry {
    factories: HashMap<&'static str, KernelFactory>,
}

impl KernelRegistry {
    /// Registers a factory; registering an op twice is a bug in ferroflow.
    pub fn add(&mut self, op: &'static str, f: KernelFactory) {
        if self.factories.insert(op, f).is_some() {
            panic!("kernel for op {op} registered twice");
        }
    }

    /// The factory for an op.
    pub fn get(&self, op: &str) -> Option<KernelFactory> {
        self.factories.get(op).copied()
    }

    /// Registered op names, sorted.
    pub fn ops(&self) -> Vec<&'static str> {
        let mut v: Vec<_> = self.factories.keys().copied().collect();
        v.sort();
        v
    }
}

fn build() -> KernelRegistry {
    let mut r = KernelRegistry::default();
    crate::array::register(&mut r);
    crate::math::register(&mut r);
    crate::nn::register(&mut r);
    crate::random::register(&mut r);
    crate::state::register(&mut r);
    crate::io::register(&mut r);
    crate::data_flow::register(&mut r);
    crate::summary::register(&mut r);
    crate::string::register(&mut r);
    crate::decode::register(&mut r);
    r
}

/// The global registry.
pub fn registry() -> &'static KernelRegistry {
    static R: OnceLock<KernelRegistry> = OnceLock::new();
    R.get_or_init(build)
}

/// Whether a CPU kernel exists for `op`.
pub fn has_kernel(op: &str) -> bool {
    registry().get(op).is_some()
}

/// Creates the kernel for a node, or Unimplemented/NotFound naming the node and op.
pub fn create_kernel(node: &NodeDef) -> Result<Box<dyn OpKernel>, Status> {
    let f = registry().get(&node.op).ok_or_else(|| {
        Status::not_found(format!(
            "No CPU kernel registered for op '{}' (node '{}'); ferroflow does not implement this op yet",
            node.op, node.name
        ))
    })?;
    f(node).map_err(|e| {
        if e.message.contains(&node.name) {
            e
        } else {
            e.context(format!("node '{}' (op {})", node.name, node.op))
        }
    })
}
