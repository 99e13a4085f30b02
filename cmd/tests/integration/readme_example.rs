//! The policy-authoring example in the README (`testdata/readme-example/`) loads and passes its
//! suite, so the README cannot drift from what the engine does.

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
    let readme = std::fs::read_to_string(common::root().join("README.md")).unwrap();
    for file in [
        "safety-policy.yaml",
        "min-replicas.yaml",
        "readme.test.yaml",
        "keep-quorum.yaml",
        "quorum.test.yaml",
    ] {
        let text =
            std::fs::read_to_string(common::root().join("testdata/readme-example").join(file)).unwrap();
        assert!(
            readme.contains(&text),
            "README.md no longer shows testdata/readme-example/{file}"
        );
    }
}
