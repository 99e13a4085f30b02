//! `schema-field` for custom resources: policies matching a CRD's group/version/plural, the CRD
//! found among the linted files or given apart ([`Linter::add_crds_str`]).

use super::*;

const CRD: &str = "apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: backups.example.com
spec:
  group: example.com
  names:
    kind: Backup
    plural: backups
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              schedule:
                type: string
              retention:
                type: object
                properties:
                  days:
                    type: integer
              targets:
                type: array
                items:
                  type: object
                  properties:
                    name:
                      type: string
              options:
                type: object
                x-kubernetes-preserve-unknown-fields: true
              port:
                x-kubernetes-int-or-string: true
";

fn policy(resource: &str, expression: &str) -> String {
    format!(
        "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicy\nmetadata:\n  name: p\nspec:\n  matchConstraints:\n    resourceRules:\n    - apiGroups: [\"example.com\"]\n      apiVersions: [\"v1\"]\n      operations: [\"CREATE\"]\n      resources: [\"{resource}\"]\n  validations:\n  - expression: \"{expression}\"\n"
    )
}

/// (code, line, column, message) of every finding, the policy linted beside the CRD.
fn beside(expression: &str) -> Vec<(Code, usize, usize, String)> {
    let mut linter = Linter::new();
    linter.add_str("p.yaml", &format!("{CRD}---\n{}", policy("backups", expression)));
    findings(&linter)
}

fn findings(linter: &Linter) -> Vec<(Code, usize, usize, String)> {
    linter
        .run(&NoCatalog)
        .findings
        .into_iter()
        .map(|f| (f.code, f.line, f.column, f.message))
        .collect()
}

/// The policy's validation line when linted after the CRD.
const LINE: usize = 54;

#[test]
fn a_typo_in_a_custom_resource_is_warned_naming_its_kind() {
    assert_eq!(
        beside("object.spec.retention.dyas > 0"),
        [(
            Code::SchemaField,
            LINE,
            40,
            "undefined field 'dyas' (Backup example.com/v1)".to_owned()
        )]
    );
    let found = beside("object.spec.targets.all(t, t.nmae != '') && object.metadata.lables.size() > 0");
    let messages: Vec<&str> = found.iter().map(|f| f.3.as_str()).collect();
    assert_eq!(
        messages,
        [
            "undefined field 'nmae' (Backup example.com/v1)",
            "undefined field 'lables' (Backup example.com/v1)"
        ]
    );
}

#[test]
fn declared_paths_metadata_and_open_subtrees_are_not_warned() {
    for expression in [
        "object.spec.schedule != '' && object.spec.retention.days > 0",
        "object.spec.targets.all(t, t.name != '') && has(oldObject.spec.schedule)",
        "object.metadata.labels['app'] == 'x' && object.metadata.name != '' && object.apiVersion != '' && object.kind == 'Backup'",
        "object.spec.options.anything.below == 1 && has(object.spec.options.x)",
        "object.spec.port.whatever == 1",
    ] {
        assert_eq!(beside(expression), [], "{expression}");
    }
}

#[test]
fn a_crd_given_apart_types_its_custom_resources() {
    let mut linter = Linter::new();
    linter.add_str("p.yaml", &policy("backups", "object.spec.retention.dyas > 0"));
    assert_eq!(findings(&linter), [], "no CRD: object is dyn");
    linter.add_crds_str("crds.yaml", CRD).unwrap();
    let found = findings(&linter);
    assert_eq!(found.len(), 1);
    assert_eq!((found[0].0, found[0].1, found[0].2), (Code::SchemaField, 13, 40));
    assert_eq!(found[0].3, "undefined field 'dyas' (Backup example.com/v1)");
}

#[test]
fn a_plural_no_crd_describes_is_not_typed() {
    let mut linter = Linter::new();
    linter.add_str(
        "p.yaml",
        &format!("{CRD}---\n{}", policy("restores", "object.spec.dyas > 0")),
    );
    assert_eq!(findings(&linter), []);
    let other_version = format!("{CRD}---\n{}", policy("backups", "object.spec.dyas > 0"))
        .replace("apiVersions: [\"v1\"]", "apiVersions: [\"v2\"]");
    let mut linter = Linter::new();
    linter.add_str("p.yaml", &other_version);
    assert_eq!(findings(&linter), []);
}

#[test]
fn a_crd_beside_the_policies_is_no_unknown_kind() {
    let mut linter = Linter::new();
    linter.add_str("crds.yaml", CRD);
    let report = linter.run(&NoCatalog);
    assert_eq!(report.findings, []);
    assert_eq!(report.policies, 0);
}

#[test]
fn a_broken_crd_beside_the_policies_is_an_invalid_field() {
    let broken = CRD.replace("    plural: backups\n", "");
    let mut linter = Linter::new();
    linter.add_str(
        "p.yaml",
        &format!("{broken}---\n{}", policy("backups", "object.spec.dyas > 0")),
    );
    let report = linter.run(&NoCatalog);
    let found: Vec<_> = report
        .findings
        .iter()
        .map(|f| (f.code, f.line, f.column, f.policy.clone()))
        .collect();
    assert_eq!(found, [(Code::InvalidField, 7, 3, None)]);
    assert_eq!(report.findings[0].message, "spec.names.plural is required");
}

#[test]
fn a_crd_path_without_crds_or_with_a_broken_one_is_an_error() {
    let mut linter = Linter::new();
    let error = linter
        .add_crds_str("crds.yaml", "apiVersion: v1\nkind: ConfigMap\n")
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "`crds.yaml` holds no CustomResourceDefinition (apiextensions.k8s.io/v1)"
    );
    let broken = CRD.replace(
        "        type: object\n        properties:\n",
        "        - type: object\n        properties:\n",
    );
    let error = linter.add_crds_str("crds.yaml", &broken).unwrap_err();
    assert!(error.to_string().starts_with("crds.yaml:"), "{error}");
}
