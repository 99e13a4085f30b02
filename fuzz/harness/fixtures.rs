//! What the fuzz harnesses judge against, built once per process: the built-in pack, a small
//! cluster model (the `database` scene of `testdata/clusters`) and a recorded request. Shared by
//! the AFL targets (`fuzz/targets/`) and the `fuzz_regressions` tests that include this file.

use std::sync::OnceLock;

use policies_cel::cluster::ClusterModel;
use policies_cel::cluster::snapshot::SnapshotLoader;
use policies_cel::{PolicySet, Request};

/// The `database` scene: a StatefulSet with its pods, claims, volumes, Services and budget.
pub const DATABASE: &str = include_str!("../../testdata/clusters/database/snapshot.yaml");

/// A StatefulSet scale-down (an UPDATE with both objects) in the `database` scene.
pub const SCALE_DOWN: &str = include_str!("../../testdata/reviews/statefulset-update-scale-down.json");

/// A Namespace DELETE by an operator (a cascade) in the `database` scene.
pub const NAMESPACE_DELETE: &str = include_str!("../../testdata/reviews/namespace-delete-operator.json");

/// The built-in pack, compiled once.
pub fn pack() -> &'static PolicySet {
    static PACK: OnceLock<PolicySet> = OnceLock::new();
    PACK.get_or_init(|| match policies_cel::pack::builtin() {
        Ok(set) => set,
        Err(error) => panic!("the built-in pack does not load: {error}"),
    })
}

/// The `database` scene as a model, loaded once.
pub fn model() -> &'static ClusterModel {
    static MODEL: OnceLock<ClusterModel> = OnceLock::new();
    MODEL.get_or_init(|| fresh_model(DATABASE))
}

/// A new model of `snapshot` (a `kind: List` in YAML), for a harness that changes its model.
pub fn fresh_model(snapshot: &str) -> ClusterModel {
    let mut loader = SnapshotLoader::new();
    loader.add_str("fixture.yaml", snapshot);
    match loader.finish() {
        Ok(model) => model,
        Err(error) => panic!("the fixture snapshot does not load: {error}"),
    }
}

/// The recorded requests the loaders' results are judged on.
pub fn requests() -> &'static [Request] {
    static REQUESTS: OnceLock<Vec<Request>> = OnceLock::new();
    REQUESTS.get_or_init(|| {
        [SCALE_DOWN, NAMESPACE_DELETE]
            .into_iter()
            .map(|text| match Request::from_wire(text.as_bytes()) {
                Some(request) => request,
                None => panic!("a fixture review does not read"),
            })
            .collect()
    })
}

/// Builds every fixture before the first input, so no input is charged for it: the recorded
/// requests are judged once, which builds the CEL values they keep (AFL then sees the same path
/// for the same input, every time).
pub fn warm() {
    for request in requests() {
        let _ = policies_cel::evaluate(pack(), request, model());
        let _ = policies_cel::impact::estimate(request, model());
    }
}
