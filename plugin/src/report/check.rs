//! The verdict of `check`: a human report (ALLOWED/DENIED, denials, warnings, audit
//! annotations, per-policy outcomes with `-v`) and the JSON/YAML document of the command contract.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use policies_cel::eval::{Outcome, PolicyResult};
use policies_cel::{Decision, Denial, Request};
use serde::Serialize;

use crate::style::Style;

/// The `-o json` / `-o yaml` document.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CheckDocument<'a> {
    pub allowed: bool,
    pub denials: &'a [Denial],
    pub warnings: &'a [String],
    pub audit_annotations: &'a BTreeMap<String, String>,
    /// The impact estimate (with its `summary`), when a cluster was given or a policy read it.
    pub impact: Option<&'a policies_cel::impact::Impact>,
    /// What kube-apiserver would answer when denied.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<Status>,
    /// Every policy looked at, with its outcome.
    pub policies: &'a [PolicyResult],
}

/// The HTTP status and message of a denial.
#[derive(Debug, Serialize)]
pub struct Status {
    pub code: u16,
    pub message: String,
}

/// The document for `decision`.
pub fn document(decision: &Decision) -> CheckDocument<'_> {
    CheckDocument {
        allowed: decision.allowed,
        denials: &decision.denials,
        warnings: &decision.warnings,
        audit_annotations: &decision.audit_annotations,
        impact: decision.impact.as_ref(),
        status: decision.status_message().map(|message| Status {
            code: decision.status_code(),
            message,
        }),
        policies: &decision.policies,
    }
}

/// `-o json`: pretty JSON and a newline.
pub fn json(decision: &Decision) -> Result<String, serde_json::Error> {
    serde_json::to_string_pretty(&document(decision)).map(|text| text + "\n")
}

/// `-o yaml`.
pub fn yaml(decision: &Decision) -> Result<String, serde_yaml_ng::Error> {
    serde_yaml_ng::to_string(&document(decision))
}

/// One line naming the request: `DELETE namespaces databases by system:serviceaccount:...`.
pub fn describe_request(request: &Request) -> String {
    let admission = &request.admission;
    let mut resource = admission.resource.resource.clone();
    if !admission.resource.group.is_empty() {
        resource = format!("{resource}.{}", admission.resource.group);
    }
    if let Some(sub) = admission.sub_resource.as_deref().filter(|s| !s.is_empty()) {
        resource = format!("{resource}/{sub}");
    }
    // A deletecollection's objects come unnamed: the name is in oldObject.
    let name = request.target_name();
    let target = match admission
        .namespace
        .as_deref()
        .filter(|ns| !ns.is_empty() && *ns != name)
    {
        Some(ns) => format!("{ns}/{name}"),
        None => name.into_owned(),
    };
    let user = admission.user_info.username.as_deref().unwrap_or("<anonymous>");
    let mut line = format!("{} {resource} {target} by {user}", request.operation());
    if admission.dry_run {
        line.push_str(" (dry run)");
    }
    line
}

/// The human report.
pub fn text(decision: &Decision, request: &Request, verbose: bool, style: Style) -> String {
    let mut out = String::new();
    let verdict = if decision.allowed {
        style.good("ALLOWED")
    } else {
        style.bad("DENIED")
    };
    let _ = writeln!(out, "{verdict}  {}", describe_request(request));
    if !decision.denials.is_empty() {
        let _ = writeln!(
            out,
            "\n{}",
            style.bold(&format!("Denials ({}):", decision.denials.len()))
        );
        for denial in &decision.denials {
            let _ = writeln!(out, "  {} {}", style.bad("✗"), denial_origin(denial));
            let _ = writeln!(out, "      {}", denial.message);
        }
    }
    if !decision.warnings.is_empty() {
        let _ = writeln!(
            out,
            "\n{}",
            style.bold(&format!("Warnings ({}):", decision.warnings.len()))
        );
        for warning in &decision.warnings {
            let _ = writeln!(out, "  {} {warning}", style.warn("!"));
        }
    }
    if !decision.audit_annotations.is_empty() {
        let count = decision.audit_annotations.len();
        let _ = writeln!(out, "\n{}", style.bold(&format!("Audit annotations ({count}):")));
        for (key, value) in &decision.audit_annotations {
            let _ = writeln!(out, "  {key}: {value}");
        }
    }
    if verbose {
        let _ = writeln!(
            out,
            "\n{}",
            style.bold(&format!("Policies ({}):", decision.policies.len()))
        );
        if decision.policies.is_empty() {
            let _ = writeln!(out, "  (no policies loaded)");
        }
        for result in &decision.policies {
            let _ = writeln!(out, "  {}", policy_line(result, style));
        }
    }
    if let Some(impact) = &decision.impact {
        let _ = writeln!(out, "\n{}", style.bold("Impact:"));
        for line in crate::report::impact::tree(impact, style).lines() {
            let _ = writeln!(out, "  {line}");
        }
    }
    if let Some(message) = decision.status_message() {
        let status = format!(
            "kube-apiserver would answer {}: {message}",
            decision.status_code()
        );
        let _ = writeln!(out, "\n{}", style.dim(&status));
    }
    out
}

fn denial_origin(denial: &Denial) -> String {
    let mut origin = format!("policy {}", denial.policy);
    if let Some(binding) = &denial.binding {
        let _ = write!(origin, ", binding {binding}");
    }
    if let Some(index) = denial.validation {
        let _ = write!(origin, ", validation #{index}");
    }
    let _ = write!(origin, " ({})", denial.reason);
    origin
}

fn policy_line(result: &PolicyResult, style: Style) -> String {
    let mut name = result.policy.clone();
    if let Some(binding) = &result.binding {
        let _ = write!(name, " (binding {binding})");
    }
    if !result.actions.is_empty() {
        let actions: Vec<String> = result.actions.iter().map(|a| format!("{a:?}")).collect();
        let _ = write!(name, " [{}]", actions.join(","));
    }
    match &result.outcome {
        Outcome::NotMatched => format!("{} {name}", style.dim("- not matched ")),
        Outcome::Skipped { condition } => {
            format!(
                "{} {name}: matchCondition {condition:?} is false",
                style.dim("- skipped     ")
            )
        }
        Outcome::Passed => format!("{} {name}", style.good("✓ passed      ")),
        Outcome::Failed { validations } => {
            let list: Vec<String> = validations.iter().map(|v| format!("#{v}")).collect();
            format!(
                "{} {name}: validation {}",
                style.bad("✗ failed      "),
                list.join(", ")
            )
        }
        Outcome::Error { message, ignored } => {
            let how = if *ignored {
                " (ignored: failurePolicy Ignore)"
            } else {
                ""
            };
            format!("{} {name}: {message}{how}", style.warn("! error       "))
        }
    }
}
