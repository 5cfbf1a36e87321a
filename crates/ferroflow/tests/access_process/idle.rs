//! Idle connections (`--connection_idle_seconds`): a connection quiet after its request is
//! closed once the timeout passes (and a gRPC client reconnects on its next call), a call
//! that waits longer than the timeout is not cut, and at the connection cap the connection
//! idle the longest makes room for a new client.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use ferroflow::{ops, DataType, Scope, Tensor};
use ferroflow_distributed::GrpcSession;
use ferroflow_runtime::StepRunner;

use super::{answers, start};

/// An HTTP/2 frame: length, type, flags, stream id, payload.
fn frame(kind: u8, flags: u8, stream: u32, payload: &[u8]) -> Vec<u8> {
    let n = payload.len();
    let mut f = vec![(n >> 16) as u8, (n >> 8) as u8, n as u8, kind, flags];
    f.extend(stream.to_be_bytes());
    f.extend_from_slice(payload);
    f
}

/// A connection that makes one gRPC call (ServerInfo, whose answer it does not read) by
/// hand, and then says nothing more.
fn one_call_then_quiet(port: u16) -> TcpStream {
    let mut c = TcpStream::connect(("127.0.0.1", port)).unwrap();
    let mut out = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".to_vec();
    out.extend(frame(0x4, 0, 0, &[])); // SETTINGS
                                       // HPACK: :method POST, :scheme http (static table), :path and :authority with indexed
                                       // names, content-type (index 31) and te as literals without indexing.
    let path = b"/ferroflow.Control/ServerInfo";
    let mut h = vec![0x83, 0x86, 0x04, path.len() as u8];
    h.extend_from_slice(path);
    h.extend_from_slice(&[0x01, 1, b'x', 0x0f, 0x10, 16]);
    h.extend_from_slice(b"application/grpc");
    h.extend_from_slice(&[0x00, 2, b't', b'e', 8]);
    h.extend_from_slice(b"trailers");
    out.extend(frame(0x1, 0x4, 1, &h)); // HEADERS, END_HEADERS
    out.extend(frame(0x0, 0x1, 1, &[0, 0, 0, 0, 0])); // DATA: an empty message, END_STREAM
    c.write_all(&out).unwrap();
    c
}

/// Reads until the server closes `c` (Some(when)) or `limit` passes (None).
fn closed_within(c: &mut TcpStream, limit: Duration) -> Option<Duration> {
    let t = Instant::now();
    let mut buf = [0u8; 4096];
    while t.elapsed() < limit {
        c.set_read_timeout(Some((limit - t.elapsed()).max(Duration::from_millis(10)))).unwrap();
        match c.read(&mut buf) {
            Ok(0) => return Some(t.elapsed()),
            Ok(_) => {}
            Err(e) if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => {}
            Err(_) => return Some(t.elapsed()),
        }
    }
    None
}

#[test]
fn idle_connections_are_closed_and_clients_reconnect() {
    let (_p, port) = start(&["--port", "0", "--connection_idle_seconds", "1"]);
    let mut quiet = one_call_then_quiet(port);
    let closed = closed_within(&mut quiet, Duration::from_secs(8));
    assert!(closed.is_some_and(|t| t >= Duration::from_millis(900)), "closed after {closed:?}");
    // A session whose connection was closed while idle carries on: its client reconnects.
    let target = format!("grpc://127.0.0.1:{port}");
    let s = Scope::new_root();
    let c = ops::mul(&s, ops::constant(&s, 6.0f32), ops::constant(&s, 7.0f32));
    let sess = GrpcSession::new(&target, s.graph()).unwrap().over_grpc_only();
    assert_eq!(sess.run(&[], &[&c], &[]).unwrap()[0].scalar_value::<f32>().unwrap(), 42.0);
    std::thread::sleep(Duration::from_millis(2500));
    assert_eq!(sess.run(&[], &[&c], &[]).unwrap()[0].scalar_value::<f32>().unwrap(), 42.0);

    // A step that waits (a dequeue of an empty queue, filled 3 s later from another
    // connection) is busy, not idle: it is not cut.
    let s = Scope::new_root();
    let q = ops::fifo_queue(&s, &[DataType::Float], &[vec![]], 4, "idle_q", true);
    let x = ops::placeholder(&s, DataType::Float, Some(&[]));
    let enq = ops::queue_enqueue(&s, q.clone(), vec![x.clone()], 0);
    let deq = ops::queue_dequeue(&s, q, &[DataType::Float], 0);
    let (waiter, filler) = (
        GrpcSession::new(&target, s.graph()).unwrap().over_grpc_only(),
        GrpcSession::new(&target, s.graph()).unwrap().over_grpc_only(),
    );
    let got = std::thread::scope(|sc| {
        let w = sc.spawn(|| waiter.run(&[], &[&deq[0]], &[]));
        std::thread::sleep(Duration::from_secs(3));
        filler.run(&[(&x, Tensor::scalar(5.0f32))], &[], &[&enq]).unwrap();
        w.join().unwrap()
    });
    assert_eq!(got.unwrap()[0].scalar_value::<f32>().unwrap(), 5.0);

    // Without the flag a quiet connection stays open (the default is 10 minutes).
    let (_p2, port2) = start(&["--port", "0"]);
    let mut quiet = one_call_then_quiet(port2);
    assert_eq!(closed_within(&mut quiet, Duration::from_secs(3)), None);
}

#[test]
fn at_the_connection_cap_the_longest_idle_connection_makes_room() {
    let (_p, port) = start(&["--port", "0", "--max_connections", "4", "--max_connections_per_peer", "4"]);
    let mut held: Vec<TcpStream> = (0..4).map(|_| one_call_then_quiet(port)).collect();
    std::thread::sleep(Duration::from_millis(1500));
    // A new client gets in (before, it waited in the listen backlog until one closed)...
    let t = Instant::now();
    answers(&format!("grpc://127.0.0.1:{port}")).unwrap();
    assert!(t.elapsed() < Duration::from_secs(10), "took {:?}", t.elapsed());
    // ...because a quiet connection was closed for it.
    let closed = held.iter_mut().filter_map(|c| closed_within(c, Duration::from_millis(300))).count();
    assert!(closed >= 1, "no quiet connection was closed");
}
