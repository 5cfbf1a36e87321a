//! Model parallelism: the MNIST MLP split across two workers — the hidden layer computes on
//! `/job:worker/task:0`, the output layer and the loss on `/job:worker/task:1` — with the
//! weights spread over two ps tasks by `replica_device_setter`. One client trains it end to
//! end; activations and gradients cross between the workers by `_Send`/`_Recv`.
//!
//! ```text
//! cargo run --release --example model_parallel             # a local 2 ps + 2 worker cluster
//! cargo run --release --example model_parallel -- 'ps=h:p,h:p;worker=h:p,h:p'  # existing one
//! ```

use ferroflow::train::data::read_mnist;
use ferroflow::train::local::evaluate;
use ferroflow::train::models::{dense, head};
use ferroflow::train::optimizer::{Adam, Optimizer};
use ferroflow::train::{replica_device_setter, ReplicaDeviceSetter};
use ferroflow::{ops, ClusterSpec, DataType, Scope, Server, ServerOptions, Session};
use ferroflow_graph::global_variables_initializer;
use ferroflow_runtime::StepRunner;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let (cluster, _servers) = match std::env::args().nth(1) {
        Some(spec) => (ClusterSpec::parse_cluster_flag(&spec)?, Vec::new()),
        None => local_cluster()?,
    };
    let s = Scope::new_root();
    let on = |worker: i32| -> Result<Scope, Box<dyn std::error::Error>> {
        let setter =
            replica_device_setter(ReplicaDeviceSetter::for_cluster(&cluster, &format!("/job:worker/task:{worker}")))?;
        Ok(s.with_device_fn(setter))
    };
    let (first, second) = (on(0)?, on(1)?);
    let x = ops::placeholder_named(&first, "x", DataType::Float, Some(&[-1, 784]));
    let y = ops::placeholder_named(&second, "y", DataType::Int64, Some(&[-1]));
    let h = dense(&first, "hidden", x.clone(), 784, 256, 1, true);
    let logits = dense(&second, "output", h, 256, 10, 2, false);
    let model = head(&second, x, y, None, logits)?;
    let train = Adam::new(1e-3).minimize(&s, &model.loss, None, None)?;
    let init = global_variables_initializer(&s);

    let target = format!("grpc://{}", cluster.task_address("worker", 0)?);
    let sess = Session::new(&target, s.graph())?;
    sess.run(&[], &[], &[&init])?;
    let mnist = read_mnist(concat!(env!("CARGO_MANIFEST_DIR"), "/../../data/mnist"))?;
    let mut batches = mnist.train.batches(100, 1);
    for step in 1..=1000 {
        let (bx, by) = batches.next_batch()?;
        let l = sess.run(&[(&model.x, bx), (&model.y, by)], &[&model.loss], &[&train])?;
        if step % 200 == 0 {
            println!("step {step}: loss {:.4}", l[0].scalar_value::<f32>()?);
        }
    }
    let acc = evaluate(&sess, &model, &mnist.test)?;
    println!("test accuracy: {:.2}%", acc * 100.0);
    sess.close()?;
    Ok(())
}

/// Two ps and two worker servers in this process, on free loopback ports.
fn local_cluster() -> Result<(ClusterSpec, Vec<Server>), Box<dyn std::error::Error>> {
    let port = || std::net::TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).map(|a| a.port());
    let spec =
        format!("ps=127.0.0.1:{},127.0.0.1:{};worker=127.0.0.1:{},127.0.0.1:{}", port()?, port()?, port()?, port()?);
    let c = ClusterSpec::parse_cluster_flag(&spec)?;
    let mut servers = Vec::new();
    for (job, task) in [("ps", 0), ("ps", 1), ("worker", 0), ("worker", 1)] {
        servers.push(Server::new(&c, job, task, ServerOptions::default())?);
    }
    Ok((c, servers))
}
