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

/// `scripts/release.sh --binary` packages a built binary for the host and fills its sha256 into a
/// copy of the manifest, leaving the platforms it did not build at zero.
#[test]
#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
fn the_release_script_fills_the_host_archive_sha256() {
    use sha2_free::sha256_of;

    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let out = tempfile::tempdir().unwrap();
    // A stand-in for the binary keeps the test fast: the script packages whatever it is given.
    let binary = out.path().join("kubectl-suture-built");
    std::fs::write(&binary, "#!/bin/sh\necho kubectl-suture\n").unwrap();
    let status = std::process::Command::new("bash")
        .arg(root.join("scripts/release.sh"))
        .args([
            "--out",
            out.path().to_str().unwrap(),
            "--platforms",
            "linux/amd64",
        ])
        .args(["--binary", binary.to_str().unwrap()])
        .status()
        .unwrap();
    assert!(status.success());
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
}

/// The archive's sha256 as `sha256sum` prints it (no hashing crate needed in the tests).
mod sha2_free {
    pub fn sha256_of(path: &std::path::Path) -> String {
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
}
