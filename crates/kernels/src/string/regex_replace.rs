//! `RegexReplace` and `StaticRegexReplace`: the first (or every, with `replace_global`)
//! match of an RE2 pattern replaced by `rewrite`, whose `\0`..`\9` name the groups (RE2's
//! rewrite syntax, translated to the `regex` crate's `${n}`).

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{NodeAttrs, Status};
use regex::bytes::Regex;

use super::{string_tensor, strings, CHECK_EVERY};
use crate::{KernelRegistry, OpContext, OpKernel};

/// RE2's rewrite string as a `regex` replacement: `\n` → `${n}`, `\\` → `\`, `$` → `$$`.
fn rewrite_of(r: &[u8]) -> Result<Vec<u8>, String> {
    let mut out = Vec::with_capacity(r.len() + 8);
    let mut i = 0;
    while i < r.len() {
        match r[i] {
            b'\\' => match r.get(i + 1) {
                Some(d @ b'0'..=b'9') => {
                    out.extend_from_slice(format!("${{{}}}", *d as char).as_bytes());
                    i += 1;
                }
                Some(b'\\') => {
                    out.push(b'\\');
                    i += 1;
                }
                _ => return Err(format!("Invalid rewrite pattern: {}", String::from_utf8_lossy(r))),
            },
            b'$' => out.extend_from_slice(b"$$"),
            c => out.push(c),
        }
        i += 1;
    }
    Ok(out)
}

fn compile(pattern: &str) -> Result<Regex, String> {
    Regex::new(pattern).map_err(|e| format!("Invalid pattern: {pattern}, error: {e}"))
}

fn replace_all(ctx: &mut OpContext, re: &Regex, rewrite: &[u8], global: bool) -> Result<(), Status> {
    let t = ctx.input(0)?;
    let inputs = strings(ctx, "input", &t)?;
    // A rewrite repeated at every match (an empty pattern matches between every two bytes)
    // can make the output far larger than the input: its size is checked as it grows.
    let (mut done, mut next_check) = (0usize, CHECK_EVERY);
    let mut out = ferroflow_core::alloc::with_capacity(t.dims())?;
    for s in inputs {
        let mut r = Vec::with_capacity(s.len());
        let mut last = 0;
        for caps in re.captures_iter(s) {
            let Some(m) = caps.get(0) else { continue };
            r.extend_from_slice(&s[last..m.start()]);
            caps.expand(rewrite, &mut r);
            last = m.end();
            if done + r.len() >= next_check {
                let grown = done + r.len();
                ferroflow_core::check_alloc_bytes(Some(grown as u64), || {
                    format!("the strings RegexReplace makes ({grown} bytes and growing)")
                })?;
                next_check = grown + CHECK_EVERY;
            }
            if !global {
                break;
            }
        }
        r.extend_from_slice(&s[last..]);
        done += r.len();
        out.push(r);
    }
    ctx.set_output(0, string_tensor(t.shape().clone(), out)?)
}

op_kernel! {
    struct StaticRegexReplace { re: Regex, rewrite: Vec<u8>, global: bool }
    fn compute(&self, ctx) {
        replace_all(ctx, &self.re, &self.rewrite, self.global)
    }
}

fn global_of(n: &NodeDef) -> Result<bool, Status> {
    if n.has_attr("replace_global") {
        n.attr_bool("replace_global")
    } else {
        Ok(true)
    }
}

fn static_factory(n: &NodeDef) -> Result<Box<dyn OpKernel>, Status> {
    let re = compile(&n.attr_string("pattern")?).map_err(|e| n.node_error(e))?;
    let rewrite = rewrite_of(n.attr_string("rewrite")?.as_bytes()).map_err(|e| n.node_error(e))?;
    Ok(Box::new(StaticRegexReplace { re, rewrite, global: global_of(n)? }))
}

op_kernel! {
    struct RegexReplace { global: bool }
    fn compute(&self, ctx) {
        let p = ctx.input_of_rank(1, 0, "Pattern must be scalar, but received ")?;
        let r = ctx.input_of_rank(2, 0, "Rewrite must be scalar, but received ")?;
        let pattern = String::from_utf8_lossy(&strings(ctx, "pattern", &p)?[0]).into_owned();
        let re = compile(&pattern).map_err(|e| ctx.error(e))?;
        let rewrite = rewrite_of(&strings(ctx, "rewrite", &r)?[0]).map_err(|e| ctx.error(e))?;
        replace_all(ctx, &re, &rewrite, self.global)
    }
}

pub(crate) fn register(r: &mut KernelRegistry) {
    r.add("StaticRegexReplace", static_factory);
    r.add("RegexReplace", |n| Ok(Box::new(RegexReplace { global: global_of(n)? })));
}
