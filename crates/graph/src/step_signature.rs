//! A step's signature: the canonical tensor names it feeds and fetches, the nodes it runs
//! as targets and, for a callable, its tensor connections. `DirectSession`, the master's
//! RunStep, callables and partial runs all build their steps from it, so one rule
//! canonicalises names, one rule rejects a tensor fed twice, one rule checks fed dtypes,
//! and one rule makes the key under which a session caches the step's plan.

use ferroflow_core::{Status, Tensor};

use crate::{canonical_tensor_name, ClientTensor};

/// What a step feeds, fetches and runs, with names canonical (`n:i`; targets without `^`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StepSignature {
    /// Fed tensors, each once, in request order.
    pub feeds: Vec<String>,
    /// Fetched tensors in request order (a tensor may be asked for twice).
    pub fetches: Vec<String>,
    /// Target node names.
    pub targets: Vec<String>,
    /// A callable's tensor connections `(from, to)`: `to` reads `from` in this step.
    pub connections: Vec<(String, String)>,
}

fn canonical_all<S: AsRef<str>>(what: &str, kind: &str, names: &[S]) -> Result<Vec<String>, Status> {
    names
        .iter()
        .map(|n| canonical_tensor_name(n.as_ref()).map_err(|e| e.context(format!("{what}: {kind} '{}'", n.as_ref()))))
        .collect()
}

impl StepSignature {
    /// The signature of a request naming `feeds`, `fetches` (tensor names, `"n"` meaning
    /// `"n:0"`) and `targets` (node names, a leading `^` allowed). `what` names the method
    /// in errors. InvalidArgument for a malformed name or a tensor fed more than once.
    pub fn new<F: AsRef<str>, G: AsRef<str>, T: AsRef<str>>(
        what: &str,
        feeds: &[F],
        fetches: &[G],
        targets: &[T],
    ) -> Result<StepSignature, Status> {
        let feeds = canonical_all(what, "feed", feeds)?;
        for (i, f) in feeds.iter().enumerate() {
            if feeds[..i].contains(f) {
                return Err(Status::invalid_argument(format!("{what}: tensor '{f}' is fed more than once")));
            }
        }
        let fetches = canonical_all(what, "fetch", fetches)?;
        let targets = targets.iter().map(|t| t.as_ref().strip_prefix('^').unwrap_or(t.as_ref()).to_string()).collect();
        Ok(StepSignature { feeds, fetches, targets, connections: Vec::new() })
    }

    /// Adds a callable's tensor connection `from → to`, checked as TensorFlow checks it:
    /// `to` is not fed and is the destination of no other connection.
    pub fn connect(&mut self, what: &str, from: &str, to: &str) -> Result<(), Status> {
        let from = canonical_all(what, "tensor connection from", &[from])?.remove(0);
        let to = canonical_all(what, "tensor connection to", &[to])?.remove(0);
        if self.feeds.contains(&to) {
            return Err(Status::invalid_argument(format!(
                "{what}: tensor '{to}' is both fed and the destination of a tensor connection"
            )));
        }
        if self.connections.iter().any(|(_, t)| *t == to) {
            return Err(Status::invalid_argument(format!(
                "{what}: tensor '{to}' is the destination of more than one tensor connection"
            )));
        }
        self.connections.push((from, to));
        Ok(())
    }

    /// The cache key of the step's plan: the same for the same sets of feeds, fetches,
    /// targets and connections, whatever their order or repetition (as TensorFlow's).
    pub fn key(&self) -> String {
        let sorted = |v: &mut dyn Iterator<Item = String>| {
            let mut v: Vec<String> = v.collect();
            v.sort_unstable();
            v.dedup();
            v.join(",")
        };
        let mut key = format!(
            "{}|{}|{}",
            sorted(&mut self.feeds.iter().cloned()),
            sorted(&mut self.fetches.iter().cloned()),
            sorted(&mut self.targets.iter().cloned())
        );
        if !self.connections.is_empty() {
            key.push('|');
            key.push_str(&sorted(&mut self.connections.iter().map(|(f, t)| format!("{f}>{t}"))));
        }
        key
    }
}

/// Every fed tensor (canonical name, value) must have the dtype of the tensor it replaces,
/// as planned in `planned`; `what` names the method in errors.
pub fn check_feed_types(what: &str, planned: &[ClientTensor], feeds: &[(String, Tensor)]) -> Result<(), Status> {
    for (name, t) in feeds {
        if let Some(f) = planned.iter().find(|f| &f.name == name) {
            if t.dtype() != f.dtype {
                return Err(Status::invalid_argument(format!(
                    "{what}: cannot feed a tensor of dtype {} to '{name}', which is {}",
                    t.dtype().name(),
                    f.dtype.name()
                )));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_canonical_and_targets_lose_their_caret() {
        let s = StepSignature::new("RunStep", &["a", "b:1"], &["c", "c:0"], &["^t", "u"]).unwrap();
        assert_eq!(s.feeds, ["a:0", "b:1"]);
        assert_eq!(s.fetches, ["c:0", "c:0"]);
        assert_eq!(s.targets, ["t", "u"]);
    }

    #[test]
    fn a_tensor_fed_twice_under_two_spellings_is_refused() {
        let e = StepSignature::new("RunStep", &["a", "a:0"], &[] as &[&str], &[] as &[&str]).unwrap_err();
        assert_eq!(e.code, ferroflow_core::Code::InvalidArgument);
        assert_eq!(e.message, "RunStep: tensor 'a:0' is fed more than once");
        let e = StepSignature::new("Session.run", &["a:x"], &[] as &[&str], &[] as &[&str]).unwrap_err();
        assert!(e.message.contains("Session.run: feed 'a:x'"), "{}", e.message);
    }

    #[test]
    fn the_key_ignores_order_and_repetition_but_not_content() {
        let k = |f: &[&str], g: &[&str], t: &[&str]| StepSignature::new("x", f, g, t).unwrap().key();
        assert_eq!(k(&["a", "b"], &["c", "d"], &["t"]), k(&["b:0", "a"], &["d", "c", "d:0"], &["^t"]));
        assert_ne!(k(&["a"], &["c"], &[]), k(&[], &["c"], &["a"]));
        assert_ne!(k(&["a"], &["c"], &[]), k(&["a"], &["c:1"], &[]));
        let mut s = StepSignature::new("x", &["a"], &["c"], &[] as &[&str]).unwrap();
        let plain = s.key();
        s.connect("MakeCallable", "p", "q").unwrap();
        assert_ne!(s.key(), plain);
    }

    #[test]
    fn connections_are_checked() {
        let mut s = StepSignature::new("MakeCallable", &["a"], &["c"], &[] as &[&str]).unwrap();
        let e = s.connect("MakeCallable", "p", "a").unwrap_err();
        assert!(e.message.contains("both fed and the destination"), "{}", e.message);
        s.connect("MakeCallable", "p", "q").unwrap();
        let e = s.connect("MakeCallable", "r", "q:0").unwrap_err();
        assert!(e.message.contains("more than one tensor connection"), "{}", e.message);
    }

    #[test]
    fn fed_dtypes_must_match_the_plan() {
        let planned = vec![ClientTensor {
            name: "a:0".into(),
            node: "_recv_a_0".into(),
            dtype: ferroflow_core::DataType::Float,
            key: "k".into(),
            used: true,
        }];
        check_feed_types("RunStep", &planned, &[("a:0".into(), Tensor::scalar(1.0f32))]).unwrap();
        let e = check_feed_types("RunStep", &planned, &[("a:0".into(), Tensor::scalar(1i32))]).unwrap_err();
        assert_eq!(e.message, "RunStep: cannot feed a tensor of dtype int32 to 'a:0', which is float32");
    }
}
