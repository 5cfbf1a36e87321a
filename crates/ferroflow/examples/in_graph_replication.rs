//! In-graph replication: one client builds a tower of the MNIST MLP on each worker; the
//! towers share the variables on the ps, each computes the gradients of its half of the
//! batch, and the ps applies their average (TensorFlow 1.x's multi-tower pattern).
//!
//! ```text
//! cargo run --release --example in_graph_replication             # local 1 ps + 2 workers
//! cargo run --release --example in_graph_replication -- 'ps=h:p;worker=h:p,h:p'
//! ```

use ferroflow::train::data::read_mnist;
use ferroflow::train::models::head;
use ferroflow::train::optimizer::{Adam, GradAndVar, Optimizer};
use ferroflow::{ops, ClusterSpec, DataType, Output, Scope, Server, ServerOptions, Session, Tensor};
use ferroflow_graph::{global_variables_initializer, gradients, Variable};
use ferroflow_runtime::StepRunner;

/// A weight of the given shape, truncated normal σ = 0.1 (seeded).
fn weight(s: &Scope, name: &str, shape: &[i32], seed: i64) -> Variable {
    let shape_t = ops::constant(s, Tensor::vec(shape.to_vec()));
    let init = ops::mul(s, ops::truncated_normal(s, shape_t, DataType::Float, seed, 0), ops::constant(s, 0.1f32));
    Variable::new(s, name, init)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let (cluster, _servers) = match std::env::args().nth(1) {
        Some(spec) => (ClusterSpec::parse_cluster_flag(&spec)?, Vec::new()),
        None => local_cluster()?,
    };
    let workers = cluster.num_tasks("worker")?;
    let s = Scope::new_root();
    let ps = s.with_device("/job:ps/task:0");
    let w1 = weight(&ps, "hidden/weights", &[784, 256], 1);
    let b1 = Variable::new(&ps, "hidden/biases", ops::constant(&ps, Tensor::new(vec![256], vec![0.1f32; 256])?));
    let w2 = weight(&ps, "output/weights", &[256, 10], 2);
    let b2 = Variable::new(&ps, "output/biases", ops::constant(&ps, Tensor::new(vec![10], vec![0.1f32; 10])?));
    let vars = [w1.clone(), b1.clone(), w2.clone(), b2.clone()];
    let mut towers = Vec::new();
    let mut grads: Vec<Vec<Output>> = vec![Vec::new(); vars.len()];
    for i in 0..workers {
        let ts = s.with_device(&format!("/job:worker/task:{i}")).sub(&format!("tower_{i}"));
        let x = ops::placeholder_named(&ts, "x", DataType::Float, Some(&[-1, 784]));
        let y = ops::placeholder_named(&ts, "y", DataType::Int64, Some(&[-1]));
        let h = ops::relu(&ts, ops::bias_add(&ts, ops::mat_mul(&ts, x.clone(), w1.value(), false, false), b1.value()));
        let logits = ops::bias_add(&ts, ops::mat_mul(&ts, h, w2.value(), false, false), b2.value());
        let model = head(&ts, x, y, None, logits)?;
        let values: Vec<Output> = vars.iter().map(|v| v.value()).collect();
        for (k, g) in gradients(&ts, std::slice::from_ref(&model.loss), &values, None)?.into_iter().enumerate() {
            grads[k].push(g.ok_or("a variable has no gradient")?);
        }
        towers.push(model);
    }
    // The average of the towers' gradients, computed on the ps.
    let scale = ops::constant(&ps, 1.0f32 / workers as f32);
    let avg: Vec<GradAndVar> =
        grads.into_iter().map(|g| ops::mul(&ps, ops::add_n(&ps, g), scale.clone())).zip(vars).collect();
    let train = Adam::new(1e-3).apply_gradients(&ps, &avg, None, "Adam")?;
    let init = global_variables_initializer(&s);

    let sess = Session::new(&format!("grpc://{}", cluster.task_address("worker", 0)?), s.graph())?;
    sess.run(&[], &[], &[&init])?;
    let mnist = read_mnist(concat!(env!("CARGO_MANIFEST_DIR"), "/../../data/mnist"))?;
    let shards: Vec<_> = (0..workers).map(|i| mnist.train.shard(workers, i)).collect::<Result<_, _>>()?;
    let mut batches: Vec<_> = shards.iter().enumerate().map(|(i, d)| d.batches(50, i as u64 + 1)).collect();
    for step in 1..=1000 {
        let mut feeds = Vec::new();
        for (t, b) in towers.iter().zip(batches.iter_mut()) {
            let (bx, by) = b.next_batch()?;
            feeds.push((&t.x, bx));
            feeds.push((&t.y, by));
        }
        let out = sess.run(&feeds, &[&towers[0].loss], &[&train])?;
        if step % 200 == 0 {
            println!("step {step}: tower 0 loss {:.4}", out[0].scalar_value::<f32>()?);
        }
    }
    let acc = ferroflow::train::local::evaluate(&sess, &towers[0], &mnist.test)?;
    println!("test accuracy: {:.2}%", acc * 100.0);
    sess.close()?;
    Ok(())
}

/// One ps and two worker servers in this process, on free loopback ports.
fn local_cluster() -> Result<(ClusterSpec, Vec<Server>), Box<dyn std::error::Error>> {
    let port = || std::net::TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).map(|a| a.port());
    let c = ClusterSpec::parse_cluster_flag(&format!(
        "ps=127.0.0.1:{};worker=127.0.0.1:{},127.0.0.1:{}",
        port()?,
        port()?,
        port()?
    ))?;
    let mut servers = Vec::new();
    for (job, task) in [("ps", 0), ("worker", 0), ("worker", 1)] {
        servers.push(Server::new(&c, job, task, ServerOptions::default())?);
    }
    Ok((c, servers))
}
