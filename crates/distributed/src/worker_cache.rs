//! The worker cache (TensorFlow's WorkerCacheInterface): the one place a task turns a
//! peer task's name and address into a [`WorkerApi`]. The master (CreateSession,
//! RegisterGraph, RunGraph, cleanup), the step rendezvous (RecvTensor) and remote function
//! calls all reach their peers through it, so the transport is chosen once: gRPC
//! ([`GrpcWorkerCache`]) or an in-process cluster with no sockets
//! ([`crate::InMemoryNet`]). [`FaultFilters`] installed on a cache apply to every call
//! made through it, on either transport.

use std::sync::Arc;

use ferroflow_core::Status;

use crate::channels::ChannelCache;
use crate::fault_filter::{FaultFilters, FilteredWorker};
use crate::rpc::RemoteWorker;
use crate::worker_api::WorkerApi;

/// How one task reaches the workers of its peers.
pub trait WorkerCache: Send + Sync {
    /// The worker of peer task `task` (`/job:J/replica:0/task:T`) at `addr`
    /// (`host:port`). Its errors name the task and the address.
    fn peer(&self, task: &str, addr: &str) -> Result<Arc<dyn WorkerApi>, Status>;

    /// The fault filters every call through this cache passes, if any.
    fn filters(&self) -> Option<&Arc<FaultFilters>> {
        None
    }
}

/// Peers over gRPC, on the channels of a [`ChannelCache`].
pub struct GrpcWorkerCache {
    own_task: String,
    channels: Arc<ChannelCache>,
    filters: Option<Arc<FaultFilters>>,
}

impl GrpcWorkerCache {
    /// The peers of task `own_task` over `channels`, through `filters` when given.
    pub fn new(own_task: &str, channels: Arc<ChannelCache>, filters: Option<Arc<FaultFilters>>) -> GrpcWorkerCache {
        GrpcWorkerCache { own_task: own_task.to_string(), channels, filters }
    }
}

impl WorkerCache for GrpcWorkerCache {
    fn peer(&self, task: &str, addr: &str) -> Result<Arc<dyn WorkerApi>, Status> {
        let w: Arc<dyn WorkerApi> =
            Arc::new(RemoteWorker::new(task.to_string(), addr.to_string(), self.channels.clone())?);
        Ok(filtered(&self.own_task, task, w, self.filters.as_ref()))
    }

    fn filters(&self) -> Option<&Arc<FaultFilters>> {
        self.filters.as_ref()
    }
}

/// `w` behind `filters` for calls from `from` to `to`, or `w` itself without filters.
pub(crate) fn filtered(
    from: &str,
    to: &str,
    w: Arc<dyn WorkerApi>,
    filters: Option<&Arc<FaultFilters>>,
) -> Arc<dyn WorkerApi> {
    match filters {
        Some(f) => Arc::new(FilteredWorker::new(from, to, w, f.clone())),
        None => w,
    }
}
