//! The `TF_CONFIG` environment variable (docs/protocol.md, "TF_CONFIG"), as written by users, by
//! `tf.distribute` tooling and by Kubeflow's TFJob operator:
//!
//! ```json
//! {"cluster": {"chief": ["mnist-chief-0.default.svc:2222"],
//!              "ps": ["mnist-ps-0.default.svc:2222", "mnist-ps-1.default.svc:2222"],
//!              "worker": ["mnist-worker-0.default.svc:2222"]},
//!  "task": {"type": "ps", "index": 1}, "environment": "cloud"}
//! ```
//!
//! Jobs are lists (index = position) or sparse `{"<idx>": "host:port"}` maps; Kubeflow
//! with `enableDynamicWorker` writes the cluster under `"sparseCluster"`. Optional keys:
//! `rpc_layer` (only "grpc"), `session_master`, `environment`. Unknown keys are ignored.

use std::collections::BTreeMap;

use ferroflow_core::proto::ServerDef;
use ferroflow_core::Status;
use serde_json::Value;

use crate::cluster_spec::{split_host_port, ClusterSpec};

/// A task of the cluster: job name and index.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TaskId {
    /// Job name (`task.type`).
    pub job: String,
    /// Task index (`task.index`).
    pub index: i32,
}

/// A parsed and validated `TF_CONFIG`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TfConfig {
    /// The cluster (empty if TF_CONFIG has none).
    pub cluster: ClusterSpec,
    /// This process's task, if given; it is always a task of `cluster`.
    pub task: Option<TaskId>,
    /// `rpc_layer` ("grpc" or absent).
    pub rpc_layer: Option<String>,
    /// `session_master`: overrides [`TfConfig::master`].
    pub session_master: Option<String>,
    /// `environment` (Kubeflow sets "cloud").
    pub environment: Option<String>,
}

fn bad(msg: impl std::fmt::Display) -> Status {
    Status::invalid_argument(format!("TF_CONFIG: {msg}"))
}

fn opt_string(obj: &serde_json::Map<String, Value>, key: &str) -> Result<Option<String>, Status> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(v) => Err(bad(format!("'{key}' must be a string, got {v}"))),
    }
}

fn address(job: &str, idx: &str, v: &Value) -> Result<String, Status> {
    match v {
        Value::String(s) => Ok(s.clone()),
        other => {
            Err(bad(format!("cluster job '{job}' task {idx}: the address must be a \"host:port\" string, got {other}")))
        }
    }
}

fn parse_cluster(key: &str, v: &Value) -> Result<ClusterSpec, Status> {
    let Value::Object(jobs) = v else {
        return Err(bad(format!(
            "'{key}' must be an object mapping job names to lists of \"host:port\", got {v}; e.g. \
             {{\"{key}\": {{\"ps\": [\"ps0:2222\"], \"worker\": [\"w0:2222\", \"w1:2222\"]}}}}"
        )));
    };
    let mut map = BTreeMap::new();
    for (job, tasks) in jobs {
        let mut t = BTreeMap::new();
        match tasks {
            Value::Array(list) => {
                for (i, a) in list.iter().enumerate() {
                    t.insert(i as i32, address(job, &i.to_string(), a)?);
                }
            }
            Value::Object(sparse) => {
                for (idx, a) in sparse {
                    let i = idx.trim().parse::<i32>().ok().filter(|i| *i >= 0).ok_or_else(|| {
                        bad(format!(
                            "cluster job '{job}': sparse task key '{idx}' is not a non-negative integer \
                             (expected e.g. {{\"0\": \"host:port\", \"3\": \"host:port\"}})"
                        ))
                    })?;
                    if t.insert(i, address(job, idx, a)?).is_some() {
                        return Err(bad(format!("cluster job '{job}' lists task {i} twice")));
                    }
                }
            }
            other => {
                return Err(bad(format!(
                    "cluster job '{job}' must be a list of \"host:port\" or a {{\"index\": \"host:port\"}} map, got {other}"
                )))
            }
        }
        map.insert(job.clone(), t);
    }
    ClusterSpec::from_map(map).map_err(|e| e.context("TF_CONFIG"))
}

fn parse_task(v: &Value, cluster: &ClusterSpec) -> Result<TaskId, Status> {
    let Value::Object(t) = v else {
        return Err(bad(format!("'task' must be an object like {{\"type\": \"worker\", \"index\": 0}}, got {v}")));
    };
    let job = match t.get("type") {
        Some(Value::String(s)) if !s.is_empty() => s.clone(),
        other => {
            return Err(bad(format!(
                "'task.type' must be a job name of the cluster ([{}]), got {}",
                cluster.jobs().join(", "),
                other.map_or("nothing".to_string(), Value::to_string)
            )))
        }
    };
    if cluster.is_empty() {
        return Err(bad(format!(
            "'task' is of type '{job}' but there is no 'cluster'; add e.g. \
             \"cluster\": {{\"{job}\": [\"host:2222\"]}}"
        )));
    }
    let index = match t.get("index") {
        None | Some(Value::Null) => match cluster.task_indices(&job) {
            // As server_lib: the index may be left out when the job has a single task.
            Ok(idx) if idx.len() == 1 => idx[0],
            _ => return Err(bad(format!("'task.index' is missing for task type '{job}'; add e.g. \"index\": 0"))),
        },
        Some(Value::Number(n)) => n
            .as_i64()
            .and_then(|i| i32::try_from(i).ok())
            .filter(|i| *i >= 0)
            .ok_or_else(|| bad(format!("'task.index' must be a non-negative integer, got {n}")))?,
        Some(Value::String(s)) => s
            .trim()
            .parse::<i32>()
            .ok()
            .filter(|i| *i >= 0)
            .ok_or_else(|| bad(format!("'task.index' must be a non-negative integer, got \"{s}\"")))?,
        Some(other) => return Err(bad(format!("'task.index' must be a non-negative integer, got {other}"))),
    };
    cluster.task_address(&job, index).map_err(|e| e.context(format!("TF_CONFIG task /job:{job}/task:{index}")))?;
    Ok(TaskId { job, index })
}

impl TfConfig {
    /// Parses and validates a TF_CONFIG JSON document.
    pub fn parse(json: &str) -> Result<TfConfig, Status> {
        let v: Value = serde_json::from_str(json).map_err(|e| {
            bad(format!(
                "not valid JSON ({e}); expected e.g. {{\"cluster\": {{\"worker\": [\"w0:2222\"]}}, \"task\": {{\"type\": \"worker\", \"index\": 0}}}}"
            ))
        })?;
        let Value::Object(obj) = &v else {
            return Err(bad(format!("must be a JSON object, got {v}")));
        };
        let cluster = match (obj.get("cluster"), obj.get("sparseCluster")) {
            (Some(_), Some(_)) => return Err(bad("has both 'cluster' and 'sparseCluster'; give only one")),
            (Some(c), None) => parse_cluster("cluster", c)?,
            (None, Some(c)) => parse_cluster("sparseCluster", c)?,
            (None, None) => ClusterSpec::default(),
        };
        let task = match obj.get("task") {
            None | Some(Value::Null) => None,
            Some(t) => Some(parse_task(t, &cluster)?),
        };
        let rpc_layer = opt_string(obj, "rpc_layer")?.filter(|s| !s.is_empty());
        if let Some(r) = &rpc_layer {
            if r != "grpc" {
                return Err(bad(format!(
                    "rpc_layer '{r}' is not supported: ferroflow speaks only \"grpc\" (TensorFlow 2.x also \
                     accepts only grpc; grpc+verbs/mpi/gdr were removed)"
                )));
            }
        }
        Ok(TfConfig {
            cluster,
            task,
            rpc_layer,
            session_master: opt_string(obj, "session_master")?,
            environment: opt_string(obj, "environment")?,
        })
    }

    /// Reads `TF_CONFIG` from the environment: `Ok(None)` if it is unset or empty.
    pub fn from_env() -> Result<Option<TfConfig>, Status> {
        match std::env::var("TF_CONFIG") {
            Ok(s) if !s.trim().is_empty() => TfConfig::parse(&s).map(Some),
            Ok(_) | Err(std::env::VarError::NotPresent) => Ok(None),
            Err(std::env::VarError::NotUnicode(_)) => Err(bad("is not valid UTF-8")),
        }
    }

    /// The session target, as `TFConfigClusterResolver.master()`: `session_master` if set;
    /// "" (in-process) for a cluster of at most one task; else
    /// `[<rpc_layer>://]<this task's address>`.
    pub fn master(&self) -> Result<String, Status> {
        if let Some(m) = &self.session_master {
            return Ok(m.clone());
        }
        if self.cluster.tasks().len() <= 1 {
            return Ok(String::new());
        }
        let addr = self.own_address()?;
        Ok(match &self.rpc_layer {
            Some(r) => format!("{r}://{addr}"),
            None => addr.to_string(),
        })
    }

    fn own(&self) -> Result<&TaskId, Status> {
        self.task.as_ref().ok_or_else(|| {
            bad(format!(
                "has no 'task'; add e.g. \"task\": {{\"type\": \"{}\", \"index\": 0}}",
                self.cluster.jobs().first().copied().unwrap_or("worker")
            ))
        })
    }

    /// This task's `host:port`.
    pub fn own_address(&self) -> Result<&str, Status> {
        let t = self.own()?;
        self.cluster.task_address(&t.job, t.index)
    }

    /// The port this task listens on (the port of its own cluster entry).
    pub fn own_port(&self) -> Result<u16, Status> {
        let addr = self.own_address()?;
        split_host_port(addr).map(|(_, p)| p).ok_or_else(|| bad(format!("address '{addr}' has no valid port")))
    }

    /// The ServerDef of this task: the cluster (jobs sorted), `job_name = task.type`,
    /// `task_index = task.index`, `protocol = "grpc"`.
    pub fn server_def(&self) -> Result<ServerDef, Status> {
        let t = self.own()?;
        self.cluster.server_def(&t.job, t.index)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ferroflow_core::Code;

    const KUBEFLOW: &str = r#"{"cluster": {"chief": ["mnist-chief-0.default.svc:2222"],
             "ps": ["mnist-ps-0.default.svc:2222", "mnist-ps-1.default.svc:2222"],
             "worker": ["mnist-worker-0.default.svc:2222", "mnist-worker-1.default.svc:2222"]},
 "task": {"type": "ps", "index": 1}, "environment": "cloud"}"#;

    #[test]
    fn kubeflow_example() {
        let c = TfConfig::parse(KUBEFLOW).unwrap();
        assert_eq!(c.task, Some(TaskId { job: "ps".into(), index: 1 }));
        assert_eq!(c.environment.as_deref(), Some("cloud"));
        assert_eq!(c.own_address().unwrap(), "mnist-ps-1.default.svc:2222");
        assert_eq!(c.own_port().unwrap(), 2222);
        assert_eq!(c.master().unwrap(), "mnist-ps-1.default.svc:2222");
        let sd = c.server_def().unwrap();
        assert_eq!((sd.job_name.as_str(), sd.task_index, sd.protocol.as_str()), ("ps", 1, "grpc"));
        let cluster = sd.cluster.unwrap();
        let jobs: Vec<&str> = cluster.job.iter().map(|j| j.name.as_str()).collect();
        assert_eq!(jobs, vec!["chief", "ps", "worker"]);
        assert_eq!(cluster.job[1].tasks.get(&1).map(String::as_str), Some("mnist-ps-1.default.svc:2222"));
    }

    #[test]
    fn sparse_cluster_and_rpc_layer() {
        let j = r#"{"sparseCluster": {"ps": ["ps-0:2222"], "worker": {"1": "w-1:2222", "4": "w-4:2222"}},
                    "task": {"type": "worker", "index": 4}, "rpc_layer": "grpc"}"#;
        let c = TfConfig::parse(j).unwrap();
        assert_eq!(c.cluster.task_indices("worker").unwrap(), vec![1, 4]);
        assert_eq!(c.master().unwrap(), "grpc://w-4:2222");
        let sd = c.server_def().unwrap();
        assert_eq!(sd.task_index, 4);
        assert_eq!(sd.cluster.unwrap().job[1].tasks.len(), 2);
    }

    #[test]
    fn master_rules() {
        let one =
            TfConfig::parse(r#"{"cluster": {"worker": ["w:1"]}, "task": {"type": "worker", "index": 0}}"#).unwrap();
        assert_eq!(one.master().unwrap(), "");
        let sm = TfConfig::parse(
            r#"{"cluster": {"worker": ["w:1", "w:2"]}, "task": {"type": "worker", "index": "1"},
                                   "session_master": "grpc://m:5"}"#,
        )
        .unwrap();
        assert_eq!(sm.master().unwrap(), "grpc://m:5");
        assert_eq!(sm.task.as_ref().unwrap().index, 1);
        let no_index =
            TfConfig::parse(r#"{"cluster": {"ps": ["p:1"], "worker": ["w:1", "w:2"]}, "task": {"type": "ps"}}"#);
        assert_eq!(no_index.unwrap().task.unwrap().index, 0);
        let e = TfConfig::parse(r#"{"cluster": {"worker": ["w:1", "w:2"]}, "task": {"type": "worker"}}"#).unwrap_err();
        assert!(e.message.contains("'task.index' is missing"), "{e}");
        let empty = TfConfig::parse("{}").unwrap();
        assert!(empty.cluster.is_empty() && empty.task.is_none());
        assert_eq!(empty.master().unwrap(), "");
        assert!(empty.server_def().unwrap_err().message.contains("has no 'task'"));
    }

    #[test]
    fn errors() {
        let e = TfConfig::parse("{\"cluster\": ").unwrap_err();
        assert_eq!(e.code, Code::InvalidArgument);
        assert!(e.message.contains("not valid JSON"), "{e}");
        assert!(TfConfig::parse("[1]").unwrap_err().message.contains("JSON object"));
        let e = TfConfig::parse(r#"{"cluster": {"ps": ["p:1"]}, "task": {"type": "worker", "index": 0}}"#).unwrap_err();
        assert!(e.message.contains("no job 'worker'") && e.message.contains("[ps]"), "{e}");
        let e = TfConfig::parse(r#"{"cluster": {"ps": ["p:1"]}, "task": {"type": "ps", "index": 2}}"#).unwrap_err();
        assert!(e.message.contains("no task 2") && e.message.contains("[0]"), "{e}");
        let e = TfConfig::parse(r#"{"cluster": {"ps": ["p:1"]}, "task": {"type": "ps", "index": -1}}"#).unwrap_err();
        assert!(e.message.contains("non-negative"), "{e}");
        let e = TfConfig::parse(r#"{"cluster": {"ps": ["p:1"]}, "rpc_layer": "grpc+verbs"}"#).unwrap_err();
        assert!(e.message.contains("grpc+verbs"), "{e}");
        let e = TfConfig::parse(r#"{"cluster": {"ps": [1]}}"#).unwrap_err();
        assert!(e.message.contains("host:port"), "{e}");
        let e = TfConfig::parse(r#"{"cluster": {"ps": {"x": "p:1"}}}"#).unwrap_err();
        assert!(e.message.contains("'x'"), "{e}");
        let e = TfConfig::parse(r#"{"cluster": {"ps": "p:1"}}"#).unwrap_err();
        assert!(e.message.contains("must be a list"), "{e}");
        let e = TfConfig::parse(r#"{"cluster": {"ps": ["bad"]}}"#).unwrap_err();
        assert!(e.message.starts_with("TF_CONFIG") && e.message.contains("'bad'"), "{e}");
        let e = TfConfig::parse(r#"{"task": {"type": "ps", "index": 0}}"#).unwrap_err();
        assert!(e.message.contains("no 'cluster'"), "{e}");
        let e = TfConfig::parse(r#"{"cluster": {"ps": ["p:1"]}, "sparseCluster": {"ps": ["p:1"]}}"#).unwrap_err();
        assert!(e.message.contains("only one"), "{e}");
    }
}
