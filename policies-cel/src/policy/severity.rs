//! The severity a policy declares for the reports built from its failures (PolicyReport
//! results' `severity`): the annotation `suture.dev/severity` on the policy object, one of the
//! wg-policy values.

use std::collections::BTreeMap;

use crate::policy::context::{Ctx, Report};
use crate::policy::path::FieldPath;

/// The annotation a policy declares its severity with.
pub const SEVERITY_ANNOTATION: &str = "suture.dev/severity";

/// The values a PolicyReport result's `severity` takes (wgpolicyk8s.io/v1alpha2).
pub const SEVERITIES: [&str; 5] = ["critical", "high", "medium", "low", "info"];

/// The declared severity, if any; a value outside [`SEVERITIES`] is an error at the annotation.
pub(crate) fn declared(
    ctx: &Ctx<'_>,
    annotations: Option<&BTreeMap<String, String>>,
    report: &mut Report,
) -> Option<String> {
    let value = annotations?.get(SEVERITY_ANNOTATION)?;
    let severity = value.trim().to_ascii_lowercase();
    if SEVERITIES.contains(&severity.as_str()) {
        return Some(severity);
    }
    let at = FieldPath::root()
        .key("metadata")
        .key("annotations")
        .key(SEVERITY_ANNOTATION);
    report.errors.push(ctx.invalid(
        &at,
        format!(
            "Unsupported value: {value:?}: supported values: {}",
            SEVERITIES.join(", ")
        ),
    ));
    None
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use crate::policy::Loader;

    fn policy(annotation: &str) -> String {
        format!(
            "apiVersion: suture.dev/v1alpha1\nkind: SafetyPolicy\nmetadata:\n  name: p\n  annotations: {{suture.dev/severity: {annotation}}}\nspec:\n  validations: [{{expression: 'true'}}]\n"
        )
    }

    #[test]
    fn a_declared_severity_is_read_and_an_unknown_one_is_an_error_at_the_annotation() {
        let set = Loader::new()
            .add_str("p.yaml", &policy("High"))
            .unwrap()
            .finish()
            .unwrap();
        assert_eq!(set.policies[0].severity.as_deref(), Some("high"));
        let error = Loader::new()
            .add_str("p.yaml", &policy("urgent"))
            .and_then(Loader::finish)
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("metadata.annotations")
                && error.contains("\"urgent\"")
                && error.contains("critical, high"),
            "{error}"
        );
    }
}
