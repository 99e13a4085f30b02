//! The project's own binaries under test (`suture-gateway`, `kubectl-suture`), found beside the
//! test executable (or the benchmark binary) in cargo's target directory: `cargo test
//! --workspace` builds them first.

use std::path::PathBuf;

/// The directory holding the workspace's binaries (`target/<profile>`).
pub fn dir() -> anyhow::Result<PathBuf> {
    let exe = std::env::current_exe()?;
    // target/<profile>/deps/e2e-<hash> (a test), or target/<profile>/<name> (a binary)
    let parent = exe
        .parent()
        .ok_or_else(|| anyhow::anyhow!("cannot place {} in a target directory", exe.display()))?;
    let profile = if parent.ends_with("deps") {
        parent.parent().unwrap_or(parent)
    } else {
        parent
    };
    Ok(profile.to_owned())
}

/// The path of the workspace binary `name`, or an error saying how to build it.
pub fn path(name: &str) -> anyhow::Result<PathBuf> {
    let path = dir()?.join(name);
    anyhow::ensure!(
        path.exists(),
        "{} is not built: run the suite with `cargo test --workspace` (or `cargo build -p suture-cmd` first)",
        path.display()
    );
    Ok(path)
}
