//! The repository's own fixtures: paths under `testdata/`, the database scene, its reviews.

use std::path::{Path, PathBuf};

use policies_cel::Request;
use policies_cel::cluster::{ClusterModel, load_snapshots};

/// `path` under the repository's `testdata/`.
pub fn testdata(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../testdata")
        .join(path)
}

/// The database scene (`testdata/clusters/database`) as a model.
pub fn database() -> ClusterModel {
    let snapshot = testdata("clusters/database/snapshot.yaml");
    load_snapshots(&[snapshot.as_path()], &mut |_| {}).unwrap()
}

/// The review `testdata/reviews/<name>` as a request.
pub fn review(name: &str) -> Request {
    let text = std::fs::read_to_string(testdata(&format!("reviews/{name}"))).unwrap();
    Request::from_review(serde_json::from_str(&text).unwrap()).unwrap()
}
