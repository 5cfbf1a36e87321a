//! `ferroflow checkpoint …`: inspect, verify and produce V2 checkpoints.

use ferroflow_runtime::StepRunner;
use std::path::Path;

use ferroflow_core::{Status, Tensor};
use ferroflow_graph::{
    get_or_create_global_step, global_variables, global_variables_initializer, ops, Scope, Variable, VariableOptions,
};
use ferroflow_kernels::io::BundleReader;
use ferroflow_runtime::DirectSession;
use ferroflow_train::optimizer::{Adagrad, Optimizer};
use ferroflow_train::saver::{latest_checkpoint, Saver, SaverOptions};

use crate::json;

#[derive(clap::Subcommand)]
pub enum CheckpointCmd {
    /// List a checkpoint's tensors (name, dtype, shape), optionally with their values.
    Inspect {
        /// Checkpoint prefix (e.g. `train/model.ckpt-100`) or a directory with a
        /// `checkpoint` file (its latest checkpoint is used).
        path: String,
        /// Also print every tensor's values.
        #[arg(long)]
        values: bool,
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Restore a checkpoint the way a training job does: one variable per tensor, a
    /// Saver's RestoreV2 + assign ops, then read the variables back and check each equals
    /// the file. Prints the restored values.
    Verify {
        /// Checkpoint prefix or directory.
        path: String,
        /// Use reference variables (`VariableV2`) instead of resource variables.
        #[arg(long)]
        ref_variables: bool,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Train a tiny linear model with Adagrad and save it with a Saver (variables
    /// `hidden/weights`, `hidden/biases`, their Adagrad slots and `global_step`); prints the
    /// saved values as JSON. Useful to try the format with TensorFlow's tools.
    WriteDemo {
        /// Directory for the checkpoint files.
        #[arg(long)]
        dir: String,
        /// Training steps before saving.
        #[arg(long, default_value_t = 5)]
        steps: i64,
        /// Use reference variables (`VariableV2`) instead of resource variables.
        #[arg(long)]
        ref_variables: bool,
        /// Checkpoints to keep.
        #[arg(long, default_value_t = 5)]
        max_to_keep: usize,
    },
}

fn resolve(path: &str) -> Result<String, Status> {
    if Path::new(path).is_dir() {
        latest_checkpoint(path)?
            .ok_or_else(|| Status::not_found(format!("no checkpoint recorded in {path}/checkpoint")))
    } else {
        Ok(path.to_string())
    }
}

fn inspect(path: &str, with_values: bool, as_json: bool) -> Result<(), Status> {
    let prefix = resolve(path)?;
    let r = BundleReader::open(&prefix)?;
    let mut items = Vec::new();
    for name in r.names() {
        let e = r.entry(&name)?;
        let v = if with_values { Some(r.read(&name)?) } else { None };
        if as_json {
            items.push(json::tensor_entry(&name, e.dtype.name(), e.shape.dims(), v.as_ref()));
        } else {
            let slices = r.stored_slices(&name)?;
            if slices.is_empty() {
                println!("{name}\t{}\t{}", e.dtype.name(), e.shape);
            } else {
                let list: Vec<String> = slices.iter().map(|s| s.to_string()).collect();
                println!(
                    "{name}\t{}\t{}\tstored as {} slices: {}",
                    e.dtype.name(),
                    e.shape,
                    list.len(),
                    list.join(" ")
                );
            }
            if let Some(t) = v {
                println!("  {}", json::values(&t));
            }
        }
    }
    if as_json {
        println!("{}", serde_json::json!({ "prefix": prefix, "tensors": items }));
    }
    Ok(())
}

fn verify(path: &str, ref_variables: bool, as_json: bool) -> Result<(), Status> {
    let prefix = resolve(path)?;
    let r = BundleReader::open(&prefix)?;
    let s = Scope::new_root();
    let opts = VariableOptions { use_resource: !ref_variables, trainable: false, ..Default::default() };
    let mut vars = Vec::new();
    for name in r.names() {
        let e = r.entry(&name)?;
        // Start every variable at zeros of the right type and shape.
        let zeros = ops::constant_named(&s, &format!("{name}/Initializer/zeros"), Tensor::zeros(e.dtype, e.shape)?);
        vars.push(Variable::with_options(&s, &name, zeros, &opts));
    }
    s.graph().status()?;
    let init = global_variables_initializer(&s);
    let saver = Saver::with_options(&s, SaverOptions { var_list: Some(vars.clone()), ..Default::default() })?;
    let sess = DirectSession::new(s.graph());
    sess.run(&[], &[], &[&init])?;
    saver.restore(&sess, &prefix)?;
    let outs: Vec<_> = vars.iter().map(Variable::read).collect();
    let refs: Vec<_> = outs.iter().collect();
    let got = sess.run(&[], &refs, &[])?;
    let mut items = Vec::new();
    for (v, t) in vars.iter().zip(&got) {
        let want = r.read(v.name())?;
        if &want != t {
            return Err(Status::internal(format!("variable {} restored as {t:?}, the file holds {want:?}", v.name())));
        }
        items.push(json::tensor_entry(v.name(), t.dtype().name(), t.dims(), Some(t)));
    }
    if as_json {
        println!("{}", serde_json::json!({ "prefix": prefix, "tensors": items }));
    } else {
        println!("restored {} variables from {prefix}; every value matches the file", vars.len());
    }
    Ok(())
}

fn write_demo(dir: &str, steps: i64, ref_variables: bool, max_to_keep: usize) -> Result<(), Status> {
    let s = Scope::new_root();
    let h = s.sub_exact("hidden");
    let new_var = |name: &str, t: Tensor| {
        let init = ops::constant_named(&h, &format!("{name}/initial_value"), t);
        if ref_variables {
            Variable::new_ref(&h, name, init)
        } else {
            Variable::new(&h, name, init)
        }
    };
    let w = new_var("weights", Tensor::new(vec![2, 3], vec![0.1f32, -0.2, 0.3, 0.4, -0.5, 0.6])?);
    let b = new_var("biases", Tensor::vec(vec![0.0f32, 0.5, -0.5]));
    let x = ops::constant(&s, Tensor::new(vec![4, 2], vec![1.0f32, 2.0, 3.0, 4.0, -1.0, 0.5, 2.0, -2.0])?);
    let y = ops::constant(&s, Tensor::new(vec![4, 3], (0..12).map(|i| i as f32 * 0.25).collect::<Vec<_>>())?);
    let pred = ops::add(&s, ops::mat_mul(&s, x, w.read(), false, false), b.read());
    let err = ops::sub(&s, pred, y);
    let loss = ops::mean(&s, ops::square(&s, err), ops::constant(&s, Tensor::vec(vec![0i32, 1])), false);
    let step = get_or_create_global_step(&s);
    let train = Adagrad::new(0.1).minimize(&s, &loss, None, Some(&step))?;
    let init = global_variables_initializer(&s);
    let saver = Saver::with_options(&s, SaverOptions { max_to_keep, ..Default::default() })?;
    let sess = DirectSession::new(s.graph());
    sess.run(&[], &[], &[&init])?;
    for _ in 0..steps {
        sess.run(&[], &[], &[&train])?;
    }
    let vars = global_variables(s.graph())?;
    let outs: Vec<_> = vars.iter().map(Variable::read).collect();
    let refs: Vec<_> = outs.iter().collect();
    let got = sess.run(&[], &refs, &[])?;
    let g = got
        .iter()
        .zip(&vars)
        .find(|(_, v)| v.name() == "global_step")
        .and_then(|(t, _)| t.scalar_value::<i64>().ok())
        .unwrap_or(steps);
    let prefix = Path::new(dir).join("model.ckpt").display().to_string();
    let path = saver.save(&sess, &prefix, Some(g))?;
    let items: Vec<serde_json::Value> =
        vars.iter().zip(&got).map(|(v, t)| json::tensor_entry(v.name(), t.dtype().name(), t.dims(), Some(t))).collect();
    println!("{}", serde_json::json!({ "prefix": path, "tensors": items }));
    Ok(())
}

pub fn run(cmd: CheckpointCmd) -> Result<(), String> {
    let r = match cmd {
        CheckpointCmd::Inspect { path, values, json } => inspect(&path, values, json),
        CheckpointCmd::Verify { path, ref_variables, json } => verify(&path, ref_variables, json),
        CheckpointCmd::WriteDemo { dir, steps, ref_variables, max_to_keep } => {
            write_demo(&dir, steps, ref_variables, max_to_keep)
        }
    };
    r.map_err(|e| e.to_string())
}
