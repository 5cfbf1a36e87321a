//! Callables (MakeCallable, RunCallable, ReleaseCallable): a step signature fixed once
//! (feeds, fetches, targets, run options and tensor connections), planned when it is made,
//! then run by handle with only the fed values, in the order of its feeds. tf_keras's
//! graph-mode backend runs every step this way (`backend.function`, so `Model.fit`,
//! `evaluate` and `predict` under a session on a cluster), through TensorFlow's
//! `Session._make_callable_from_options`.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Instant;

use ferroflow_core::proto::*;
use ferroflow_core::{Status, Tensor};
use ferroflow_graph::{canonical_tensor_name, parse_tensor_name};

use super::master::Master;
use super::plan::plan_for;
use ferroflow_graph::StepSignature as Signature;

/// A callable as made: its signature (canonical names) and the run options of every run.
pub(crate) struct Callable {
    pub(crate) sig: Signature,
    pub(crate) options: RunOptions,
}

/// The signature of `CallableOptions`, checked as TensorFlow checks it: feeds given once,
/// no tensor both fed and connected, each connected tensor connected once, nothing fed (or
/// connected to) also fetched.
pub(crate) fn signature(opts: &CallableOptions) -> Result<Signature, Status> {
    const WHAT: &str = "MakeCallable";
    let mut sig = Signature::new(WHAT, &opts.feed, &opts.fetch, &opts.target)?;
    for c in &opts.tensor_connection {
        sig.connect(WHAT, &c.from_tensor, &c.to_tensor)?;
    }
    // As in TensorFlow, a callable cannot fetch what it feeds (a connection's destination
    // counts as fed); RunStep can, because TensorFlow's client answers such a fetch itself.
    let fed = |f: &String| sig.feeds.contains(f) || sig.connections.iter().any(|(_, t)| t == f);
    if let Some(f) = sig.fetches.iter().find(|f| fed(f)) {
        return Err(Status::invalid_argument(format!("{f} is both fed and fetched.")));
    }
    Ok(sig)
}

/// The graph with every use of each connection's destination reading its source instead
/// (control inputs are kept as they are). Both tensors' nodes must exist.
pub(crate) fn connect(graph: &GraphDef, connections: &[(String, String)]) -> Result<GraphDef, Status> {
    let names: HashSet<&str> = graph.node.iter().map(|n| n.name.as_str()).collect();
    for (from, to) in connections {
        for t in [from, to] {
            let (node, _) = parse_tensor_name(t)?;
            if !names.contains(node) {
                return Err(Status::not_found(format!(
                    "tensor connection from '{from}' to '{to}': no node named '{node}' in the graph"
                )));
            }
        }
    }
    let mut g = graph.clone();
    for n in &mut g.node {
        for input in n.input.iter_mut().filter(|i| !i.starts_with('^')) {
            let c = canonical_tensor_name(input).map_err(|e| e.context(format!("node '{}'", n.name)))?;
            if let Some((from, _)) = connections.iter().find(|(_, to)| *to == c) {
                input.clone_from(from);
            }
        }
    }
    Ok(g)
}

impl Master {
    /// MakeCallable: checks and plans the signature now (its errors are MakeCallable's, as
    /// in TensorFlow) and returns the handle that runs it.
    pub async fn make_callable(&self, req: MakeCallableRequest) -> Result<MakeCallableResponse, Status> {
        let s = self.session(&req.session_handle)?;
        s.check_request_id(req.request_id, "MakeCallable")?;
        let opts = req.options.unwrap_or_default();
        let sig = signature(&opts)?;
        let options = opts.run_options.unwrap_or_default();
        let deadline = Instant::now() + self.step_timeout(&s, options.timeout_in_ms);
        plan_for(&s, &sig, deadline).await.map_err(|e| e.context("MakeCallable"))?;
        let handle = s.add_callable(Arc::new(Callable { sig, options }));
        Ok(MakeCallableResponse { handle })
    }

    /// RunCallable: one step of the callable with `feed` in the order of its feeds; the
    /// fetched tensors come back in the order of its fetches.
    pub async fn run_callable(&self, req: RunCallableRequest) -> Result<RunCallableResponse, Status> {
        let s = self.session(&req.session_handle)?;
        s.check_request_id(req.request_id, "RunCallable")?;
        let c = s.callable(req.handle)?;
        if req.feed.len() != c.sig.feeds.len() {
            return Err(Status::invalid_argument(format!(
                "RunCallable: callable {} takes {} feed tensors ([{}]), got {}",
                req.handle,
                c.sig.feeds.len(),
                c.sig.feeds.join(", "),
                req.feed.len()
            )));
        }
        let mut feeds = Vec::with_capacity(req.feed.len());
        for (name, p) in c.sig.feeds.iter().zip(&req.feed) {
            let t = Tensor::from_proto(p).map_err(|e| e.context(format!("RunCallable: feed '{name}'")))?;
            feeds.push((name.clone(), t));
        }
        let start = Instant::now();
        let (fetched, metadata) = self.execute(&s, &c.sig, feeds, &c.options, "RunCallable").await?;
        s.metrics.step(start.elapsed());
        Ok(RunCallableResponse { fetch: fetched.iter().map(Tensor::to_proto).collect(), metadata })
    }

    /// ReleaseCallable: forgets the handle (releasing one already released is not an error).
    pub fn release_callable(&self, req: ReleaseCallableRequest) -> Result<ReleaseCallableResponse, Status> {
        let s = self.session(&req.session_handle)?;
        s.release_callable(req.handle)?;
        Ok(ReleaseCallableResponse {})
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_node as node;
    use super::*;

    #[test]
    fn a_connection_rewires_data_inputs_but_not_control_inputs() {
        let g = GraphDef {
            node: vec![node("src", &[]), node("ph", &[]), node("use", &["ph", "ph:0", "^ph"]), node("other", &["src"])],
            ..Default::default()
        };
        let c = connect(&g, &[("src:0".into(), "ph:0".into())]).unwrap();
        assert_eq!(c.node[2].input, vec!["src:0", "src:0", "^ph"]);
        assert_eq!(c.node[3].input, vec!["src"]);
        let e = connect(&g, &[("nope:0".into(), "ph:0".into())]).unwrap_err();
        assert_eq!(e.code, ferroflow_core::Code::NotFound);
        assert!(e.message.contains("'nope'"), "{}", e.message);
    }

    #[test]
    fn signatures_are_checked_like_tensorflows() {
        let conn = |f: &str, t: &str| TensorConnection { from_tensor: f.into(), to_tensor: t.into() };
        let opts = CallableOptions {
            feed: vec!["a".into()],
            fetch: vec!["b:1".into()],
            target: vec!["^train".into()],
            tensor_connection: vec![conn("x", "p:0")],
            ..Default::default()
        };
        let s = signature(&opts).unwrap();
        assert_eq!(s.feeds, vec!["a:0"]);
        assert_eq!(s.fetches, vec!["b:1"]);
        assert_eq!(s.targets, vec!["train"]);
        assert_eq!(s.connections, vec![("x:0".to_string(), "p:0".to_string())]);
        let twice = CallableOptions { feed: vec!["a".into(), "a:0".into()], ..Default::default() };
        assert!(signature(&twice).unwrap_err().message.contains("fed more than once"));
        let fed_and_connected =
            CallableOptions { feed: vec!["p".into()], tensor_connection: vec![conn("x", "p")], ..Default::default() };
        assert!(signature(&fed_and_connected).unwrap_err().message.contains("both fed"));
        let connected_twice =
            CallableOptions { tensor_connection: vec![conn("x", "p"), conn("y", "p:0")], ..Default::default() };
        assert!(signature(&connected_twice).unwrap_err().message.contains("more than one"));
        for fetch in ["p", "a:0"] {
            let fetched = CallableOptions { fetch: vec![fetch.into()], ..opts.clone() };
            let e = signature(&fetched).unwrap_err();
            assert!(e.message.ends_with(":0 is both fed and fetched."), "{}", e.message);
        }
    }
}
