//! A cheap fingerprint of the files under a set of paths: their names, sizes and mtimes.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// What the files under some paths looked like at one moment.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Fingerprint(Vec<(PathBuf, Option<(u64, SystemTime)>)>);

impl Fingerprint {
    /// Fingerprints every file under `paths` (directories recursively; a missing path counts as
    /// a file that is absent).
    pub fn of(paths: &[PathBuf]) -> Self {
        let mut entries = Vec::new();
        for path in paths {
            collect(path, &mut entries);
        }
        Self(entries)
    }
}

fn collect(path: &Path, entries: &mut Vec<(PathBuf, Option<(u64, SystemTime)>)>) {
    // `metadata` follows symlinks: a swapped `..data` link changes what is seen.
    match std::fs::metadata(path) {
        Ok(meta) if meta.is_dir() => {
            let mut children: Vec<PathBuf> = std::fs::read_dir(path)
                .map(|dir| dir.filter_map(|e| e.ok().map(|e| e.path())).collect())
                .unwrap_or_default();
            children.sort();
            for child in children {
                collect(&child, entries);
            }
        }
        Ok(meta) => entries.push((
            path.to_path_buf(),
            Some((meta.len(), meta.modified().unwrap_or(SystemTime::UNIX_EPOCH))),
        )),
        Err(_) => entries.push((path.to_path_buf(), None)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edits_additions_and_removals_change_the_fingerprint() {
        let dir = tempfile::tempdir().unwrap();
        let paths = vec![dir.path().to_path_buf()];
        std::fs::write(dir.path().join("a.yaml"), "a").unwrap();
        let first = Fingerprint::of(&paths);
        assert_eq!(first, Fingerprint::of(&paths));
        std::fs::write(dir.path().join("a.yaml"), "ab").unwrap();
        let second = Fingerprint::of(&paths);
        assert_ne!(first, second);
        std::fs::write(dir.path().join("b.yaml"), "b").unwrap();
        assert_ne!(second, Fingerprint::of(&paths));
    }
}
