//! Packed handles (`SendPackedHandle`): one tensor of a context that stands for several
//! tensors on several devices, as TensorFlow's packed variables (`pack_eager_tensors`, the
//! handles of a distributed variable's components) are. A packed handle is only an input of
//! functions. There, TensorFlow's rule (observed on its 2.21 servers) picks an element per
//! use: an op on the packed argument uses the element on the device of the op that consumes
//! its output (an op's own device request is overridden), and an op whose output nobody
//! consumes uses the element on the device the function runs on. An op consumed on two
//! devices runs once per device.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

use ferroflow_core::proto::eager::{send_packed_handle_op::handle::Item as PackedItem, SendPackedHandleOp};
use ferroflow_core::proto::{GraphDef, NodeDef};
use ferroflow_core::{DeviceName, ResourceHandle, Status, Tensor};
use ferroflow_kernels::state::VAR_TYPE_NAME;

use super::context::EagerContext;
use super::EagerService;

/// One element of a packed handle: the device it is on and its value (for a resource,
/// the handle naming it).
#[derive(Clone)]
pub(crate) struct Element {
    pub(crate) device: String,
    pub(crate) value: Tensor,
}

/// A packed handle's elements, in the client's order.
pub(crate) type Packed = Arc<Vec<Element>>;

impl EagerService {
    /// SendPackedHandle: resolves each element (a tensor sent with it, a tensor of this
    /// task, or a handle on another task whose value is fetched once) and keeps the packed
    /// handle as the context's tensor `(op_id, 0)`.
    pub(crate) async fn send_packed_handle(
        &self,
        ctx: &EagerContext,
        p: SendPackedHandleOp,
        deadline: Instant,
    ) -> Result<(), Status> {
        let what = |k: usize| format!("SendPackedHandle of op {} to {}: handle {k}", p.op_id, ctx.task);
        let own = DeviceName::parse(&self.device(ctx))?;
        let mut elements = Vec::with_capacity(p.handles.len());
        for (k, h) in p.handles.iter().enumerate() {
            let element = match &h.item {
                Some(PackedItem::LocalHandle(l)) => {
                    let value = Tensor::from_proto(l.tensor.as_ref().unwrap_or(&Default::default()))
                        .map_err(|e| e.context(what(k)))?;
                    let device = if l.device.is_empty() { own.to_string() } else { canonical(&l.device)? };
                    Element { device, value }
                }
                Some(PackedItem::RemoteHandle(r)) => {
                    let at = if r.device.is_empty() { &r.op_device } else { &r.device };
                    let device = canonical(at)?;
                    let here = DeviceName::parse(&device)?;
                    let value = if here.job == own.job && here.task == own.task {
                        ctx.get((r.op_id, r.output_num)).map_err(|e| e.context(what(k)))?.tensor
                    } else {
                        self.fetch_remote(ctx, r, deadline).await.map_err(|e| e.context(what(k)))?
                    };
                    Element { device, value }
                }
                None => return Err(Status::invalid_argument(format!("{} is empty", what(k)))),
            };
            elements.push(element);
        }
        if elements.is_empty() {
            return Err(Status::invalid_argument(format!(
                "SendPackedHandle of op {} to {}: no handles to pack",
                p.op_id, ctx.task
            )));
        }
        ctx.put_packed(p.op_id, Arc::new(elements));
        Ok(())
    }
}

fn canonical(device: &str) -> Result<String, Status> {
    Ok(DeviceName::parse(device)?.completed_cpu().to_string())
}

/// The part of a span's cache key that tells two packed inputs apart.
pub(crate) fn key(p: &Packed) -> String {
    let mut k = String::new();
    for e in p.iter() {
        k.push_str(&e.device);
        if let Some(h) = e.value.as_slice::<ResourceHandle>().ok().and_then(|h| h.first()) {
            k.push_str(&format!("={}/{}", h.container, h.name));
        }
        k.push(';');
    }
    k
}

/// A variable handle of another task than `own`'s, which the graph names by a
/// `VarHandleOp` there; `None` for a value fed on this task.
pub(crate) fn pinned(t: &Tensor, device: &str, own: &str) -> Option<ResourceHandle> {
    let h = t.as_slice::<ResourceHandle>().ok()?.first()?;
    (device != own && h.maybe_type_name == VAR_TYPE_NAME && !h.dtypes_and_shapes.is_empty()).then(|| h.clone())
}

/// What an expansion feeds: `(feed name, element index)` for elements given by value.
pub(crate) struct Expanded {
    pub(crate) feeds: Vec<(String, usize)>,
    /// Copies of targets (ops run once per consuming device).
    pub(crate) targets: Vec<String>,
}

/// Replaces the placeholder `arg` of a function's graph, which stands for packed handle `p`,
/// by one node per element (a `VarHandleOp` on the element's task, or a placeholder fed
/// here) and points each op on it at the element TensorFlow's rule picks (module doc).
/// `requested` is each body node's device as the function asked; `own` is this task's device.
pub(crate) fn expand(
    graph: &mut GraphDef,
    arg: &str,
    p: &Packed,
    requested: &HashMap<String, String>,
    own: &str,
    targets: &[String],
) -> Result<Expanded, Status> {
    let mut out = Expanded { feeds: Vec::new(), targets: Vec::new() };
    let own_name = DeviceName::parse(own)?;
    let element_of = |consumer: &str| -> Result<usize, Status> {
        let want = match requested.get(consumer).filter(|d| !d.is_empty()) {
            Some(d) => DeviceName::parse(d)?.merged_with_defaults(&own_name),
            None => own_name.clone(),
        };
        p.iter().position(|e| DeviceName::parse(&e.device).is_ok_and(|d| want.matches(&d))).ok_or_else(|| {
            Status::invalid_argument(format!(
                "node '{consumer}' on {want} uses a packed handle with no element there (elements on {})",
                p.iter().map(|e| e.device.as_str()).collect::<Vec<_>>().join(", ")
            ))
        })
    };
    // Element nodes.
    let mut element_nodes = Vec::with_capacity(p.len());
    for (k, e) in p.iter().enumerate() {
        let name = format!("{arg}/packed_{k}");
        let node = match pinned(&e.value, &e.device, own) {
            Some(h) => super::span::var_handle_node(&name, &e.device, &h),
            None => {
                let mut n =
                    NodeDef { name: name.clone(), op: "Placeholder".into(), device: own.into(), ..Default::default() };
                n.attr.insert("dtype".into(), ferroflow_core::attr::ty(e.value.dtype()));
                out.feeds.push((format!("{name}:0"), k));
                n
            }
        };
        element_nodes.push(node);
    }
    let arg_refs = [arg.to_string(), format!("{arg}:0")];
    let users: Vec<usize> =
        (0..graph.node.len()).filter(|&i| graph.node[i].input.iter().any(|x| arg_refs.contains(x))).collect();
    let mut copies = Vec::new();
    for &u in &users {
        let name = graph.node[u].name.clone();
        // The consumers of the user's outputs, grouped by the element their device picks.
        let mut groups: Vec<(usize, Vec<usize>)> = Vec::new();
        for (c, n) in graph.node.iter().enumerate() {
            let data =
                n.input.iter().any(|x| x == &name || x.strip_prefix(name.as_str()).is_some_and(|r| r.starts_with(':')));
            if data {
                let k = element_of(&n.name)?;
                match groups.iter_mut().find(|(g, _)| *g == k) {
                    Some((_, cs)) => cs.push(c),
                    None => groups.push((k, vec![c])),
                }
            }
        }
        if groups.is_empty() {
            let k = p.iter().position(|e| DeviceName::parse(&e.device).is_ok_and(|d| own_name.matches(&d)));
            let k = k.ok_or_else(|| {
                Status::invalid_argument(format!(
                    "node '{name}' uses a packed handle with no element on {own}, where the function runs \
                     (elements on {})",
                    p.iter().map(|e| e.device.as_str()).collect::<Vec<_>>().join(", ")
                ))
            })?;
            groups.push((k, Vec::new()));
        }
        let at = |k: usize| element_nodes[k].device.clone();
        let rewire = |n: &mut NodeDef, k: usize| {
            for x in n.input.iter_mut().filter(|x| arg_refs.contains(x)) {
                *x = format!("{}:0", element_nodes[k].name);
            }
            n.device = at(k);
        };
        let (first, rest) = groups.split_first().map(|(f, r)| (f.0, r.to_vec())).unwrap_or((0, Vec::new()));
        for (k, consumers) in rest {
            let mut copy = graph.node[u].clone();
            copy.name = format!("{name}/packed_{k}");
            rewire(&mut copy, k);
            for &c in &consumers {
                for x in graph.node[c].input.iter_mut() {
                    if x == &name {
                        *x = copy.name.clone();
                    } else if let Some(r) = x.strip_prefix(name.as_str()).filter(|r| r.starts_with(':')) {
                        *x = format!("{}{r}", copy.name);
                    }
                }
            }
            if targets.contains(&name) {
                out.targets.push(copy.name.clone());
            }
            // Whatever waited for the op waits for every copy.
            let control = format!("^{name}");
            for n in graph.node.iter_mut().filter(|n| n.input.contains(&control)) {
                n.input.push(format!("^{}", copy.name));
            }
            copies.push(copy);
        }
        rewire(&mut graph.node[u], first);
    }
    let control = format!("^{arg}");
    for n in graph.node.iter_mut() {
        if n.input.contains(&control) {
            n.input.retain(|x| x != &control);
            n.input.extend(element_nodes.iter().map(|e| format!("^{}", e.name)));
        }
    }
    graph.node.retain(|n| n.name != arg);
    graph.node.extend(element_nodes);
    graph.node.extend(copies);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const W0: &str = "/job:worker/replica:0/task:0/device:CPU:0";
    const W1: &str = "/job:worker/replica:0/task:1/device:CPU:0";

    fn var(device: &str, name: &str) -> Element {
        let mut h = ResourceHandle::new(device, "", name, VAR_TYPE_NAME);
        h.dtypes_and_shapes = vec![(ferroflow_core::DataType::Float as i32, vec![2])];
        Element { device: device.into(), value: Tensor::new(Vec::<usize>::new(), vec![h]).unwrap() }
    }

    fn graph(nodes: &[(&str, &str, &[&str])]) -> GraphDef {
        let node = |(name, op, inputs): &(&str, &str, &[&str])| crate::test_graphs::node(name, op, "", inputs);
        GraphDef { node: nodes.iter().map(node).collect(), ..Default::default() }
    }

    fn find<'a>(g: &'a GraphDef, name: &str) -> &'a NodeDef {
        g.node.iter().find(|n| n.name == name).unwrap_or_else(|| panic!("no node {name}"))
    }

    #[test]
    fn each_use_takes_the_element_of_its_consumers_device() {
        let p: Packed = Arc::new(vec![var(W0, "v0"), var(W1, "v1")]);
        let mut g = graph(&[
            ("arg", "Placeholder", &[]),
            ("r0", "ReadVariableOp", &["arg:0"]),
            ("r1", "ReadVariableOp", &["arg:0"]),
            ("mul", "Mul", &["r1:0", "c:0"]),
            ("add", "AddV2", &["r0:0", "mul:0"]),
            ("mul0", "Mul", &["r0:0", "c:0"]),
            ("assign", "AssignAddVariableOp", &["arg:0", "mul0:0"]),
            ("after", "NoOp", &["^r0", "^arg"]),
        ]);
        let requested: HashMap<String, String> =
            [("mul", "/job:worker/task:1"), ("mul0", "/job:worker/task:1"), ("assign", "/job:worker/task:1")]
                .into_iter()
                .map(|(a, b)| (a.to_string(), b.to_string()))
                .collect();
        // Runs on worker 0: this task's element is fed, worker 1's is named there.
        let x = expand(&mut g, "arg", &p, &requested, W0, &["assign".to_string()]).unwrap();
        assert_eq!(x.feeds, vec![("arg/packed_0:0".to_string(), 0)]);
        assert!(g.node.iter().all(|n| n.name != "arg"));
        assert_eq!(find(&g, "arg/packed_1").op, "VarHandleOp");
        assert_eq!(find(&g, "arg/packed_1").device, W1);
        // r1's consumer (mul) is on worker 1: v1.
        assert_eq!(find(&g, "r1").input, vec!["arg/packed_1:0"]);
        // r0 is consumed on worker 0 (add, unplaced) and worker 1 (mul0): one copy per device.
        assert_eq!(find(&g, "r0").input, vec!["arg/packed_0:0"]);
        assert_eq!(find(&g, "r0/packed_1").input, vec!["arg/packed_1:0"]);
        assert_eq!(find(&g, "mul0").input, vec!["r0/packed_1:0", "c:0"]);
        assert_eq!(find(&g, "add").input, vec!["r0:0", "mul:0"]);
        // Control edges wait for every copy and every element.
        assert_eq!(find(&g, "after").input, vec!["^r0", "^r0/packed_1", "^arg/packed_0", "^arg/packed_1"]);
        // No consumer: the element where the function runs, whatever the op asked for.
        assert_eq!(find(&g, "assign").input, vec!["arg/packed_0:0", "mul0:0"]);
        assert_eq!(find(&g, "assign").device, W0);
        assert!(x.targets.is_empty());
    }

    #[test]
    fn a_use_with_no_element_on_its_device_is_an_error() {
        let p: Packed = Arc::new(vec![var(W1, "v1")]);
        let mut g = graph(&[("arg", "Placeholder", &[]), ("r", "ReadVariableOp", &["arg:0"])]);
        let e = expand(&mut g, "arg", &p, &HashMap::new(), W0, &[]).err().unwrap();
        assert_eq!(e.code, ferroflow_core::Code::InvalidArgument);
        assert!(e.message.contains("node 'r'") && e.message.contains("task:1"), "{}", e.message);
    }
}
