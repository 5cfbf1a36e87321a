//! `ferroflow summary …`: write TensorBoard event files.

use ferroflow_core::{DataType, Status, Tensor};
use ferroflow_graph::{ops, Scope};
use ferroflow_runtime::DirectSession;
use ferroflow_runtime::StepRunner;
use ferroflow_train::summary::{histogram, merge_all, scalar, FileWriter};

use crate::json;

#[derive(clap::Subcommand)]
pub enum SummaryCmd {
    /// Write an event file with a scalar (`loss` = 1/(step+1)), a histogram (`weights`)
    /// and the graph, for trying TensorBoard; prints the file and the values as JSON.
    WriteDemo {
        /// Log directory.
        #[arg(long)]
        logdir: String,
        /// Steps to record.
        #[arg(long, default_value_t = 5)]
        steps: i64,
    },
}

const WEIGHTS: [f32; 6] = [-1.5, 0.0, 0.5, 2.0, 2.0, 3.25];

fn write_demo(logdir: &str, steps: i64) -> Result<(), Status> {
    let s = Scope::new_root();
    let loss = ops::placeholder_named(&s, "loss_value", DataType::Float, Some(&[]));
    scalar(&s, "loss", loss.clone());
    histogram(&s, "weights", ops::constant(&s, Tensor::vec(WEIGHTS.to_vec())));
    let merged = merge_all(&s).ok_or_else(|| Status::internal("no summaries in the graph"))?;
    let sess = DirectSession::new(s.graph());
    let mut w = FileWriter::new(logdir)?;
    w.add_graph(&s.graph().to_graph_def())?;
    let mut losses = Vec::new();
    for step in 0..steps {
        let v = 1.0 / (step as f32 + 1.0);
        losses.push(v);
        let out = sess.run(&[(&loss, Tensor::scalar(v))], &[&merged], &[])?;
        w.add_summary(&out[0].scalar_value::<Vec<u8>>()?, step)?;
    }
    w.close()?;
    let nodes: Vec<String> = s.graph().nodes().iter().map(|n| n.def.name.clone()).collect();
    let out = serde_json::json!({
        "file": w.path().display().to_string(),
        "scalars": { "loss": json::values(&Tensor::vec(losses)) },
        "histogram": { "tag": "weights", "values": json::values(&Tensor::vec(WEIGHTS.to_vec())) },
        "nodes": nodes,
    });
    println!("{out}");
    Ok(())
}

pub fn run(cmd: SummaryCmd) -> Result<(), String> {
    match cmd {
        SummaryCmd::WriteDemo { logdir, steps } => write_demo(&logdir, steps),
    }
    .map_err(|e| e.to_string())
}
