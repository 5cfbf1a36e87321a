//! The in-process rendezvous: a table of tensors and waiters keyed by rendezvous key.

use std::collections::HashMap;
use std::sync::Mutex;

use ferroflow_core::{Status, Tensor};
use ferroflow_kernels::{FunctionCall, FunctionDone, RecvCallback, Rendezvous};

enum Slot {
    Ready(Tensor, bool),
    Waiting(Vec<RecvCallback>),
}

#[derive(Default)]
struct Inner {
    table: HashMap<String, Slot>,
    aborted: Option<Status>,
}

/// A rendezvous for one step within one process.
#[derive(Default)]
pub struct LocalRendezvous {
    inner: Mutex<Inner>,
    /// Where `RemoteCall`s to other tasks go (a function body's: its caller's step).
    calls_via: Option<std::sync::Arc<dyn Rendezvous>>,
}

impl LocalRendezvous {
    /// An empty rendezvous.
    pub fn new() -> LocalRendezvous {
        LocalRendezvous::default()
    }

    /// An empty rendezvous whose `RemoteCall`s to other tasks go through `parent` (a
    /// function body's sub-step reaches the cluster as its caller's step does).
    pub fn calling_through(parent: std::sync::Arc<dyn Rendezvous>) -> LocalRendezvous {
        LocalRendezvous { calls_via: Some(parent), ..Default::default() }
    }

    /// Takes a tensor that has already been sent, without waiting.
    pub fn try_take(&self, key: &str) -> Option<(Tensor, bool)> {
        let mut g = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        match g.table.remove(key) {
            Some(Slot::Ready(t, d)) => Some((t, d)),
            Some(other) => {
                g.table.insert(key.to_string(), other);
                None
            }
            None => None,
        }
    }

    /// Whether no tensor waits to be taken and no receiver waits for one.
    pub fn is_empty(&self) -> bool {
        self.inner.lock().unwrap_or_else(|e| e.into_inner()).table.is_empty()
    }

    /// The abort status, if aborted.
    pub fn aborted(&self) -> Option<Status> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner()).aborted.clone()
    }
}

impl Rendezvous for LocalRendezvous {
    fn send(&self, key: &str, value: Tensor, is_dead: bool) -> Result<(), Status> {
        let waiters = {
            let mut g = self.inner.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(s) = &g.aborted {
                return Err(s.clone());
            }
            match g.table.remove(key) {
                None => {
                    g.table.insert(key.to_string(), Slot::Ready(value, is_dead));
                    return Ok(());
                }
                Some(Slot::Ready(t, d)) => {
                    g.table.insert(key.to_string(), Slot::Ready(t, d));
                    return Err(Status::aborted(format!("duplicate send of rendezvous key '{key}'")));
                }
                Some(Slot::Waiting(w)) => w,
            }
        };
        let mut it = waiters.into_iter();
        if let Some(first) = it.next() {
            first(Ok((value, is_dead)));
        }
        for other in it {
            other(Err(Status::internal(format!("more than one receiver for rendezvous key '{key}'"))));
        }
        Ok(())
    }

    fn call_function(&self, call: FunctionCall, done: FunctionDone) {
        match &self.calls_via {
            Some(parent) => parent.call_function(call, done),
            None => ferroflow_kernels::unreachable_task_call(call, done),
        }
    }

    fn recv_async(&self, key: &str, done: RecvCallback) {
        let ready = {
            let mut g = self.inner.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(s) = &g.aborted {
                Err(s.clone())
            } else {
                match g.table.remove(key) {
                    Some(Slot::Ready(t, d)) => Ok((t, d)),
                    Some(Slot::Waiting(mut w)) => {
                        w.push(done);
                        g.table.insert(key.to_string(), Slot::Waiting(w));
                        return;
                    }
                    None => {
                        g.table.insert(key.to_string(), Slot::Waiting(vec![done]));
                        return;
                    }
                }
            }
        };
        done(ready)
    }

    fn abort(&self, status: Status) {
        let waiters: Vec<RecvCallback> = {
            let mut g = self.inner.lock().unwrap_or_else(|e| e.into_inner());
            if g.aborted.is_some() {
                return;
            }
            g.aborted = Some(status.clone());
            g.table
                .drain()
                .filter_map(|(_, s)| match s {
                    Slot::Waiting(w) => Some(w),
                    Slot::Ready(..) => None,
                })
                .flatten()
                .collect()
        };
        for w in waiters {
            w(Err(status.clone()));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;

    #[test]
    fn send_then_recv_and_recv_then_send() {
        let r = LocalRendezvous::new();
        r.send("a", Tensor::scalar(1.0f32), false).unwrap();
        let (tx, rx) = mpsc::channel();
        let tx2 = tx.clone();
        r.recv_async("a", Box::new(move |v| tx.send(v.map(|x| x.0)).unwrap()));
        assert_eq!(rx.recv().unwrap().unwrap(), Tensor::scalar(1.0f32));
        r.recv_async("b", Box::new(move |v| tx2.send(v.map(|x| x.0)).unwrap()));
        assert!(rx.try_recv().is_err());
        r.send("b", Tensor::scalar(2i32), false).unwrap();
        assert_eq!(rx.recv().unwrap().unwrap(), Tensor::scalar(2i32));
    }

    #[test]
    fn abort_fails_waiters_and_later_calls() {
        let r = LocalRendezvous::new();
        let (tx, rx) = mpsc::channel();
        let tx2 = tx.clone();
        r.recv_async("k", Box::new(move |v| tx.send(v.is_err()).unwrap()));
        r.abort(Status::cancelled("step cancelled").derived());
        assert!(rx.recv().unwrap());
        r.recv_async("z", Box::new(move |v| tx2.send(v.is_err()).unwrap()));
        assert!(rx.recv().unwrap());
        assert!(r.send("z", Tensor::scalar(1i32), false).is_err());
    }
}
