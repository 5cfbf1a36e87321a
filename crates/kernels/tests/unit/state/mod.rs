use std::sync::Arc;

use ferroflow_core::proto::AttrValue;
use ferroflow_core::Status;
use ferroflow_kernels::testutil::{node, run_kernel_values};
use ferroflow_kernels::{ResourceMgr, Value};

mod lock;
mod par;
mod sparse;
mod training;
mod update;
mod variables;

/// Runs `op` (with `attrs`) on `inputs` (tensors or refs) over the resource manager `rm`.
fn run<I: Into<Value>>(
    rm: &Arc<ResourceMgr>,
    op: &str,
    attrs: &[(&str, AttrValue)],
    inputs: Vec<I>,
    outs: usize,
) -> Result<Vec<Value>, Status> {
    run_kernel_values(node(op, attrs), inputs.into_iter().map(Into::into).collect(), outs, rm.clone())
}
