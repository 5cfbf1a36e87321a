//! `InitializeTableFromTextFile[V2]`: fills a static table from a text file, one entry per
//! line, with TensorFlow's column rules: `key_index`/`value_index` name a column split by
//! `delimiter`, -2 the whole line, -1 the line number (plus `offset`); `vocab_size` > 0
//! reads that many lines and requires the file to have at least as many; empty lines are an
//! error.

use std::io::{BufRead, BufReader};

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{DataType, NodeAttrs, Status, Tensor};

use super::handles::node_err;
use super::lookup_ops::table;
use super::lookup_table::TableKey;
use crate::array::util::tf_type_name;
use crate::{KernelRegistry, OpContext, OpKernel};

const WHOLE_LINE: i64 = -2;
const LINE_NUMBER: i64 = -1;

/// Longest line read (a bound on memory per line from a file named by remote input).
const MAX_LINE: u64 = 1 << 24;
/// Most entries one file may add.
const MAX_ENTRIES: usize = 1 << 27;

struct FromFile {
    key_index: i64,
    value_index: i64,
    vocab_size: i64,
    delimiter: String,
    offset: i64,
}

/// A field of line `line_no` as `dtype`. Errors never quote the file's text: a remote
/// client may name any readable file, and its contents are not the client's to read.
fn parse(field: &str, dtype: DataType, line_no: usize) -> Result<Tensor, Status> {
    let bad = || {
        Status::invalid_argument(format!(
            "Field in line {line_no} ({} bytes) is not a valid {}.",
            field.len(),
            tf_type_name(dtype)
        ))
    };
    Ok(match dtype {
        DataType::String => Tensor::scalar(field.as_bytes().to_vec()),
        DataType::Int64 => Tensor::scalar(field.trim().parse::<i64>().map_err(|_| bad())?),
        DataType::Int32 => Tensor::scalar(field.trim().parse::<i32>().map_err(|_| bad())?),
        DataType::Float => Tensor::scalar(field.trim().parse::<f32>().map_err(|_| bad())?),
        DataType::Double => Tensor::scalar(field.trim().parse::<f64>().map_err(|_| bad())?),
        DataType::Bool => Tensor::scalar(match field.trim() {
            "true" | "True" | "1" => true,
            "false" | "False" | "0" => false,
            _ => return Err(bad()),
        }),
        d => return Err(Status::invalid_argument(format!("text file tables cannot hold {}", tf_type_name(d)))),
    })
}

impl FromFile {
    fn check_dtypes(&self, key: DataType, value: DataType) -> Result<(), Status> {
        for (what, idx, d) in [("Key", self.key_index, key), ("Value", self.value_index, value)] {
            if idx == LINE_NUMBER && d != DataType::Int64 {
                return Err(Status::invalid_argument(format!(
                    "{what} index for line number requires table {} dtype of int64, got {}",
                    what.to_lowercase(),
                    tf_type_name(d)
                )));
            }
            if idx == WHOLE_LINE && d != DataType::String && d != DataType::Int64 {
                return Err(Status::invalid_argument(format!(
                    "{what} index for whole line requires string or integer table {} dtype, got {}",
                    what.to_lowercase(),
                    tf_type_name(d)
                )));
            }
        }
        Ok(())
    }

    fn field(&self, index: i64, line: &str, line_no: usize, file: &str, dtype: DataType) -> Result<Tensor, Status> {
        match index {
            WHOLE_LINE => parse(line, dtype, line_no),
            LINE_NUMBER => Ok(Tensor::scalar(line_no as i64 + self.offset)),
            i => {
                let cols: Vec<&str> =
                    if self.delimiter.is_empty() { vec![line] } else { line.split(self.delimiter.as_str()).collect() };
                let need = (i as usize).saturating_add(1);
                match cols.get(i as usize) {
                    Some(c) => parse(c, dtype, line_no),
                    None => Err(Status::invalid_argument(format!(
                        "Invalid number of columns in {file} line {line_no} : expected at least {need} got {}",
                        cols.len()
                    ))),
                }
            }
        }
    }

    fn read(&self, file: &str, key: DataType, value: DataType) -> Result<Vec<(TableKey, Tensor)>, Status> {
        ferroflow_core::check_file_path(file, "table initializer file")?;
        let f = std::fs::File::open(file).map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => Status::not_found(format!("{file}; No such file or directory")),
            _ => Status::invalid_argument(format!("{file}: {e}")),
        })?;
        let mut r = BufReader::new(f);
        let mut out = Vec::new();
        let mut pos = 0usize;
        let mut buf = Vec::new();
        let limit = usize::try_from(self.vocab_size).ok().filter(|&v| v > 0);
        loop {
            if limit.is_some_and(|l| out.len() >= l) {
                break;
            }
            buf.clear();
            let n = std::io::Read::take(&mut r, MAX_LINE)
                .read_until(b'\n', &mut buf)
                .map_err(|e| Status::data_loss(format!("{file}: {e}")))?;
            if n == 0 {
                break;
            }
            pos += n;
            if n as u64 == MAX_LINE && buf.last() != Some(&b'\n') {
                return Err(Status::invalid_argument(format!(
                    "{file}: line {} is longer than {MAX_LINE} bytes",
                    out.len()
                )));
            }
            while matches!(buf.last(), Some(b'\n' | b'\r')) {
                buf.pop();
            }
            if buf.is_empty() {
                return Err(Status::invalid_argument(format!(
                    "Invalid content in {file}: empty line found at position {pos}."
                )));
            }
            if out.len() >= MAX_ENTRIES {
                return Err(Status::resource_exhausted(format!("{file} has more than {MAX_ENTRIES} lines")));
            }
            let line = String::from_utf8_lossy(&buf).into_owned();
            let line_no = out.len();
            let k = self.field(self.key_index, &line, line_no, file, key)?;
            let v = self.field(self.value_index, &line, line_no, file, value)?;
            let k = super::lookup_table::keys_of(&k)?.remove(0);
            out.push((k, v));
        }
        if let Some(l) = limit {
            if out.len() < l {
                return Err(Status::invalid_argument(format!(
                    "Invalid vocab_size in {file}: expected {l} but got {}",
                    out.len()
                )));
            }
        }
        Ok(out)
    }
}

impl OpKernel for FromFile {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let t = table(ctx)?;
        let f = ctx.input(1)?;
        if f.dtype() != DataType::String || f.rank() != 0 {
            return Err(ctx.error(format!("filename should be a single string, but got {}", f.shape())));
        }
        let file = String::from_utf8_lossy(&f.scalar_value::<Vec<u8>>()?).into_owned();
        self.check_dtypes(t.key_dtype, t.value_dtype).map_err(|e| node_err(ctx, e))?;
        let pairs = self.read(&file, t.key_dtype, t.value_dtype).map_err(|e| node_err(ctx, e))?;
        t.initialize_pairs(pairs).map_err(|e| node_err(ctx, e))
    }
}

fn make(n: &NodeDef) -> Result<Box<dyn OpKernel>, Status> {
    let k = FromFile {
        key_index: n.attr_int("key_index")?,
        value_index: n.attr_int("value_index")?,
        vocab_size: n.attr_int("vocab_size")?,
        delimiter: n.attr_string("delimiter")?,
        offset: n.attr_int("offset").unwrap_or(0),
    };
    if k.key_index < WHOLE_LINE || k.value_index < WHOLE_LINE {
        return Err(n.node_error("key_index and value_index must be >= -2"));
    }
    if k.vocab_size < -1 || k.vocab_size == 0 {
        return Err(n.node_error(format!("vocab_size must be > 0 or -1, got {}", k.vocab_size)));
    }
    Ok(Box::new(k))
}

pub(crate) fn register(r: &mut KernelRegistry) {
    r.add("InitializeTableFromTextFileV2", make);
    r.add("InitializeTableFromTextFile", make);
}
