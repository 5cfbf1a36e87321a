//! Device placement across processes: the weights of a two-layer network live on two
//! parameter servers (layer 1 on ps 0, layer 2 on ps 1), the layers compute on a worker.
//!
//! ```text
//! cargo run --example placement            # starts ps 0 and ps 1 as child processes
//! # or by hand:
//! C='ps=localhost:2222,localhost:2223;worker=localhost:2224'
//! cargo run --example placement -- --role ps --task 0 --cluster "$C"
//! cargo run --example placement -- --role ps --task 1 --cluster "$C"
//! cargo run --example placement -- --role worker --cluster "$C"
//! ```

use ferroflow_runtime::StepRunner;
use std::process::Command;

use ferroflow::{ops, DataType, Scope, Tensor};
use ferroflow_distributed::{shutdown_server, ClusterSpec, GrpcSession, Server, ServerOptions};

fn arg(name: &str) -> Option<String> {
    let args: Vec<String> = std::env::args().collect();
    args.iter().position(|a| a == name).and_then(|i| args.get(i + 1).cloned())
}

fn free_port() -> std::io::Result<u16> {
    Ok(std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

fn worker(cluster: &ClusterSpec) -> Result<(), Box<dyn std::error::Error>> {
    let server = Server::new(cluster, "worker", 0, ServerOptions::default())?;
    let s = Scope::new_root();
    // Variables on the parameter servers, shared by name with any other worker.
    let ps0 = s.with_device("/job:ps/task:0");
    let ps1 = s.with_device("/job:ps/task:1");
    let w1 = ops::var_handle_op(&ps0.sub("w1"), DataType::Float, Some(&[2, 3]), "", "layer1/weights");
    let w2 = ops::var_handle_op(&ps1.sub("w2"), DataType::Float, Some(&[3, 1]), "", "layer2/weights");
    let init1 = ops::assign_variable_op(
        &ps0,
        w1.clone(),
        ops::constant(&ps0, Tensor::new(vec![2, 3], vec![1.0f32, -1.0, 0.5, 2.0, 1.0, -0.5])?),
    );
    let init2 = ops::assign_variable_op(
        &ps1,
        w2.clone(),
        ops::constant(&ps1, Tensor::new(vec![3, 1], vec![1.0f32, 2.0, 3.0])?),
    );
    // The layers on the worker: y = relu(x @ w1) @ w2 (reads stay with their variables,
    // the values travel to the worker).
    let wk = s.with_device("/job:worker/task:0");
    let x = ops::placeholder(&wk, DataType::Float, Some(&[-1, 2]));
    let h =
        ops::relu(&wk, ops::mat_mul(&wk, x.clone(), ops::read_variable_op(&ps0, w1, DataType::Float), false, false));
    let y = ops::mat_mul(&wk, h, ops::read_variable_op(&ps1, w2, DataType::Float), false, false);

    let sess = GrpcSession::new(server.target(), s.graph())?;
    sess.run(&[], &[], &[&init1, &init2])?;
    let x_val = Tensor::new(vec![2, 2], vec![1.0f32, 1.0, 2.0, -1.0])?;
    let out = sess.run(&[(&x, x_val)], &[&y], &[])?;
    println!("y = relu(x @ w1) @ w2 = {:?}", out[0].as_slice::<f32>()?);
    for d in sess.list_devices()? {
        println!("device {}", d.name);
    }
    for (k, node) in s.graph().to_graph_def().node.iter().enumerate().filter(|(_, n)| !n.device.is_empty()) {
        if k < 12 {
            println!("  {:<28} {:<16} on {}", node.name, node.op, node.device);
        }
    }
    sess.close()?;
    Ok(())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    match arg("--role").as_deref() {
        Some("ps") => {
            let cluster = ClusterSpec::parse_cluster_flag(&arg("--cluster").ok_or("--cluster is required")?)?;
            let task: i32 = arg("--task").unwrap_or_else(|| "0".into()).parse()?;
            let server = Server::new(&cluster, "ps", task, ServerOptions::default())?;
            println!("ps {task} listening on {}", server.target());
            server.join()?;
        }
        Some("worker") => {
            let cluster = ClusterSpec::parse_cluster_flag(&arg("--cluster").ok_or("--cluster is required")?)?;
            worker(&cluster)?;
        }
        Some(other) => return Err(format!("unknown --role {other} (ps or worker)").into()),
        None => {
            let c =
                format!("ps=localhost:{},localhost:{};worker=localhost:{}", free_port()?, free_port()?, free_port()?);
            let cluster = ClusterSpec::parse_cluster_flag(&c)?;
            let me = std::env::current_exe()?;
            let mut children = Vec::new();
            for t in 0..2 {
                children
                    .push(Command::new(&me).args(["--role", "ps", "--task", &t.to_string(), "--cluster", &c]).spawn()?);
            }
            let r = worker(&cluster);
            for t in 0..2 {
                shutdown_server(cluster.task_address("ps", t)?, "example done")?;
            }
            for mut ch in children {
                ch.wait()?;
            }
            r?;
        }
    }
    Ok(())
}
