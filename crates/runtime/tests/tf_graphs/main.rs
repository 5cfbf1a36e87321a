//! Graphs written by TensorFlow 2.21's Python client (fixtures in `tests/fixtures/`), run
//! by ferroflow's runtime with TensorFlow's results: `tf.cond`, `tf.while_loop`, TF 1.x
//! control flow, Defuns calling Defuns, saved graphs (`util` loads and runs them). One test
//! binary for all of them.

mod cond;
mod defun_calls;
mod fixture;
mod util;
mod v1_control_flow;
mod while_loop;
