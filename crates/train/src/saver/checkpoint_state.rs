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

/// The text form of a state.
pub fn format_checkpoint_state(s: &CheckpointState) -> String {
    ferroflow_graph::pbtxt::checkpoint_state_to_pbtxt(s)
}

/// Parses the text form (`file` names it in errors, which are DataLoss: the file is damaged).
pub fn parse_checkpoint_state(text: &str, file: &str) -> Result<CheckpointState, Status> {
    ferroflow_graph::pbtxt::parse_checkpoint_state(text)
        .map_err(|e| Status::data_loss(format!("{file}: {}", e.message)))
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
