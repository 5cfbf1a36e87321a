//! `Assert`: fails the step with INVALID_ARGUMENT when its condition is false, the message
//! holding the first `summarize` values of each data tensor (TensorFlow's format: strings as
//! they are, other tensors as `[v v v...]`).

use ferroflow_core::{DataType, NodeAttrs, Status, Tensor};

use crate::{KernelRegistry, OpContext, OpKernel};

struct Assert {
    summarize: usize,
}

/// TensorFlow's `SummarizeValue`: up to `n` values, `...` when there are more.
fn summarize(t: &Tensor, n: usize) -> String {
    if t.dtype() == DataType::String && t.num_elements() == 1 {
        if let Ok(s) = t.as_slice::<Vec<u8>>() {
            return String::from_utf8_lossy(&s[0]).into_owned();
        }
    }
    let vals: Vec<String> = match t.dtype() {
        DataType::String => match t.as_slice::<Vec<u8>>() {
            Ok(s) => s.iter().take(n).map(|b| String::from_utf8_lossy(b).into_owned()).collect(),
            Err(_) => vec![],
        },
        DataType::Bool => {
            t.as_slice::<bool>().map(|s| s.iter().take(n).map(|b| b.to_string()).collect()).unwrap_or_default()
        }
        _ => match t.to_f64_vec() {
            Ok(v) => v.iter().take(n).map(|x| format!("{x}")).collect(),
            Err(_) => vec![format!("<{} {}>", t.dtype(), t.shape())],
        },
    };
    let more = if t.num_elements() > n { "..." } else { "" };
    if t.rank() == 0 {
        vals.into_iter().next().unwrap_or_default()
    } else {
        format!("[{}{more}]", vals.join(" "))
    }
}

impl OpKernel for Assert {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let c = ctx.input(0)?;
        if c.dtype() != DataType::Bool || c.num_elements() != 1 {
            return Err(ctx.error(format!(
                "In[0] expects a scalar bool tensor, got a {} tensor of shape {}",
                c.dtype(),
                c.shape()
            )));
        }
        if c.as_slice::<bool>()?[0] {
            return Ok(());
        }
        let parts: Vec<String> = (1..ctx.num_inputs())
            .map(|i| ctx.input(i).map(|t| summarize(&t, self.summarize)))
            .collect::<Result<_, _>>()?;
        let mut msg = format!("assertion failed: {}", parts.join(" "));
        if msg.len() > 4096 {
            let mut cut = 4096;
            while !msg.is_char_boundary(cut) {
                cut -= 1;
            }
            msg.truncate(cut);
            msg.push_str("...");
        }
        Err(ctx.error(msg))
    }
}

pub(crate) fn register(r: &mut KernelRegistry) {
    r.add_cheap("Assert", |n| {
        Ok(Box::new(Assert { summarize: n.attr_int("summarize").unwrap_or(3).clamp(0, 1 << 16) as usize }))
    });
}
