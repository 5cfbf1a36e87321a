//! The fuzz tests, one test binary: decoders without a server, the kernels a received graph
//! runs, the HTTP/2 transport, and every MasterService and WorkerService method of a live
//! cluster. `fuzz` holds the shared generator, outcome counts and panic hook; the binary's
//! allocator notes each thread's largest allocation (`fuzz::largest`), which the decoder
//! fuzzing bounds.

#[path = "../common/mod.rs"]
mod common;
#[path = "../fuzz/mod.rs"]
mod fuzz;

mod decoders;
mod http2;
mod kernels;
mod master;
mod worker;

#[global_allocator]
static ALLOC: ferroflow_core::WatchedAlloc = fuzz::largest::ALLOCATOR;
