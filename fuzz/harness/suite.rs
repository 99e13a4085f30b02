//! Fuzz harness of `kubectl suture test`'s suite reader (`suture_plugin::suite::load`: the
//! `kind: SutureTest` documents of a file, each case prepared into a request and its
//! expectations compiled, errors with file:line). The loader reads files, so the input is written
//! to a suite file in a directory of this process's own, with nothing else in it, removed after
//! each input.
//! Properties: nothing panics, and every refusal says why.

use std::path::PathBuf;

/// The directory this process writes each input to (removed after each input).
fn suite_dir() -> PathBuf {
    std::env::temp_dir().join(format!("suture-fuzz-suite-{}", std::process::id()))
}

/// Runs one input; panics when the loader panics.
pub fn run(data: &[u8]) {
    let dir = suite_dir();
    let file = dir.join("fuzz.test.yaml");
    if let Err(error) = std::fs::create_dir_all(&dir).and_then(|()| std::fs::write(&file, data)) {
        panic!("cannot write {}: {error}", file.display());
    }
    let loaded = suture_plugin::suite::load(std::slice::from_ref(&file));
    let _ = std::fs::remove_dir_all(&dir);
    match loaded {
        Ok(suites) => {
            let _ = format!("{suites:?}");
        }
        Err(failure) => assert!(!format!("{failure:?}").is_empty(), "a refusal without a message"),
    }
}
