//! `DecodeCSV`: each record split into fields (RFC 4180 quoting with `use_quote_delim`),
//! each field parsed as its column's type; empty fields (and `na_value`) take the column's
//! default, and a column without a default requires a value.

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{DataType, NodeAttrs, Status, Storage, Tensor};

use super::strings;
use crate::{KernelRegistry, OpContext, OpKernel};

struct DecodeCsv {
    types: Vec<DataType>,
    delim: u8,
    quote: bool,
    na: Vec<u8>,
    select: Vec<usize>,
}

/// The fields of one record.
fn fields(rec: &[u8], delim: u8, quote: bool) -> Result<Vec<Vec<u8>>, String> {
    let mut out = Vec::new();
    let mut i = 0;
    loop {
        let mut f = Vec::new();
        if quote && rec.get(i) == Some(&b'"') {
            i += 1;
            loop {
                match rec.get(i) {
                    None => return Err("Quoted field has to end with quote followed by delim or end".into()),
                    Some(b'"') if rec.get(i + 1) == Some(&b'"') => {
                        f.push(b'"');
                        i += 2;
                    }
                    Some(b'"') => {
                        i += 1;
                        break;
                    }
                    Some(&c) => {
                        f.push(c);
                        i += 1;
                    }
                }
            }
            match rec.get(i) {
                None => {
                    out.push(f);
                    return Ok(out);
                }
                Some(&c) if c == delim => i += 1,
                Some(_) => return Err("Quoted field has to end with quote followed by delim or end".into()),
            }
            out.push(f);
        } else {
            while let Some(&c) = rec.get(i) {
                if c == delim {
                    break;
                }
                if quote && c == b'"' {
                    return Err("Unquoted fields cannot have quotes inside".into());
                }
                f.push(c);
                i += 1;
            }
            out.push(f);
            if i >= rec.len() {
                return Ok(out);
            }
            i += 1;
        }
    }
}

impl OpKernel for DecodeCsv {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let records = ctx.input(0)?;
        let n_cols = self.types.len();
        let defaults: Vec<Tensor> = (0..n_cols).map(|i| ctx.input(1 + i)).collect::<Result<_, _>>()?;
        for (i, d) in defaults.iter().enumerate() {
            if d.num_elements() > 1 || d.dtype() != self.types[i] {
                return Err(
                    ctx.error(format!("Each record default should be at most rank 1 with one {} value", self.types[i]))
                );
            }
        }
        let recs = strings(ctx, "records", &records)?;
        let mut cols: Vec<Storage> = self
            .types
            .iter()
            .map(|t| match t {
                DataType::Float => Storage::F32(Vec::with_capacity(recs.len())),
                DataType::Double => Storage::F64(Vec::with_capacity(recs.len())),
                DataType::Int32 => Storage::I32(Vec::with_capacity(recs.len())),
                DataType::Int64 => Storage::I64(Vec::with_capacity(recs.len())),
                _ => Storage::Str(Vec::with_capacity(recs.len())),
            })
            .collect();
        for (r, rec) in recs.iter().enumerate() {
            let fs = fields(rec, self.delim, self.quote).map_err(|e| ctx.error(format!("{e}; record {r}")))?;
            let picked: Vec<&Vec<u8>> = if self.select.is_empty() {
                if fs.len() != n_cols {
                    return Err(ctx.error(format!("Expect {n_cols} fields but have {} in record {r}", fs.len())));
                }
                fs.iter().collect()
            } else {
                let mut v = Vec::with_capacity(n_cols);
                for &c in &self.select {
                    v.push(fs.get(c).ok_or_else(|| {
                        ctx.error(format!(
                            "Expect {} fields but have {} in record {r}",
                            self.select.last().map_or(0, |l| l + 1),
                            fs.len()
                        ))
                    })?);
                }
                v
            };
            for (c, f) in picked.into_iter().enumerate() {
                let missing = f.is_empty() || (!self.na.is_empty() && f == &self.na);
                let d = &defaults[c];
                if missing && d.num_elements() == 0 {
                    return Err(ctx.error(format!("Field {c} is required but missing in record {r}!")));
                }
                let text = std::str::from_utf8(f).unwrap_or("").trim_matches(|ch: char| ch.is_ascii_whitespace());
                let bad = || {
                    ctx.error(format!(
                        "Field {c} in record {r} is not a valid {}: {}",
                        self.types[c].tf_name(),
                        String::from_utf8_lossy(f)
                    ))
                };
                match (&mut cols[c], d.storage()) {
                    (Storage::F32(o), Storage::F32(dv)) => {
                        o.push(if missing { dv[0] } else { text.parse().map_err(|_| bad())? })
                    }
                    (Storage::F64(o), Storage::F64(dv)) => {
                        o.push(if missing { dv[0] } else { text.parse().map_err(|_| bad())? })
                    }
                    (Storage::I32(o), Storage::I32(dv)) => {
                        o.push(if missing { dv[0] } else { text.parse().map_err(|_| bad())? })
                    }
                    (Storage::I64(o), Storage::I64(dv)) => {
                        o.push(if missing { dv[0] } else { text.parse().map_err(|_| bad())? })
                    }
                    (Storage::Str(o), Storage::Str(dv)) => o.push(if missing { dv[0].clone() } else { f.clone() }),
                    _ => return Err(ctx.error(format!("record_defaults[{c}] has the wrong dtype"))),
                }
            }
        }
        for (c, s) in cols.into_iter().enumerate() {
            ctx.set_output(c, Tensor::from_storage(records.shape().clone(), s)?)?;
        }
        Ok(())
    }
}

fn factory(n: &NodeDef) -> Result<Box<dyn OpKernel>, Status> {
    let types = n.attr_list_type("OUT_TYPE")?;
    let delim = if n.has_attr("field_delim") { n.attr_string("field_delim")? } else { ",".into() };
    if delim.len() != 1 {
        return Err(n.node_error("field_delim should be only 1 char"));
    }
    let quote = if n.has_attr("use_quote_delim") { n.attr_bool("use_quote_delim")? } else { true };
    let na = if n.has_attr("na_value") { n.attr_string("na_value")?.into_bytes() } else { vec![] };
    let select = if n.has_attr("select_cols") { n.attr_list_int("select_cols")? } else { vec![] };
    if select.windows(2).any(|w| w[0] >= w[1]) || select.iter().any(|&c| c < 0) {
        return Err(n.node_error("select_cols should be non-negative and strictly increasing"));
    }
    if !select.is_empty() && select.len() != types.len() {
        return Err(n.node_error("select_cols should match output size"));
    }
    for t in &types {
        if !matches!(t, DataType::Float | DataType::Double | DataType::Int32 | DataType::Int64 | DataType::String) {
            return Err(n.node_error(format!("DecodeCSV: unsupported type {t}")));
        }
    }
    Ok(Box::new(DecodeCsv {
        types,
        delim: delim.as_bytes()[0],
        quote,
        na,
        select: select.into_iter().map(|c| c as usize).collect(),
    }))
}

pub(crate) fn register(r: &mut KernelRegistry) {
    r.add("DecodeCSV", factory);
}
