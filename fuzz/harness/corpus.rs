//! Replaying the inputs kept from fuzzing (`testdata/fuzz/<target>/`: past crashes and hangs,
//! and minimised seeds) through a harness, inside `cargo test`: every input must return without
//! a panic. Used by the `fuzz_regressions` tests only.

use std::path::{Path, PathBuf};

/// `testdata/fuzz/<target>/`.
pub fn dir(target: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../testdata/fuzz")
        .join(target)
}

/// Runs every kept input of `target` through `run`; fails naming each input that panicked.
/// Returns how many inputs ran.
pub fn replay(target: &str, run: fn(&[u8])) -> usize {
    let dir = dir(target);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|error| panic!("cannot read {}: {error}", dir.display()))
        .filter_map(|entry| entry.ok().map(|entry| entry.path()))
        .filter(|path| path.is_file() && path.file_name().is_some_and(|name| name != "README.md"))
        .collect();
    files.sort();
    let mut panicked = Vec::new();
    for file in &files {
        let data =
            std::fs::read(file).unwrap_or_else(|error| panic!("cannot read {}: {error}", file.display()));
        if std::panic::catch_unwind(|| run(&data)).is_err() {
            panicked.push(file.display().to_string());
        }
    }
    assert!(
        panicked.is_empty(),
        "{target}: these inputs panic again:\n{}",
        panicked.join("\n")
    );
    files.len()
}
