//! Prometheus metrics of the data-flow resources, recorded through the `metrics` facade
//! (no-ops unless a recorder is installed): each queue's and accumulator's size, by the
//! resource's name (label values come from graphs, whose resources are few).

use metrics::{Counter, Gauge};

/// Elements in a FIFO queue, by queue name.
pub const QUEUE_SIZE: &str = "ferroflow_queue_size";
/// Gradients accumulated since the last take, by accumulator name.
pub const ACCUMULATOR_SIZE: &str = "ferroflow_accumulator_size";
/// Stale gradients an accumulator dropped, by accumulator name.
pub const ACCUMULATOR_STALE_TOTAL: &str = "ferroflow_accumulator_stale_gradients_total";

/// Every metric name of this module.
pub const NAMES: &[&str] = &[QUEUE_SIZE, ACCUMULATOR_SIZE, ACCUMULATOR_STALE_TOTAL];

/// Gives every metric of this module its help text (call after installing a recorder).
pub fn describe() {
    use metrics::{describe_counter, describe_gauge, Unit};
    describe_gauge!(QUEUE_SIZE, Unit::Count, "Elements in a FIFO queue, by queue name");
    describe_gauge!(ACCUMULATOR_SIZE, Unit::Count, "Gradients accumulated since the last take, by accumulator");
    describe_counter!(ACCUMULATOR_STALE_TOTAL, Unit::Count, "Stale gradients dropped, by accumulator");
}

/// The size gauge of queue `name` (made once per queue).
pub(crate) fn queue_size(name: &str) -> Gauge {
    metrics::gauge!(QUEUE_SIZE, "queue" => name.to_string())
}

/// The size gauge and stale counter of accumulator `name` (made once per accumulator).
pub(crate) fn accumulator(name: &str) -> (Gauge, Counter) {
    (
        metrics::gauge!(ACCUMULATOR_SIZE, "accumulator" => name.to_string()),
        metrics::counter!(ACCUMULATOR_STALE_TOTAL, "accumulator" => name.to_string()),
    )
}
