//! Confinement of file-touching ops (`--file_root DIR`): when a root is set, every path an
//! op is given (checkpoint prefixes of `SaveV2`/`RestoreV2`/`MergeV2Checkpoints`, table
//! files, dataset files) must resolve inside it; `..` and symbolic links that lead out are
//! refused with PERMISSION_DENIED. Without a root every path is allowed (TensorFlow's
//! behaviour).

use std::path::{Component, Path, PathBuf};
use std::sync::RwLock;

use crate::{Code, Status};

static ROOT: RwLock<Option<PathBuf>> = RwLock::new(None);

/// Confines file ops to `dir` (which must exist); `None` lifts the confinement.
pub fn set_file_root(dir: Option<&Path>) -> Result<(), Status> {
    let root = match dir {
        None => None,
        Some(d) => Some(
            d.canonicalize()
                .map_err(|e| Status::invalid_argument(format!("--file_root '{}' cannot be used: {e}", d.display())))?,
        ),
    };
    *ROOT.write().unwrap_or_else(|e| e.into_inner()) = root;
    Ok(())
}

/// The current root, if any.
pub fn file_root() -> Option<PathBuf> {
    ROOT.read().unwrap_or_else(|e| e.into_inner()).clone()
}

/// Checks that `path` (as an op received it) lies under the file root; `what` names the
/// op input in the error. The part of the path that exists is resolved (symbolic links
/// followed); the rest may not contain `..`.
pub fn check_file_path(path: &str, what: &str) -> Result<(), Status> {
    let Some(root) = file_root() else { return Ok(()) };
    let denied = |why: &str| {
        Status::new(
            Code::PermissionDenied,
            // Neither the root nor where the path resolves to is named: the text goes to a
            // remote client, and the server's directories are none of its business.
            format!("{what} '{path}' is outside the task's --file_root ({why})"),
        )
    };
    let p = Path::new(path);
    let abs = if p.is_absolute() {
        p.to_path_buf()
    } else {
        std::env::current_dir().map_err(|e| denied(&format!("no working directory: {e}")))?.join(p)
    };
    // The longest existing ancestor, resolved; the rest appended as is.
    let mut existing = abs.as_path();
    let mut rest: Vec<Component<'_>> = Vec::new();
    let resolved = loop {
        match existing.canonicalize() {
            Ok(r) => break r,
            Err(_) => {
                let Some(parent) = existing.parent() else { return Err(denied("no part of it exists")) };
                if let Some(last) = existing.components().next_back() {
                    rest.push(last);
                }
                existing = parent;
            }
        }
    };
    if rest.iter().any(|c| !matches!(c, Component::Normal(_))) {
        return Err(denied("'..' after the part that exists"));
    }
    let full = rest.iter().rev().fold(resolved, |acc, c| acc.join(c.as_os_str()));
    if full.starts_with(&root) {
        Ok(())
    } else {
        Err(denied("it resolves to a place outside the root"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One test owns the global root (tests run in parallel threads).
    #[test]
    fn paths_inside_pass_and_escapes_are_refused() {
        let base = std::env::temp_dir().join(format!("ff_file_root_{}", std::process::id()));
        let root = base.join("root");
        let outside = base.join("outside");
        std::fs::create_dir_all(root.join("ckpt")).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        #[cfg(unix)]
        std::os::unix::fs::symlink(&outside, root.join("link")).unwrap();
        assert!(check_file_path("/etc/passwd", "x").is_ok(), "no root: anything goes");
        set_file_root(Some(&root)).unwrap();
        let r = root.display().to_string();
        for ok in [format!("{r}/ckpt/model.ckpt-1"), format!("{r}/new/dir/file"), format!("{r}/ckpt/../ckpt/x")] {
            assert!(check_file_path(&ok, "prefix").is_ok(), "{ok}");
        }
        let mut bad = vec![
            "/etc/passwd".to_string(),
            format!("{r}/../outside/x"),
            format!("{r}/new/../../outside"),
            format!("{}/x", outside.display()),
        ];
        if cfg!(unix) {
            bad.push(format!("{r}/link/x"));
        }
        for b in bad {
            let e = check_file_path(&b, "prefix").unwrap_err();
            assert_eq!(e.code, Code::PermissionDenied, "{b}: {e}");
            assert!(e.message.contains("--file_root") && e.message.contains(&b), "{e}");
            let named = e.message.replacen(&b, "", 1);
            assert!(!named.contains(&r) && !named.contains(&base.display().to_string()), "no server path: {e}");
        }
        assert!(set_file_root(Some(&base.join("missing"))).is_err());
        set_file_root(None).unwrap();
        assert!(check_file_path("/etc/passwd", "x").is_ok());
        let _ = std::fs::remove_dir_all(&base);
    }
}
