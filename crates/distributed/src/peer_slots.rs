//! Connections per peer address: no single address may hold more than its share of a
//! task's connection slots, so one client that opens thousands of connections (and then
//! says nothing) cannot lock the others out. A connection over the share is closed as soon
//! as it is accepted.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};

/// The share of `--max_connections` one address may hold when no per-peer limit is set.
pub const DEFAULT_PEER_SHARE: usize = 4;

/// Open connections by peer address.
pub(crate) struct PeerSlots {
    max: usize,
    open: Mutex<HashMap<IpAddr, usize>>,
}

/// One connection's place in its peer's count, given back when dropped.
pub(crate) struct PeerSlot {
    slots: Arc<PeerSlots>,
    ip: IpAddr,
}

impl PeerSlots {
    pub(crate) fn new(max_per_peer: usize) -> Arc<PeerSlots> {
        Arc::new(PeerSlots { max: max_per_peer.max(1), open: Mutex::new(HashMap::new()) })
    }

    /// A slot for a new connection from `ip`, unless it already holds its most.
    pub(crate) fn admit(self: &Arc<Self>, ip: IpAddr) -> Option<PeerSlot> {
        let mut open = self.open.lock().unwrap_or_else(|e| e.into_inner());
        let n = open.entry(ip).or_insert(0);
        if *n >= self.max {
            return None;
        }
        *n += 1;
        Some(PeerSlot { slots: self.clone(), ip })
    }

    pub(crate) fn max(&self) -> usize {
        self.max
    }
}

impl Drop for PeerSlot {
    fn drop(&mut self) {
        let mut open = self.slots.open.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(n) = open.get_mut(&self.ip) {
            *n -= 1;
            if *n == 0 {
                open.remove(&self.ip);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_address_holds_at_most_its_share() {
        let slots = PeerSlots::new(2);
        let (a, b): (IpAddr, IpAddr) = ("10.0.0.1".parse().unwrap(), "10.0.0.2".parse().unwrap());
        let a1 = slots.admit(a).unwrap();
        let _a2 = slots.admit(a).unwrap();
        assert!(slots.admit(a).is_none(), "a third from one address");
        let _b1 = slots.admit(b).expect("another address still gets in");
        drop(a1);
        assert!(slots.admit(a).is_some(), "a closed connection gives its slot back");
        assert_eq!(slots.max(), 2);
    }
}
