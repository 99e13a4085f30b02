//! The Kubernetes version policies compile for: a ValidatingAdmissionPolicy may call only what
//! kube-apiserver of that version declares, a SafetyPolicy (compiled by Suture alone) what the
//! newest does; the built-in pack loads at every version; the lint names the function and the
//! version that introduced it.

use policies_cel::KubernetesVersion;
use policies_cel::lint::{Code, Linter, NoCatalog, Severity};
use policies_cel::policy::{LoadError, Loader};

const VAP_WITH_INCLUDES: &str = "\
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: tiers}
spec:
  validations:
  - expression: \"['web', 'db'].includes(object.metadata.name)\"
";

const SAFETY_POLICY_WITH_INCLUDES: &str = "\
apiVersion: suture.dev/v1alpha1
kind: SafetyPolicy
metadata: {name: tiers}
spec:
  validations:
  - expression: \"['web', 'db'].includes(object.metadata.name)\"
";

fn load(text: &str, version: KubernetesVersion) -> Result<usize, LoadError> {
    Loader::new()
        .kubernetes_version(version)
        .add_str("p.yaml", text)
        .and_then(Loader::finish)
        .map(|set| set.len())
}

#[test]
fn a_validating_admission_policy_calls_only_what_its_version_declares() {
    let error = load(VAP_WITH_INCLUDES, KubernetesVersion::V1_36).unwrap_err();
    let LoadError::Compile { error: compile, .. } = &error else {
        panic!("expected a compile error, got {error}");
    };
    let requires = compile.requires.as_ref().expect("the version that introduced it");
    assert_eq!(
        (requires.function.as_str(), requires.version),
        ("includes", KubernetesVersion::V1_37)
    );
    assert!(
        error.to_string().contains(
            "undeclared reference to 'includes': Kubernetes 1.37 introduced it, the target is 1.36"
        ),
        "{error}"
    );
    assert_eq!(load(VAP_WITH_INCLUDES, KubernetesVersion::V1_37).ok(), Some(1));
    // The default is 1.36.
    assert!(Loader::new().add_str("p.yaml", VAP_WITH_INCLUDES).is_err());
}

#[test]
fn a_safety_policy_compiles_for_the_newest_version() {
    for version in KubernetesVersion::supported() {
        assert_eq!(
            load(SAFETY_POLICY_WITH_INCLUDES, version).ok(),
            Some(1),
            "{version}"
        );
    }
}

#[test]
fn the_builtin_pack_loads_at_every_version() {
    for version in KubernetesVersion::supported() {
        let set = policies_cel::pack::builtin_loader_at(version)
            .and_then(Loader::finish)
            .unwrap_or_else(|e| panic!("the pack at {version}: {e}"));
        assert_eq!(set.len(), policies_cel::pack::files().len(), "{version}");
    }
}

#[test]
fn policies_added_to_the_pack_compile_for_its_version() {
    let at = |version| {
        policies_cel::pack::builtin_loader_at(version).and_then(|l| l.add_str("p.yaml", VAP_WITH_INCLUDES))
    };
    assert!(at(KubernetesVersion::V1_36).is_err());
    assert!(at(KubernetesVersion::V1_37).is_ok());
}

fn lint(version: KubernetesVersion) -> Vec<(Code, Severity, usize, usize, String)> {
    let mut linter = Linter::new();
    linter.kubernetes_version(version);
    linter.add_str("p.yaml", VAP_WITH_INCLUDES);
    linter
        .run(&NoCatalog)
        .findings
        .into_iter()
        .map(|f| (f.code, f.severity, f.line, f.column, f.message))
        .collect()
}

#[test]
fn the_lint_names_the_function_and_the_version_that_introduced_it() {
    let findings = lint(KubernetesVersion::V1_36);
    assert_eq!(
        findings,
        [(
            Code::KubernetesVersion,
            Severity::Error,
            6,
            32,
            "`includes` needs Kubernetes 1.37: the policies are linted for 1.36".to_owned()
        )]
    );
    assert!(Code::KubernetesVersion.is_load_failure());
    assert_eq!(Code::KubernetesVersion.as_str(), "kubernetes-version");
    assert!(
        lint(KubernetesVersion::V1_37).is_empty(),
        "{:?}",
        lint(KubernetesVersion::V1_37)
    );
}
