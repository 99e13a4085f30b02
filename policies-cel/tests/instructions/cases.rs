//! The recorded requests the gate counts, and the workload that counts them: each case is a
//! review from `testdata/reviews` judged on snapshots from `testdata/clusters`, with the built-in
//! pack, as `kubectl suture check` and the gateway judge it.

use std::hint::black_box;
use std::path::{Path, PathBuf};

use policies_cel::cluster::{ClusterModel, load_snapshots};
use policies_cel::{PolicySet, WireReview};

/// Requests per counted step: the count is divided by it (a warm-up request runs first, uncounted,
/// so that what a process does once, such as filling a cache, is left out).
const ROUNDS: u64 = 2;

/// One recorded request on its cluster.
pub struct Case {
    /// The name in the baseline (one word).
    pub name: &'static str,
    /// Under `testdata/reviews`.
    pub review: &'static str,
    /// Under `testdata/clusters`: every snapshot file of these, loaded into one model.
    pub clusters: &'static [&'static str],
}

/// Every scene of `testdata/clusters` but the broken ones: the largest recorded model (as
/// `testdata/suites/pack/crd-delete.test.yaml` loads it).
const ALL_SCENES: &[&str] = &[
    "database", "web", "operator", "mixed", "platform", "storage", "edge",
];

/// The fixed set. (A judged request's instructions follow what it touches, not the model's size:
/// the scale-down counted the same on a generated 1,000-pod snapshot as on the database scene.)
pub const CASES: &[Case] = &[
    Case {
        name: "statefulset-scale-down",
        review: "statefulset-update-scale-down.json",
        clusters: ALL_SCENES,
    },
    Case {
        name: "pod-delete",
        review: "pod-delete-pg-main-0.json",
        clusters: &["database"],
    },
    Case {
        name: "namespace-delete",
        review: "namespace-delete-operator.json",
        clusters: &["database"],
    },
    Case {
        name: "pvc-delete",
        review: "pvc-delete-operator.json",
        clusters: &["database"],
    },
    Case {
        name: "pod-eviction",
        review: "pod-eviction-create.json",
        clusters: &["database"],
    },
    Case {
        name: "crd-delete",
        review: "crd-delete-operator.json",
        clusters: ALL_SCENES,
    },
];

fn testdata(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../testdata")
        .join(path)
}

/// `text` without the whitespace between JSON tokens, as kube-apiserver sends a review (the files
/// are pretty-printed; the order of the fields is kept).
fn compact(text: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len());
    let (mut in_string, mut escaped) = (false, false);
    for &byte in text {
        if in_string {
            out.push(byte);
            match byte {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
        } else if !byte.is_ascii_whitespace() {
            in_string = byte == b'"';
            out.push(byte);
        }
    }
    out
}

/// The step callgrind collects in: `f`, called [`ROUNDS`] times. Never inlined, so that its name
/// stays in the binary for `--toggle-collect`.
#[inline(never)]
pub fn counted(f: &mut dyn FnMut()) {
    for _ in 0..ROUNDS {
        f();
    }
}

/// Loads every case and runs its counted steps, printing `step <case> <step> <rounds>` before each.
pub fn run_counted() -> Result<(), String> {
    let set: PolicySet = policies_cel::pack::builtin().map_err(|e| format!("the built-in pack: {e}"))?;
    for case in CASES {
        let body = std::fs::read(testdata(&format!("reviews/{}", case.review)))
            .map_err(|e| format!("{}: {e}", case.review))?;
        let body = compact(&body);
        let paths: Vec<PathBuf> = case
            .clusters
            .iter()
            .map(|c| testdata(&format!("clusters/{c}")))
            .collect();
        let paths: Vec<&Path> = paths.iter().map(PathBuf::as_path).collect();
        let model: ClusterModel =
            load_snapshots(&paths, &mut |_| {}).map_err(|e| format!("{}: {e}", case.name))?;
        let request = WireReview::read(&body)
            .ok_or_else(|| format!("{}: not a plain AdmissionReview", case.review))?
            .into_request();

        // The judged path: what the gateway's evaluation lane does with a body.
        let mut judge = || {
            if let Some(review) = WireReview::read(&body) {
                let request = review.into_request();
                black_box(policies_cel::evaluate(&set, &request, &model));
            }
        };
        judge();
        println!("step {} judge {ROUNDS}", case.name);
        counted(&mut judge);

        // The impact estimate alone, on the finished request.
        let mut estimate = || {
            black_box(policies_cel::impact::estimate(&request, &model));
        };
        estimate();
        println!("step {} estimate {ROUNDS}", case.name);
        counted(&mut estimate);
    }
    Ok(())
}

/// The compaction keeps every token and the text of strings.
pub fn check_compact() -> Result<(), String> {
    let text = b"{\n  \"a b\": [1, \"x \\\" y\", {\"c\" : null}],\n  \"d\\\\\": \" \"\n}\n";
    let compacted = compact(text);
    let expected: &[u8] = b"{\"a b\":[1,\"x \\\" y\",{\"c\":null}],\"d\\\\\":\" \"}";
    if compacted != expected {
        return Err(format!("compact gave {}", String::from_utf8_lossy(&compacted)));
    }
    for case in CASES {
        let path = testdata(&format!("reviews/{}", case.review));
        let text = std::fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        let parse = |t: &[u8]| serde_json::from_slice::<serde_json::Value>(t).map_err(|e| e.to_string());
        if parse(&text)? != parse(&compact(&text))? {
            return Err(format!("{}: compacted, it reads differently", case.review));
        }
    }
    Ok(())
}
