//! Diagnostic ops of TensorFlow 1.x graphs: `Print` (`tf.compat.v1.Print`: passes its first
//! input through and writes `message` and a summary of each data tensor to stderr, for the
//! first `first_n` runs of the node when `first_n` >= 0) and `Timestamp` (`tf.timestamp`:
//! seconds since the Unix epoch as a float64).

use std::sync::atomic::{AtomicI64, Ordering};

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{NodeAttrs, Status, Tensor};

use crate::{KernelRegistry, OpContext, OpKernel};

struct Print {
    message: String,
    first_n: i64,
    summarize: i64,
    printed: AtomicI64,
}

/// One element as TensorFlow's `Print` writes it (floats as `FloatToBuffer`).
fn elements(t: &Tensor) -> Vec<String> {
    use crate::string::format::{format_f32, format_f64};
    use ferroflow_core::DataType as D;
    let strs = |v: Result<Vec<String>, Status>| v.unwrap_or_default();
    match t.dtype() {
        D::Float => strs(t.as_slice::<f32>().map(|v| v.iter().map(|&x| format_f32(x)).collect())),
        D::Double => strs(t.as_slice::<f64>().map(|v| v.iter().map(|&x| format_f64(x)).collect())),
        D::String => {
            strs(t.as_slice::<Vec<u8>>().map(|v| v.iter().map(|x| String::from_utf8_lossy(x).into_owned()).collect()))
        }
        D::Bool => strs(t.as_slice::<bool>().map(|v| v.iter().map(|&b| u8::from(b).to_string()).collect())),
        _ => strs(t.to_f64_vec().map(|v| v.iter().map(|x| format!("{x}")).collect())),
    }
}

/// TensorFlow's `SummarizeValue`: the first `max` elements in row-major order, a bracket
/// pair around each row of every dimension but the last, `...` when some are left out.
fn summarize(t: &Tensor, max: usize) -> String {
    let vals = elements(t);
    let limit = max.min(vals.len());
    let mut out = String::new();
    if t.rank() == 0 {
        out.push_str(&vals[..limit].join(" "));
    } else {
        let mut next = 0;
        one_dim(0, t.dims(), limit, &vals, &mut next, &mut out);
    }
    if vals.len() > limit {
        out.push_str("...");
    }
    out
}

fn one_dim(d: usize, dims: &[usize], limit: usize, vals: &[String], next: &mut usize, out: &mut String) {
    if *next >= limit {
        return;
    }
    if d == dims.len() - 1 {
        for i in 0..dims[d] {
            if *next >= limit {
                if d != 0 {
                    out.push_str("...");
                }
                return;
            }
            if i > 0 {
                out.push(' ');
            }
            out.push_str(&vals[*next]);
            *next += 1;
        }
        return;
    }
    for _ in 0..dims[d] {
        let opened = *next < limit;
        if opened {
            out.push('[');
        }
        one_dim(d + 1, dims, limit, vals, next, out);
        if *next < limit || opened {
            out.push(']');
        }
    }
}

impl OpKernel for Print {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let x = ctx.input(0)?;
        let n = self.printed.fetch_add(1, Ordering::Relaxed);
        if self.first_n < 0 || n < self.first_n {
            let mut msg = self.message.clone();
            for i in 1..ctx.num_inputs() {
                msg.push_str(&format!("[{}]", summarize(&ctx.input(i)?, self.summarize.max(0) as usize)));
            }
            eprintln!("{msg}");
        }
        ctx.set_output(0, x)
    }
}

fn print(n: &NodeDef) -> Result<Box<dyn OpKernel>, Status> {
    Ok(Box::new(Print {
        message: n.attr_string("message")?,
        first_n: n.attr_int("first_n")?,
        summarize: n.attr_int("summarize")?,
        printed: AtomicI64::new(0),
    }))
}

op_kernel! {
    struct Timestamp;
    fn compute(&self, ctx) {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_err(|e| Status::internal(format!("the clock is before 1970: {e}")))?;
        ctx.set_output(0, Tensor::scalar(now.as_secs_f64()))
    }
}

pub(crate) fn register(r: &mut KernelRegistry) {
    r.add_cheap("Print", print);
    r.add_cheap("Timestamp", |_| Ok(Box::new(Timestamp)));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summaries_stop_at_summarize_elements() {
        // TensorFlow 2.21's tf.compat.v1.Print of these tensors.
        let t = Tensor::new(vec![3, 2], vec![-0.0963788f32, -0.047295302, 1.0, 2.0, 3.0, 4.0]).unwrap();
        assert_eq!(summarize(&t, 2), "[-0.0963788 -0.0472953022]...");
        assert_eq!(summarize(&Tensor::vec(vec![3i32, 2]), 2), "3 2");
        let m = Tensor::new(vec![2, 2], vec![1.0f32, 2.5, 3.0, 4.0]).unwrap();
        assert_eq!(summarize(&m, 3), "[1 2.5][3...]...");
        assert_eq!(summarize(&m, 4), "[1 2.5][3 4]");
    }
}
