//! The policy-authoring examples (`testdata/readme-example/`) load and pass their suite, and the
//! README and `docs/policies.md` show them as they are, so neither can drift from what the engine
//! does.

use crate::common;

use common::{stdout, suture};

#[test]
fn the_readme_example_suite_passes() {
    let out = suture()
        .args(["test", "testdata/readme-example"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    assert!(
        stdout(&out).contains("PASS: 4 passed, 0 failed"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn the_readme_example_blocks_are_the_files() {
    let shows = |document: &str, file: &str| {
        let text = std::fs::read_to_string(common::root().join(document)).unwrap();
        let example =
            std::fs::read_to_string(common::root().join("testdata/readme-example").join(file)).unwrap();
        assert!(
            text.contains(&example),
            "{document} no longer shows testdata/readme-example/{file}"
        );
    };
    // The README shows one policy; the authoring chapter every example and its suite.
    shows("README.md", "keep-quorum.yaml");
    for file in [
        "safety-policy.yaml",
        "min-replicas.yaml",
        "readme.test.yaml",
        "keep-quorum.yaml",
        "quorum.test.yaml",
    ] {
        shows("docs/policies.md", file);
    }
}
