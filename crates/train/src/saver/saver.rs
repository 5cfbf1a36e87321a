//! [`Saver`]: TensorFlow 1.x's `tf.train.Saver` over V2 checkpoints.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use ferroflow_core::proto::CheckpointState;
use ferroflow_core::{attr, DataType, Status, Tensor};
use ferroflow_graph::{global_variables, ops, Operation, Output, Scope, Variable};
use ferroflow_kernels::io::index_path;
use ferroflow_runtime::{RunOptions, StepRunner};

use super::checkpoint_state::{checkpoint_exists, get_checkpoint_state, resolve, update_checkpoint_state};

/// How to build a [`Saver`].
#[derive(Clone, Debug)]
pub struct SaverOptions {
    /// Variables to save and restore; `None` = every global variable (model variables,
    /// optimizer slots, `global_step`).
    pub var_list: Option<Vec<Variable>>,
    /// Checkpoints to keep; older ones are deleted after each save (0 = keep all).
    pub max_to_keep: usize,
    /// Device of the save and restore ops (e.g. the chief worker's `/job:worker/task:0`);
    /// variables are read and assigned on their own devices, so values travel between tasks
    /// by `_Send`/`_Recv` and no shared filesystem is needed. Empty = unconstrained.
    pub device: String,
    /// Name scope of the saver's nodes.
    pub name: String,
}

impl Default for SaverOptions {
    fn default() -> Self {
        SaverOptions { var_list: None, max_to_keep: 5, device: String::new(), name: "save".into() }
    }
}

/// Saves and restores variables with `SaveV2`/`RestoreV2` nodes it adds to the graph.
/// Checkpoint keys are the variables' node names (`hidden/weights`,
/// `hidden/weights/Adagrad`, `global_step`), as in TensorFlow, so checkpoints are
/// interchangeable with TensorFlow's. The parts of a [`ferroflow_graph::PartitionedVariable`]
/// are saved as slices of one tensor under the full variable's name.
///
/// ```
/// use ferroflow_graph::{ops, global_variables_initializer, Scope, Variable};
/// use ferroflow_runtime::{DirectSession, StepRunner};
/// use ferroflow_train::saver::{latest_checkpoint, Saver};
/// let s = Scope::new_root();
/// let w = Variable::new(&s, "w", ops::constant(&s, vec![1.0f32, 2.0]));
/// let init = global_variables_initializer(&s);
/// let saver = Saver::new(&s).unwrap();
/// let sess = DirectSession::new(s.graph());
/// sess.run(&[], &[], &[&init]).unwrap();
/// let dir = std::env::temp_dir().join(format!("ferroflow-saver-doc-{}", std::process::id()));
/// let prefix = dir.join("model.ckpt").display().to_string();
/// let path = saver.save(&sess, &prefix, Some(1)).unwrap();
/// assert_eq!(latest_checkpoint(&dir).unwrap(), Some(path.clone()));
/// saver.restore(&sess, &path).unwrap();
/// # std::fs::remove_dir_all(dir).unwrap();
/// ```
pub struct Saver {
    filename: String,
    save_tensor: String,
    restore_op: String,
    keys: Vec<String>,
    max_to_keep: usize,
    last: Mutex<Option<Vec<String>>>,
}

fn strings(v: &[String]) -> Tensor {
    Tensor::vec(v.iter().map(|s| s.as_bytes().to_vec()).collect::<Vec<_>>())
}

impl Saver {
    /// A saver of every global variable, keeping the last 5 checkpoints.
    pub fn new(s: &Scope) -> Result<Saver, Status> {
        Saver::with_options(s, SaverOptions::default())
    }

    /// A saver with explicit options.
    pub fn with_options(s: &Scope, opts: SaverOptions) -> Result<Saver, Status> {
        let vars = match opts.var_list {
            Some(v) => v,
            None => global_variables(s.graph())?,
        };
        if vars.is_empty() {
            return Err(Status::invalid_argument("No variables to save"));
        }
        // A part of a partitioned variable is saved as a slice of the full variable's key.
        let (mut keys, slices): (Vec<String>, Vec<String>) = vars
            .iter()
            .map(|v| match v.save_slice() {
                Some((full, spec)) => (full.to_string(), spec.to_string()),
                None => (v.name().to_string(), String::new()),
            })
            .unzip();
        let mut sorted: Vec<(&String, &String)> = keys.iter().zip(&slices).collect();
        sorted.sort();
        if let Some(w) = sorted.windows(2).find(|w| w[0].0 == w[1].0 && (w[0].1 == w[1].1 || w[0].1.is_empty())) {
            return Err(Status::invalid_argument(if w[0].1 == w[1].1 {
                format!("variable '{}' is in the saver's list twice", w[0].0)
            } else {
                format!("'{}' is in the saver's list both whole and as slice {}", w[0].0, w[1].1)
            }));
        }
        let root = s.root().without_control_deps();
        let ss = root.sub(&opts.name);
        let dev = if opts.device.is_empty() { ss.clone() } else { ss.with_device(&opts.device) };
        let filename = ops::placeholder_named(&dev, "filename", DataType::String, Some(&[]));

        let names = ops::constant_named(&dev, "SaveV2/tensor_names", strings(&keys));
        let shapes = ops::constant_named(&dev, "SaveV2/shape_and_slices", strings(&slices));
        let values: Vec<Output> = vars.iter().map(Variable::read).collect();
        let save = ops::save_v2(&dev, filename.clone(), names, shapes, values);
        let save_tensor = dev
            .with_control_deps(&[&save])
            .op("Identity")
            .name("control_dependency")
            .input(filename.clone())
            .build()
            .output(0);

        let names = ops::constant_named(&dev, "RestoreV2/tensor_names", strings(&keys));
        let shapes = ops::constant_named(&dev, "RestoreV2/shape_and_slices", strings(&slices));
        let dtypes: Vec<DataType> = vars.iter().map(Variable::dtype).collect();
        let restored = ops::restore_v2(&dev, filename.clone(), names, shapes, &dtypes);
        let mut assigns: Vec<Operation> = Vec::with_capacity(vars.len());
        for (v, value) in vars.iter().zip(restored) {
            let vs = ss.colocate_with(&v.handle());
            let op = if v.is_resource() {
                vs.op("AssignVariableOp").name("AssignVariableOp").input(v.handle()).input(value).build()
            } else {
                vs.op("Assign")
                    .name("Assign")
                    .input(v.handle())
                    .input(value)
                    .attr("validate_shape", attr::bool(true))
                    .attr("use_locking", attr::bool(true))
                    .build()
            };
            assigns.push(op);
        }
        let refs: Vec<&Operation> = assigns.iter().collect();
        let restore = ops::group_named(&ss, "restore_all", &refs);
        s.graph().status()?;
        keys.shrink_to_fit();
        Ok(Saver {
            filename: filename.name(),
            save_tensor: save_tensor.name(),
            restore_op: restore.name,
            keys,
            max_to_keep: opts.max_to_keep,
            last: Mutex::new(None),
        })
    }

    /// The checkpoint keys, in the saver's variable order.
    pub fn keys(&self) -> &[String] {
        &self.keys
    }

    /// Name of the string placeholder fed with the checkpoint path (`save/filename:0`).
    pub fn filename_tensor_name(&self) -> &str {
        &self.filename
    }

    /// Name of the tensor that, fetched, saves and returns the path.
    pub fn save_tensor_name(&self) -> &str {
        &self.save_tensor
    }

    /// Name of the op that restores every variable.
    pub fn restore_op_name(&self) -> &str {
        &self.restore_op
    }

    /// Checkpoints this saver still keeps, oldest first.
    pub fn last_checkpoints(&self) -> Vec<String> {
        self.last.lock().map(|l| l.clone().unwrap_or_default()).unwrap_or_default()
    }

    /// Saves the variables to `prefix-<global_step>` (or `prefix`), records it in the
    /// `checkpoint` file of its directory and deletes checkpoints beyond `max_to_keep`.
    /// Returns the checkpoint path. The first save in a directory that already has a
    /// `checkpoint` file continues its list, so `max_to_keep` holds across restarts.
    pub fn save(&self, sess: &dyn StepRunner, prefix: &str, global_step: Option<i64>) -> Result<String, Status> {
        let path = match global_step {
            Some(g) => format!("{prefix}-{g}"),
            None => prefix.to_string(),
        };
        let dir = parent_dir(&path);
        let feed = [(self.filename.clone(), Tensor::scalar(path.as_bytes().to_vec()))];
        sess.run_by_name(&feed, std::slice::from_ref(&self.save_tensor), &[], &RunOptions::default())?;
        let mut guard = self.last.lock().map_err(|_| Status::internal("saver state lock poisoned"))?;
        if guard.is_none() {
            let previous = get_checkpoint_state(&dir)?
                .map(|st| {
                    st.all_model_checkpoint_paths
                        .iter()
                        .map(|p| resolve(&dir, p).display().to_string())
                        .filter(|p| checkpoint_exists(p))
                        .collect()
                })
                .unwrap_or_default();
            *guard = Some(previous);
        }
        let last = guard.get_or_insert_with(Vec::new);
        last.retain(|p| *p != path);
        last.push(path.clone());
        while self.max_to_keep > 0 && last.len() > self.max_to_keep {
            let old = last.remove(0);
            delete_checkpoint_files(&old)?;
        }
        let state = CheckpointState {
            model_checkpoint_path: relative_to(&dir, &path),
            all_model_checkpoint_paths: last.iter().map(|p| relative_to(&dir, p)).collect(),
            ..Default::default()
        };
        update_checkpoint_state(&dir, &state)?;
        Ok(path)
    }

    /// Restores every variable from the checkpoint at `path`.
    pub fn restore(&self, sess: &dyn StepRunner, path: &str) -> Result<(), Status> {
        if !checkpoint_exists(path) {
            return Err(Status::not_found(format!(
                "The passed save_path is not a valid checkpoint: {path} ({} does not exist)",
                index_path(path).display()
            )));
        }
        let feed = [(self.filename.clone(), Tensor::scalar(path.as_bytes().to_vec()))];
        sess.run_by_name(&feed, &[], std::slice::from_ref(&self.restore_op), &RunOptions::default())?;
        Ok(())
    }
}

fn parent_dir(path: &str) -> PathBuf {
    match Path::new(path).parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// `path` relative to `dir` when it lies directly in it, else unchanged.
fn relative_to(dir: &Path, path: &str) -> String {
    let p = Path::new(path);
    match (p.parent(), p.file_name()) {
        (Some(parent), Some(name)) if parent == dir || (parent.as_os_str().is_empty() && dir == Path::new(".")) => {
            name.to_string_lossy().into_owned()
        }
        _ => path.to_string(),
    }
}

/// Deletes a checkpoint's files (`.index`, every `.data-*` shard, `.meta`).
pub fn delete_checkpoint_files(prefix: &str) -> Result<(), Status> {
    let dir = parent_dir(prefix);
    let base = Path::new(prefix).file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let data = format!("{base}.data-");
    let rm = |p: &Path| match std::fs::remove_file(p) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(Status::unknown(format!("cannot delete old checkpoint file {}: {e}", p.display()))),
    };
    rm(&index_path(prefix))?;
    rm(Path::new(&format!("{prefix}.meta")))?;
    if let Ok(rd) = std::fs::read_dir(&dir) {
        for e in rd.flatten() {
            if e.file_name().to_string_lossy().starts_with(&data) {
                rm(&e.path())?;
            }
        }
    }
    Ok(())
}
