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

#[cfg(test)]
mod tests {
    use crate::testutil::{node, run_kernel};
    use ferroflow_core::{attr, Tensor};

    #[test]
    fn passes_finite_and_names_what_is_not() {
        let n = node("CheckNumerics", &[("message", attr::string("m"))]);
        let ok = Tensor::vec(vec![1.0f32, -2.0]);
        assert_eq!(run_kernel(n.clone(), vec![ok.clone()], 1).unwrap()[0], ok);
        for (v, want) in [
            (vec![1.0f32, f32::INFINITY], "m : Tensor had Inf values"),
            (vec![f32::NAN], "m : Tensor had NaN values"),
            (vec![f32::NAN, f32::NEG_INFINITY], "m : Tensor had Inf and NaN values"),
        ] {
            assert_eq!(run_kernel(n.clone(), vec![Tensor::vec(v)], 1).unwrap_err().message, want);
        }
        let d = Tensor::vec(vec![f64::NAN]);
        assert!(run_kernel(n, vec![d], 1).is_err());
    }
}
