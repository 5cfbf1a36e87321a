//! The remote eager service (issue #44) spoken as TensorFlow 2's client speaks it: contexts
//! and their views, operations on sent and inline tensors, a copy back to the client by an
//! eager `_Send` and a RecvTensor at the context's step, functions registered and run
//! (whole, and as a component with its outputs kept), anonymous variables, keep-alive
//! expiry and TensorFlow's status codes.

use crate::common;

use std::time::Duration;

use common::{rt, Cluster};
use ferroflow_core::proto::eager::eager_service_client::EagerServiceClient;
use ferroflow_core::proto::eager::operation::{input::Item as In, Input};
use ferroflow_core::proto::eager::queue_item::Item;
use ferroflow_core::proto::eager::*;
use ferroflow_core::proto::op_def::ArgDef;
use ferroflow_core::proto::*;
use ferroflow_core::{attr, DataType, Tensor};
use ferroflow_distributed::{endpoint, worker_client};
use tonic::transport::Channel;

const DEVICE: &str = "/job:worker/replica:0/task:0/device:CPU:0";
const CLIENT: &str = "/job:localhost/replica:0/task:0/device:CPU:0";

fn remote(op_id: i64) -> Input {
    Input { item: Some(In::RemoteHandle(RemoteTensorHandle { op_id, device: DEVICE.into(), ..Default::default() })) }
}

fn inline(t: &Tensor) -> Input {
    Input { item: Some(In::Tensor(t.to_proto())) }
}

fn op(id: i64, name: &str, inputs: Vec<Input>, attrs: &[(&str, AttrValue)]) -> QueueItem {
    let mut o = Operation { id, name: name.into(), op_inputs: inputs, device: DEVICE.into(), ..Default::default() };
    o.attrs = attrs.iter().map(|(k, v)| (k.to_string(), v.clone())).collect();
    QueueItem { item: Some(Item::Operation(o)) }
}

fn s(v: &str) -> AttrValue {
    attr::string(v)
}

struct Client {
    eager: EagerServiceClient<Channel>,
    worker: worker_service_client::WorkerServiceClient<ferroflow_distributed::PeerChannel>,
    incarnation: u64,
}

async fn connect(c: &Cluster) -> Client {
    let ch = endpoint(&c.target("worker:0"), Duration::from_secs(2)).unwrap().connect_lazy();
    let mut worker = worker_client(ch.clone());
    let status = worker.get_status(GetStatusRequest {}).await.unwrap().into_inner();
    Client { eager: EagerServiceClient::new(ch), worker, incarnation: status.device_attributes[0].incarnation }
}

fn create(c: &Cluster, id: u64, view: u64, keep_alive_secs: i64) -> CreateContextRequest {
    CreateContextRequest {
        server_def: Some(ServerDef {
            cluster: Some(c.spec.to_proto()),
            job_name: "worker".into(),
            task_index: 0,
            protocol: "grpc".into(),
            ..Default::default()
        }),
        keep_alive_secs,
        context_id: id,
        context_view_id: view,
        ..Default::default()
    }
}

/// Runs `body` on a one-worker cluster with a client that created context `id` (view
/// `view`, kept alive 60 s) on the worker's device.
fn in_context(id: u64, view: u64, body: impl AsyncFnOnce(&Cluster, Client, u64)) {
    let c = Cluster::start(&[("worker", 1)]);
    rt().block_on(async {
        let mut cl = connect(&c).await;
        let created = cl.eager.create_context(create(&c, id, view, 60)).await.unwrap().into_inner();
        assert_eq!(created.device_attributes[0].name, DEVICE);
        body(&c, cl, id).await
    })
}

impl Client {
    async fn enqueue(&mut self, ctx: u64, items: Vec<QueueItem>) -> Result<EnqueueResponse, tonic::Status> {
        self.eager.enqueue(EnqueueRequest { context_id: ctx, queue: items }).await.map(|r| r.into_inner())
    }

    /// The tensor `(op_id, 0)` of context `ctx`, copied as TensorFlow's client copies it.
    async fn fetch(&mut self, ctx: u64, op_id: i64, dtype: DataType, wire: &str) -> Tensor {
        let send = op(
            -1,
            "_Send",
            vec![remote(op_id)],
            &[
                ("T", attr::ty(dtype)),
                ("tensor_name", s(wire)),
                ("send_device", s(DEVICE)),
                ("send_device_incarnation", attr::int(self.incarnation as i64)),
                ("recv_device", s(CLIENT)),
                ("client_terminated", attr::bool(false)),
            ],
        );
        self.enqueue(ctx, vec![send]).await.unwrap();
        let key = format!("{DEVICE};{:016x};{CLIENT};{wire};0:0", self.incarnation);
        let r = self.worker.recv_tensor(RecvTensorRequest {
            step_id: ctx as i64,
            rendezvous_key: key,
            ..Default::default()
        });
        Tensor::from_proto(&r.await.unwrap().into_inner().tensor.unwrap()).unwrap()
    }
}

#[test]
fn operations_on_sent_tensors_copies_and_anonymous_variables() {
    in_context(0x5eed_0001, 0, async |_, mut cl, id| {
        let x = Tensor::new(vec![2], vec![1.0f32, 2.0]).unwrap();
        let send = QueueItem {
            item: Some(Item::SendTensor(SendTensorOp {
                op_id: 1,
                tensors: vec![x.to_proto()],
                device_name: DEVICE.into(),
            })),
        };
        let three = Tensor::scalar(3.0f32);
        let mul = op(2, "Mul", vec![remote(1), inline(&three)], &[("T", attr::ty(DataType::Float))]);
        let r = cl.enqueue(id, vec![send, mul]).await.unwrap();
        assert_eq!(r.queue_response.len(), 2);
        let shape = &r.queue_response[1].shape[0];
        assert_eq!(shape.dim.iter().map(|d| d.size).collect::<Vec<_>>(), vec![2]);
        // A primitive op's outputs say no device (TensorFlow's rule: only functions do).
        assert!(r.queue_response[1].device.is_empty());
        let y = cl.fetch(id, 2, DataType::Float, "wire_1").await;
        assert_eq!(y.as_slice::<f32>().unwrap(), &[3.0, 6.0]);
        // Two variables made with TensorFlow's anonymous name are two variables.
        let anon = "cd2c89b7-88b7-44c8-ad83-06c2a9158347";
        let var = |id| {
            op(
                id,
                "VarHandleOp",
                vec![],
                &[
                    ("dtype", attr::ty(DataType::Float)),
                    ("shape", attr::shape(Some(&[]))),
                    ("shared_name", s(anon)),
                    ("container", s("")),
                ],
            )
        };
        let assign = |h, v: f32| {
            op(
                -1,
                "AssignVariableOp",
                vec![remote(h), inline(&Tensor::scalar(v))],
                &[("dtype", attr::ty(DataType::Float))],
            )
        };
        let read = |id, h| op(id, "ReadVariableOp", vec![remote(h)], &[("dtype", attr::ty(DataType::Float))]);
        cl.enqueue(id, vec![var(10), var(11), assign(10, 4.0), assign(11, 5.0), read(12, 10), read(13, 11)])
            .await
            .unwrap();
        assert_eq!(cl.fetch(id, 12, DataType::Float, "wire_2").await.scalar_value::<f32>().unwrap(), 4.0);
        assert_eq!(cl.fetch(id, 13, DataType::Float, "wire_3").await.scalar_value::<f32>().unwrap(), 5.0);
        // A bad operation fails its request with TensorFlow's code, naming it; the
        // context goes on.
        let bad = op(20, "Mul", vec![remote(1), inline(&Tensor::scalar(1i32))], &[("T", attr::ty(DataType::Float))]);
        let e = cl.enqueue(id, vec![bad]).await.unwrap_err();
        assert_eq!(e.code(), tonic::Code::InvalidArgument, "{}", e.message());
        assert!(e.message().contains("eager operation 20 (Mul)"), "{}", e.message());
        let e = cl.enqueue(id, vec![op(21, "NoSuchOp", vec![], &[])]).await.unwrap_err();
        assert_eq!(e.code(), tonic::Code::NotFound, "{}", e.message());
        let e = cl.enqueue(id, vec![op(22, "Identity", vec![remote(999)], &[("T", attr::ty(DataType::Float))])]);
        let e = e.await.unwrap_err();
        assert_eq!(e.code(), tonic::Code::InvalidArgument);
        assert!(e.message().contains("Op ID: 999"), "{}", e.message());
        // Released tensors are gone.
        let decref =
            QueueItem { item: Some(Item::HandleToDecref(RemoteTensorHandle { op_id: 2, ..Default::default() })) };
        cl.enqueue(id, vec![decref]).await.unwrap();
        let e = cl.enqueue(id, vec![op(23, "Identity", vec![remote(2)], &[("T", attr::ty(DataType::Float))])]);
        assert_eq!(e.await.unwrap_err().code(), tonic::Code::InvalidArgument);
        cl.eager.wait_queue_done(WaitQueueDoneRequest { context_id: id, op_id: vec![] }).await.unwrap();
        let e = cl.eager.wait_queue_done(WaitQueueDoneRequest { context_id: id, op_id: vec![1] }).await.unwrap_err();
        assert_eq!(e.code(), tonic::Code::Unimplemented);
    });
}

/// `y = x * 3` as a FunctionDef.
fn times_three() -> FunctionDef {
    let arg = |n: &str| ArgDef { name: n.into(), r#type: DataType::Float as i32, ..Default::default() };
    let mut k = NodeDef { name: "k".into(), op: "Const".into(), ..Default::default() };
    k.attr.insert("dtype".into(), attr::ty(DataType::Float));
    k.attr.insert("value".into(), attr::tensor(&Tensor::scalar(3.0f32)));
    let mut m = NodeDef {
        name: "m".into(),
        op: "Mul".into(),
        input: vec!["x".into(), "k:output:0".into()],
        ..Default::default()
    };
    m.attr.insert("T".into(), attr::ty(DataType::Float));
    FunctionDef {
        signature: Some(OpDef {
            name: "times_three".into(),
            input_arg: vec![arg("x")],
            output_arg: vec![arg("y")],
            ..Default::default()
        }),
        node_def: vec![k, m],
        ret: [("y".to_string(), "m:z:0".to_string())].into_iter().collect(),
        ..Default::default()
    }
}

#[test]
fn functions_run_whole_and_as_components() {
    in_context(0x5eed_0002, 0, async |_, mut cl, id| {
        let register = QueueItem {
            item: Some(Item::RegisterFunction(RegisterFunctionOp {
                function_def: Some(times_three()),
                ..Default::default()
            })),
        };
        let x = Tensor::new(vec![3], vec![1.0f32, 2.0, 3.0]).unwrap();
        let mut call = op(5, "times_three", vec![inline(&x)], &[]);
        if let Some(Item::Operation(o)) = call.item.as_mut() {
            o.is_function = true;
        }
        let r = cl.enqueue(id, vec![register, call]).await.unwrap();
        // A function's outputs say where they are.
        assert_eq!(r.queue_response[1].device, vec![DEVICE.to_string()]);
        assert_eq!(cl.fetch(id, 5, DataType::Float, "w1").await.as_slice::<f32>().unwrap(), &[3.0, 6.0, 9.0]);
        // As a component: output 0 kept as (7, 4); with id -1 the value comes back.
        let component = |op_id: i64| Operation {
            id: op_id,
            name: "times_three".into(),
            op_inputs: vec![inline(&x)],
            device: DEVICE.into(),
            is_function: true,
            is_component_function: true,
            func_step_id: -12345,
            ..Default::default()
        };
        let req = RunComponentFunctionRequest { context_id: id, operation: Some(component(7)), output_num: vec![4] };
        let r = cl.eager.run_component_function(req).await.unwrap().into_inner();
        assert_eq!((r.shape.len(), r.tensor.len()), (1, 0));
        let ident = op(
            8,
            "Identity",
            vec![Input {
                item: Some(In::RemoteHandle(RemoteTensorHandle { op_id: 7, output_num: 4, ..Default::default() })),
            }],
            &[("T", attr::ty(DataType::Float))],
        );
        cl.enqueue(id, vec![ident]).await.unwrap();
        assert_eq!(cl.fetch(id, 8, DataType::Float, "w2").await.as_slice::<f32>().unwrap(), &[3.0, 6.0, 9.0]);
        let req = RunComponentFunctionRequest { context_id: id, operation: Some(component(-1)), output_num: vec![] };
        let r = cl.eager.run_component_function(req).await.unwrap().into_inner();
        assert_eq!(Tensor::from_proto(&r.tensor[0]).unwrap().as_slice::<f32>().unwrap(), &[3.0, 6.0, 9.0]);
        // Not a component: TensorFlow's INTERNAL.
        let mut plain = component(9);
        plain.is_component_function = false;
        let req = RunComponentFunctionRequest { context_id: id, operation: Some(plain), output_num: vec![] };
        assert_eq!(cl.eager.run_component_function(req).await.unwrap_err().code(), tonic::Code::Internal);
    });
}

#[test]
fn context_views_unknown_contexts_and_expiry() {
    in_context(0x5eed_0003, 3, async |c, mut cl, id| {
        let alive = cl.eager.keep_alive(KeepAliveRequest { context_id: id }).await.unwrap().into_inner();
        assert_eq!(alive.context_view_id, 3);
        // An older view of an existing context is refused; a newer one replaces it.
        let e = cl.eager.create_context(create(c, id, 2, 60)).await.unwrap_err();
        assert_eq!(e.code(), tonic::Code::InvalidArgument);
        // Views move by one.
        let update = |view| UpdateContextRequest { context_id: id, context_view_id: view, ..Default::default() };
        assert_eq!(cl.eager.update_context(update(5)).await.unwrap_err().code(), tonic::Code::InvalidArgument);
        cl.eager.update_context(update(4)).await.unwrap();
        assert_eq!(
            cl.eager.keep_alive(KeepAliveRequest { context_id: id }).await.unwrap().into_inner().context_view_id,
            4
        );
        // A full update (a new cluster view) keeps the context working.
        let full = UpdateContextRequest { server_def: create(c, id, 5, 60).server_def, ..update(5) };
        cl.eager.update_context(full).await.unwrap();
        let two = Tensor::scalar(2.0f32);
        let sq = op(30, "Square", vec![inline(&two)], &[("T", attr::ty(DataType::Float))]);
        cl.enqueue(id, vec![sq]).await.unwrap();
        assert_eq!(cl.fetch(id, 30, DataType::Float, "w_upd").await.scalar_value::<f32>().unwrap(), 4.0);
        // A stale close is ignored; a current one closes.
        cl.eager.close_context(CloseContextRequest { context_id: id, context_view_id: 3 }).await.unwrap();
        cl.eager.keep_alive(KeepAliveRequest { context_id: id }).await.unwrap();
        cl.eager.close_context(CloseContextRequest { context_id: id, context_view_id: 5 }).await.unwrap();
        let e = cl.eager.keep_alive(KeepAliveRequest { context_id: id }).await.unwrap_err();
        assert_eq!(e.code(), tonic::Code::Aborted);
        assert!(e.message().contains("Unable to find a context_id"), "{}", e.message());
        let e = cl.enqueue(id, vec![]).await.unwrap_err();
        assert_eq!(e.code(), tonic::Code::Aborted);
        // Closing an unknown context is fine.
        cl.eager.close_context(CloseContextRequest { context_id: 77, context_view_id: 0 }).await.unwrap();
        // A context the client stops speaking to expires after its keep-alive (the sweep
        // runs every 500 ms); one kept alive does not.
        cl.eager.create_context(create(c, id + 1, 0, 1)).await.unwrap();
        cl.eager.create_context(create(c, id + 2, 0, 1)).await.unwrap();
        for _ in 0..6 {
            tokio::time::sleep(Duration::from_millis(500)).await;
            cl.eager.keep_alive(KeepAliveRequest { context_id: id + 2 }).await.unwrap();
        }
        let e = cl.eager.keep_alive(KeepAliveRequest { context_id: id + 1 }).await.unwrap_err();
        assert_eq!(e.code(), tonic::Code::Aborted);
    });
}
