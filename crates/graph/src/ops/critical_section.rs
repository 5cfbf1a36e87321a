//! `MutexV2`, `MutexLock`, `ConsumeMutexLock` (TensorFlow's definitions): the mutex of
//! `tf.CriticalSection`, a lock on it (a scalar variant) and the op that consumes the lock.

use crate::op_def::op;
use crate::registry::OpRegistry;
use crate::shape_fn::scalar;

pub(crate) fn register(r: &mut OpRegistry) {
    r.add(
        op("MutexV2")
            .output("resource: resource")
            .attr("container: string = ''")
            .attr("shared_name: string = ''")
            .stateful()
            .shape_fn(scalar)
            .build(),
    );
    r.add(op("MutexLock").input("mutex: resource").output("mutex_lock: variant").stateful().shape_fn(scalar).build());
    r.add(op("ConsumeMutexLock").input("mutex_lock: variant").stateful().shape_fn(|_| Ok(vec![])).build());
}
