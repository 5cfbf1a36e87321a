//! The op registry: every op ferroflow knows, by TensorFlow name.

use std::collections::HashMap;
use std::sync::OnceLock;

use crate::op_def::OpDef;

/// Op name → definition.
#[derive(Default)]
pub struct OpRegistry {
    ops: HashMap<String, OpDef>,
}

impl OpRegistry {
    /// Adds an op; adding one twice is a bug in ferroflow.
    pub fn add(&mut self, def: OpDef) {
        let name = def.name.clone();
        if self.ops.insert(name.clone(), def).is_some() {
            panic!("op {name} registered twice");
        }
    }

    /// Looks up an op.
    pub fn get(&self, name: &str) -> Option<&OpDef> {
        self.ops.get(name)
    }

    /// All op names, sorted.
    pub fn names(&self) -> Vec<&str> {
        let mut v: Vec<&str> = self.ops.keys().map(String::as_str).collect();
        v.sort();
        v
    }
}

fn build() -> OpRegistry {
    let mut r = OpRegistry::default();
    crate::ops::register_all(&mut r);
    r
}

/// The global op registry.
pub fn op_registry() -> &'static OpRegistry {
    static R: OnceLock<OpRegistry> = OnceLock::new();
    R.get_or_init(build)
}

#[cfg(test)]
mod tests {
    #[test]
    fn registry_builds() {
        let r = super::op_registry();
        assert!(r.get("NoOp").is_some());
        assert!(r.get("_Recv").is_some(), "{:?}", r.names());
    }
}
