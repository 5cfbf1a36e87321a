//! Math ops: broadcasting arithmetic, comparisons and logic, unary functions and their
//! gradient helpers, AddN, Select/SelectV2, Cast, BroadcastGradientArgs, reductions and
//! ArgMax/ArgMin — TensorFlow's definitions restricted to the dtypes ferroflow supports.

mod binary;
mod misc;
mod reduce;
mod shapes;
mod unary;

pub use binary::*;
pub use misc::*;
pub use reduce::*;
pub use unary::*;

use crate::registry::OpRegistry;

pub(crate) fn register(r: &mut OpRegistry) {
    ferroflow_core::register_modules! { r: binary, misc, reduce, unary }
}
