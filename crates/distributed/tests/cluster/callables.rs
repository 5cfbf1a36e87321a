//! Callables (MakeCallable, RunCallable, ReleaseCallable) on a ps + worker cluster through
//! the master's gRPC service, as TensorFlow's client sends them: feeds, fetches and a
//! target across tasks, a tensor connection, run options, and TensorFlow's errors.

use crate::common;

use std::time::Duration;

use common::rt;
use ferroflow_core::proto::*;
use ferroflow_core::{Code, DataType, Tensor};
use ferroflow_distributed::{endpoint, master_client};
use ferroflow_graph::ops;

fn code_of(e: &tonic::Status) -> Code {
    Code::from_i32(e.code() as i32)
}

fn floats(p: &TensorProto) -> Vec<f32> {
    Tensor::from_proto(p).unwrap().as_slice::<f32>().unwrap().to_vec()
}

#[test]
fn callables_run_a_fixed_signature_by_handle() {
    let (c, s, ps, w) = common::ps_and_worker();
    let a = ops::placeholder_named(&w, "a", DataType::Float, Some(&[]));
    let b = ops::placeholder_named(&w, "b", DataType::Float, Some(&[2]));
    let r1 = ops::add(&w, a.clone(), b.clone());
    let r2 = ops::mul(&ps, r1.clone(), ops::constant(&ps, 2.0f32));
    let v = ops::variable_v2(&ps, DataType::Float, Some(&[2]), "", "");
    let init = ops::assign(&ps, v.clone(), ops::constant(&ps, Tensor::vec(vec![1.0f32, 2.0])), true, false);
    let bump = ops::assign_add(&ps, v.clone(), r1.clone());
    let src = ops::mul(&w, ops::constant(&w, 5.0f32), ops::constant(&w, 2.0f32));
    let p = ops::placeholder_named(&w, "p", DataType::Float, Some(&[]));
    let viap = ops::add(&w, p.clone(), ops::constant(&w, 1.0f32));
    let graph = s.graph().to_graph_def();
    let target = c.target("worker:0");

    rt().block_on(async {
        let mut m = master_client(endpoint(&target, Duration::from_secs(5)).unwrap().connect_lazy());
        let h = common::new_session(&mut m, graph).await;
        let step = RunStepRequest { session_handle: h.clone(), target: vec![init.node.clone()], ..Default::default() };
        m.run_step(step).await.unwrap();
        let make = |opts: CallableOptions| MakeCallableRequest {
            session_handle: h.clone(),
            options: Some(opts),
            request_id: 0,
        };
        let run = |handle: i64, feed: Vec<Tensor>| RunCallableRequest {
            session_handle: h.clone(),
            handle,
            feed: feed.iter().map(Tensor::to_proto).collect(),
            request_id: 0,
        };

        // Feeds, fetches and a target across both tasks, run three times.
        let opts = CallableOptions {
            feed: vec![a.name(), b.name()],
            fetch: vec![r1.name(), r2.name()],
            target: vec![bump.node.clone()],
            ..Default::default()
        };
        let fh = m.make_callable(make(opts)).await.unwrap().into_inner().handle;
        for i in 0..3 {
            let feed = vec![Tensor::scalar(i as f32), Tensor::vec(vec![1.0f32, -1.0])];
            let r = m.run_callable(run(fh, feed)).await.unwrap().into_inner();
            let x = i as f32;
            assert_eq!(floats(&r.fetch[0]), vec![x + 1.0, x - 1.0]);
            assert_eq!(floats(&r.fetch[1]), vec![2.0 * (x + 1.0), 2.0 * (x - 1.0)]);
        }
        // The target ran in each step: v = [1, 2] + sum over i of [i + 1, i - 1].
        let read = CallableOptions { fetch: vec![v.name()], ..Default::default() };
        let rh = m.make_callable(make(read)).await.unwrap().into_inner().handle;
        assert_ne!(rh, fh);
        let r = m.run_callable(run(rh, vec![])).await.unwrap().into_inner();
        assert_eq!(floats(&r.fetch[0]), vec![7.0, 2.0]);

        // A tensor connection: `p` reads `src` (10), so `viap` is 11. Run options apply to
        // every run.
        let conn = CallableOptions {
            fetch: vec![viap.name(), src.name()],
            tensor_connection: vec![TensorConnection { from_tensor: src.name(), to_tensor: p.name() }],
            run_options: Some(RunOptions { trace_level: 3, ..Default::default() }),
            ..Default::default()
        };
        let ch = m.make_callable(make(conn.clone())).await.unwrap().into_inner().handle;
        let r = m.run_callable(run(ch, vec![])).await.unwrap().into_inner();
        assert_eq!((floats(&r.fetch[0]), floats(&r.fetch[1])), (vec![11.0], vec![10.0]));
        let stats = r.metadata.and_then(|m| m.step_stats).expect("a traced callable returns step stats");
        assert!(stats.dev_stats.iter().any(|d| d.device.contains("/job:worker/")), "{:?}", stats.dev_stats);

        // TensorFlow's errors.
        let e = m.run_callable(run(fh, vec![Tensor::scalar(1.0f32)])).await.unwrap_err();
        assert_eq!(code_of(&e), Code::InvalidArgument, "{}", e.message());
        assert!(e.message().contains("takes 2 feed tensors"), "{}", e.message());
        let e = m.run_callable(run(fh, vec![Tensor::scalar(1i32), Tensor::vec(vec![1.0f32, 2.0])])).await.unwrap_err();
        assert_eq!(code_of(&e), Code::InvalidArgument, "{}", e.message());
        assert!(e.message().contains("cannot feed a tensor of dtype"), "{}", e.message());
        let fed_and_fetched = CallableOptions { fetch: vec![p.name()], ..conn.clone() };
        let e = m.make_callable(make(fed_and_fetched)).await.unwrap_err();
        assert_eq!(e.message(), "p:0 is both fed and fetched.");
        let missing = CallableOptions { fetch: vec!["nope:0".into()], ..Default::default() };
        let e = m.make_callable(make(missing)).await.unwrap_err();
        assert_eq!(code_of(&e), Code::NotFound, "{}", e.message());
        assert!(e.message().contains("FetchOutputs node nope:0: not found"), "{}", e.message());
        let release = |handle: i64| ReleaseCallableRequest { session_handle: h.clone(), handle };
        m.release_callable(release(fh)).await.unwrap();
        m.release_callable(release(fh)).await.unwrap();
        let e = m.run_callable(run(fh, vec![])).await.unwrap_err();
        assert!(e.message().contains("after handle was released"), "{}", e.message());
        let e = m.run_callable(run(99, vec![])).await.unwrap_err();
        assert_eq!(code_of(&e), Code::InvalidArgument, "{}", e.message());
        assert!(e.message().contains("No such callable handle: 99"), "{}", e.message());
        let e = m.release_callable(release(99)).await.unwrap_err();
        assert_eq!(code_of(&e), Code::InvalidArgument, "{}", e.message());
        // A repeated request id is refused, as for RunStep.
        let once = RunCallableRequest { request_id: 5, ..run(rh, vec![]) };
        m.run_callable(once.clone()).await.unwrap();
        let e = m.run_callable(once).await.unwrap_err();
        assert_eq!(code_of(&e), Code::Aborted, "{}", e.message());
        // Closing the session ends its callables.
        m.close_session(CloseSessionRequest { session_handle: h.clone() }).await.unwrap();
        let e = m.run_callable(run(rh, vec![])).await.unwrap_err();
        assert_eq!(code_of(&e), Code::FailedPrecondition, "{}", e.message());
    });
}
