//! Fuzz harness of the policy loader, the reader of the policy files users write: the input is
//! one file (YAML, or JSON when it starts with `{`) read as policies (ValidatingAdmissionPolicy,
//! Binding, SafetyPolicy, `kind: List`, several documents) by `Loader::add_str`, and as params of
//! a policy that takes ConfigMap params by `Loader::add_params_str`. A set that loads is judged on
//! recorded requests against a small model. Properties: nothing panics, and every error has a
//! message. The lint reads the same files: its harness is `lint.rs`.

use std::sync::OnceLock;

use policies_cel::evaluate;
use policies_cel::policy::Loader;

use super::fixtures;

/// A policy with `paramKind: ConfigMap`, bound to a param object by name.
const TAKES_PARAMS: &str = include_str!("../../testdata/suites/replicas-limit/policies.yaml");

/// Runs one input; panics when a reader panics.
pub fn run(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let name = file_name(&text);
    judge(Loader::new().add_str(name, &text));
    judge(takes_params().and_then(|loader| loader.add_params_str(name, &text)));
}

/// A loader holding [`TAKES_PARAMS`]: compiled once, copied for each input.
fn takes_params() -> Result<Loader, policies_cel::LoadError> {
    static LOADED: OnceLock<Result<Loader, policies_cel::LoadError>> = OnceLock::new();
    LOADED
        .get_or_init(|| Loader::new().add_str("policies.yaml", TAKES_PARAMS))
        .clone()
}

/// The name an input is read under: JSON when it looks like JSON, YAML otherwise.
pub fn file_name(text: &str) -> &'static str {
    if text.trim_start().starts_with('{') {
        "fuzz.json"
    } else {
        "fuzz.yaml"
    }
}

/// Finishes a load and judges the recorded requests with what loaded.
fn judge(loaded: Result<Loader, policies_cel::LoadError>) {
    match loaded.and_then(Loader::finish_with_warnings) {
        Ok((set, _warnings)) => {
            for request in fixtures::requests() {
                let decision = evaluate(&set, request, fixtures::model());
                assert!(
                    decision.allowed == decision.denials.is_empty(),
                    "denied without a denial, or allowed with one"
                );
            }
        }
        Err(error) => assert!(!error.to_string().is_empty(), "a load error without a message"),
    }
}
