//! TensorFlow device names: parsing every accepted form, completing and matching.

use crate::Status;

/// A possibly partial device name such as `/job:ps/task:0` or
/// `/job:worker/replica:0/task:1/device:CPU:0`. `None` fields are unconstrained.
///
/// ```
/// use ferroflow_core::DeviceName;
/// let d = DeviceName::parse("/job:ps/task:0").unwrap();
/// assert_eq!(d.job.as_deref(), Some("ps"));
/// let full = d.completed_cpu();
/// assert_eq!(full.to_string(), "/job:ps/replica:0/task:0/device:CPU:0");
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct DeviceName {
    /// Job name.
    pub job: Option<String>,
    /// Replica index.
    pub replica: Option<i32>,
    /// Task index.
    pub task: Option<i32>,
    /// Device type, upper-cased (`CPU`, `GPU`).
    pub device_type: Option<String>,
    /// Device index.
    pub id: Option<i32>,
}

fn bad(name: &str, why: &str) -> Status {
    Status::invalid_argument(format!(
        "invalid device name '{name}': {why}; expected e.g. '/job:ps/task:0', \
         '/job:worker/replica:0/task:1/device:CPU:0' or '/cpu:0'"
    ))
}

fn parse_index(name: &str, field: &str, v: &str) -> Result<Option<i32>, Status> {
    if v == "*" {
        return Ok(None);
    }
    v.parse::<i32>()
        .ok()
        .filter(|i| *i >= 0)
        .map(Some)
        .ok_or_else(|| bad(name, &format!("{field} '{v}' is not a non-negative integer")))
}

fn valid_job(j: &str) -> bool {
    let mut c = j.chars();
    matches!(c.next(), Some(ch) if ch.is_ascii_alphabetic())
        && c.all(|ch| ch.is_ascii_alphanumeric() || ch == '_' || ch == '-' || ch == '.')
}

impl DeviceName {
    /// Parses a full, partial or legacy device name. The empty string is unconstrained.
    pub fn parse(name: &str) -> Result<DeviceName, Status> {
        let mut d = DeviceName::default();
        if name.is_empty() {
            return Ok(d);
        }
        let Some(rest) = name.strip_prefix('/') else {
            return Err(bad(name, "it must start with '/'"));
        };
        let parts: Vec<&str> = rest.split('/').collect();
        let mut i = 0;
        while i < parts.len() {
            let p = parts[i];
            let (key, val) = p.split_once(':').ok_or_else(|| bad(name, &format!("component '{p}' has no ':'")))?;
            match key {
                "job" => {
                    if !valid_job(val) {
                        return Err(bad(name, &format!("job name '{val}' is not valid")));
                    }
                    d.job = Some(val.to_string());
                }
                "replica" => d.replica = parse_index(name, "replica", val)?,
                "task" => d.task = parse_index(name, "task", val)?,
                "device" => {
                    let (ty, id) = val.split_once(':').unwrap_or((val, "*"));
                    d.set_device(name, ty, id)?;
                }
                ty if ty.eq_ignore_ascii_case("cpu") || ty.eq_ignore_ascii_case("gpu") => {
                    d.set_device(name, ty, val)?;
                }
                _ => return Err(bad(name, &format!("unknown component '{key}'"))),
            }
            i += 1;
        }
        Ok(d)
    }

    fn set_device(&mut self, name: &str, ty: &str, id: &str) -> Result<(), Status> {
        if ty.is_empty() || !ty.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return Err(bad(name, &format!("device type '{ty}' is not valid")));
        }
        self.device_type = if ty == "*" { None } else { Some(ty.to_ascii_uppercase()) };
        self.id = parse_index(name, "device index", id)?;
        Ok(())
    }

    /// Fills the unset fields from `other` (TensorFlow's MergeDevNames with soft defaults).
    pub fn merged_with_defaults(&self, defaults: &DeviceName) -> DeviceName {
        DeviceName {
            job: self.job.clone().or_else(|| defaults.job.clone()),
            replica: self.replica.or(defaults.replica),
            task: self.task.or(defaults.task),
            device_type: self.device_type.clone().or_else(|| defaults.device_type.clone()),
            id: self.id.or(defaults.id),
        }
    }

    /// Completes missing replica/device with `replica:0`, `device:CPU:0`.
    pub fn completed_cpu(&self) -> DeviceName {
        DeviceName {
            job: self.job.clone(),
            replica: Some(self.replica.unwrap_or(0)),
            task: self.task,
            device_type: Some(self.device_type.clone().unwrap_or_else(|| "CPU".into())),
            id: Some(self.id.unwrap_or(0)),
        }
    }

    /// Whether every field set in `self` equals the one in `full`.
    pub fn matches(&self, full: &DeviceName) -> bool {
        fn ok<T: PartialEq>(a: &Option<T>, b: &Option<T>) -> bool {
            a.is_none() || a == b
        }
        ok(&self.job, &full.job)
            && ok(&self.replica, &full.replica)
            && ok(&self.task, &full.task)
            && ok(&self.device_type, &full.device_type)
            && ok(&self.id, &full.id)
    }

    /// Whether two names can describe one device (no field disagrees).
    pub fn compatible(&self, other: &DeviceName) -> bool {
        fn ok<T: PartialEq>(a: &Option<T>, b: &Option<T>) -> bool {
            a.is_none() || b.is_none() || a == b
        }
        ok(&self.job, &other.job)
            && ok(&self.replica, &other.replica)
            && ok(&self.task, &other.task)
            && ok(&self.device_type, &other.device_type)
            && ok(&self.id, &other.id)
    }

    /// The task part, `/job:J/replica:R/task:T`.
    pub fn task_name(&self) -> String {
        let mut s = String::new();
        if let Some(j) = &self.job {
            s.push_str(&format!("/job:{j}"));
        }
        if let Some(r) = self.replica {
            s.push_str(&format!("/replica:{r}"));
        }
        if let Some(t) = self.task {
            s.push_str(&format!("/task:{t}"));
        }
        s
    }

    /// Whether all fields are set.
    pub fn is_full(&self) -> bool {
        self.job.is_some()
            && self.replica.is_some()
            && self.task.is_some()
            && self.device_type.is_some()
            && self.id.is_some()
    }
}

impl std::fmt::Display for DeviceName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.task_name())?;
        match (&self.device_type, self.id) {
            (Some(t), Some(i)) => write!(f, "/device:{t}:{i}"),
            (Some(t), None) => write!(f, "/device:{t}:*"),
            (None, Some(i)) => write!(f, "/device:*:{i}"),
            (None, None) => Ok(()),
        }
    }
}

/// Builds TensorFlow's rendezvous key:
/// `<send_device>;<incarnation as 16 hex digits>;<recv_device>;<tensor_name>;<frame>:<iter>`.
pub fn rendezvous_key(send_device: &str, incarnation: u64, recv_device: &str, tensor_name: &str) -> String {
    format!("{send_device};{incarnation:016x};{recv_device};{tensor_name};0:0")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forms() {
        let full = DeviceName::parse("/job:worker/replica:0/task:1/device:CPU:0").unwrap();
        assert!(full.is_full());
        assert_eq!(full.to_string(), "/job:worker/replica:0/task:1/device:CPU:0");
        let legacy = DeviceName::parse("/cpu:0").unwrap();
        assert_eq!(legacy.device_type.as_deref(), Some("CPU"));
        assert_eq!(legacy.id, Some(0));
        let mixed = DeviceName::parse("/job:worker/task:1/cpu:0").unwrap();
        assert!(mixed.matches(&full));
        assert!(DeviceName::parse("/job:ps/task:0")
            .unwrap()
            .matches(&DeviceName::parse("/job:ps/replica:0/task:0/device:CPU:0").unwrap()));
        assert!(!DeviceName::parse("/job:ps/task:1").unwrap().matches(&full));
        assert_eq!(DeviceName::parse("").unwrap(), DeviceName::default());
    }

    #[test]
    fn errors_explain() {
        for bad in ["job:ps", "/job:ps/task:x", "/job:/task:0", "/foo:1", "/job:ps/task:-1", "/job:ps/task"] {
            let e = DeviceName::parse(bad).unwrap_err();
            assert_eq!(e.code, crate::Code::InvalidArgument, "{bad}");
            assert!(e.message.contains(bad), "{}", e.message);
        }
    }

    #[test]
    fn merge() {
        let a = DeviceName::parse("/job:ps").unwrap();
        let b = DeviceName::parse("/job:worker/task:3/device:CPU:0").unwrap();
        assert_eq!(a.merged_with_defaults(&b).to_string(), "/job:ps/task:3/device:CPU:0");
    }
}
