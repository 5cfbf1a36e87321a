//! The cluster flags shared by `ferroflow server` and `ferroflow train`: `--cluster`,
//! TensorFlow's classic `--ps_hosts/--worker_hosts` with `--job_name/--task_index`, or the
//! `TF_CONFIG` environment variable (Kubeflow's TFJob).

use ferroflow_distributed::{ClusterFlags, ClusterSpec, TfConfig};

/// Where the cluster and this task come from.
#[derive(clap::Args, Debug, Default, Clone)]
pub struct ClusterArgs {
    /// The cluster, e.g. 'ps=ps0:2222;worker=w0:2222,w1:2222'.
    #[arg(long)]
    pub cluster: Option<String>,
    /// Parameter server tasks, comma-separated host:port (with --worker_hosts).
    #[arg(long = "ps_hosts", alias = "ps-hosts")]
    pub ps_hosts: Option<String>,
    /// Worker tasks, comma-separated host:port.
    #[arg(long = "worker_hosts", alias = "worker-hosts")]
    pub worker_hosts: Option<String>,
    /// Chief task (TF_CONFIG-style clusters), host:port.
    #[arg(long = "chief_hosts", alias = "chief-hosts")]
    pub chief_hosts: Option<String>,
    /// This task's job (ps, worker, ...).
    #[arg(long = "job_name", alias = "job-name")]
    pub job_name: Option<String>,
    /// This task's index in its job.
    #[arg(long = "task_index", alias = "task-index")]
    pub task_index: Option<i32>,
}

impl ClusterArgs {
    /// The cluster with this task's job and index, or `None` when no cluster is given (no
    /// flags and no `TF_CONFIG` cluster).
    pub fn resolve(&self) -> Result<Option<(ClusterSpec, String, i32)>, String> {
        let mut flags: Vec<String> = Vec::new();
        let mut push = |name: &str, v: &Option<String>| {
            if let Some(v) = v {
                flags.push(format!("--{name}={v}"));
            }
        };
        push("cluster", &self.cluster);
        push("ps_hosts", &self.ps_hosts);
        push("worker_hosts", &self.worker_hosts);
        push("chief_hosts", &self.chief_hosts);
        if !flags.is_empty() {
            if let Some(j) = &self.job_name {
                flags.push(format!("--job_name={j}"));
            }
            if let Some(t) = self.task_index {
                flags.push(format!("--task_index={t}"));
            }
            let f = ClusterFlags::parse(&flags).map_err(|e| e.to_string())?;
            let (job, task) = f.task().map_err(|e| e.to_string())?;
            return Ok(Some((f.cluster, job, task)));
        }
        if let Some(tc) = TfConfig::from_env().map_err(|e| format!("TF_CONFIG: {e}"))? {
            if !tc.cluster.is_empty() {
                let t = tc.task.clone().ok_or("TF_CONFIG has a cluster but no task: set task.type and task.index")?;
                let job = self.job_name.clone().unwrap_or(t.job);
                let index = self.task_index.unwrap_or(t.index);
                tc.cluster.task_address(&job, index).map_err(|e| e.to_string())?;
                return Ok(Some((tc.cluster, job, index)));
            }
        }
        if self.job_name.is_some() || self.task_index.is_some() {
            return Err("--job_name/--task_index need a cluster: --cluster, --<job>_hosts or TF_CONFIG".into());
        }
        Ok(None)
    }
}
