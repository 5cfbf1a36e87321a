//! Whole files as string tensors: `ReadFile` (`tf.io.read_file`), `WriteFile`
//! (`tf.io.write_file`, parent directories made as TensorFlow makes them) and
//! `MatchingFiles` (`tf.io.matching_files`, `Dataset.list_files`: the paths matching each
//! glob pattern, `*` `?` `[...]` within one path component, all sorted). Every path obeys
//! the task's `--file_root`; outside it they are PERMISSION_DENIED (a pattern's matches
//! outside the root are left out).

use ferroflow_core::{DataType, Status, Tensor};

use crate::{KernelRegistry, OpContext, OpKernel};

/// Input `i`, a string scalar naming a file (`what` names it in errors).
fn scalar_path(ctx: &OpContext, i: usize, what: &str) -> Result<String, Status> {
    let t = ctx.input(i)?;
    if t.dtype() != DataType::String || t.rank() != 0 {
        return Err(ctx.error(format!("Input {what} tensor must be scalar, but had shape: {}", t.shape())));
    }
    let b = t.as_slice::<Vec<u8>>()?[0].clone();
    String::from_utf8(b).map_err(|_| ctx.error(format!("{what} is not valid UTF-8")))
}

/// An I/O failure as TensorFlow's status for it (NOT_FOUND for a missing file).
fn io_status(e: std::io::Error, path: &str) -> Status {
    use std::io::ErrorKind;
    let msg = format!("{path}; {e}");
    match e.kind() {
        ErrorKind::NotFound => Status::not_found(msg),
        ErrorKind::PermissionDenied => Status::new(ferroflow_core::Code::PermissionDenied, msg),
        ErrorKind::AlreadyExists => Status::new(ferroflow_core::Code::AlreadyExists, msg),
        _ => Status::new(ferroflow_core::Code::Unknown, msg),
    }
}

op_kernel! {
    struct ReadFile;
    fn compute(&self, ctx) {
        let path = scalar_path(ctx, 0, "filename")?;
        ferroflow_core::check_file_path(&path, "ReadFile filename").map_err(|e| ctx.error_with(e))?;
        let len = std::fs::metadata(&path).map_err(|e| ctx.error_with(io_status(e, &path)))?.len();
        ferroflow_core::check_tensor_alloc(&[len as usize], DataType::UInt8).map_err(|e| ctx.error_with(e))?;
        let bytes = std::fs::read(&path).map_err(|e| ctx.error_with(io_status(e, &path)))?;
        ctx.set_output(0, Tensor::scalar(bytes))
    }
}

op_kernel! {
    struct WriteFile;
    fn compute(&self, ctx) {
        let path = scalar_path(ctx, 0, "filename")?;
        let contents = ctx.input(1)?;
        if contents.dtype() != DataType::String || contents.rank() != 0 {
            return Err(ctx.error(format!("Contents tensor must be scalar, but had shape: {}", contents.shape())));
        }
        ferroflow_core::check_file_path(&path, "WriteFile filename").map_err(|e| ctx.error_with(e))?;
        if let Some(dir) = std::path::Path::new(&path).parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| ctx.error_with(io_status(e, &dir.to_string_lossy())))?;
        }
        let bytes = &contents.as_slice::<Vec<u8>>()?[0];
        std::fs::write(&path, bytes).map_err(|e| ctx.error_with(io_status(e, &path)))
    }
}

struct MatchingFiles;

/// The paths matching `pattern`, unsorted.
fn matches(pattern: &str) -> Result<Vec<String>, Status> {
    let paths = glob::glob(pattern)
        .map_err(|e| Status::invalid_argument(format!("file pattern '{pattern}' is not a valid glob: {e}")))?;
    let mut out = Vec::new();
    // Entries that cannot be read (a directory without permission) match nothing.
    for p in paths.flatten() {
        let s = p.to_string_lossy().into_owned();
        if ferroflow_core::check_file_path(&s, "matched file").is_ok() {
            out.push(s);
        }
    }
    Ok(out)
}

impl OpKernel for MatchingFiles {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let t = ctx.input(0)?;
        if t.dtype() != DataType::String || t.rank() > 1 {
            return Err(
                ctx.error(format!("Input patterns tensor must be scalar or vector, but had shape: {}", t.shape()))
            );
        }
        let mut all = Vec::new();
        for p in t.as_slice::<Vec<u8>>()? {
            let p = std::str::from_utf8(p).map_err(|_| ctx.error("a file pattern is not valid UTF-8"))?;
            all.extend(matches(p).map_err(|e| ctx.error_with(e))?);
        }
        all.sort();
        let n = all.len();
        let out: Vec<Vec<u8>> = all.into_iter().map(String::into_bytes).collect();
        ctx.set_output(0, Tensor::new(vec![n], out)?)
    }
}

pub(crate) fn register(r: &mut KernelRegistry) {
    r.add("ReadFile", |_| Ok(Box::new(ReadFile)));
    r.add("WriteFile", |_| Ok(Box::new(WriteFile)));
    r.add("MatchingFiles", |_| Ok(Box::new(MatchingFiles)));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::temp_dir;

    #[test]
    fn matches_sorted_within_components() {
        let d = temp_dir("matching_files");
        for f in ["b.rec", "a.rec", "c.txt", "sub/d.rec"] {
            let p = d.join(f);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(&p, f).unwrap();
        }
        let root = d.to_string_lossy();
        let mut got = matches(&format!("{root}/*.rec")).unwrap();
        got.sort();
        assert_eq!(got, vec![format!("{root}/a.rec"), format!("{root}/b.rec")]);
        assert_eq!(matches(&format!("{root}/?.txt")).unwrap(), vec![format!("{root}/c.txt")]);
        assert_eq!(matches(&format!("{root}/*/[d].rec")).unwrap(), vec![format!("{root}/sub/d.rec")]);
        assert!(matches(&format!("{root}/nothing*")).unwrap().is_empty());
        assert_eq!(matches(&format!("{root}/[")).unwrap_err().code, ferroflow_core::Code::InvalidArgument);
    }

    #[test]
    fn missing_file_is_not_found() {
        let e = io_status(std::fs::read("/nonexistent/ferroflow").unwrap_err(), "/nonexistent/ferroflow");
        assert_eq!(e.code, ferroflow_core::Code::NotFound);
        assert!(e.message.starts_with("/nonexistent/ferroflow; "), "{}", e.message);
    }
}
