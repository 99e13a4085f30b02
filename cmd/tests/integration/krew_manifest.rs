//! `krew-manifest.yaml` holds the fields krew v1alpha2 requires, for every platform we ship.

use serde_json::Value as Json;

fn manifest() -> Json {
    let text =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../krew-manifest.yaml")).unwrap();
    serde_yaml_ng::from_str(&text).unwrap()
}

#[test]
fn the_manifest_is_a_krew_v1alpha2_plugin() {
    let m = manifest();
    assert_eq!(m["apiVersion"], "krew.googlecontainertools.github.com/v1alpha2");
    assert_eq!(m["kind"], "Plugin");
    assert_eq!(m["metadata"]["name"], "suture");
    let version = m["spec"]["version"].as_str().unwrap();
    assert_eq!(
        version,
        format!("v{}", env!("CARGO_PKG_VERSION")),
        "the manifest version follows the crate"
    );
    for field in ["homepage", "shortDescription", "description"] {
        assert!(
            m["spec"][field].as_str().is_some_and(|s| !s.is_empty()),
            "spec.{field} is required"
        );
    }
    assert!(m["spec"]["shortDescription"].as_str().unwrap().len() <= 255);
}

#[test]
fn every_platform_points_at_a_release_archive() {
    let m = manifest();
    let platforms = m["spec"]["platforms"].as_array().unwrap();
    let mut seen = Vec::new();
    for platform in platforms {
        let labels = &platform["selector"]["matchLabels"];
        let (os, arch) = (labels["os"].as_str().unwrap(), labels["arch"].as_str().unwrap());
        seen.push(format!("{os}/{arch}"));
        let uri = platform["uri"].as_str().unwrap();
        assert!(
            uri.starts_with("https://") && uri.ends_with(&format!("_{os}_{arch}.tar.gz")),
            "{uri}"
        );
        let sha = platform["sha256"].as_str().unwrap();
        assert!(
            sha.len() == 64 && sha.chars().all(|c| c.is_ascii_hexdigit()),
            "sha256 must be 64 hex digits"
        );
        assert_eq!(platform["bin"], "kubectl-suture");
        assert!(
            platform["files"]
                .as_array()
                .unwrap()
                .iter()
                .any(|f| f["from"] == "kubectl-suture")
        );
    }
    seen.sort();
    assert_eq!(
        seen,
        ["darwin/amd64", "darwin/arm64", "linux/amd64", "linux/arm64"]
    );
}

/// `scripts/release.sh --binary` packages a built binary for the host, fills its sha256 into a
/// copy of the manifest (leaving the platforms it did not build at zero) and lists it in
/// SHA256SUMS; the filled manifest is then validated against the archives it names.
/// Packages `binary` for linux/amd64 into `out` with `scripts/release.sh` (the packaging only:
/// the image, the SBOM and cargo-deny have tests and tools of their own).
#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
fn package(root: &std::path::Path, out: &std::path::Path, binary: &std::path::Path) {
    let status = std::process::Command::new("bash")
        .arg(root.join("scripts/release.sh"))
        .args(["--out", out.to_str().unwrap(), "--platforms", "linux/amd64"])
        .args(["--binary", binary.to_str().unwrap()])
        .args(["--no-image", "--no-sbom", "--no-deny"])
        .status()
        .unwrap();
    assert!(status.success());
}

#[test]
#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
fn the_release_script_fills_the_host_archive_sha256() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let out = tempfile::tempdir().unwrap();
    // A stand-in for the binary keeps the test fast: the script packages whatever it is given.
    let binary = out.path().join("kubectl-suture-built");
    std::fs::write(&binary, "#!/bin/sh\necho kubectl-suture\n").unwrap();
    package(&root, out.path(), &binary);
    let version = format!("v{}", env!("CARGO_PKG_VERSION"));
    let archive = out
        .path()
        .join(format!("kubectl-suture_{version}_linux_amd64.tar.gz"));
    let listing = std::process::Command::new("tar")
        .arg("tzf")
        .arg(&archive)
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&listing.stdout),
        "kubectl-suture\nREADME.md\n"
    );
    let filled: Json =
        serde_yaml_ng::from_str(&std::fs::read_to_string(out.path().join("krew-manifest.yaml")).unwrap())
            .unwrap();
    let platforms = filled["spec"]["platforms"].as_array().unwrap();
    let sum = |os: &str, arch: &str| {
        platforms
            .iter()
            .find(|p| {
                p["selector"]["matchLabels"]["os"] == os && p["selector"]["matchLabels"]["arch"] == arch
            })
            .map(|p| p["sha256"].as_str().unwrap().to_owned())
            .unwrap()
    };
    assert_eq!(sum("linux", "amd64"), sha256_of(&archive));
    assert_eq!(sum("darwin", "arm64"), "0".repeat(64));
    assert_eq!(validate_release(out.path()), ["linux/amd64"]);

    // The same binary, packaged again: the same archive, byte for byte.
    let again = tempfile::tempdir().unwrap();
    package(&root, again.path(), &binary);
    assert_eq!(
        sha256_of(&again.path().join(archive.file_name().unwrap())),
        sha256_of(&archive)
    );
}

/// A release directory's krew manifest checked against the archives it names, as krew would:
/// every platform with a sha256 names an archive present in `dir` with that sha256, holding
/// the `bin` and every `files[].from`, and SHA256SUMS lists it with the same sum. Returns the
/// platforms validated (`os/arch`).
fn validate_release(dir: &std::path::Path) -> Vec<String> {
    let manifest: Json =
        serde_yaml_ng::from_str(&std::fs::read_to_string(dir.join("krew-manifest.yaml")).unwrap()).unwrap();
    let sums = std::fs::read_to_string(dir.join("SHA256SUMS")).unwrap();
    let mut validated = Vec::new();
    for platform in manifest["spec"]["platforms"].as_array().unwrap() {
        let sha = platform["sha256"].as_str().unwrap();
        if sha == "0".repeat(64) {
            continue; // not built in this release directory
        }
        let uri = platform["uri"].as_str().unwrap();
        let name = uri.rsplit('/').next().unwrap();
        let archive = dir.join(name);
        assert!(archive.is_file(), "{uri}: no {name} in {}", dir.display());
        assert_eq!(
            sha256_of(&archive),
            sha,
            "{name}: the manifest's sha256 is not the archive's"
        );
        assert!(
            sums.lines()
                .any(|line| line.split_whitespace().collect::<Vec<_>>() == [sha, name]),
            "{name} is not in SHA256SUMS with its sum:\n{sums}"
        );
        let listing = std::process::Command::new("tar")
            .arg("tzf")
            .arg(&archive)
            .output()
            .unwrap();
        let entries = String::from_utf8_lossy(&listing.stdout).to_string();
        let mut needed = vec![platform["bin"].as_str().unwrap()];
        needed.extend(
            platform["files"]
                .as_array()
                .unwrap()
                .iter()
                .map(|f| f["from"].as_str().unwrap()),
        );
        for file in needed {
            assert!(
                entries.lines().any(|e| e == file),
                "{name} lacks {file}: {entries}"
            );
        }
        let labels = &platform["selector"]["matchLabels"];
        validated.push(format!(
            "{}/{}",
            labels["os"].as_str().unwrap(),
            labels["arch"].as_str().unwrap()
        ));
    }
    validated
}

/// The archive's sha256 as `sha256sum` prints it (no hashing crate needed in the tests).
fn sha256_of(path: &std::path::Path) -> String {
    let out = std::process::Command::new("sha256sum")
        .arg(path)
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .next()
        .unwrap()
        .to_owned()
}
