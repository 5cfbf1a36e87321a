//! `RemoteCall` from the Rust API, and a task with several CPU devices
//! (`device_count` in the server's config).

use crate::common;

use common::Cluster;
use ferroflow_core::proto::ConfigProto;
use ferroflow_core::{Code, DataType, Tensor};
use ferroflow_distributed::{GrpcSession, ServerOptions};
use ferroflow_graph::{define_function, ops, Scope};
use ferroflow_runtime::StepRunner;

const PS: &str = "/job:ps/replica:0/task:0/device:CPU:0";
const WORKER: &str = "/job:worker/replica:0/task:0/device:CPU:0";

#[test]
fn remote_call_runs_the_function_on_the_target_task() {
    let c = Cluster::start(&[("ps", 1), ("worker", 1)]);
    let s = Scope::new_root();
    // The function bumps a counter variable of whatever task runs it.
    let f = define_function(s.graph(), "bump", &[DataType::Float], |fs, a| {
        let h = ops::var_handle_op(fs, DataType::Float, Some(&[]), "", "rc_counter");
        let up = ops::assign_add_variable_op(fs, h.clone(), a[0].clone());
        Ok(vec![ops::read_variable_op(&fs.with_control_deps(&[&up]), h, DataType::Float)])
    })
    .unwrap();
    let ps = s.with_device("/job:ps/task:0");
    let counter = ops::var_handle_op(&ps.sub("counter"), DataType::Float, Some(&[]), "", "rc_counter");
    let reset = ops::assign_variable_op(&ps, counter.clone(), ops::constant(&ps, 0.0f32));
    let count = ops::read_variable_op(&ps, counter, DataType::Float);
    let wk = s.with_device("/job:worker/task:0");
    let x = ops::placeholder(&wk, DataType::Float, Some(&[]));
    let target = ops::placeholder(&wk, DataType::String, Some(&[]));
    let r = ops::remote_call(&wk, target.clone(), vec![x.clone()], &f);
    let sess = GrpcSession::new(&c.target("worker:0"), s.graph()).unwrap();
    sess.run(&[], &[], &[&reset]).unwrap();
    let call = |v: f32, on: &str| {
        sess.run(&[(&x, Tensor::scalar(v)), (&target, Tensor::scalar(on.as_bytes().to_vec()))], &[&r[0]], &[])
    };
    for (i, want) in [(1.0, 1.0), (2.0, 3.0), (3.0, 6.0)] {
        assert_eq!(call(i, PS).unwrap()[0].scalar_value::<f32>().unwrap(), want);
    }
    assert_eq!(sess.run(&[], &[&count], &[]).unwrap()[0].scalar_value::<f32>().unwrap(), 6.0);
    // On the caller's own task the function uses the worker's counter, never made: the
    // ps's stays as it was.
    let e = call(1.0, WORKER).unwrap_err();
    assert!(matches!(e.code, Code::NotFound | Code::FailedPrecondition), "{e}");
    assert_eq!(sess.run(&[], &[&count], &[]).unwrap()[0].scalar_value::<f32>().unwrap(), 6.0);
    // A task that is not in the cluster, and a target that is not a device.
    let e = call(1.0, "/job:ps/replica:0/task:9/device:CPU:0").unwrap_err();
    assert_eq!(e.code, Code::InvalidArgument, "{e}");
    assert!(e.message.contains("task:9"), "{e}");
    let e = call(1.0, "not a device").unwrap_err();
    assert_eq!(e.code, Code::InvalidArgument, "{e}");
    assert!(e.message.contains("not a device"), "{e}");
}

#[test]
fn a_server_config_with_device_count_gives_several_cpu_devices() {
    let c = Cluster::start_with(&[("ps", 1), ("worker", 1)], |_, _| {
        let mut o = ServerOptions::default();
        let mut cfg = ConfigProto::default();
        cfg.device_count.insert("CPU".into(), 3);
        o.master.default_session_config = Some(cfg);
        o
    });
    let s = Scope::new_root();
    let ps1 = s.with_device("/job:ps/task:0/device:CPU:1");
    let v = ops::var_handle_op(&ps1.sub("v"), DataType::Float, Some(&[]), "", "v");
    let init = ops::assign_variable_op(&ps1, v.clone(), ops::constant(&ps1, 2.0f32));
    let wk2 = s.with_device("/job:worker/task:0/device:CPU:2");
    let read = ops::read_variable_op(&ps1, v.clone(), DataType::Float);
    let y = ops::mul(&wk2, read, ops::constant(&wk2, 5.0f32));
    let sess = GrpcSession::new(&c.target("worker:0"), s.graph()).unwrap();
    let names: Vec<String> = sess.list_devices().unwrap().into_iter().map(|d| d.name).collect();
    for t in ["ps", "worker"] {
        for i in 0..3 {
            let d = format!("/job:{t}/replica:0/task:0/device:CPU:{i}");
            assert!(names.contains(&d), "{d} not in {names:?}");
        }
    }
    sess.run(&[], &[], &[&init]).unwrap();
    assert_eq!(sess.run(&[], &[&y], &[]).unwrap()[0].scalar_value::<f32>().unwrap(), 10.0);
    // The variable's handle names the device it lives on.
    let h = sess.run(&[], &[&v], &[]).unwrap();
    let h = h[0].as_slice::<ferroflow_core::ResourceHandle>().unwrap()[0].clone();
    assert_eq!(h.device, "/job:ps/replica:0/task:0/device:CPU:1");
    // A device past the count is refused.
    let s2 = Scope::new_root();
    let bad = s2.with_device("/job:worker/task:0/device:CPU:3");
    let z = ops::constant(&bad, 1.0f32);
    let e = GrpcSession::new(&c.target("worker:0"), s2.graph()).unwrap().run(&[], &[&z], &[]).unwrap_err();
    assert_eq!(e.code, Code::InvalidArgument, "{e}");
}
