//! In-process cluster tests (several Servers in this process, each task on its own
//! 127.0.0.1:0 port): one test binary, one module per area. `common` builds the clusters.

#[path = "../common/mod.rs"]
mod common;

mod bad_input;
mod callables;
mod cluster_failures;
mod cluster_steps;
mod collectives;
mod down_tasks;
mod eager_service;
mod fault_filters;
mod graph_limits;
mod loops_across_tasks;
mod partial_run;
mod plan_cells;
mod recv_batching;
mod remote_call;
mod step_trace;
mod structured_status;
mod tls;
mod worker_sessions;
