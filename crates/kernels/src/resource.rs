//! The resource manager: per-task state (variables, queues, accumulators) keyed by
//! container and shared name, outliving steps and sessions.

use std::any::Any;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, RwLock};

use ferroflow_core::{DataType, Status, Tensor};

/// A variable: used by both resource (`VarHandleOp`) and ref (`VariableV2`) variables.
#[derive(Debug)]
pub struct Var {
    /// Name for error messages (the shared name).
    pub name: String,
    /// Declared dtype.
    pub dtype: DataType,
    /// Current value; `None` until initialized.
    pub value: RwLock<Option<Tensor>>,
}

impl Var {
    /// A new uninitialized variable.
    pub fn new(name: impl Into<String>, dtype: DataType) -> Var {
        Var { name: name.into(), dtype, value: RwLock::new(None) }
    }

    /// The current value (a cheap clone), or FailedPrecondition if uninitialized.
    pub fn read(&self) -> Result<Tensor, Status> {
        self.value
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
            .ok_or_else(|| Status::failed_precondition(format!("Attempting to use uninitialized value {}", self.name)))
    }

    /// Replaces the value.
    pub fn assign(&self, t: Tensor) -> Result<(), Status> {
        if t.dtype() != self.dtype {
            return Err(Status::invalid_argument(format!(
                "variable {} has dtype {} but was assigned a {} tensor",
                self.name,
                self.dtype,
                t.dtype()
            )));
        }
        *self.value.write().unwrap_or_else(|e| e.into_inner()) = Some(t);
        Ok(())
    }

    /// Whether a value has been assigned.
    pub fn is_initialized(&self) -> bool {
        self.value.read().unwrap_or_else(|e| e.into_inner()).is_some()
    }

    /// Runs `f` on the value under the write lock (in-place updates by optimizers).
    pub fn update<R>(&self, f: impl FnOnce(&mut Tensor) -> Result<R, Status>) -> Result<R, Status> {
        let mut g = self.value.write().unwrap_or_else(|e| e.into_inner());
        let t = g.as_mut().ok_or_else(|| {
            Status::failed_precondition(format!("Attempting to use uninitialized value {}", self.name))
        })?;
        f(t)
    }
}

type Key = (String, String, &'static str);

/// Holds resources by (container, name, type). The empty container means `localhost`,
/// TensorFlow's default container.
#[derive(Default)]
pub struct ResourceMgr {
    map: Mutex<HashMap<Key, Arc<dyn Any + Send + Sync>>>,
}

fn container(c: &str) -> String {
    if c.is_empty() {
        "localhost".to_string()
    } else {
        c.to_string()
    }
}

impl ResourceMgr {
    /// An empty manager.
    pub fn new() -> ResourceMgr {
        ResourceMgr::default()
    }

    /// Looks up a resource of type `T`.
    pub fn lookup<T: Any + Send + Sync>(&self, cont: &str, name: &str) -> Result<Arc<T>, Status> {
        let key = (container(cont), name.to_string(), std::any::type_name::<T>());
        let g = self.map.lock().unwrap_or_else(|e| e.into_inner());
        match g.get(&key) {
            Some(r) => r.clone().downcast::<T>().map_err(|_| Status::internal("resource type mismatch")),
            None => {
                Err(Status::not_found(format!("Resource {}/{}/{} does not exist.", key.0, name, short_type::<T>())))
            }
        }
    }

    /// Looks up a resource, creating it with `create` if absent.
    pub fn lookup_or_create<T: Any + Send + Sync>(
        &self,
        cont: &str,
        name: &str,
        create: impl FnOnce() -> Result<T, Status>,
    ) -> Result<Arc<T>, Status> {
        let key = (container(cont), name.to_string(), std::any::type_name::<T>());
        let mut g = self.map.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(r) = g.get(&key) {
            return r.clone().downcast::<T>().map_err(|_| Status::internal("resource type mismatch"));
        }
        let r = Arc::new(create()?);
        g.insert(key, r.clone());
        Ok(r)
    }

    /// Deletes a resource; NotFound if absent.
    pub fn delete<T: Any + Send + Sync>(&self, cont: &str, name: &str) -> Result<(), Status> {
        let key = (container(cont), name.to_string(), std::any::type_name::<T>());
        let mut g = self.map.lock().unwrap_or_else(|e| e.into_inner());
        g.remove(&key).map(|_| ()).ok_or_else(|| {
            Status::not_found(format!("Resource {}/{}/{} does not exist.", key.0, name, short_type::<T>()))
        })
    }

    /// Drops every resource in the given containers (all containers if empty).
    pub fn cleanup(&self, containers: &[String]) {
        let mut g = self.map.lock().unwrap_or_else(|e| e.into_inner());
        if containers.is_empty() {
            g.clear();
        } else {
            let cs: Vec<String> = containers.iter().map(|c| container(c)).collect();
            g.retain(|k, _| !cs.contains(&k.0));
        }
    }

    /// All variables, resource and reference ones (container, name, var), for savers and
    /// readiness checks.
    pub fn variables(&self) -> Vec<(String, String, Arc<Var>)> {
        let g = self.map.lock().unwrap_or_else(|e| e.into_inner());
        let mut out: Vec<_> = g
            .iter()
            .filter_map(|(k, v)| {
                let var = match v.clone().downcast::<Var>() {
                    Ok(var) => var,
                    Err(other) => other.downcast::<LegacyVar>().ok()?.0.clone(),
                };
                Some((k.0.clone(), k.1.clone(), var))
            })
            .collect();
        out.sort_by(|a, b| (&a.0, &a.1).cmp(&(&b.0, &b.1)));
        out
    }
}

/// A reference variable (`VariableV2`) as kept in the resource manager: a type of its own
/// (TensorFlow's `LegacyVar`), so a reference and a resource variable of one name never
/// share a value.
pub struct LegacyVar(pub Arc<Var>);

fn short_type<T>() -> &'static str {
    let n = std::any::type_name::<T>();
    n.rsplit("::").next().unwrap_or(n)
}
