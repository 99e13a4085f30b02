//! Bad input never panics: every truncation and a set of byte-level corruptions of real policy
//! files and AdmissionReviews either load/parse or give an error.

use std::path::{Path, PathBuf};

use policies_cel::policy::Loader;
use policies_cel::{EmptyCluster, Request, evaluate};

fn testdata(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../testdata")
        .join(path)
}

/// Every prefix (at char boundaries, every `step` bytes) and a few corruptions of `text`.
fn damaged(text: &str, step: usize) -> Vec<String> {
    let mut out: Vec<String> = (0..text.len())
        .step_by(step)
        .filter(|i| text.is_char_boundary(*i))
        .map(|i| text[..i].to_owned())
        .collect();
    for (from, to) in [
        (":", ""),
        ("-", "+"),
        ("\"", ""),
        ("[", "{"),
        ("  ", " "),
        ("e", "\t"),
    ] {
        out.push(text.replacen(from, to, 3));
    }
    out
}

#[test]
fn truncated_and_corrupted_policy_files_never_panic() {
    let mut checked = 0;
    for name in ["bench/policies.yaml", "suites/replicas-limit/policies.yaml"] {
        let text = std::fs::read_to_string(testdata(name)).unwrap();
        for variant in damaged(&text, 61) {
            let result =
                std::panic::catch_unwind(|| Loader::new().add_str(name, &variant).and_then(Loader::finish));
            assert!(
                result.is_ok(),
                "the loader panicked on a damaged {name}:\n{variant}"
            );
            checked += 1;
        }
    }
    assert!(checked > 300);
}

#[test]
fn truncated_and_corrupted_reviews_never_panic() {
    let set = policies_cel::pack::builtin().unwrap();
    let text = std::fs::read_to_string(testdata("bench/deployment-create.json")).unwrap();
    for variant in damaged(&text, 13) {
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let Ok(json) = serde_json::from_str::<serde_json::Value>(&variant) else {
                return;
            };
            if let Ok(request) = Request::from_review(json) {
                evaluate(&set, &request, &EmptyCluster);
            }
        }));
        assert!(result.is_ok(), "a damaged review panicked:\n{variant}");
    }
}
