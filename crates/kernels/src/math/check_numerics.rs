//! `CheckNumerics`: passes a float tensor through unchanged, or fails with
//! `<message> : Tensor had Inf values` (NaN, Inf and NaN) as TensorFlow does.

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{NodeAttrs, Status, Storage};

use crate::{KernelRegistry, OpContext, OpKernel};

struct CheckNumerics {
    message: String,
}

fn scan<T: Copy>(v: &[T], is_nan: impl Fn(T) -> bool, is_inf: impl Fn(T) -> bool) -> (bool, bool) {
    let (mut nan, mut inf) = (false, false);
    for &x in v {
        nan |= is_nan(x);
        inf |= is_inf(x);
    }
    (nan, inf)
}

impl OpKernel for CheckNumerics {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let t = ctx.input(0)?;
        let (nan, inf) = match t.storage() {
            Storage::F32(v) => scan(v, f32::is_nan, f32::is_infinite),
            Storage::F64(v) => scan(v, f64::is_nan, f64::is_infinite),
            Storage::F16(v) => scan(v, |x| x.is_nan(), |x| x.is_infinite()),
            Storage::BF16(v) => scan(v, |x| x.is_nan(), |x| x.is_infinite()),
            _ => return Err(ctx.error(format!("CheckNumerics takes a floating-point tensor, got {}", t.dtype()))),
        };
        let what = match (inf, nan) {
            (false, false) => return ctx.set_output(0, t),
            (true, false) => "Inf",
            (false, true) => "NaN",
            (true, true) => "Inf and NaN",
        };
        Err(Status::invalid_argument(format!("{} : Tensor had {what} values", self.message)))
    }
}

pub(crate) fn register(r: &mut KernelRegistry) {
    r.add("CheckNumerics", |n: &NodeDef| Ok(Box::new(CheckNumerics { message: n.attr_string("message")? })));
}
