//! `StringLower` / `StringUpper` (ASCII, or Unicode with `encoding: "utf-8"`) and
//! `StringStrip` (ASCII whitespace at both ends).

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{NodeAttrs, Status};

use super::{string_tensor, strings};
use crate::{KernelRegistry, OpContext, OpKernel};

#[derive(Clone, Copy)]
enum Op {
    Lower,
    Upper,
    Strip,
}

struct StringMap {
    op: Op,
    utf8: bool,
}

impl StringMap {
    fn apply(&self, s: &[u8]) -> Result<Vec<u8>, String> {
        Ok(match (self.op, self.utf8) {
            (Op::Strip, _) => {
                let ws = |c: &u8| matches!(c, b' ' | b'\t' | b'\n' | b'\x0b' | b'\x0c' | b'\r');
                let start = s.iter().position(|c| !ws(c)).unwrap_or(s.len());
                let end = s.iter().rposition(|c| !ws(c)).map_or(start, |e| e + 1);
                s[start..end].to_vec()
            }
            (Op::Lower, false) => s.to_ascii_lowercase(),
            (Op::Upper, false) => s.to_ascii_uppercase(),
            (op, true) => {
                let t = std::str::from_utf8(s).map_err(|e| format!("Invalid UTF-8 input: {e}"))?;
                let mapped = if matches!(op, Op::Lower) { t.to_lowercase() } else { t.to_uppercase() };
                mapped.into_bytes()
            }
        })
    }
}

impl OpKernel for StringMap {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let t = ctx.input(0)?;
        let out = strings(ctx, "input", &t)?
            .iter()
            .map(|s| self.apply(s))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| ctx.error(e))?;
        ctx.set_output(0, string_tensor(t.shape().clone(), out)?)
    }
}

fn case_factory(n: &NodeDef, op: Op) -> Result<Box<dyn OpKernel>, Status> {
    let enc = if n.has_attr("encoding") { n.attr_string("encoding")? } else { String::new() };
    let utf8 = match enc.to_ascii_lowercase().as_str() {
        "" => false,
        "utf-8" | "utf8" => true,
        other => return Err(n.node_error(format!("encoding must be '' or 'utf-8', got '{other}'"))),
    };
    Ok(Box::new(StringMap { op, utf8 }))
}

pub(crate) fn register(r: &mut KernelRegistry) {
    r.add("StringLower", |n| case_factory(n, Op::Lower));
    r.add("StringUpper", |n| case_factory(n, Op::Upper));
    r.add("StringStrip", |_| Ok(Box::new(StringMap { op: Op::Strip, utf8: false })));
}
