//! Helpers to run one kernel outside an executor (for unit tests and benches).

use std::sync::Arc;

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{attr, Code, DataType, Status, Tensor};

use crate::{create_kernel, OpContext, RecvCallback, Rendezvous, ResourceMgr, StepCtx, Value};

/// A rendezvous that refuses everything (kernels under test do not send or receive).
pub struct NoRendezvous;

impl Rendezvous for NoRendezvous {
    fn send(&self, key: &str, _: Tensor, _: bool) -> Result<(), Status> {
        Err(Status::unimplemented(format!("no rendezvous in kernel tests (send {key})")))
    }
    fn recv_async(&self, key: &str, done: RecvCallback) {
        done(Err(Status::unimplemented(format!("no rendezvous in kernel tests (recv {key})"))))
    }
    fn abort(&self, _: Status) {}
}

/// A float32 tensor of `dims` with deterministic values in [-0.5, 0.5) from `seed` (for
/// tests and benches that need data, not particular numbers).
pub fn seeded_f32(dims: &[usize], seed: u64) -> Tensor {
    let n: usize = dims.iter().product();
    let mut s = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
    let v: Vec<f32> = (0..n)
        .map(|_| {
            s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            ((s >> 40) as f32 / (1u64 << 24) as f32) - 0.5
        })
        .collect();
    Tensor::new(dims.to_vec(), v).expect("dims match the values")
}

/// A step context with a fresh resource manager.
pub fn test_step(resources: Arc<ResourceMgr>) -> Arc<StepCtx> {
    Arc::new(StepCtx::new(1, Arc::new(NoRendezvous), resources, "/job:localhost/replica:0/task:0/device:CPU:0"))
}

/// Creates the node's kernel and runs it once on `inputs`. The node must carry every attr
/// (defaults are not filled here). `num_outputs` is the number of outputs to collect.
pub fn run_kernel_values(
    node: NodeDef,
    inputs: Vec<Value>,
    num_outputs: usize,
    resources: Arc<ResourceMgr>,
) -> Result<Vec<Value>, Status> {
    let k = create_kernel(&node)?;
    let mut ctx = OpContext::new(Arc::new(node), inputs, num_outputs, test_step(resources));
    k.compute(&mut ctx)?;
    ctx.take_outputs()
}

/// Like [`run_kernel_values`] for tensor inputs and outputs.
pub fn run_kernel(node: NodeDef, inputs: Vec<Tensor>, num_outputs: usize) -> Result<Vec<Tensor>, Status> {
    let out = run_kernel_values(
        node,
        inputs.into_iter().map(Value::Tensor).collect(),
        num_outputs,
        Arc::new(ResourceMgr::new()),
    )?;
    out.into_iter().map(|v| v.tensor()).collect()
}

/// Asserts that `r` failed with `code` and a message containing `want`; returns the error.
pub fn expect_error<T: std::fmt::Debug>(r: Result<T, Status>, code: Code, want: &str) -> Status {
    let e = r.unwrap_err();
    assert_eq!(e.code, code, "{e}");
    assert!(e.message.contains(want), "{e} does not say {want}");
    e
}

/// [`expect_error`] for a kernel run by [`run_kernel`]: the message also names the node
/// (`node 'test'`).
pub fn expect_node_error<T: std::fmt::Debug>(r: Result<T, Status>, code: Code, want: &str) {
    let e = expect_error(r, code, want);
    assert!(e.message.contains("node 'test'"), "{e}");
}

/// A NodeDef with the given op and attrs, named `test`.
pub fn node(op: &str, attrs: &[(&str, ferroflow_core::proto::AttrValue)]) -> NodeDef {
    NodeDef {
        name: "test".into(),
        op: op.into(),
        attr: attrs.iter().map(|(k, v)| (k.to_string(), v.clone())).collect(),
        ..Default::default()
    }
}

/// A node of the seeded random op `op`: the type attrs `types` (name, dtype) and the
/// `seed`/`seed2` attrs.
pub fn seeded_node(op: &str, types: &[(&str, DataType)], seed: i64, seed2: i64) -> NodeDef {
    let mut attrs: Vec<_> = types.iter().map(|&(k, t)| (k, attr::ty(t))).collect();
    attrs.extend([("seed", attr::int(seed)), ("seed2", attr::int(seed2))]);
    node(op, &attrs)
}

/// A Conv2D-family node (`Conv2D`, `Conv2DBackpropInput`, `Conv2DBackpropFilter`) with
/// every attr TensorFlow writes: NHWC, no dilation, the given strides and padding.
pub fn conv_node(op: &str, dtype: DataType, strides: &[i64], padding: &str) -> NodeDef {
    node(
        op,
        &[
            ("T", attr::ty(dtype)),
            ("strides", attr::list_int(strides)),
            ("padding", attr::string(padding)),
            ("data_format", attr::string("NHWC")),
            ("dilations", attr::list_int(&[1, 1, 1, 1])),
            ("explicit_paddings", attr::list_int(&[])),
            ("use_cudnn_on_gpu", attr::bool(true)),
        ],
    )
}

/// A pooling-family node (`MaxPool`, `AvgPool`, their gradients) with square `k`x`k`
/// windows at stride `s`, NHWC.
pub fn pool_node(op: &str, dtype: DataType, k: i64, s: i64, padding: &str) -> NodeDef {
    node(
        op,
        &[
            ("T", attr::ty(dtype)),
            ("ksize", attr::list_int(&[1, k, k, 1])),
            ("strides", attr::list_int(&[1, s, s, 1])),
            ("padding", attr::string(padding)),
            ("data_format", attr::string("NHWC")),
            ("explicit_paddings", attr::list_int(&[])),
        ],
    )
}

/// A fresh, empty directory under the system temp dir for one test (unique per process
/// and call); the caller removes it when done.
pub fn temp_dir(tag: &str) -> std::path::PathBuf {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    let d = std::env::temp_dir().join(format!(
        "ferroflow-{tag}-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("create test temp dir");
    d
}

/// A fresh [`temp_dir`] and the paths of `files` in it as strings (checkpoint prefixes, say);
/// the caller removes the directory when done.
pub fn temp_paths<const N: usize>(tag: &str, files: [&str; N]) -> (std::path::PathBuf, [String; N]) {
    let dir = temp_dir(tag);
    let paths = files.map(|f| dir.join(f).display().to_string());
    (dir, paths)
}
