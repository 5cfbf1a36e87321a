//! Random identifiers: device incarnations, step ids, session and graph handles.
//!
//! Drawn from the standard library's randomly keyed SipHash (seeded from the OS once per
//! `RandomState`), mixed with a process-wide counter and the clock, so no extra dependency
//! is needed and no two calls in a process return the same value by construction of the
//! counter.

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};

static COUNTER: AtomicU64 = AtomicU64::new(0);

/// A random u64.
pub(crate) fn random_u64() -> u64 {
    let mut h = RandomState::new().build_hasher();
    h.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
    h.write_u128(std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0));
    h.finish()
}

/// A random non-zero u64 (device incarnations, request ids).
pub(crate) fn random_nonzero() -> u64 {
    loop {
        let v = random_u64();
        if v != 0 {
            return v;
        }
    }
}

/// A step id: a random non-zero u64 with the top 7 bits cleared (docs/protocol.md, "Steps, partitions and rendezvous keys"), as i64.
pub(crate) fn new_step_id() -> i64 {
    loop {
        let v = random_u64() >> 7;
        if v != 0 {
            return v as i64;
        }
    }
}

/// A request id for RunStep/RunGraph/RecvTensor: random, non-zero, positive.
pub(crate) fn new_request_id() -> i64 {
    new_step_id()
}

/// A master session handle: 16 lowercase hex digits.
pub(crate) fn new_session_handle() -> String {
    format!("{:016x}", random_u64())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_of_ids() {
        for _ in 0..1000 {
            let s = new_step_id();
            assert!(s > 0 && (s as u64) >> 57 == 0);
            assert_ne!(random_nonzero(), 0);
        }
        let h = new_session_handle();
        assert_eq!(h.len(), 16);
        assert!(h.chars().all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase()));
        assert_ne!(new_session_handle(), new_session_handle());
    }
}
