//! Tests of [`super`]: encoding tensor-carrying messages and reading them back from chunks.

use ferroflow_core::Tensor;

use super::*;

fn chunks_of(parts: &[Bytes], cut: usize) -> Chunks {
    let mut all = BytesMut::new();
    for p in parts {
        all.extend_from_slice(p);
    }
    let all = all.freeze();
    let mut c = Chunks::default();
    let mut i = 0;
    while i < all.len() {
        let j = (i + cut).min(all.len());
        c.push(all.slice(i..j));
        i = j;
    }
    c
}

#[test]
fn encoded_response_decodes_with_prost_in_any_chunking() {
    let t = Tensor::new(vec![3, 5], (0..15).map(|i| i as f32 * 0.5).collect::<Vec<_>>()).unwrap();
    let resp =
        RecvTensorResponse { tensor: Some(t.to_proto()), is_dead: true, send_start_micros: 77, ..Default::default() };
    let want = resp.clone();
    let parts = encode_recv_tensor(resp).unwrap();
    for cut in [1, 3, 7, 64, 10_000] {
        let got: RecvTensorResponse = chunks_of(&parts, cut).into_message("test").unwrap();
        assert_eq!(got, want, "chunks of {cut} bytes");
        assert_eq!(Tensor::from_proto(got.tensor.as_ref().unwrap()).unwrap(), t);
    }
}

#[test]
fn content_within_one_chunk_is_not_copied() {
    let t = Tensor::new(vec![10_000], vec![1.25f32; 10_000]).unwrap();
    let parts = encode_recv_tensor(RecvTensorResponse { tensor: Some(t.to_proto()), ..Default::default() }).unwrap();
    let content = parts.iter().max_by_key(|p| p.len()).unwrap().clone();
    assert_eq!(content.len(), 40_000);
    let mut c = Chunks::default();
    for p in parts {
        c.push(p);
    }
    let got: RecvTensorResponse = c.into_message("test").unwrap();
    let got_content = &got.tensor.unwrap().tensor_content;
    assert_eq!(got_content.as_ptr(), content.as_ptr(), "the content must be a slice of the received chunk");
}

#[test]
fn string_and_empty_tensors_round_trip() {
    let s = Tensor::new(vec![2], vec![b"ab".to_vec(), b"".to_vec()]).unwrap();
    for t in [s, Tensor::new(vec![0], Vec::<f32>::new()).unwrap()] {
        let resp = RecvTensorResponse { tensor: Some(t.to_proto()), ..Default::default() };
        let got: RecvTensorResponse =
            chunks_of(&encode_recv_tensor(resp.clone()).unwrap(), 2).into_message("test").unwrap();
        assert_eq!(got, resp);
    }
}

#[test]
fn run_step_responses_decode_with_prost() {
    let a = Tensor::new(vec![2, 3], vec![1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0]).unwrap();
    let b = Tensor::new(vec![2], vec![b"x".to_vec(), b"yz".to_vec()]).unwrap();
    let named = vec![
        NamedTensorProto { name: "a:0".into(), tensor: Some(a.to_proto()) },
        NamedTensorProto { name: String::new(), tensor: Some(Tensor::scalar(7i64).to_proto()) },
        NamedTensorProto { name: "b:0".into(), tensor: Some(b.to_proto()) },
        NamedTensorProto { name: "none".into(), tensor: None },
    ];
    let rs = RunStepResponse {
        tensor: named.clone(),
        status_code: 3,
        status_error_message: "m".into(),
        ..Default::default()
    };
    for cut in [1, 5, 1000] {
        let got: RunStepResponse = chunks_of(&encode_run_step(rs.clone()).unwrap(), cut).into_message("test").unwrap();
        // A missing tensor is written as an empty one (the same on the wire for proto3).
        let mut want = rs.clone();
        want.tensor[3].tensor = Some(TensorProto::default());
        assert_eq!(got, want);
    }
    let got: RunStepResponse = chunks_of(&encode_run_step(rs).unwrap(), 4).into_message("test").unwrap();
    assert_eq!(Tensor::from_proto(got.tensor[0].tensor.as_ref().unwrap()).unwrap(), a);
    assert_eq!(Tensor::from_proto(got.tensor[2].tensor.as_ref().unwrap()).unwrap(), b);
}

#[test]
fn run_graph_messages_decode_with_prost_and_keep_their_other_fields() {
    let a = Tensor::new(vec![4], vec![0.5f32, -1.0, 2.0, 3.5]).unwrap();
    let b = Tensor::new(vec![1], vec![b"s".to_vec()]).unwrap();
    let named = vec![
        NamedTensorProto { name: "k1".into(), tensor: Some(a.to_proto()) },
        NamedTensorProto { name: "k2".into(), tensor: Some(b.to_proto()) },
    ];
    let resp = RunGraphResponse {
        recv: named.clone(),
        status_code: 9,
        status_error_message: "why".into(),
        ..Default::default()
    };
    let req = RunGraphRequest {
        session_handle: "s".into(),
        graph_handle: "g".into(),
        step_id: 42,
        send: named,
        recv_key: vec!["r1".into(), "r2".into()],
        store_errors_in_response_body: true,
        request_id: -7,
        ..Default::default()
    };
    for cut in [1, 3, 1000] {
        let got: RunGraphResponse =
            chunks_of(&encode_run_graph(resp.clone()).unwrap(), cut).into_message("test").unwrap();
        assert_eq!(got, resp, "response, chunks of {cut}");
        let got: RunGraphRequest =
            chunks_of(&encode_run_graph_request(req.clone()).unwrap(), cut).into_message("test").unwrap();
        assert_eq!(got, req, "request, chunks of {cut}");
        assert_eq!(Tensor::from_proto(got.send[0].tensor.as_ref().unwrap()).unwrap(), a);
    }
}

#[test]
fn run_graph_tensors_travel_as_their_own_buffers() {
    let t = Tensor::new(vec![10_000], vec![3.0f32; 10_000]).unwrap();
    let proto = t.to_proto();
    let content = proto.tensor_content.clone();
    let resp = RunGraphResponse {
        recv: vec![NamedTensorProto { name: "k".into(), tensor: Some(proto.clone()) }],
        ..Default::default()
    };
    let req = RunGraphRequest {
        send: vec![NamedTensorProto { name: "k".into(), tensor: Some(proto) }],
        ..Default::default()
    };
    for parts in [encode_run_graph(resp).unwrap(), encode_run_graph_request(req).unwrap()] {
        assert!(
            parts.iter().any(|p| p.as_ptr() == content.as_ptr() && p.len() == content.len()),
            "the tensor's buffer must be one of the chunks, not copied"
        );
    }
}

#[test]
fn small_tensors_and_the_prefix_travel_in_one_chunk() {
    let small = Tensor::new(vec![100], vec![2.0f32; 100]).unwrap();
    let resp = RunGraphResponse {
        recv: vec![
            NamedTensorProto { name: "a".into(), tensor: Some(small.to_proto()) },
            NamedTensorProto { name: "b".into(), tensor: Some(Tensor::scalar(7i64).to_proto()) },
        ],
        ..Default::default()
    };
    let parts = encode_run_graph(resp.clone()).unwrap();
    assert_eq!(parts.len(), 1, "one DATA frame for a message of small tensors");
    let got: RunGraphResponse = chunks_of(&parts, 7).into_message("test").unwrap();
    assert_eq!(got, resp);
    // A large one still goes as its own buffer, after a head that carries the prefix.
    let big = Tensor::new(vec![10_000], vec![1.0f32; 10_000]).unwrap();
    let resp = RunGraphResponse {
        recv: vec![NamedTensorProto { name: "big".into(), tensor: Some(big.to_proto()) }],
        ..Default::default()
    };
    let parts = encode_run_graph(resp.clone()).unwrap();
    assert_eq!(parts.iter().map(|p| p.len() >= 40_000).collect::<Vec<_>>(), vec![false, true]);
    assert_eq!(chunks_of(&parts, 1000).into_message::<RunGraphResponse>("test").unwrap(), resp);
}

#[test]
fn a_stream_of_messages_splits_at_every_chunking() {
    let msgs: Vec<RecvTensorResponse> = (0..3)
        .map(|i| RecvTensorResponse {
            tensor: Some(Tensor::new(vec![5 + i], vec![i as f32; 5 + i]).unwrap().to_proto()),
            is_dead: i == 1,
            ..Default::default()
        })
        .collect();
    let mut all = BytesMut::new();
    for m in &msgs {
        for p in encode_recv_tensor(m.clone()).unwrap() {
            all.extend_from_slice(&p);
        }
    }
    let all = all.freeze();
    for cut in 1..=all.len() {
        let mut body = Chunks::default();
        let mut got = Vec::new();
        for piece in all.chunks(cut) {
            body.push(Bytes::copy_from_slice(piece));
            while let Some(m) = body.take_message("test").unwrap() {
                got.push(m.into_message::<RecvTensorResponse>("test").unwrap());
            }
        }
        assert_eq!(got, msgs, "cut {cut}");
        assert_eq!(body.remaining(), 0);
    }
}

#[test]
fn gzip_compressed_messages_decode() {
    use std::io::Write;
    let resp = RecvTensorResponse { is_dead: true, send_start_micros: 42, ..Default::default() };
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(&resp.encode_to_vec()).unwrap();
    let z = gz.finish().unwrap();
    let mut body = vec![1u8];
    body.extend((z.len() as u32).to_be_bytes());
    body.extend(z);
    let mut c = Chunks::default();
    c.push(Bytes::from(body));
    assert_eq!(c.into_message::<RecvTensorResponse>("t").unwrap(), resp);
}

#[test]
fn bad_bodies_are_errors_not_panics() {
    let mut short = Chunks::default();
    short.push(Bytes::from_static(&[0, 0, 0]));
    assert!(short.into_message::<RecvTensorResponse>("r").unwrap_err().message.contains("5-byte"));
    let mut wrong_len = Chunks::default();
    wrong_len.push(Bytes::from_static(&[0, 0, 0, 0, 9, 1]));
    assert!(wrong_len.into_message::<RecvTensorResponse>("r").unwrap_err().message.contains("announces 9"));
    let mut compressed = Chunks::default();
    compressed.push(Bytes::from_static(&[1, 0, 0, 0, 2, 7, 7]));
    let e = compressed.into_message::<RecvTensorResponse>("r").unwrap_err();
    assert_eq!(e.code, ferroflow_core::Code::Internal, "{}", e.message);
    let mut flag = Chunks::default();
    flag.push(Bytes::from_static(&[2, 0, 0, 0, 0]));
    assert!(flag.into_message::<RecvTensorResponse>("r").unwrap_err().message.contains("flag 2"));
    let mut garbage = Chunks::default();
    garbage.push(Bytes::from_static(&[0, 0, 0, 0, 3, 0x0a, 0x05, 0x01]));
    assert!(garbage.into_message::<RecvTensorResponse>("r").unwrap_err().message.contains("malformed"));
}
