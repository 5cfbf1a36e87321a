//! Hello, distributed world: start an in-process server and run a constant through a gRPC
//! session — TensorFlow's `tf.distribute.Server.create_local_server()` example.
//!
//! ```text
//! cargo run --example hello_world                          # in-process server
//! cargo run --example hello_world -- grpc://localhost:2222 # an existing server
//! ```
//! (Start a server with `ferroflow server --port 2222`; it also serves TensorFlow clients:
//! `tf.compat.v1.Session("grpc://localhost:2222")`.)

use ferroflow::{ops, Scope, Tensor};
use ferroflow_distributed::{GrpcSession, Server};
use ferroflow_runtime::StepRunner;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let external = std::env::args().nth(1);
    let local = match &external {
        Some(_) => None,
        None => Some(Server::create_local_server()?),
    };
    let target = external.unwrap_or_else(|| local.as_ref().map(|s| s.target().to_string()).unwrap_or_default());
    let s = Scope::new_root();
    let hello = ops::constant(&s, Tensor::scalar(b"Hello, distributed ferroflow!".to_vec()));
    let sess = GrpcSession::new(&target, s.graph())?;
    let out = sess.run(&[], &[&hello], &[])?;
    println!("{}", String::from_utf8_lossy(&out[0].scalar_value::<Vec<u8>>()?));
    println!("(via {target})");
    Ok(())
}
