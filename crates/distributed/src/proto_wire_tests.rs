//! Wire checks of the distributed-runtime protos: field numbers and wire types as TensorFlow
//! 2.21 encodes them (docs/protocol.md, "Tensor encoding"), and the gRPC service names.

use ferroflow_proto::{self as pb, Message};

/// Decodes the top-level (field number, wire type) pairs of an encoded message.
fn tags(buf: &[u8]) -> Vec<(u64, u8)> {
    let varint = |buf: &[u8], pos: &mut usize| ferroflow_core::varint::get(buf, pos).expect("a whole varint");
    let mut out = Vec::new();
    let mut pos = 0;
    while pos < buf.len() {
        let key = varint(buf, &mut pos);
        let (field, wt) = (key >> 3, (key & 7) as u8);
        match wt {
            0 => {
                varint(buf, &mut pos);
            }
            1 => pos += 8,
            2 => {
                let n = varint(buf, &mut pos) as usize;
                pos += n;
            }
            5 => pos += 4,
            _ => panic!("unexpected wire type {wt}"),
        }
        out.push((field, wt));
    }
    out
}

#[test]
fn master_field_numbers() {
    let m = pb::ExtendSessionResponse { new_graph_version: 7 };
    assert_eq!(tags(&m.encode_to_vec()), vec![(4, 0)]);

    let m = pb::RunStepResponse { status_code: 3, status_error_message: "bad".into(), ..Default::default() };
    assert_eq!(tags(&m.encode_to_vec()), vec![(3, 0), (4, 2)]);

    let m = pb::RunStepRequest { store_errors_in_response_body: true, request_id: 9, ..Default::default() };
    assert_eq!(tags(&m.encode_to_vec()), vec![(7, 0), (8, 0)]);

    let m = pb::CreateSessionRequest { target: "grpc://h:1".into(), ..Default::default() };
    assert_eq!(tags(&m.encode_to_vec()), vec![(3, 2)]);
}

#[test]
fn worker_field_numbers() {
    let m = pb::RunGraphRequest {
        session_handle: "s".into(),
        create_worker_session_called: true,
        graph_handle: "g".into(),
        step_id: 5,
        store_errors_in_response_body: true,
        request_id: 1,
        ..Default::default()
    };
    let mut t = tags(&m.encode_to_vec());
    t.sort();
    assert_eq!(t, vec![(1, 2), (2, 0), (8, 2), (9, 0), (10, 0), (11, 0)]);

    let m = pb::RunGraphResponse { status_code: 10, status_error_message: "x".into(), ..Default::default() };
    assert_eq!(tags(&m.encode_to_vec()), vec![(5, 0), (6, 2)]);

    let m = pb::DeregisterGraphRequest {
        graph_handle: "g".into(),
        session_handle: "s".into(),
        create_worker_session_called: true,
    };
    let mut t = tags(&m.encode_to_vec());
    t.sort();
    assert_eq!(t, vec![(1, 2), (2, 2), (3, 0)]);

    let m = pb::RegisterGraphRequest {
        create_worker_session_called: true,
        config_proto: Some(Default::default()),
        ..Default::default()
    };
    let mut t = tags(&m.encode_to_vec());
    t.sort();
    assert_eq!(t, vec![(6, 0), (8, 2)]);
}

#[test]
fn device_and_cluster_field_numbers() {
    let d = pb::DeviceAttributes { incarnation: 0xa1b2, memory_limit: 1, ..Default::default() };
    // incarnation is fixed64 (wire type 1), field 6.
    assert_eq!(tags(&d.encode_to_vec()), vec![(4, 0), (6, 1)]);

    let s = pb::ServerDef { replica: 1, task_index: 2, protocol: "grpc".into(), ..Default::default() };
    let mut t = tags(&s.encode_to_vec());
    t.sort();
    assert_eq!(t, vec![(3, 0), (5, 2), (8, 0)]);

    let c = pb::ConfigProto { operation_timeout_in_ms: 5, isolate_session_state: true, ..Default::default() };
    let mut t = tags(&c.encode_to_vec());
    t.sort();
    assert_eq!(t, vec![(11, 0), (15, 0)]);
}

#[test]
fn unknown_fields_of_placeholders_are_skipped() {
    // A GPUOptions with per_process_gpu_memory_fraction (field 1, double) and allow_growth
    // (field 4, bool), as TF sends it inside ConfigProto.gpu_options (field 6).
    let gpu = [0x09, 0, 0, 0, 0, 0, 0, 0xe0, 0x3f, 0x20, 0x01];
    let mut buf = vec![0x32, gpu.len() as u8];
    buf.extend_from_slice(&gpu);
    buf.extend_from_slice(&[0x38, 0x01]); // allow_soft_placement = true (field 7)
    let c = pb::ConfigProto::decode(buf.as_slice()).unwrap();
    assert!(c.allow_soft_placement);
    assert!(c.gpu_options.is_some());
}

#[test]
fn service_names_are_tensorflows() {
    assert_eq!(pb::master_service_server::SERVICE_NAME, "tensorflow.MasterService");
    assert_eq!(pb::worker_service_server::SERVICE_NAME, "tensorflow.WorkerService");
}
