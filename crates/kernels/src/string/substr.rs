//! `Substr`: `len` bytes (or UTF-8 characters with `unit: UTF8_CHAR`) of each string from
//! `pos` (negative counts from the end); `pos`/`len` are scalars or of the input's shape.

use ferroflow_core::{NodeAttrs, Status};

use super::{string_tensor, strings};
use crate::array::util::index_vec;
use crate::{KernelRegistry, OpContext, OpKernel};

struct Substr {
    utf8: bool,
}

/// The byte offsets of the UTF-8 characters of `s`, and `s.len()` last.
fn char_starts(s: &[u8]) -> Vec<usize> {
    let mut v: Vec<usize> = (0..s.len()).filter(|&i| (s[i] & 0xc0) != 0x80).collect();
    v.push(s.len());
    v
}

impl Substr {
    fn one(&self, s: &[u8], pos: i64, len: i64) -> Option<Vec<u8>> {
        let starts = if self.utf8 { char_starts(s) } else { Vec::new() };
        let size = if self.utf8 { starts.len() as i64 - 1 } else { s.len() as i64 };
        let p = if pos < 0 { pos + size } else { pos };
        if p < 0 || p > size {
            return None;
        }
        let e = p.saturating_add(len.max(0)).min(size);
        let (a, b) = if self.utf8 { (starts[p as usize], starts[e as usize]) } else { (p as usize, e as usize) };
        Some(s[a..b].to_vec())
    }
}

impl OpKernel for Substr {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let (input, pos_t, len_t) = (ctx.input(0)?, ctx.input(1)?, ctx.input(2)?);
        if pos_t.shape() != len_t.shape() {
            return Err(ctx.error(format!(
                "pos and len should have the same shape, got: {} vs. {}",
                pos_t.shape(),
                len_t.shape()
            )));
        }
        let scalar = pos_t.rank() == 0;
        if !scalar && pos_t.shape() != input.shape() {
            return Err(ctx.error(format!(
                "pos and len must be scalars or have the input's shape {}, got {} (broadcasting them is not supported)",
                input.shape(),
                pos_t.shape()
            )));
        }
        let pos = index_vec(&pos_t).map_err(|e| ctx.error(e.message))?;
        let len = index_vec(&len_t).map_err(|e| ctx.error(e.message))?;
        let mut out = ferroflow_core::alloc::with_capacity(input.dims())?;
        for (i, s) in strings(ctx, "input", &input)?.iter().enumerate() {
            let k = if scalar { 0 } else { i };
            match self.one(s, pos[k], len[k]) {
                Some(v) => out.push(v),
                None => {
                    return Err(ctx.error(format!(
                        "pos {} out of range for string b'{}' at index {i}",
                        pos[k],
                        String::from_utf8_lossy(s)
                    )))
                }
            }
        }
        ctx.set_output(0, string_tensor(input.shape().clone(), out)?)
    }
}

pub(crate) fn register(r: &mut KernelRegistry) {
    r.add("Substr", |n| {
        let unit = if n.has_attr("unit") { n.attr_string("unit")? } else { "BYTE".into() };
        match unit.as_str() {
            "BYTE" => Ok(Box::new(Substr { utf8: false })),
            "UTF8_CHAR" => Ok(Box::new(Substr { utf8: true })),
            u => Err(n.node_error(format!("unit must be BYTE or UTF8_CHAR, got {u}"))),
        }
    });
}
