//! Kernel registry: op name → factory that builds the kernel from its `NodeDef`.

use std::collections::HashMap;
use std::sync::OnceLock;

use ferroflow_core::proto::NodeDef;
use ferroflow_core::Status;

use crate::{DoneCallback, OpContext, OpKernel};

/// Builds a kernel from a node whose attrs already include the op's defaults.
pub type KernelFactory = fn(&NodeDef) -> Result<Box<dyn OpKernel>, Status>;

/// Op name → kernel factory, and whether the op's kernels are cheap.
#[derive(Default)]
pub struct KernelRegistry {
    factories: HashMap<&'static str, (KernelFactory, bool)>,
}

impl KernelRegistry {
    /// Registers a factory; registering an op twice is a bug in ferroflow.
    pub fn add(&mut self, op: &'static str, f: KernelFactory) {
        self.insert(op, f, false);
    }

    /// Registers a factory whose kernels are cheap (bookkeeping: handles, shapes, plumbing,
    /// control flow): [`create_kernel`] makes them report [`OpKernel::is_expensive`] false,
    /// so the executor runs them inline instead of handing them to the compute pool.
    pub fn add_cheap(&mut self, op: &'static str, f: KernelFactory) {
        self.insert(op, f, true);
    }

    fn insert(&mut self, op: &'static str, f: KernelFactory, cheap: bool) {
        if self.factories.insert(op, (f, cheap)).is_some() {
            panic!("kernel for op {op} registered twice");
        }
    }

    /// The factory for an op.
    pub fn get(&self, op: &str) -> Option<KernelFactory> {
        self.factories.get(op).map(|&(f, _)| f)
    }

    /// Whether `op` was registered with [`KernelRegistry::add_cheap`].
    pub fn is_cheap(&self, op: &str) -> bool {
        self.factories.get(op).is_some_and(|&(_, cheap)| cheap)
    }

    /// Registered op names, sorted.
    pub fn ops(&self) -> Vec<&'static str> {
        let mut v: Vec<_> = self.factories.keys().copied().collect();
        v.sort();
        v
    }
}

/// Registers one op per variant of a kernel family's enum: op `Variant` + `suffix` is built
/// by `make(node, Enum::Variant)`; `"Alias" => Variant` registers another op name for a
/// variant. The op names are the variants' names, so each is written once.
///
/// ```ignore
/// by_variant! { r, ArithKernel::make, Arith "" [Add, Sub, Mul] "AddV2" => Add }
/// ```
macro_rules! by_variant {
    ($r:ident, $make:path, $e:ident $suffix:literal [$($v:ident),* $(,)?] $($alias:literal => $av:ident)*) => {{
        $($r.add(concat!(stringify!($v), $suffix), |n| $make(n, $e::$v));)*
        $($r.add($alias, |n| $make(n, $e::$av));)*
    }};
}
pub(crate) use by_variant;

fn build() -> KernelRegistry {
    let mut r = KernelRegistry::default();
    crate::array::register(&mut r);
    crate::math::register(&mut r);
    crate::linalg::register(&mut r);
    crate::nn::register(&mut r);
    crate::random::register(&mut r);
    crate::state::register(&mut r);
    crate::io::register(&mut r);
    crate::data_flow::register(&mut r);
    crate::summary::register(&mut r);
    crate::string::register(&mut r);
    crate::sparse::register(&mut r);
    crate::ragged::register(&mut r);
    crate::decode::register(&mut r);
    crate::decode_compressed::register(&mut r);
    crate::image::register(&mut r);
    crate::collective::register(&mut r);
    crate::complex::register(&mut r);
    crate::signal::register(&mut r);
    crate::ctc::register(&mut r);
    crate::fake_quant::register(&mut r);
    crate::audio::register(&mut r);
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
        .with_node(&node.name)
    })?;
    let k = f(node).map_err(|e| e.in_node(&node.name, &node.op))?;
    Ok(if registry().is_cheap(&node.op) { Box::new(Cheap(k)) } else { k })
}

/// A kernel of an op registered as cheap: the same kernel, run inline by the executor.
struct Cheap(Box<dyn OpKernel>);

impl OpKernel for Cheap {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        self.0.compute(ctx)
    }

    fn is_async(&self) -> bool {
        self.0.is_async()
    }

    fn compute_async(&self, ctx: OpContext, done: DoneCallback) {
        self.0.compute_async(ctx, done)
    }

    fn is_expensive(&self) -> bool {
        false
    }
}
