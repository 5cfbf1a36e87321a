//! Structured statuses across tasks: the node where a step failed, carried in the status's
//! payloads, reaches the client from the ps through the worker's RunGraph reply (errors in
//! the response body) and the master's RunStep reply, so code acts on it without reading
//! the message.

use crate::common;

use ferroflow_core::{Code, DataType};
use ferroflow_distributed::GrpcSession;
use ferroflow_graph::ops;
use ferroflow_runtime::StepRunner;

#[test]
fn the_node_that_failed_on_another_task_reaches_the_client() {
    let (c, s, ps, wk) = common::ps_and_worker();
    // A dequeue of an empty queue on the ps that gives up after 100 ms.
    let q = ops::fifo_queue(&ps, &[DataType::Float], &[vec![]], 1, "", true);
    let got = ops::queue_dequeue(&ps.sub("token_wait"), q, &[DataType::Float], 100);
    let y = ops::add(&wk, got[0].clone(), ops::constant(&wk, 1.0f32));
    let sess = GrpcSession::new(&c.target("worker:0"), s.graph()).unwrap();
    let e = sess.run(&[], &[&y], &[]).unwrap_err();
    assert_eq!(e.code, Code::DeadlineExceeded, "{e}");
    assert_eq!(e.node(), Some(got[0].node.as_str()), "{e} ({:?})", e.payloads);
    assert!(!e.is_derived(), "the cause, not a cancelled partition: {e}");
    // The same through the master of the ps.
    let sess = GrpcSession::new(&c.target("ps:0"), s.graph()).unwrap();
    let e = sess.run(&[], &[&y], &[]).unwrap_err();
    assert_eq!(e.node(), Some(got[0].node.as_str()), "{e}");
}
