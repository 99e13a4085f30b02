//! `krew-manifest.yaml` holds the fields krew v1alpha2 requires, for every platform we ship.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

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
