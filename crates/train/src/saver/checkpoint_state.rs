//! The `checkpoint` state file of a checkpoint directory: a text-format
//! `tensorflow.CheckpointState` naming the latest checkpoint and those still kept.
//!
//! ```text
//! model_checkpoint_path: "model.ckpt-20"
//! all_model_checkpoint_paths: "model.ckpt-10"
//! all_model_checkpoint_paths: "model.ckpt-20"
//! ```

use std::path::{Path, PathBuf};

use ferroflow_core::proto::CheckpointState;
use ferroflow_core::Status;
use ferroflow_kernels::io::{index_path, write_atomic};

/// Name of the state file inside a checkpoint directory.
pub const CHECKPOINT_STATE_FILE: &str = "checkpoint";

fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    for b in s.bytes() {
        match b {
            b'"' => out.push_str("\\\""),
            b'\\' => out.push_str("\\\\"),
            b'\n' => out.push_str("\\n"),
            b'\t' => out.push_str("\\t"),
            b'\r' => out.push_str("\\r"),
            0x20..=0x7e => out.push(b as char),
            _ => out.push_str(&format!("\\{b:03o}")),
        }
    }
    out
}

fn unescape(s: &str, file: &str) -> Result<String, Status> {
    let bad = || Status::data_loss(format!("{file}: bad string literal {s}"));
    let b = s.as_bytes();
    let quote = *b.first().ok_or_else(bad)?;
    if (quote != b'"' && quote != b'\'') || b.len() < 2 || b[b.len() - 1] != quote {
        return Err(bad());
    }
    let body = &b[1..b.len() - 1];
    let mut out = Vec::with_capacity(body.len());
    let mut i = 0;
    while i < body.len() {
        if body[i] != b'\\' {
            out.push(body[i]);
            i += 1;
            continue;
        }
        let c = *body.get(i + 1).ok_or_else(bad)?;
        i += 2;
        match c {
            b'n' => out.push(b'\n'),
            b't' => out.push(b'\t'),
            b'r' => out.push(b'\r'),
            b'\\' | b'"' | b'\'' => out.push(c),
            b'0'..=b'7' => {
                let mut v = u32::from(c - b'0');
                let mut n = 1;
                while n < 3 && i < body.len() && (b'0'..=b'7').contains(&body[i]) {
                    v = v * 8 + u32::from(body[i] - b'0');
                    i += 1;
                    n += 1;
                }
                out.push(u8::try_from(v).map_err(|_| bad())?);
            }
            b'x' => {
                let hex: String =
                    body[i..].iter().take(2).take_while(|c| c.is_ascii_hexdigit()).map(|&c| c as char).collect();
                i += hex.len();
                out.push(u8::from_str_radix(&hex, 16).map_err(|_| bad())?);
            }
            _ => return Err(bad()),
        }
    }
    String::from_utf8(out).map_err(|_| bad())
}

/// The text form of a state.
pub fn format_checkpoint_state(s: &CheckpointState) -> String {
    let mut out = format!("model_checkpoint_path: \"{}\"\n", escape(&s.model_checkpoint_path));
    for p in &s.all_model_checkpoint_paths {
        out.push_str(&format!("all_model_checkpoint_paths: \"{}\"\n", escape(p)));
    }
    for t in &s.all_model_checkpoint_timestamps {
        out.push_str(&format!("all_model_checkpoint_timestamps: {t:?}\n"));
    }
    if s.last_preserved_timestamp != 0.0 {
        out.push_str(&format!("last_preserved_timestamp: {:?}\n", s.last_preserved_timestamp));
    }
    out
}

/// Parses the text form (`file` names it in errors).
pub fn parse_checkpoint_state(text: &str, file: &str) -> Result<CheckpointState, Status> {
    let mut s = CheckpointState::default();
    for line in text.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#')) {
        let (key, value) = line
            .split_once(':')
            .ok_or_else(|| Status::data_loss(format!("{file}: expected 'field: value', got {line:?}")))?;
        let value = value.trim();
        let num = || value.parse::<f64>().map_err(|_| Status::data_loss(format!("{file}: bad number {value:?}")));
        match key.trim() {
            "model_checkpoint_path" => s.model_checkpoint_path = unescape(value, file)?,
            "all_model_checkpoint_paths" => s.all_model_checkpoint_paths.push(unescape(value, file)?),
            "all_model_checkpoint_timestamps" => s.all_model_checkpoint_timestamps.push(num()?),
            "last_preserved_timestamp" => s.last_preserved_timestamp = num()?,
            other => return Err(Status::data_loss(format!("{file}: unknown field '{other}' in CheckpointState"))),
        }
    }
    Ok(s)
}

/// Reads `<dir>/checkpoint`; `Ok(None)` if there is none.
pub fn get_checkpoint_state(dir: impl AsRef<Path>) -> Result<Option<CheckpointState>, Status> {
    let path = dir.as_ref().join(CHECKPOINT_STATE_FILE);
    match std::fs::read_to_string(&path) {
        Ok(text) => parse_checkpoint_state(&text, &path.display().to_string()).map(Some),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(Status::unknown(format!("cannot read {}: {e}", path.display()))),
    }
}

/// Writes `<dir>/checkpoint` atomically (temporary file, then rename).
pub fn update_checkpoint_state(dir: impl AsRef<Path>, state: &CheckpointState) -> Result<(), Status> {
    write_atomic(&dir.as_ref().join(CHECKPOINT_STATE_FILE), format_checkpoint_state(state).as_bytes())
}

/// A checkpoint path from the state file, made absolute against its directory.
pub fn resolve(dir: &Path, p: &str) -> PathBuf {
    let path = Path::new(p);
    if path.is_absolute() {
        path.to_path_buf()
    } else {
        dir.join(path)
    }
}

/// Whether a V2 checkpoint exists at `prefix` (its `.index` file does).
pub fn checkpoint_exists(prefix: &str) -> bool {
    index_path(prefix).is_file()
}

/// The latest checkpoint recorded in `<dir>/checkpoint` whose files exist
/// (TensorFlow's `tf.train.latest_checkpoint`).
pub fn latest_checkpoint(dir: impl AsRef<Path>) -> Result<Option<String>, Status> {
    let dir = dir.as_ref();
    let Some(state) = get_checkpoint_state(dir)? else { return Ok(None) };
    if state.model_checkpoint_path.is_empty() {
        return Ok(None);
    }
    let p = resolve(dir, &state.model_checkpoint_path).display().to_string();
    Ok(checkpoint_exists(&p).then_some(p))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_round_trip() {
        let s = CheckpointState {
            model_checkpoint_path: "model.ckpt-2".into(),
            all_model_checkpoint_paths: vec!["model.ckpt-1".into(), "dir \"q\"\\é\n".into()],
            all_model_checkpoint_timestamps: vec![1.5, 2.25],
            last_preserved_timestamp: 1.0,
        };
        let text = format_checkpoint_state(&s);
        assert!(text.starts_with("model_checkpoint_path: \"model.ckpt-2\"\n"), "{text}");
        assert_eq!(parse_checkpoint_state(&text, "checkpoint").unwrap(), s);
        // TensorFlow's own output (single quotes are accepted too).
        let tf = "model_checkpoint_path: \"/tmp/x/model-3\"\nall_model_checkpoint_paths: '/tmp/x/model-3'\n";
        let p = parse_checkpoint_state(tf, "c").unwrap();
        assert_eq!(p.all_model_checkpoint_paths, vec!["/tmp/x/model-3"]);
        assert!(parse_checkpoint_state("model_checkpoint_path: \"x", "c").is_err());
        assert!(parse_checkpoint_state("bogus: 1", "c").is_err());
    }
}
