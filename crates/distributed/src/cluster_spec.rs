//! The cluster: jobs of tasks, each task a `host:port` (TensorFlow's `tf.train.ClusterSpec`).
//! Built from code, from the classic `--ps_hosts/--worker_hosts` flags, from
//! `--cluster 'ps=h:p;worker=h:p,h:p'`, from TF_CONFIG ([`crate::TfConfig`]) or from a
//! `ClusterDef` proto; validated on construction with errors that say what is wrong and
//! what would be valid.

use std::collections::{BTreeMap, HashMap};
use std::fmt;

use ferroflow_core::proto::{ClusterDef, JobDef, ServerDef};
use ferroflow_core::Status;

/// Job name → (task index → `host:port`). Task indices may be sparse.
///
/// ```
/// use ferroflow_distributed::ClusterSpec;
/// let c = ClusterSpec::new(&[("ps", vec!["ps0:2222"]), ("worker", vec!["w0:2222", "w1:2222"])]).unwrap();
/// assert_eq!(c.task_address("worker", 1).unwrap(), "w1:2222");
/// assert_eq!(c.task_names()[0], "/job:ps/replica:0/task:0");
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ClusterSpec {
    jobs: BTreeMap<String, BTreeMap<i32, String>>,
}

/// TensorFlow's job name rule (`[a-zA-Z][_a-zA-Z0-9]*`).
fn check_job_name(job: &str) -> Result<(), Status> {
    let mut c = job.chars();
    let ok =
        matches!(c.next(), Some(ch) if ch.is_ascii_alphabetic()) && c.all(|ch| ch.is_ascii_alphanumeric() || ch == '_');
    if ok {
        Ok(())
    } else {
        let suggestion: String = job.chars().map(|ch| if ch.is_ascii_alphanumeric() { ch } else { '_' }).collect();
        Err(Status::invalid_argument(format!(
            "job name '{job}' is not valid: it must start with a letter and contain only letters, digits \
             and '_' (TensorFlow's rule), e.g. '{}'",
            if suggestion.starts_with(|ch: char| ch.is_ascii_alphabetic()) {
                suggestion
            } else {
                format!("job_{suggestion}")
            }
        )))
    }
}

/// Splits `host:port` (IPv6 hosts in brackets, `[::1]:2222`) and checks both parts.
pub(crate) fn split_host_port(addr: &str) -> Option<(&str, u16)> {
    let (host, port) = addr.rsplit_once(':')?;
    let port: u16 = port.parse().ok()?;
    let host_ok = if let Some(inner) = host.strip_prefix('[') {
        inner
            .strip_suffix(']')
            .is_some_and(|h| !h.is_empty() && h.chars().all(|c| c.is_ascii_hexdigit() || c == ':' || c == '.'))
    } else {
        !host.is_empty() && host.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_'))
    };
    host_ok.then_some((host, port))
}

fn check_address(job: &str, task: i32, addr: &str) -> Result<(), Status> {
    if split_host_port(addr).is_none() {
        return Err(Status::invalid_argument(format!(
            "task {task} of job '{job}' has address '{addr}', which is not 'host:port' with a port in \
             0..65535 (e.g. 'localhost:2222', '10.0.0.2:2222', 'ps-0.ns.svc:2222' or '[::1]:2222')"
        )));
    }
    Ok(())
}

impl ClusterSpec {
    /// A cluster from dense task lists: task `i` of a job is its `i`-th address.
    pub fn new(jobs: &[(&str, Vec<&str>)]) -> Result<ClusterSpec, Status> {
        let mut map = BTreeMap::new();
        for (job, addrs) in jobs {
            let tasks = addrs.iter().enumerate().map(|(i, a)| (i as i32, a.to_string())).collect();
            if map.insert(job.to_string(), tasks).is_some() {
                return Err(Status::invalid_argument(format!("job '{job}' is listed twice in the cluster")));
            }
        }
        ClusterSpec::from_map(map)
    }

    /// A cluster from sparse task maps: `(index, address)` pairs per job.
    pub fn from_sparse(jobs: &[(&str, Vec<(i32, &str)>)]) -> Result<ClusterSpec, Status> {
        let mut map: BTreeMap<String, BTreeMap<i32, String>> = BTreeMap::new();
        for (job, tasks) in jobs {
            if map.contains_key(*job) {
                return Err(Status::invalid_argument(format!("job '{job}' is listed twice in the cluster")));
            }
            let mut t = BTreeMap::new();
            for (i, a) in tasks {
                if t.insert(*i, a.to_string()).is_some() {
                    return Err(Status::invalid_argument(format!("job '{job}' lists task {i} twice")));
                }
            }
            map.insert(job.to_string(), t);
        }
        ClusterSpec::from_map(map)
    }

    /// A cluster from a job → (task → address) map, validated.
    pub fn from_map(jobs: BTreeMap<String, BTreeMap<i32, String>>) -> Result<ClusterSpec, Status> {
        let c = ClusterSpec { jobs };
        c.validate()?;
        Ok(c)
    }

    /// Parses `--cluster` syntax: `ps=h:p;worker=h:p,h:p` (jobs separated by `;`, dense
    /// task lists separated by `,`).
    pub fn parse_cluster_flag(s: &str) -> Result<ClusterSpec, Status> {
        let mut map = BTreeMap::new();
        for part in s.split(';').map(str::trim).filter(|p| !p.is_empty()) {
            let Some((job, hosts)) = part.split_once('=') else {
                return Err(Status::invalid_argument(format!(
                    "--cluster entry '{part}' has no '=': expected 'job=host:port,host:port', e.g. \
                     --cluster 'ps=ps0:2222;worker=w0:2222,w1:2222'"
                )));
            };
            let job = job.trim();
            let tasks = parse_host_list(&format!("job '{job}' of --cluster"), hosts)?;
            if map.insert(job.to_string(), tasks).is_some() {
                return Err(Status::invalid_argument(format!("--cluster lists job '{job}' twice")));
            }
        }
        if map.is_empty() {
            return Err(Status::invalid_argument(
                "--cluster is empty: expected e.g. --cluster 'ps=ps0:2222;worker=w0:2222,w1:2222'",
            ));
        }
        ClusterSpec::from_map(map)
    }

    /// A cluster from its proto form (validated).
    pub fn from_proto(def: &ClusterDef) -> Result<ClusterSpec, Status> {
        let mut map = BTreeMap::new();
        for j in &def.job {
            let tasks: BTreeMap<i32, String> = j.tasks.iter().map(|(k, v)| (*k, v.clone())).collect();
            if map.insert(j.name.clone(), tasks).is_some() {
                return Err(Status::invalid_argument(format!("ClusterDef lists job '{}' twice", j.name)));
            }
        }
        ClusterSpec::from_map(map)
    }

    /// The proto form, jobs sorted by name (as `ClusterSpec.as_cluster_def()`).
    pub fn to_proto(&self) -> ClusterDef {
        ClusterDef {
            job: self
                .jobs
                .iter()
                .map(|(name, tasks)| JobDef {
                    name: name.clone(),
                    tasks: tasks.iter().map(|(k, v)| (*k, v.clone())).collect(),
                })
                .collect(),
        }
    }

    fn validate(&self) -> Result<(), Status> {
        let mut seen: HashMap<&str, (&str, i32)> = HashMap::new();
        for (job, tasks) in &self.jobs {
            check_job_name(job)?;
            if tasks.is_empty() {
                return Err(Status::invalid_argument(format!(
                    "job '{job}' has no tasks; give it at least one 'host:port' (e.g. --{job}_hosts=localhost:2222) \
                     or leave it out of the cluster"
                )));
            }
            for (&task, addr) in tasks {
                if task < 0 {
                    return Err(Status::invalid_argument(format!(
                        "job '{job}' has task index {task}; task indices must be >= 0"
                    )));
                }
                check_address(job, task, addr)?;
                // Port 0 means "pick a free port" (create_local_server), so it may repeat.
                if split_host_port(addr).is_some_and(|(_, p)| p == 0) {
                    continue;
                }
                if let Some((j0, t0)) = seen.insert(addr.as_str(), (job.as_str(), task)) {
                    return Err(Status::invalid_argument(format!(
                        "address '{addr}' is used by both /job:{j0}/task:{t0} and /job:{job}/task:{task}; \
                         every task needs its own host:port"
                    )));
                }
            }
        }
        Ok(())
    }

    /// Whether the cluster has no jobs.
    pub fn is_empty(&self) -> bool {
        self.jobs.is_empty()
    }

    /// Job names, sorted.
    pub fn jobs(&self) -> Vec<&str> {
        self.jobs.keys().map(String::as_str).collect()
    }

    fn job(&self, job: &str) -> Result<&BTreeMap<i32, String>, Status> {
        self.jobs.get(job).ok_or_else(|| {
            Status::invalid_argument(format!("no job '{job}' in the cluster; known jobs: [{}]", self.jobs().join(", ")))
        })
    }

    /// The task indices of a job, sorted.
    pub fn task_indices(&self, job: &str) -> Result<Vec<i32>, Status> {
        Ok(self.job(job)?.keys().copied().collect())
    }

    /// Number of tasks in a job.
    pub fn num_tasks(&self, job: &str) -> Result<usize, Status> {
        Ok(self.job(job)?.len())
    }

    /// The `host:port` of a task.
    pub fn task_address(&self, job: &str, task: i32) -> Result<&str, Status> {
        let tasks = self.job(job)?;
        tasks.get(&task).map(String::as_str).ok_or_else(|| {
            let idx: Vec<String> = tasks.keys().map(|k| k.to_string()).collect();
            Status::invalid_argument(format!("job '{job}' has no task {task}; its tasks are [{}]", idx.join(", ")))
        })
    }

    /// Whether the task exists.
    pub fn has_task(&self, job: &str, task: i32) -> bool {
        self.jobs.get(job).is_some_and(|t| t.contains_key(&task))
    }

    /// Every task's name, `/job:J/replica:0/task:T`, jobs sorted by name then tasks by index.
    pub fn task_names(&self) -> Vec<String> {
        self.jobs
            .iter()
            .flat_map(|(j, tasks)| tasks.keys().map(move |t| format!("/job:{j}/replica:0/task:{t}")))
            .collect()
    }

    /// Every task as (job, index, address).
    pub fn tasks(&self) -> Vec<(&str, i32, &str)> {
        self.jobs.iter().flat_map(|(j, tasks)| tasks.iter().map(move |(t, a)| (j.as_str(), *t, a.as_str()))).collect()
    }

    /// The ServerDef of one task of this cluster (`protocol = "grpc"`); the task must exist.
    pub fn server_def(&self, job: &str, task: i32) -> Result<ServerDef, Status> {
        self.task_address(job, task)?;
        Ok(ServerDef {
            cluster: Some(self.to_proto()),
            job_name: job.to_string(),
            task_index: task,
            protocol: "grpc".into(),
            ..Default::default()
        })
    }
}

impl fmt::Display for ClusterSpec {
    /// `ps=[0]a:1;worker=[0]b:2,[1]c:3`-like, one job after another.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (n, (job, tasks)) in self.jobs.iter().enumerate() {
            if n > 0 {
                f.write_str(";")?;
            }
            write!(f, "{job}=")?;
            let dense = tasks.keys().enumerate().all(|(i, k)| i as i32 == *k);
            for (m, (t, a)) in tasks.iter().enumerate() {
                if m > 0 {
                    f.write_str(",")?;
                }
                if dense {
                    f.write_str(a)?;
                } else {
                    write!(f, "{t}@{a}")?;
                }
            }
        }
        Ok(())
    }
}

/// Parses a dense comma-separated host list (`a:1,b:2`).
fn parse_host_list(what: &str, hosts: &str) -> Result<BTreeMap<i32, String>, Status> {
    let mut out = BTreeMap::new();
    for (i, h) in hosts.split(',').enumerate() {
        let h = h.trim();
        if h.is_empty() {
            return Err(Status::invalid_argument(format!(
                "{what}: entry {i} of '{hosts}' is empty (a stray or trailing comma?); expected 'host:port,host:port'"
            )));
        }
        out.insert(i as i32, h.to_string());
    }
    Ok(out)
}

/// The cluster flags of TensorFlow's classic distributed scripts:
/// `--ps_hosts a:1,b:2 --worker_hosts c:3 --job_name ps --task_index 0` (any
/// `--<job>_hosts` flag defines a job), or `--cluster 'ps=a:1;worker=c:3'`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ClusterFlags {
    /// The cluster.
    pub cluster: ClusterSpec,
    /// `--job_name`.
    pub job_name: Option<String>,
    /// `--task_index`.
    pub task_index: Option<i32>,
    /// Arguments that were not cluster flags, in order.
    pub rest: Vec<String>,
}

impl ClusterFlags {
    /// Extracts the cluster flags from command-line arguments (`--flag value` or
    /// `--flag=value`, one or two dashes); other arguments are returned in `rest`.
    pub fn parse<I, S>(args: I) -> Result<ClusterFlags, Status>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let args: Vec<String> = args.into_iter().map(|s| s.as_ref().to_string()).collect();
        let mut jobs: BTreeMap<String, BTreeMap<i32, String>> = BTreeMap::new();
        let mut cluster_flag: Option<ClusterSpec> = None;
        let mut out = ClusterFlags::default();
        let mut i = 0;
        while i < args.len() {
            let a = &args[i];
            let name = a.strip_prefix("--").or_else(|| a.strip_prefix('-')).filter(|n| !n.is_empty());
            let Some(name) = name else {
                out.rest.push(a.clone());
                i += 1;
                continue;
            };
            let (flag, inline) = match name.split_once('=') {
                Some((f, v)) => (f, Some(v.to_string())),
                None => (name, None),
            };
            let ours = flag == "cluster" || flag == "job_name" || flag == "task_index" || flag.ends_with("_hosts");
            if !ours {
                out.rest.push(a.clone());
                i += 1;
                continue;
            }
            let value = match inline {
                Some(v) => v,
                None => {
                    i += 1;
                    args.get(i).cloned().ok_or_else(|| {
                        Status::invalid_argument(format!("flag --{flag} needs a value, e.g. --{flag}=..."))
                    })?
                }
            };
            i += 1;
            match flag {
                "cluster" => cluster_flag = Some(ClusterSpec::parse_cluster_flag(&value)?),
                "job_name" => out.job_name = Some(value.trim().to_string()),
                "task_index" => {
                    let t = value.trim().parse::<i32>().ok().filter(|t| *t >= 0).ok_or_else(|| {
                        Status::invalid_argument(format!("--task_index '{value}' is not a non-negative integer"))
                    })?;
                    out.task_index = Some(t);
                }
                _ => {
                    let job = flag.trim_end_matches("_hosts");
                    if job.is_empty() {
                        return Err(Status::invalid_argument("flag --_hosts has no job name; use e.g. --ps_hosts"));
                    }
                    let tasks = parse_host_list(&format!("--{flag}"), &value)?;
                    if jobs.insert(job.to_string(), tasks).is_some() {
                        return Err(Status::invalid_argument(format!("flag --{flag} is given twice")));
                    }
                }
            }
        }
        out.cluster = match cluster_flag {
            Some(c) if !jobs.is_empty() => {
                return Err(Status::invalid_argument(format!(
                    "give the cluster either with --cluster ('{c}') or with --<job>_hosts flags (--{}_hosts), not both",
                    jobs.keys().next().map(String::as_str).unwrap_or("ps")
                )))
            }
            Some(c) => c,
            None => ClusterSpec::from_map(jobs)?,
        };
        if let Some(job) = &out.job_name {
            out.cluster.job(job).map_err(|e| e.context("--job_name"))?;
            if let Some(t) = out.task_index {
                out.cluster.task_address(job, t).map_err(|e| e.context("--task_index"))?;
            }
        }
        Ok(out)
    }

    /// This process's task, `(job_name, task_index)`; `--task_index` defaults to 0.
    pub fn task(&self) -> Result<(String, i32), Status> {
        let job = self.job_name.clone().ok_or_else(|| {
            Status::invalid_argument(format!(
                "--job_name is missing; this process must be one of the cluster's jobs: [{}]",
                self.cluster.jobs().join(", ")
            ))
        })?;
        let task = self.task_index.unwrap_or(0);
        self.cluster.task_address(&job, task)?;
        Ok((job, task))
    }
}

#[cfg(test)]
mod tests;
