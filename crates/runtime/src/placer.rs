//! The placer: gives every node of a graph a full device name (TensorFlow's `Placer` and
//! `ColocationGraph`, simplified to what ferroflow's CPU-only tasks need).
//!
//! - An explicit, possibly partial, device (`/job:ps/task:0`, `/device:CPU:0`, `/cpu:0`) is
//!   matched against the known devices: the default device if it matches, else the first
//!   match in TensorFlow's order (device type priority, then name).
//! - Colocation groups are unions of: nodes sharing a `_class: ["loc:@x"]` group (a node
//!   without `_class` is in the group of its own name), a node and the source of each of its
//!   reference inputs (`Assign`, `Apply*`), and a node and the producer of each resource
//!   handle it consumes (traced back through `Identity`/`IdentityN`, so `ReadVariableOp` or
//!   `ResourceApply*` land with their `VarHandleOp`). `Identity` and `IdentityN` are exempt
//!   from input colocation, as in TensorFlow; control-flow ops are not: a resource or
//!   reference passing through `Enter`/`Merge`/`Switch`/`NextIteration`/`Exit` (a loop
//!   variable, a lowered `While`'s resource) takes them, and the ops using it inside the
//!   loop, to the variable's task, as TensorFlow places them. Function calls (`If`,
//!   `StatelessIf`, `While`, `StatelessWhile`, `PartitionedCall`, `StatefulPartitionedCall`) are not: ferroflow runs a
//!   call's whole body on the call's device, so the call goes with the resources it takes
//!   (TensorFlow exempts them and lowers `If` to `Switch`/`Merge`, placing the branch nodes
//!   one by one; for a branch that reads a variable both end up where the variable is). Explicit devices within a group are
//!   merged; incompatible ones are an InvalidArgument naming both nodes, except that a node
//!   taking a reference or resource gives way: its request is dropped and it runs with the
//!   resource, as TensorFlow does. With `allow_soft_placement` any conflicting node gives
//!   way to its group.
//! - Nodes without any constraint go to the default device.
//! - A device that matches nothing is an InvalidArgument naming the node, the requested
//!   device and the known devices, with a hint at the likely cause (user-pain #12); with
//!   `allow_soft_placement` the placer first drops the device type/index, then falls back
//!   to the default device.

use std::collections::HashMap;

use ferroflow_core::proto::{GraphDef, NodeDef};
use ferroflow_core::{DataType, DeviceName, NodeAttrs, Status};

/// Placement options (from `ConfigProto`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PlacerOptions {
    /// `allow_soft_placement`: relax device specs that match no device instead of failing.
    pub allow_soft_placement: bool,
}

/// Ops whose inputs are exempt from reference/resource colocation (TF's
/// REGISTER_INPUT_COLOCATION_EXEMPTION set, without the function calls: see the module docs).
const EXEMPT: &[&str] = &["Identity", "IdentityN"];

/// Places every node of `graph` on one of `devices` (full names), with unconstrained nodes
/// on `default_device` (a full name among `devices`). See the module docs.
pub fn place(graph: &mut GraphDef, devices: &[String], default_device: &str) -> Result<(), Status> {
    place_with_options(graph, devices, default_device, &PlacerOptions::default())
}

/// [`place`] with options.
pub fn place_with_options(
    graph: &mut GraphDef,
    devices: &[String],
    default_device: &str,
    opts: &PlacerOptions,
) -> Result<(), Status> {
    place_impl(graph, devices, default_device, opts, &registry_input_types)
}

/// Input types of a node from the op registry; `None` for ops the registry does not know
/// (they have no known ref/resource inputs; the executor reports them).
fn registry_input_types(n: &NodeDef) -> Option<Vec<(DataType, bool)>> {
    let mut resolved = n.clone();
    ferroflow_graph::resolve_node(&mut resolved).ok().map(|s| s.inputs)
}

type InputTypes<'a> = &'a dyn Fn(&NodeDef) -> Option<Vec<(DataType, bool)>>;

fn place_impl(
    graph: &mut GraphDef,
    devices: &[String],
    default_device: &str,
    opts: &PlacerOptions,
    input_types: InputTypes<'_>,
) -> Result<(), Status> {
    let known = parse_known(devices)?;
    let default = known.iter().position(|(s, _)| s == default_device).ok_or_else(|| {
        Status::invalid_argument(format!(
            "placer: the default device '{default_device}' is not one of the known devices [{}]",
            devices.join(", ")
        ))
    })?;
    let nodes = &graph.node;
    let mut index: HashMap<&str, usize> = HashMap::with_capacity(nodes.len());
    for (i, n) in nodes.iter().enumerate() {
        if index.insert(n.name.as_str(), i).is_some() {
            return Err(Status::invalid_argument(format!("graph has two nodes named '{}'", n.name)));
        }
    }
    let requests: Vec<DeviceName> = nodes
        .iter()
        .map(|n| {
            DeviceName::parse(&n.device)
                .map_err(|e| e.context(format!("node '{}' (op {}) has an invalid device", n.name, n.op)))
        })
        .collect::<Result<_, _>>()?;
    let mut uf = UnionFind::new(nodes.len());
    colocate_classes(nodes, &mut uf)?;
    colocate_ref_and_resource_inputs(nodes, &index, &mut uf, input_types)?;

    // Merge the explicit requests of each group. A node that takes a reference or a
    // resource (a variable's `Assign`, `ReadVariableOp`, `VarIsInitializedOp`, a function
    // call taking a variable, a node using a resource a call passes through) runs where
    // that resource lives, as in TensorFlow: its own device request only counts when it
    // agrees with the group's, so it is merged last and dropped when it conflicts
    // (TensorFlow logs "Ignoring device specification ... because the input edge ... is a
    // reference connection"), e.g. `report_uninitialized_variables` built under a
    // worker's device scope for variables on a ps, or a `tf.while_loop` pinned to a worker
    // whose body reads a ps variable.
    let is_call = |i: usize| crate::function::CALL_OPS.contains(&nodes[i].op.as_str());
    let soft: Vec<bool> = nodes
        .iter()
        .enumerate()
        .map(|(i, n)| {
            if EXEMPT.contains(&n.op.as_str()) {
                return false;
            }
            let Some(types) = input_types(n) else { return false };
            if is_call(i) {
                return types.iter().any(|&(ty, _)| ty == DataType::Resource);
            }
            types.iter().any(|&(ty, is_ref)| is_ref || ty == DataType::Resource)
        })
        .collect();
    // With `allow_soft_placement`, a node whose request conflicts with its group's (a
    // gradient `zeros_like` built under a worker's device scope but colocated with a ps
    // variable, as tf_keras RNNs build them) drops its request and goes with the group, as
    // TensorFlow places it; the group keeps the request of its first node in graph order.
    let mut groups: HashMap<usize, Group> = HashMap::new();
    for i in (0..nodes.len()).filter(|&i| !soft[i]) {
        if opts.allow_soft_placement {
            give_way(
                &mut groups,
                &mut uf,
                i,
                nodes,
                &requests,
                "allow_soft_placement, and it conflicts with its group",
            );
        } else {
            let root = uf.find(i);
            groups.entry(root).or_default().merge(i, &requests[i], nodes, &requests, &uf.reasons[root])?;
        }
    }
    for i in (0..nodes.len()).filter(|&i| soft[i]) {
        give_way(&mut groups, &mut uf, i, nodes, &requests, "it is placed with the resource or reference it takes");
    }
    // Choose a device per group.
    let mut chosen: HashMap<usize, usize> = HashMap::new();
    for (&root, g) in &groups {
        let d = choose(&g.spec, &known, default, opts).map_err(|hint| {
            let who = g.first_setter.unwrap_or(root);
            no_device_error(&nodes[who], &requests[who], &g.spec, &known, &hint)
        })?;
        chosen.insert(root, d);
    }
    for i in 0..graph.node.len() {
        let d = chosen[&uf.find(i)];
        graph.node[i].device = known[d].0.clone();
    }
    Ok(())
}

/// Merges node `i`'s request into its group; on a conflict the node gives way (logged with
/// `why`) and the group stays as it was.
fn give_way(
    groups: &mut HashMap<usize, Group>,
    uf: &mut UnionFind,
    i: usize,
    nodes: &[NodeDef],
    requests: &[DeviceName],
    why: &str,
) {
    let root = uf.find(i);
    let g = groups.entry(root).or_default();
    let mut tried = g.clone();
    match tried.merge(i, &requests[i], nodes, requests, &uf.reasons[root]) {
        Ok(()) => *g = tried,
        Err(e) => {
            tracing::info!(node = %nodes[i].name, "ignoring the node's device '{}': {why} ({})", nodes[i].device, e.message)
        }
    }
}

fn parse_known(devices: &[String]) -> Result<Vec<(String, DeviceName)>, Status> {
    if devices.is_empty() {
        return Err(Status::invalid_argument("placer: no devices to place the graph on"));
    }
    devices
        .iter()
        .map(|d| {
            let n = DeviceName::parse(d)?;
            if !n.is_full() {
                return Err(Status::invalid_argument(format!(
                    "placer: known device '{d}' is not a full device name (/job:J/replica:R/task:T/device:TYPE:i)"
                )));
            }
            Ok((d.clone(), n))
        })
        .collect()
}

/// Unions nodes that share a `_class: ["loc:@group"]` entry.
fn colocate_classes(nodes: &[NodeDef], uf: &mut UnionFind) -> Result<(), Status> {
    let mut first: HashMap<String, usize> = HashMap::new();
    for (i, n) in nodes.iter().enumerate() {
        let groups: Vec<String> = if n.has_attr("_class") {
            n.attr_list_string("_class")?
                .into_iter()
                .filter_map(|c| c.strip_prefix("loc:@").map(str::to_string))
                .collect()
        } else {
            vec![]
        };
        let declared = !groups.is_empty();
        let groups = if declared { groups } else { vec![n.name.clone()] };
        for g in groups {
            match first.get(&g) {
                Some(&j) => uf.union(i, j, || {
                    let (a, b) =
                        if declared { (&nodes[i].name, &nodes[j].name) } else { (&nodes[j].name, &nodes[i].name) };
                    format!("'{a}' has _class loc:@{g} (colocated with '{b}')")
                }),
                None => {
                    first.insert(g, i);
                }
            }
        }
    }
    Ok(())
}

/// The data inputs of a node as (source index, slot); control inputs skipped.
fn data_inputs(n: &NodeDef, index: &HashMap<&str, usize>) -> Result<Vec<(usize, usize)>, Status> {
    let mut out = Vec::new();
    for s in n.input.iter().filter(|s| !s.starts_with('^')) {
        let (src, slot) = ferroflow_graph::parse_tensor_name(s).map_err(|e| e.context(format!("node '{}'", n.name)))?;
        let &j = index.get(src).ok_or_else(|| {
            Status::invalid_argument(format!("node '{}': input '{s}' names no node in the graph", n.name))
        })?;
        out.push((j, slot));
    }
    Ok(out)
}

/// Follows a resource handle back through Identity/IdentityN to the node that made it.
fn resource_producer(nodes: &[NodeDef], index: &HashMap<&str, usize>, mut src: usize, mut slot: usize) -> usize {
    for _ in 0..nodes.len() {
        let n = &nodes[src];
        let k = match n.op.as_str() {
            "Identity" => 0,
            "IdentityN" => slot,
            _ => return src,
        };
        match data_inputs(n, index).ok().and_then(|ins| ins.get(k).copied()) {
            Some((j, s)) => (src, slot) = (j, s),
            None => return src,
        }
    }
    src
}

fn colocate_ref_and_resource_inputs(
    nodes: &[NodeDef],
    index: &HashMap<&str, usize>,
    uf: &mut UnionFind,
    input_types: InputTypes<'_>,
) -> Result<(), Status> {
    for (i, n) in nodes.iter().enumerate() {
        if EXEMPT.contains(&n.op.as_str()) {
            continue;
        }
        let Some(types) = input_types(n) else { continue };
        let inputs = data_inputs(n, index)?;
        for (k, &(src, slot)) in inputs.iter().enumerate() {
            let Some(&(ty, is_ref)) = types.get(k) else { continue };
            if is_ref {
                uf.union(i, src, || {
                    format!("'{}' (op {}) takes a reference input from '{}'", n.name, n.op, nodes[src].name)
                });
            } else if ty == DataType::Resource {
                let p = resource_producer(nodes, index, src, slot);
                uf.union(i, p, || format!("'{}' (op {}) uses the resource made by '{}'", n.name, n.op, nodes[p].name));
            }
        }
    }
    Ok(())
}

/// The merged explicit request of a colocation group.
#[derive(Clone, Default)]
struct Group {
    spec: DeviceName,
    /// The node that set each field: job, replica, task, type, id.
    setters: [Option<usize>; 5],
    first_setter: Option<usize>,
}

impl Group {
    fn merge(
        &mut self,
        i: usize,
        req: &DeviceName,
        nodes: &[NodeDef],
        requests: &[DeviceName],
        reasons: &[String],
    ) -> Result<(), Status> {
        fn field<T: PartialEq + Clone>(
            slot: &mut Option<T>,
            setter: &mut Option<usize>,
            want: &Option<T>,
            i: usize,
        ) -> Result<(), usize> {
            match (slot.as_ref(), want) {
                (_, None) => Ok(()),
                (None, Some(w)) => {
                    *slot = Some(w.clone());
                    *setter = Some(i);
                    Ok(())
                }
                (Some(s), Some(w)) if s == w => Ok(()),
                _ => Err(setter.unwrap_or(i)),
            }
        }
        let conflict = |what: &str, j: usize| {
            Status::invalid_argument(format!(
                "Cannot colocate nodes '{}' and '{}': '{}' requests device '{}' but '{}' requests '{}' \
                 (incompatible {what}). They must share a device because: {}",
                nodes[j].name,
                nodes[i].name,
                nodes[j].name,
                requests[j],
                nodes[i].name,
                requests[i],
                if reasons.is_empty() { "they are in one colocation group".to_string() } else { reasons.join("; ") }
            ))
        };
        let s = &mut self.setters;
        let [s_job, s_rep, s_task, s_ty, s_id] = s;
        field(&mut self.spec.job, s_job, &req.job, i).map_err(|j| conflict("jobs", j))?;
        field(&mut self.spec.replica, s_rep, &req.replica, i).map_err(|j| conflict("replicas", j))?;
        field(&mut self.spec.task, s_task, &req.task, i).map_err(|j| conflict("tasks", j))?;
        field(&mut self.spec.device_type, s_ty, &req.device_type, i).map_err(|j| conflict("device types", j))?;
        field(&mut self.spec.id, s_id, &req.id, i).map_err(|j| conflict("device indices", j))?;
        if self.first_setter.is_none() && *req != DeviceName::default() {
            self.first_setter = Some(i);
        }
        Ok(())
    }
}

fn type_priority(t: Option<&str>) -> i32 {
    match t {
        Some("GPU") => 210,
        Some("CPU") => 70,
        _ => 0,
    }
}

/// The device for a merged spec, or a hint why none matches.
fn choose(
    spec: &DeviceName,
    known: &[(String, DeviceName)],
    default: usize,
    opts: &PlacerOptions,
) -> Result<usize, String> {
    let pick = |spec: &DeviceName| -> Option<usize> {
        if spec.matches(&known[default].1) {
            return Some(default);
        }
        let mut c: Vec<usize> = (0..known.len()).filter(|&d| spec.matches(&known[d].1)).collect();
        c.sort_by(|&a, &b| {
            let (pa, pb) =
                (type_priority(known[a].1.device_type.as_deref()), type_priority(known[b].1.device_type.as_deref()));
            pb.cmp(&pa).then_with(|| known[a].0.cmp(&known[b].0))
        });
        c.first().copied()
    };
    if let Some(d) = pick(spec) {
        return Ok(d);
    }
    if opts.allow_soft_placement {
        let relaxed = DeviceName { device_type: None, id: None, ..spec.clone() };
        return Ok(pick(&relaxed).unwrap_or(default));
    }
    Err(hint(spec, known))
}

fn hint(spec: &DeviceName, known: &[(String, DeviceName)]) -> String {
    let mut jobs: Vec<&str> = known.iter().filter_map(|(_, d)| d.job.as_deref()).collect();
    jobs.sort();
    jobs.dedup();
    let Some(job) = spec.job.as_deref().filter(|j| !jobs.contains(j)) else {
        let in_job: Vec<&DeviceName> =
            known.iter().map(|(_, d)| d).filter(|d| spec.job.is_none() || d.job == spec.job).collect();
        if let Some(t) = spec.task {
            let mut tasks: Vec<i32> = in_job.iter().filter_map(|d| d.task).collect();
            tasks.sort();
            tasks.dedup();
            if !tasks.contains(&t) {
                let j = spec.job.as_deref().unwrap_or("*");
                return format!(
                    "job '{j}' has tasks {tasks:?}; task {t} does not exist. Was the cluster started with fewer \
                     '{j}' tasks than the model expects (check --{j}_hosts / TF_CONFIG), or is the task index wrong?"
                );
            }
        }
        if let Some(r) = spec.replica {
            if !in_job.iter().any(|d| d.replica == Some(r)) {
                return format!("replica {r} does not exist; every task of a ferroflow cluster is replica 0");
            }
        }
        let mut types: Vec<String> = in_job
            .iter()
            .filter(|d| spec.task.is_none() || d.task == spec.task)
            .map(|d| format!("{}:{}", d.device_type.as_deref().unwrap_or("?"), d.id.unwrap_or(0)))
            .collect();
        types.sort();
        types.dedup();
        return format!(
            "the matching tasks have devices [{}]; ferroflow runs on CPU only: use '/device:CPU:0', or set \
             allow_soft_placement=true in the session config",
            types.join(", ")
        );
    };
    if jobs == ["localhost"] {
        format!(
            "this session only sees the devices of one local process (job 'localhost'). To use job '{job}', create \
             the Session with the cluster's target (server.target(), i.e. \"grpc://host:port\" of one of its \
             tasks) instead of a local one"
        )
    } else {
        format!(
            "job '{job}' is not in the cluster (known jobs: [{}]). Check the ClusterSpec (--{job}_hosts / \
             TF_CONFIG / --cluster), the session's device_filters, and the device string for typos",
            jobs.join(", ")
        )
    }
}

fn no_device_error(
    node: &NodeDef,
    own: &DeviceName,
    spec: &DeviceName,
    known: &[(String, DeviceName)],
    hint: &str,
) -> Status {
    const SHOWN: usize = 16;
    let mut list: Vec<&str> = known.iter().map(|(s, _)| s.as_str()).collect();
    list.sort();
    let more = list.len().saturating_sub(SHOWN);
    let more = if more > 0 { format!(" and {more} more") } else { String::new() };
    list.truncate(SHOWN);
    let through = if own != spec { format!(" (merged with its colocation group: '{spec}')") } else { String::new() };
    Status::invalid_argument(format!(
        "Cannot assign a device for operation '{}' (op {}): could not satisfy explicit device specification \
         '{}'{through} because no known device matches it. Known devices: [{}{more}]. Hint: {hint}",
        node.name,
        node.op,
        if node.device.is_empty() { spec.to_string() } else { node.device.clone() },
        list.join(", ")
    ))
}

mod union_find;

use union_find::UnionFind;

#[cfg(test)]
mod tests;
