//! One training step of the two workloads, timed by criterion:
//! MLP 784-256-10, batch 100, Adagrad(0.01); Deep MNIST CNN, batch 50, Adam(1e-4).
//! Random (seeded) batches, like scripts/bench/tf_train.py, so the two are comparable.

use criterion::{criterion_group, criterion_main, Criterion};
use ferroflow_core::SplitMix64;
use ferroflow_core::Tensor;
use ferroflow_graph::{get_or_create_global_step, global_variables_initializer, Scope};
use ferroflow_runtime::DirectSession;
use ferroflow_runtime::StepRunner;
use ferroflow_train::models::{build, ModelKind};
use ferroflow_train::optimizer::{Adagrad, Adam, Optimizer};

fn batches(n: usize, batch: usize, seed: u64) -> Vec<(Tensor, Tensor)> {
    let mut r = SplitMix64::new(seed);
    (0..n)
        .map(|_| {
            let x: Vec<f32> = (0..batch * 784).map(|_| (r.next_u64() >> 40) as f32 / (1u64 << 24) as f32).collect();
            let y: Vec<i64> = (0..batch).map(|_| r.below(10) as i64).collect();
            (Tensor::new(vec![batch, 784], x).unwrap(), Tensor::new(vec![batch], y).unwrap())
        })
        .collect()
}

fn bench_model(c: &mut Criterion, name: &str, kind: ModelKind, batch: usize, opt: &dyn Optimizer) {
    let s = Scope::new_root();
    let m = build(&s, kind, 1).unwrap();
    let gs = get_or_create_global_step(&s);
    let train = opt.minimize(&s, &m.loss, None, Some(&gs)).unwrap();
    let init = global_variables_initializer(&s);
    let sess = DirectSession::new(s.graph());
    sess.run(&[], &[], &[&init]).unwrap();
    let data = batches(10, batch, 7);
    let mut i = 0;
    c.bench_function(name, |b| {
        b.iter(|| {
            let (x, y) = &data[i % data.len()];
            i += 1;
            let mut feeds = vec![(&m.x, x.clone()), (&m.y, y.clone())];
            if let Some(kp) = &m.keep_prob {
                feeds.push((kp, Tensor::scalar(0.5f32)));
            }
            sess.run(&feeds, &[], &[&train]).unwrap();
        })
    });
}

fn benches(c: &mut Criterion) {
    bench_model(c, "mlp_784_256_10_batch100_adagrad_step", ModelKind::Mlp, 100, &Adagrad::new(0.01));
    bench_model(c, "cnn_deep_mnist_batch50_adam_step", ModelKind::Cnn, 50, &Adam::new(1e-4));
}

criterion_group! {
    name = train;
    config = Criterion::default().sample_size(20).measurement_time(std::time::Duration::from_secs(10));
    targets = benches
}
criterion_main!(train);
