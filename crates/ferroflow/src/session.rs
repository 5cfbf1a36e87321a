//! `Session`: one type for local and remote sessions, chosen by the target string, like
//! `tf.compat.v1.Session(target)`: `""` runs in this process ([`DirectSession`]),
//! `grpc://host:port` talks to a cluster's master ([`GrpcSession`]).

use ferroflow_core::proto::{ConfigProto, RunMetadata};
use ferroflow_core::{Status, Tensor};
use ferroflow_distributed::GrpcSession;
use ferroflow_graph::Graph;
use ferroflow_runtime::{DirectSession, StepRunner};

/// A session on a graph: in-process or on a cluster.
pub enum Session {
    /// `target == ""`: runs in this process.
    Local(DirectSession),
    /// `target == "grpc://host:port"` (`grpcs://` over TLS): a master of a ferroflow or
    /// TensorFlow cluster.
    Grpc(Box<GrpcSession>),
}

impl Session {
    /// Opens a session on `graph`. `""` is in-process; `grpc://host:port` (or
    /// `host:port`) contacts that task's master, `grpcs://host:port` over TLS (the CA comes
    /// from [`ferroflow_distributed::set_client_tls`] or `FERROFLOW_TLS_CA`). The remote session is created lazily, at
    /// the first run, and the graph is extended as it grows.
    pub fn new(target: &str, graph: &Graph) -> Result<Session, Status> {
        Session::with_config(target, graph, ConfigProto::default())
    }

    /// As [`Session::new`], with a `ConfigProto` (device filters, operation timeout, …).
    pub fn with_config(target: &str, graph: &Graph, config: ConfigProto) -> Result<Session, Status> {
        if target.is_empty() {
            return Ok(Session::Local(DirectSession::new(graph)));
        }
        Ok(Session::Grpc(Box::new(GrpcSession::with_config(target, graph, config)?)))
    }

    /// Closes the session (remote: CloseSession on the master; local: nothing to do).
    pub fn close(&self) -> Result<(), Status> {
        match self {
            Session::Local(_) => Ok(()),
            Session::Grpc(s) => s.close(),
        }
    }
}

impl StepRunner for Session {
    fn run_by_name_meta(&self, step: ferroflow_runtime::StepArgs<'_>) -> Result<(Vec<Tensor>, RunMetadata), Status> {
        match self {
            Session::Local(s) => s.run_by_name_meta(step),
            Session::Grpc(s) => s.run_by_name_meta(step),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ferroflow_distributed::Server;
    use ferroflow_graph::{ops, Output, Scope};

    fn graph() -> (Scope, Output) {
        let s = Scope::new_root();
        let a = ops::constant(&s, 3.0f32);
        let b = ops::constant(&s, 4.0f32);
        let c = ops::mul(&s, a, b);
        (s, c)
    }

    #[test]
    fn empty_target_runs_in_process() {
        let (s, c) = graph();
        let sess = Session::new("", s.graph()).unwrap();
        assert!(matches!(sess, Session::Local(_)));
        assert_eq!(sess.run(&[], &[&c], &[]).unwrap()[0].scalar_value::<f32>().unwrap(), 12.0);
        sess.close().unwrap();
    }

    #[test]
    fn grpc_target_runs_on_a_server() {
        let server = Server::create_local_server().unwrap();
        let (s, c) = graph();
        let sess = Session::new(server.target(), s.graph()).unwrap();
        assert!(matches!(sess, Session::Grpc(_)));
        assert_eq!(sess.run(&[], &[&c], &[]).unwrap()[0].scalar_value::<f32>().unwrap(), 12.0);
        sess.close().unwrap();
        server.shutdown();
    }
}
