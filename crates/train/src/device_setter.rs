//! `replica_device_setter`: TensorFlow 1.x's device function for between-graph replication.
//! Variables (and the other ps ops) go to the `ps` job, task chosen by a strategy
//! (round-robin like TensorFlow's default, or greedy by variable byte size); every other op
//! goes to the worker device. Devices the caller set explicitly win field by field, as in
//! TensorFlow's `merge_devices=True`.

use std::sync::{Arc, Mutex};

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{DeviceName, NodeAttrs, Status};
use ferroflow_graph::DeviceFn;

/// The op types TensorFlow places on parameter servers (`STANDARD_PS_OPS`).
pub const STANDARD_PS_OPS: &[&str] = &[
    "Variable",
    "VariableV2",
    "AutoReloadVariable",
    "MutableHashTable",
    "MutableHashTableV2",
    "MutableHashTableOfTensors",
    "MutableHashTableOfTensorsV2",
    "MutableDenseHashTable",
    "MutableDenseHashTableV2",
    "VarHandleOp",
    "BoostedTreesEnsembleResourceHandleOp",
    "BoostedTreesQuantileStreamResourceHandleOp",
    "ResourceConditionalAccumulator",
    "DecisionTree",
    "TreeEnsembleVariable",
];

/// How a ps task is chosen for each ps op.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum PsStrategy {
    /// TensorFlow's default: task 0, 1, …, n-1, 0, … in creation order.
    #[default]
    RoundRobin,
    /// The task with the fewest bytes of variables so far (TensorFlow's
    /// `GreedyLoadBalancingStrategy` with `byte_size_load_fn`).
    GreedyBySize,
}

/// Options of [`replica_device_setter`] (TensorFlow's argument names).
#[derive(Clone, Debug)]
pub struct ReplicaDeviceSetter {
    /// Number of ps tasks (0: everything goes to the worker device).
    pub ps_tasks: usize,
    /// The ps job's device prefix.
    pub ps_device: String,
    /// Where non-ps ops go, e.g. `/job:worker/task:0`.
    pub worker_device: String,
    /// Op types placed on the ps job.
    pub ps_ops: Vec<String>,
    /// Merge with the device the caller set (TensorFlow's default, `true`); `false` keeps
    /// an explicitly set device unchanged.
    pub merge_devices: bool,
    /// How ps tasks are chosen.
    pub strategy: PsStrategy,
}

impl Default for ReplicaDeviceSetter {
    fn default() -> Self {
        ReplicaDeviceSetter {
            ps_tasks: 0,
            ps_device: "/job:ps".into(),
            worker_device: "/job:worker".into(),
            ps_ops: STANDARD_PS_OPS.iter().map(|s| s.to_string()).collect(),
            merge_devices: true,
            strategy: PsStrategy::RoundRobin,
        }
    }
}

impl ReplicaDeviceSetter {
    /// Setter for `ps_tasks` ps tasks and the given worker device.
    pub fn new(ps_tasks: usize, worker_device: &str) -> ReplicaDeviceSetter {
        ReplicaDeviceSetter { ps_tasks, worker_device: worker_device.into(), ..Default::default() }
    }

    /// Takes the number of ps tasks from a cluster (its `ps` job, or the job `ps_device` names).
    pub fn for_cluster(cluster: &ferroflow_distributed::ClusterSpec, worker_device: &str) -> ReplicaDeviceSetter {
        let ps = ReplicaDeviceSetter::default();
        let job = DeviceName::parse(&ps.ps_device).ok().and_then(|d| d.job).unwrap_or_else(|| "ps".into());
        ReplicaDeviceSetter {
            ps_tasks: cluster.num_tasks(&job).unwrap_or(0),
            ..ReplicaDeviceSetter::new(0, worker_device)
        }
    }

    /// With a ps strategy.
    pub fn with_strategy(mut self, strategy: PsStrategy) -> ReplicaDeviceSetter {
        self.strategy = strategy;
        self
    }

    /// Checks the device strings and builds the device function for
    /// [`Scope::with_device_fn`](ferroflow_graph::Scope::with_device_fn).
    pub fn build(self) -> Result<DeviceFn, Status> {
        let ps_device = DeviceName::parse(&self.ps_device)?;
        let worker_device = DeviceName::parse(&self.worker_device)?;
        let chooser = Chooser { opts: self, ps_device, worker_device, state: Mutex::new(State::default()) };
        Ok(Arc::new(move |node: &NodeDef| chooser.device_for(node)))
    }
}

/// Builds the device function (TensorFlow's `tf.compat.v1.train.replica_device_setter`).
pub fn replica_device_setter(opts: ReplicaDeviceSetter) -> Result<DeviceFn, Status> {
    opts.build()
}

#[derive(Default)]
struct State {
    next: usize,
    loads: Vec<u64>,
}

struct Chooser {
    opts: ReplicaDeviceSetter,
    ps_device: DeviceName,
    worker_device: DeviceName,
    state: Mutex<State>,
}

impl Chooser {
    fn device_for(&self, node: &NodeDef) -> String {
        // An unparsable requested device is left as is: the graph reports it with the node.
        let Ok(current) = DeviceName::parse(&node.device) else { return node.device.clone() };
        if !self.opts.merge_devices && !node.device.is_empty() {
            return node.device.clone();
        }
        if self.opts.ps_tasks > 0 && self.opts.ps_ops.contains(&node.op) {
            let mut ps = self.ps_device.clone();
            let same_job = current.job.is_none() || current.job == ps.job;
            if ps.job.is_some() && same_job {
                ps.task = Some(self.choose_task(node) as i32);
            }
            return current.merged_with_defaults(&ps).to_string();
        }
        current.merged_with_defaults(&self.worker_device).to_string()
    }

    fn choose_task(&self, node: &NodeDef) -> usize {
        let n = self.opts.ps_tasks;
        let mut st = self.state.lock().unwrap_or_else(|p| p.into_inner());
        match self.opts.strategy {
            PsStrategy::RoundRobin => {
                let t = st.next % n;
                st.next = (st.next + 1) % n;
                t
            }
            PsStrategy::GreedyBySize => {
                st.loads.resize(n, 0);
                let t = (0..n).min_by_key(|&i| (st.loads[i], i)).unwrap_or(0);
                st.loads[t] += byte_size(node);
                t
            }
        }
    }
}

/// Bytes of the variable a ps op creates (0 when its shape is not fully known).
fn byte_size(node: &NodeDef) -> u64 {
    let dtype = node.attr_type("dtype").ok().and_then(|d| d.byte_size()).unwrap_or(0) as u64;
    match node.attr_shape("shape") {
        Ok(Some(dims)) if dims.iter().all(|&d| d >= 0) => dims.iter().map(|&d| d as u64).product::<u64>() * dtype,
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ferroflow_core::{DataType, Tensor};
    use ferroflow_graph::{ops, Scope, Variable};

    fn zeros(s: &Scope, dims: &[usize]) -> ferroflow_graph::Output {
        let n: usize = dims.iter().product();
        ops::constant(s, Tensor::new(dims.to_vec(), vec![0.0f32; n]).unwrap())
    }

    fn device(s: &Scope, name: &str) -> String {
        s.graph().node(name).unwrap().def.device.clone()
    }

    /// A root scope, and a scope of it whose ops `setter` places.
    fn placed_by(setter: ReplicaDeviceSetter) -> (Scope, Scope) {
        let root = Scope::new_root();
        let s = root.with_device_fn(setter.build().unwrap());
        (root, s)
    }

    /// Asserts the device of each named node of `root`'s graph.
    fn assert_devices(root: &Scope, want: &[(&str, &str)]) {
        for &(name, dev) in want {
            assert_eq!(device(root, name), dev, "node {name}");
        }
    }

    #[test]
    fn round_robin_puts_variables_on_ps_and_the_rest_on_the_worker() {
        let (root, s) = placed_by(ReplicaDeviceSetter::new(2, "/job:worker/task:1"));
        let a = Variable::new(&s, "a", zeros(&s, &[2]));
        let b = Variable::new(&s, "b", zeros(&s, &[2]));
        let c = Variable::new(&s, "c", zeros(&s, &[2]));
        let sum = ops::add(&s, a.value(), b.value());
        let _ = c;
        assert_devices(
            &root,
            &[
                ("a", "/job:ps/task:0"),
                ("b", "/job:ps/task:1"),
                ("c", "/job:ps/task:0"),
                (&sum.node, "/job:worker/task:1"),
            ],
        );
    }

    #[test]
    fn parts_of_a_partitioned_variable_go_to_different_ps_tasks() {
        let (root, s) = placed_by(ReplicaDeviceSetter::new(2, "/job:worker/task:0"));
        let opts = ferroflow_graph::VariableOptions::default();
        let emb =
            ferroflow_graph::PartitionedVariable::new(&s, "emb", &[10, 4], 0, 2, &opts, |s, d, _| zeros(s, d)).unwrap();
        let whole = emb.value(&s);
        assert_devices(
            &root,
            &[("emb/part_0", "/job:ps/task:0"), ("emb/part_1", "/job:ps/task:1"), (&whole.node, "/job:worker/task:0")],
        );
    }

    #[test]
    fn greedy_balances_bytes() {
        let (root, s) = placed_by(ReplicaDeviceSetter::new(2, "/job:worker").with_strategy(PsStrategy::GreedyBySize));
        Variable::new(&s, "big", zeros(&s, &[100, 100]));
        Variable::new(&s, "small1", zeros(&s, &[10]));
        Variable::new(&s, "small2", zeros(&s, &[10]));
        Variable::new(&s, "mid", zeros(&s, &[50]));
        assert_devices(
            &root,
            &[
                ("big", "/job:ps/task:0"),
                ("small1", "/job:ps/task:1"),
                ("small2", "/job:ps/task:1"),
                ("mid", "/job:ps/task:1"),
            ],
        );
    }

    #[test]
    fn explicit_devices_are_merged_and_zero_ps_tasks_keeps_everything_on_the_worker() {
        let (root, s) = placed_by(ReplicaDeviceSetter::new(3, "/job:worker/task:0"));
        let pinned = s.with_device("/job:ps/task:2");
        Variable::new(&pinned, "pinned", zeros(&s, &[1]));
        let cpu = s.with_device("/device:CPU:0");
        let x = ops::identity(&cpu, zeros(&s, &[1]));
        assert_devices(&root, &[("pinned", "/job:ps/task:2"), (&x.node, "/job:worker/task:0/device:CPU:0")]);

        let (root2, s2) = placed_by(ReplicaDeviceSetter::new(0, "/job:worker/task:3"));
        let v = Variable::new(&s2, "v", zeros(&s2, &[1]));
        assert_eq!(device(&root2, v.name()), "/job:worker/task:3");
        assert_eq!(v.dtype(), DataType::Float);
    }

    #[test]
    fn bad_device_strings_are_errors() {
        let e = ReplicaDeviceSetter::new(1, "/job:worker/task:x").build().err().unwrap();
        assert!(e.message.contains("task:x") || e.message.contains("'x'"), "{}", e.message);
    }
}
