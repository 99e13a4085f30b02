//! Helpers shared by the `cli_*` tests: the freshly built `kubectl-suture` binary, run from the
//! workspace root so paths in messages and reports are the short `testdata/...` ones.
#![allow(dead_code)] // each test crate uses its own subset

use std::path::{Path, PathBuf};

use assert_cmd::Command;

/// The workspace root (`cmd/..`).
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("cmd/ has a parent")
        .to_path_buf()
}

/// `kubectl-suture`, run from the workspace root, with colour switched off by nothing but the
/// pipe (NO_COLOR removed so the terminal detection is what is tested), and no kubeconfig.
pub fn suture() -> Command {
    let mut cmd = Command::cargo_bin("kubectl-suture").expect("kubectl-suture is built");
    // Hermetic: no kubeconfig of the machine's (live mode reads one when it finds one).
    cmd.current_dir(root())
        .env_remove("NO_COLOR")
        .env(
            "KUBECONFIG",
            root().join("cmd/tests/fixtures/live/no-such-kubeconfig"),
        )
        .env_remove("KUBERNETES_SERVICE_HOST");
    cmd
}

/// Stdout of a finished command as text.
pub fn stdout(output: &std::process::Output) -> String {
    String::from_utf8(output.stdout.clone()).expect("utf-8 stdout")
}

/// Stderr of a finished command as text.
pub fn stderr(output: &std::process::Output) -> String {
    String::from_utf8(output.stderr.clone()).expect("utf-8 stderr")
}

/// Stdout parsed as JSON.
pub fn json(output: &std::process::Output) -> serde_json::Value {
    serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|e| panic!("stdout is not JSON ({e}):\n{}", stdout(output)))
}

/// A temporary directory holding `files` (name, content).
pub fn temp_files(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    for (name, content) in files {
        let path = dir.path().join(name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).expect("create dirs");
        }
        std::fs::write(path, content).expect("write temp file");
    }
    dir
}

/// The captured AdmissionReviews of a real API server (`../shared/fixtures/admission-reviews`),
/// or None — with a message saying the test is skipped — when they are not there.
pub fn shared_reviews() -> Option<Vec<PathBuf>> {
    let dir = root().join("../shared/fixtures/admission-reviews");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        eprintln!(
            "skipping: {} is absent (the captured AdmissionReviews are not in this checkout)",
            dir.display()
        );
        return None;
    };
    let mut files: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    Some(files)
}
