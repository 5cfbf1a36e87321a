//! `ferroflow ops`: the ops this build knows, by TensorFlow name, and whether each runs.

use ferroflow_graph::op_registry;
use ferroflow_runtime::runs_op;

/// `ferroflow ops [--missing OP ...]`.
#[derive(clap::Args)]
pub struct OpsArgs {
    /// Print as JSON (`{"ops": [{"name": .., "runs": ..}]}`) instead of one name a line.
    #[arg(long)]
    pub json: bool,
    /// Instead of the list, print those of these op names that this build cannot run
    /// (no definition or no CPU kernel), one a line.
    #[arg(long, num_args = 1..)]
    pub missing: Vec<String>,
}

pub fn run(a: OpsArgs) -> Result<(), String> {
    let reg = op_registry();
    if !a.missing.is_empty() {
        for name in &a.missing {
            if reg.get(name).is_none() || !runs_op(name) {
                println!("{name}");
            }
        }
        return Ok(());
    }
    let names = reg.names();
    if a.json {
        let rows: Vec<String> =
            names.iter().map(|n| format!("{{\"name\": \"{n}\", \"runs\": {}}}", runs_op(n))).collect();
        println!("{{\"ops\": [{}]}}", rows.join(", "));
    } else {
        for n in names {
            let note = if runs_op(n) { "" } else { "\t(defined, no CPU kernel)" };
            println!("{n}{note}");
        }
    }
    Ok(())
}
