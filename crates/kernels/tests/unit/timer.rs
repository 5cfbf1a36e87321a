use std::sync::mpsc;
use std::time::{Duration, Instant};

use ferroflow_kernels::timer::{cancel, schedule};

#[test]
fn fires_in_order_and_cancels() {
    let (tx, rx) = mpsc::channel();
    let now = Instant::now();
    let t2 = tx.clone();
    schedule(now + Duration::from_millis(40), move || t2.send(2).unwrap()).unwrap();
    let t1 = tx.clone();
    schedule(now + Duration::from_millis(10), move || t1.send(1).unwrap()).unwrap();
    let t3 = tx.clone();
    let id = schedule(now + Duration::from_millis(20), move || t3.send(3).unwrap()).unwrap();
    assert!(cancel(id));
    assert!(!cancel(id));
    assert_eq!(rx.recv_timeout(Duration::from_secs(5)).unwrap(), 1);
    assert_eq!(rx.recv_timeout(Duration::from_secs(5)).unwrap(), 2);
    assert!(rx.recv_timeout(Duration::from_millis(50)).is_err());
}
