//! The buffer rendezvous of collectives (TensorFlow's `BufRendezvous`), per step: a member
//! provides a chunk under a key; the member that needs it takes it, locally or through a
//! `RecvBuf` call to the provider's task. Each key is provided once and taken once; the
//! provider learns when its chunk was taken (its collective ends only then, so a step's
//! chunks never outlive the collectives that made them). Waits are bounded by the caller.

use std::collections::HashMap;
use std::sync::Mutex;

use ferroflow_core::Status;
use tokio::sync::oneshot;

enum Slot {
    /// Provided, not yet taken; the sender tells the provider when it is.
    Ready(Vec<u8>, oneshot::Sender<()>),
    /// Asked for before it was provided.
    Wanted(oneshot::Sender<Vec<u8>>),
}

/// Every step's chunks on this task.
#[derive(Default)]
pub(crate) struct BufTable {
    steps: Mutex<HashMap<i64, HashMap<String, Slot>>>,
}

impl BufTable {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<i64, HashMap<String, Slot>>> {
        self.steps.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Provides `bytes` under `key` of `step`; the receiver fires once it was taken.
    pub(crate) fn provide(&self, step: i64, key: &str, bytes: Vec<u8>) -> Result<oneshot::Receiver<()>, Status> {
        let (taken_tx, taken_rx) = oneshot::channel();
        let mut steps = self.lock();
        let slots = steps.entry(step).or_default();
        match slots.remove(key) {
            Some(Slot::Wanted(w)) => {
                if slots.is_empty() {
                    steps.remove(&step);
                }
                match w.send(bytes) {
                    Ok(()) => {
                        let _ = taken_tx.send(());
                    }
                    // The taker gave up (its deadline): keep the chunk for a retry.
                    Err(bytes) => {
                        steps.entry(step).or_default().insert(key.to_string(), Slot::Ready(bytes, taken_tx));
                    }
                }
            }
            Some(other) => {
                slots.insert(key.to_string(), other);
                return Err(Status::internal(format!("BufRendezvous::ProvideBuf already called for key {key}")));
            }
            None => {
                slots.insert(key.to_string(), Slot::Ready(bytes, taken_tx));
            }
        }
        Ok(taken_rx)
    }

    /// Takes the chunk under `key` of `step`: now, or when it is provided (the receiver).
    pub(crate) fn take(&self, step: i64, key: &str) -> Result<oneshot::Receiver<Vec<u8>>, Status> {
        let (tx, rx) = oneshot::channel();
        let mut steps = self.lock();
        let slots = steps.entry(step).or_default();
        match slots.remove(key) {
            Some(Slot::Ready(bytes, taken)) => {
                if slots.is_empty() {
                    steps.remove(&step);
                }
                let _ = taken.send(());
                let _ = tx.send(bytes);
            }
            Some(Slot::Wanted(w)) if !w.is_closed() => {
                slots.insert(key.to_string(), Slot::Wanted(w));
                return Err(Status::internal(format!("Second consumer arrived for key {key}")));
            }
            _ => {
                slots.insert(key.to_string(), Slot::Wanted(tx));
            }
        }
        Ok(rx)
    }

    /// Forgets a wait that ended without its chunk (the taker's deadline or cancellation).
    pub(crate) fn give_up(&self, step: i64, key: &str) {
        let mut steps = self.lock();
        if let Some(slots) = steps.get_mut(&step) {
            if matches!(slots.get(key), Some(Slot::Wanted(w)) if w.is_closed()) {
                slots.remove(key);
            }
            if slots.is_empty() {
                steps.remove(&step);
            }
        }
    }

    /// Drops a chunk nobody took (its provider gave up waiting).
    pub(crate) fn withdraw(&self, step: i64, key: &str) {
        let mut steps = self.lock();
        if let Some(slots) = steps.get_mut(&step) {
            if matches!(slots.get(key), Some(Slot::Ready(..))) {
                slots.remove(key);
            }
            if slots.is_empty() {
                steps.remove(&step);
            }
        }
    }

    /// Steps with chunks or waits pending (tests).
    #[cfg(test)]
    pub(crate) fn pending_steps(&self) -> usize {
        self.lock().len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn provide_then_take_and_take_then_provide() {
        let t = BufTable::default();
        let taken = t.provide(1, "k", vec![1, 2]).unwrap();
        assert_eq!(t.take(1, "k").unwrap().await.unwrap(), vec![1, 2]);
        taken.await.unwrap();
        let want = t.take(2, "k").unwrap();
        let taken = t.provide(2, "k", vec![3]).unwrap();
        assert_eq!(want.await.unwrap(), vec![3]);
        taken.await.unwrap();
        assert_eq!(t.pending_steps(), 0);
        // A key provided twice, or taken twice while waiting.
        let _keep = t.provide(3, "k", vec![]).unwrap();
        assert_eq!(t.provide(3, "k", vec![]).unwrap_err().code, ferroflow_core::Code::Internal);
        let _w = t.take(4, "k").unwrap();
        assert!(t.take(4, "k").unwrap_err().message.contains("Second consumer"));
        // A taker that gave up leaves nothing behind; a chunk provided later waits for a retry.
        drop(_w);
        t.give_up(4, "k");
        t.withdraw(3, "k");
        assert_eq!(t.pending_steps(), 0);
    }
}
