//! A cluster across emulated hosts (`common::emu`: each task in its own network namespace
//! on a bridge, every link limited to 1 Gbit/s each way with `tc … tbf`): training whose
//! tensors cross the shaped links, and a link cut in the middle of a session, whose steps
//! fail at their deadline naming the unreachable task and run again once it is back.

mod common;

use std::time::{Duration, Instant};

use common::emu::EmuNet;
use common::{accuracy, DATA};
use ferroflow::{ops, Code, GrpcSession, RunOptions, Scope, StepRunner, Variable};

const PORT: u16 = 2222;

/// The MLP's weights and biases: 784·256 + 256 + 256·10 + 10 floats.
const MLP_BYTES: u64 = 4 * (784 * 256 + 256 + 256 * 10 + 10);

/// `ferroflow train` of the MLP for `steps` global steps on hosts ps, w0 and w1 of `net`,
/// with `extra` flags: (ps, chief, worker 1), started ps, worker 1, chief.
fn train_job(net: &EmuNet, steps: &str, extra: &[&str]) -> (common::Proc, common::Proc, common::Proc) {
    let at = |h: &str| format!("{}:{PORT}", net.host_addr(h));
    let (ps_hosts, worker_hosts) = (at("ps"), format!("{},{}", at("w0"), at("w1")));
    let start = |host: &str, job: &str, task: &str| {
        let args = ["train", "--model", "mlp", "--steps", steps, "--no_progress", "--data_dir", DATA];
        let cluster =
            ["--ps_hosts", &ps_hosts, "--worker_hosts", &worker_hosts, "--job_name", job, "--task_index", task];
        net.start(host, &[&args[..], extra, &cluster[..]].concat())
    };
    let ps = start("ps", "ps", "0");
    let w1 = start("w1", "worker", "1");
    let chief = start("w0", "worker", "0");
    (ps, chief, w1)
}

#[test]
fn async_training_across_three_hosts_sends_its_tensors_over_the_shaped_links() {
    let net = EmuNet::new(&["ps", "w0", "w1"], 1000);
    let (mut ps, mut chief, mut w1) = train_job(&net, "300", &[]);
    let chief_out = chief.succeeds();
    w1.succeeds();
    ps.stops();
    assert!(accuracy(&chief_out) > 85.0, "{chief_out:?}");
    // Every one of the 300 updates sent a gradient of the whole model to the ps, and every
    // worker step pulled the model from it, through the hosts' rate limits.
    let to_ps = net.bytes_to("ps");
    let to_workers = net.bytes_to("w0") + net.bytes_to("w1");
    assert!(to_ps >= 300 * MLP_BYTES, "{to_ps} bytes reached the ps for 300 updates of {MLP_BYTES} bytes");
    assert!(to_workers >= 300 * MLP_BYTES, "{to_workers} bytes reached the workers");
}

#[test]
fn a_cut_link_fails_steps_at_their_deadline_naming_the_task_and_they_run_again_when_it_returns() {
    let net = EmuNet::new(&["ps", "worker"], 1000);
    let (ps_addr, worker_addr) =
        (format!("{}:{PORT}", net.host_addr("ps")), format!("{}:{PORT}", net.host_addr("worker")));
    let cluster = ["--ps_hosts", ps_addr.as_str(), "--worker_hosts", worker_addr.as_str()];
    let mut ps = net.start("ps", &[&["server"][..], &cluster[..], &["--job_name", "ps", "--task_index", "0"]].concat());
    let mut worker =
        net.start("worker", &[&["server"][..], &cluster[..], &["--job_name", "worker", "--task_index", "0"]].concat());
    ps.wait_line("listening on", Duration::from_secs(60));
    worker.wait_line("listening on", Duration::from_secs(60));

    // w lives on the ps; y = 2·w is computed on the worker, so every step pulls w over the
    // ps's link. The client (this process) reaches the worker's master through the bridge.
    let s = Scope::new_root();
    let (on_ps, on_worker) = (s.with_device("/job:ps/task:0"), s.with_device("/job:worker/task:0"));
    let w = Variable::new(&on_ps, "w", ops::constant(&on_ps, 1.5f32));
    let y = ops::mul(&on_worker, w.value(), ops::constant(&on_worker, 2.0f32));
    let sess = GrpcSession::new(&format!("grpc://{worker_addr}"), s.graph()).unwrap();
    sess.run(&[], &[], &[&w.initializer()]).unwrap();
    let step = |timeout: Duration| {
        let opts = RunOptions { timeout: Some(timeout), ..Default::default() };
        sess.run_by_name(&[], &[format!("{}:0", y.node)], &[], &opts)
    };
    assert_eq!(step(Duration::from_secs(10)).unwrap()[0].scalar_value::<f32>().unwrap(), 3.0);

    // The ps's link goes down: packets are dropped, nothing is refused.
    net.set_link("ps", false);
    let t = Instant::now();
    let e = step(Duration::from_secs(2)).unwrap_err();
    eprintln!("with the ps cut off, after {:?}: {e}", t.elapsed());
    assert!(matches!(e.code, Code::DeadlineExceeded | Code::Unavailable), "{e}");
    assert!(t.elapsed() < Duration::from_secs(10), "the step took {:?} to fail", t.elapsed());
    assert!(e.message.contains("/job:ps/replica:0/task:0"), "the error does not name the ps: {e}");

    // The link returns: steps run again (the first may still meet a connection the cut broke).
    net.set_link("ps", true);
    let back = Instant::now();
    let value = loop {
        match step(Duration::from_secs(5)) {
            Ok(v) => break v[0].scalar_value::<f32>().unwrap(),
            Err(e) => {
                assert!(back.elapsed() < Duration::from_secs(60), "no step ran within 60 s of the link's return: {e}");
                std::thread::sleep(Duration::from_millis(200));
            }
        }
    };
    assert_eq!(value, 3.0);
    drop(sess);
    ps.kill9();
    worker.kill9();
}

#[test]
fn async_training_rides_out_a_worker_cut_off_for_a_few_seconds() {
    let net = EmuNet::new(&["ps", "w0", "w1"], 1000);
    let (mut ps, mut chief, mut w1) = train_job(&net, "3000", &["--step_timeout_secs", "2", "--wait_secs", "60"]);
    w1.wait_line("global step", common::LIMIT);
    // Worker 1's link goes down for 4 s: its step in flight reaches its 2 s deadline, the
    // worker opens a new session, which waits for the ps until the link is back.
    net.set_link("w1", false);
    std::thread::sleep(Duration::from_secs(4));
    net.set_link("w1", true);
    let chief_out = chief.succeeds();
    let w1_out = w1.succeeds();
    ps.stops();
    assert!(accuracy(&chief_out) > 85.0, "{chief_out:?}");
    assert!(w1_out.iter().any(|l| l.contains("recovering")), "worker 1 never had to recover: {w1_out:?}");
}
