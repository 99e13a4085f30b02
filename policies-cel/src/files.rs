//! Finding input files: everything under a directory that a caller accepts, recursively, in
//! sorted order, skipping hidden entries (`.git`), and bounded in depth (a symlink loop ends with
//! an error, not a hang). Shared by the policy loader, the snapshot loader and the plugin.

use std::io;
use std::path::{Path, PathBuf};

/// How deep directories are followed.
pub const MAX_DEPTH: usize = 32;

/// A file found under a directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    pub path: PathBuf,
    /// Its size in bytes.
    pub len: u64,
}

/// The files under `dir` that `accept` takes, sorted, and the errors met on the way (each with
/// the path it concerns). A failure on one entry does not stop the walk.
pub fn files_under(dir: &Path, accept: &dyn Fn(&Path) -> bool) -> (Vec<Found>, Vec<(PathBuf, io::Error)>) {
    let mut found = Vec::new();
    let mut errors = Vec::new();
    walk(dir, accept, 0, &mut found, &mut errors);
    (found, errors)
}

fn walk(
    dir: &Path,
    accept: &dyn Fn(&Path) -> bool,
    depth: usize,
    found: &mut Vec<Found>,
    errors: &mut Vec<(PathBuf, io::Error)>,
) {
    if depth > MAX_DEPTH {
        errors.push((
            dir.to_path_buf(),
            io::Error::other("directories nested too deep (a symlink loop?)"),
        ));
        return;
    }
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(error) => return errors.push((dir.to_path_buf(), error)),
    };
    let mut paths: Vec<PathBuf> = Vec::new();
    for entry in entries {
        match entry {
            Ok(entry) => paths.push(entry.path()),
            Err(error) => errors.push((dir.to_path_buf(), error)),
        }
    }
    paths.sort();
    for path in paths {
        if path
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.starts_with('.'))
        {
            continue;
        }
        match std::fs::metadata(&path) {
            Ok(meta) if meta.is_dir() => walk(&path, accept, depth + 1, found, errors),
            Ok(meta) if accept(&path) => found.push(Found {
                path,
                len: meta.len(),
            }),
            Ok(_) => {}
            Err(error) => errors.push((path, error)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_accepted_files_in_order_and_skips_hidden_ones() {
        let root = std::env::temp_dir().join(format!("suture-files-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        for (path, text) in [
            ("b.yaml", "x"),
            ("a/c.yaml", "yy"),
            ("a/skip.txt", ""),
            (".git/d.yaml", ""),
        ] {
            let full = root.join(path);
            std::fs::create_dir_all(full.parent().unwrap()).unwrap();
            std::fs::write(full, text).unwrap();
        }
        let (found, errors) = files_under(&root, &|p| p.extension().is_some_and(|e| e == "yaml"));
        let _ = std::fs::remove_dir_all(&root);
        assert!(errors.is_empty());
        let names: Vec<(String, u64)> = found
            .iter()
            .map(|f| (f.path.strip_prefix(&root).unwrap().display().to_string(), f.len))
            .collect();
        assert_eq!(names, [("a/c.yaml".to_owned(), 2), ("b.yaml".to_owned(), 1)]);
    }

    #[test]
    fn a_missing_directory_is_an_error_not_a_panic() {
        let (found, errors) = files_under(Path::new("/no/such/suture/dir"), &|_| true);
        assert!(found.is_empty());
        assert_eq!(errors.len(), 1);
    }
}
