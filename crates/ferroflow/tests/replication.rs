//! In-graph replication and model parallelism on a real cluster (three servers on loopback
//! ports talking gRPC): one client graph, towers or layers pinned to different tasks,
//! trained end to end, and compared with the same model trained in one process.

use ferroflow::train::optimizer::{GradAndVar, GradientDescent, Optimizer};
use ferroflow::{ops, ClusterSpec, DirectSession, Output, Scope, Server, ServerOptions, Session, Tensor};
use ferroflow_graph::{global_variables_initializer, gradients, Variable};
use ferroflow_runtime::StepRunner;

fn cluster() -> (ClusterSpec, Vec<Server>) {
    // All four held until all are picked, so they are distinct.
    let held: Vec<_> = (0..4).map(|_| std::net::TcpListener::bind("127.0.0.1:0").unwrap()).collect();
    let port = |i: usize| held[i].local_addr().unwrap().port();
    let (p0, p1, w0, w1) = (port(0), port(1), port(2), port(3));
    drop(held);
    let spec = format!("ps=127.0.0.1:{p0},127.0.0.1:{p1};worker=127.0.0.1:{w0},127.0.0.1:{w1}");
    let c = ClusterSpec::parse_cluster_flag(&spec).unwrap();
    let servers = vec![
        Server::new(&c, "ps", 0, ServerOptions::default()).unwrap(),
        Server::new(&c, "ps", 1, ServerOptions::default()).unwrap(),
        Server::new(&c, "worker", 0, ServerOptions::default()).unwrap(),
        Server::new(&c, "worker", 1, ServerOptions::default()).unwrap(),
    ];
    (c, servers)
}

/// Seeded data: 32 examples of a noisy linear function of 3 inputs.
fn data() -> (Vec<f32>, Vec<f32>) {
    let mut state = 42u64;
    let mut r = move || {
        state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        ((state >> 33) as f32 / (1u64 << 31) as f32) - 0.5
    };
    let x: Vec<f32> = (0..32 * 3).map(|_| r()).collect();
    let y: Vec<f32> = (0..32).map(|i| 2.0 * x[3 * i] - x[3 * i + 1] + 0.5 * x[3 * i + 2] + 0.1 * r()).collect();
    (x, y)
}

fn t(dims: &[usize], v: &[f32]) -> Tensor {
    Tensor::new(dims.to_vec(), v.to_vec()).unwrap()
}

fn mse(s: &Scope, pred: Output, y: Output) -> Output {
    let d = ops::sub(s, pred, y);
    ops::mean(s, ops::square(s, d), ops::constant(s, Tensor::vec(vec![0i32, 1])), false)
}

/// A linear model with `w` [3,1] and `b` [1] on `ps`.
fn linear_vars(ps: &Scope) -> (Variable, Variable) {
    let w = Variable::new(ps, "w", ops::constant(ps, t(&[3, 1], &[0.1, -0.2, 0.3])));
    let b = Variable::new(ps, "b", ops::constant(ps, t(&[1], &[0.0])));
    (w, b)
}

#[test]
fn in_graph_towers_average_their_gradients_on_the_ps() {
    let (x, y) = data();
    let steps = 30;
    // One client, two towers (one per worker), each on half of the batch; the average of
    // their gradients is applied on the ps. That equals full-batch training in one process.
    let (_c, servers) = cluster();
    let s = Scope::new_root();
    let ps = s.with_device("/job:ps/task:0");
    let (w, b) = linear_vars(&ps);
    let mut feeds = Vec::new();
    let mut tower_grads: Vec<Vec<Output>> = Vec::new();
    let mut losses = Vec::new();
    for i in 0..2 {
        let ts = s.with_device(&format!("/job:worker/task:{i}")).sub(&format!("tower_{i}"));
        let xi = ops::placeholder(&ts, ferroflow::DataType::Float, Some(&[16, 3]));
        let yi = ops::placeholder(&ts, ferroflow::DataType::Float, Some(&[16, 1]));
        let pred = ops::add(&ts, ops::mat_mul(&ts, xi.clone(), w.value(), false, false), b.value());
        let loss = mse(&ts, pred, yi.clone());
        let g = gradients(&ts, std::slice::from_ref(&loss), &[w.value(), b.value()], None).unwrap();
        tower_grads.push(g.into_iter().map(Option::unwrap).collect());
        feeds.push((xi, yi));
        losses.push(loss);
    }
    let half = ops::constant(&ps, 0.5f32);
    let avg: Vec<GradAndVar> = (0..2)
        .map(|k| {
            let sum = ops::add_n(&ps, vec![tower_grads[0][k].clone(), tower_grads[1][k].clone()]);
            ops::mul(&ps, sum, half.clone())
        })
        .zip([w.clone(), b.clone()])
        .collect();
    let train = GradientDescent::new(0.5).apply_gradients(&ps, &avg, None, "GradientDescent").unwrap();
    let init = global_variables_initializer(&s);
    let sess = Session::new(servers[2].target(), s.graph()).unwrap();
    sess.run(&[], &[], &[&init]).unwrap();
    let halves = |k: usize| (t(&[16, 3], &x[k * 48..(k + 1) * 48]), t(&[16, 1], &y[k * 16..(k + 1) * 16]));
    let mut first = None;
    for _ in 0..steps {
        let (x0, y0) = halves(0);
        let (x1, y1) = halves(1);
        let f = [(&feeds[0].0, x0), (&feeds[0].1, y0), (&feeds[1].0, x1), (&feeds[1].1, y1)];
        let out = sess.run(&f, &[&losses[0], &losses[1]], &[&train]).unwrap();
        let l = (out[0].scalar_value::<f32>().unwrap() + out[1].scalar_value::<f32>().unwrap()) / 2.0;
        first.get_or_insert(l);
    }
    let dist = sess.run(&[], &[&w.value(), &b.value()], &[]).unwrap();

    // The same model, full batch, in one process.
    let l = Scope::new_root();
    let (lw, lb) = linear_vars(&l);
    let lx = ops::placeholder(&l, ferroflow::DataType::Float, Some(&[32, 3]));
    let ly = ops::placeholder(&l, ferroflow::DataType::Float, Some(&[32, 1]));
    let pred = ops::add(&l, ops::mat_mul(&l, lx.clone(), lw.value(), false, false), lb.value());
    let loss = mse(&l, pred, ly.clone());
    let train = GradientDescent::new(0.5).minimize(&l, &loss, None, None).unwrap();
    let init = global_variables_initializer(&l);
    let local = DirectSession::new(l.graph());
    local.run(&[], &[], &[&init]).unwrap();
    for _ in 0..steps {
        local.run(&[(&lx, t(&[32, 3], &x)), (&ly, t(&[32, 1], &y))], &[], &[&train]).unwrap();
    }
    let last = local.run(&[(&lx, t(&[32, 3], &x)), (&ly, t(&[32, 1], &y))], &[&loss], &[]).unwrap();
    let want = local.run(&[], &[&lw.value(), &lb.value()], &[]).unwrap();
    for (d, w) in dist.iter().zip(&want) {
        for (a, b) in d.as_slice::<f32>().unwrap().iter().zip(w.as_slice::<f32>().unwrap()) {
            assert!((a - b).abs() < 1e-5, "distributed {a} vs local {b}");
        }
    }
    assert!(last[0].scalar_value::<f32>().unwrap() < first.unwrap() / 4.0, "the loss did not fall");
    sess.close().unwrap();
}

#[test]
fn model_parallel_layers_on_two_workers_train_like_one_process() {
    let (x, y) = data();
    let steps = 25;
    let build = |s: &Scope, devices: Option<[&str; 4]>| {
        let dev = |i: usize| match devices {
            Some(d) => s.with_device(d[i]),
            None => s.clone(),
        };
        let (ps0, ps1, w0, w1) = (dev(0), dev(1), dev(2), dev(3));
        let v1 = Variable::new(&ps0, "layer1/w", ops::constant(&ps0, t(&[3, 4], &[0.2; 12])));
        let v2 = Variable::new(&ps1, "layer2/w", ops::constant(&ps1, t(&[4, 1], &[0.1, -0.1, 0.2, -0.2])));
        let xp = ops::placeholder(&w0, ferroflow::DataType::Float, Some(&[32, 3]));
        let yp = ops::placeholder(&w1, ferroflow::DataType::Float, Some(&[32, 1]));
        let h = ops::tanh(&w0, ops::mat_mul(&w0, xp.clone(), v1.value(), false, false));
        let pred = ops::mat_mul(&w1, h, v2.value(), false, false);
        let loss = mse(&w1, pred, yp.clone());
        let train = GradientDescent::new(0.3).minimize(s, &loss, None, None).unwrap();
        let init = global_variables_initializer(s);
        (xp, yp, loss, train, init, v1, v2)
    };
    let (_c, servers) = cluster();
    let s = Scope::new_root();
    let devs = ["/job:ps/task:0", "/job:ps/task:1", "/job:worker/task:0", "/job:worker/task:1"];
    let (xp, yp, loss, train, init, v1, v2) = build(&s, Some(devs));
    let sess = Session::new(servers[2].target(), s.graph()).unwrap();
    let l = Scope::new_root();
    let (lxp, lyp, lloss, ltrain, linit, lv1, lv2) = build(&l, None);
    let local = DirectSession::new(l.graph());
    sess.run(&[], &[], &[&init]).unwrap();
    local.run(&[], &[], &[&linit]).unwrap();
    let mut losses = Vec::new();
    for _ in 0..steps {
        let a = sess.run(&[(&xp, t(&[32, 3], &x)), (&yp, t(&[32, 1], &y))], &[&loss], &[&train]).unwrap();
        let b = local.run(&[(&lxp, t(&[32, 3], &x)), (&lyp, t(&[32, 1], &y))], &[&lloss], &[&ltrain]).unwrap();
        let (a, b) = (a[0].scalar_value::<f32>().unwrap(), b[0].scalar_value::<f32>().unwrap());
        assert!((a - b).abs() < 1e-5, "step loss {a} on the cluster vs {b} in one process");
        losses.push(a);
    }
    assert!(losses[steps - 1] < losses[0] / 2.0, "{losses:?}");
    let d = sess.run(&[], &[&v1.value(), &v2.value()], &[]).unwrap();
    let w = local.run(&[], &[&lv1.value(), &lv2.value()], &[]).unwrap();
    for (a, b) in d.iter().zip(&w) {
        for (p, q) in a.as_slice::<f32>().unwrap().iter().zip(b.as_slice::<f32>().unwrap()) {
            assert!((p - q).abs() < 1e-5, "{p} vs {q}");
        }
    }
    sess.close().unwrap();
}
