//! The loader's verdict as findings: every error it collects (YAML syntax, invalid fields,
//! unknown kinds, duplicates, every expression that does not compile, bindings of missing
//! policies; CRDs beside the policies are not unknown kinds; a function of a later Kubernetes
//! version than the one linted for is its own finding) and every warning (unknown fields, older apiVersions, Suture extensions in a
//! ValidatingAdmissionPolicy), each placed at its line and column.

use crate::cel::KubernetesVersion;
use crate::policy::context::{Warning, WarningKind};
use crate::policy::{LoadError, Loader, PolicySet};

use crate::lint::finding::{Code, Severity};
use crate::lint::objects::FileDocuments;
use crate::lint::sink::{Says, Sink};
use crate::lint::source::{Place, last_key};

/// Loads `policies` and `params` (indexes into the sink's files and into `documents`, each
/// file's documents as read) as the commands would, and reports what the loader says; returns
/// what loaded.
pub(crate) fn load(
    sink: &mut Sink<'_>,
    documents: &[FileDocuments],
    policies: &[usize],
    params: &[usize],
    version: KubernetesVersion,
) -> PolicySet {
    let mut loader = Loader::new().kubernetes_version(version);
    for &file in policies {
        loader.add_documents_lenient(&sink.files[file].name, &documents[file]);
    }
    for &file in params {
        loader.add_params_documents_lenient(&sink.files[file].name, &documents[file]);
    }
    let (set, errors, warnings) = loader.finish_lenient();
    for error in errors.into_iter().flat_map(LoadError::into_vec) {
        report_error(sink, error, version);
    }
    for warning in warnings {
        report_warning(sink, warning);
    }
    set
}

fn file_index(sink: &Sink<'_>, name: &str) -> Option<usize> {
    sink.files.iter().position(|f| f.name == name)
}

fn report_error(sink: &mut Sink<'_>, error: LoadError, version: KubernetesVersion) {
    let Some(file) = error.source_ref().and_then(|at| file_index(sink, &at.file)) else {
        return;
    };
    let source = &sink.files[file];
    let (place, says) = match error {
        LoadError::Syntax { at, column, message } => (
            Place {
                line: at.line,
                column,
            },
            Says::new(Severity::Error, Code::YamlSyntax, message),
        ),
        LoadError::Invalid { at, field, message } => (
            source.field(at.line, last_key(&field)),
            Says::new(Severity::Error, Code::InvalidField, message).field(field),
        ),
        // A CRD beside the policies is read for its schema (`crd_inputs`), not an unknown kind.
        LoadError::UnknownKind {
            api_version, kind, ..
        } if crate::lint::crds::is_crd(&api_version, &kind) => return,
        LoadError::UnknownKind {
            at,
            api_version,
            kind,
        } => (
            source.field(at.line, Some("kind")),
            Says::new(
                Severity::Error,
                Code::UnknownKind,
                format!("unknown kind `{kind}` (apiVersion {api_version})"),
            )
            .help(
                "expected ValidatingAdmissionPolicy, ValidatingAdmissionPolicyBinding or SafetyPolicy; param objects are accepted when a loaded policy's paramKind names their kind, or through --params",
            ),
        ),
        LoadError::Compile {
            at, field, error, ..
        } => {
            let key = last_key(&field).unwrap_or("expression");
            let place = source.in_expression(at.line, key, &error.expression, error.span.offset());
            let says = match &error.requires {
                Some(requires) => Says::new(
                    Severity::Error,
                    Code::KubernetesVersion,
                    format!(
                        "`{}` needs Kubernetes {}: the policies are linted for {version}",
                        requires.function, requires.version
                    ),
                )
                .help(format!(
                    "Kubernetes {} introduced `{}`; a cluster older than that refuses the policy. If the cluster runs {} or later, say so with --kubernetes-version",
                    requires.version, requires.function, requires.version
                )),
                None => Says::new(Severity::Error, Code::CompileError, error.message.clone()),
            }
            .field(field);
            (place, says)
        }
        LoadError::ResultType { at, field, mismatch } => {
            let key = last_key(&field).unwrap_or("expression");
            let place = source.in_expression(at.line, key, &mismatch.expression, 0);
            let (code, help) = if key == "messageExpression" {
                (
                    Code::MessageType,
                    "Kubernetes refuses a policy whose messageExpression is not a string; build one, e.g. 'replicas: ' + string(object.spec.replicas)",
                )
            } else {
                (
                    Code::ResultType,
                    "Kubernetes refuses such a policy; object, oldObject and params are dyn: compare (`object.spec.paused == true`) or convert (`string(object.metadata.name)`)",
                )
            };
            let message = format!(
                "must evaluate to {}, but its type is {}",
                mismatch.expected, mismatch.found
            );
            (place, Says::new(Severity::Error, code, message).field(field).help(help))
        }
        LoadError::UnknownPolicy {
            at,
            binding,
            policy,
        } => {
            let line = (at.line..at.line + 64)
                .find(|&l| source.line(l).is_some_and(|t| t.contains("policyName")))
                .unwrap_or(at.line);
            let says = Says::new(
                Severity::Error,
                Code::UnreachableMatch,
                format!("binding `{binding}` names policy `{policy}`, which is not among the linted policies: it can never match"),
            )
            .field("spec.policyName")
            .policy(Some(&binding));
            (source.field(line, Some("policyName")), says)
        }
        LoadError::Duplicate {
            at,
            what,
            name,
            first,
        } => (
            source.field(at.line, Some("name")),
            Says::new(
                Severity::Error,
                Code::DuplicateName,
                format!("duplicate {what} name `{name}`, first defined at {}:{}", first.file, first.line),
            )
            .field("metadata.name")
            .policy(Some(&name)),
        ),
        LoadError::Io { .. } | LoadError::Many(_) => return,
    };
    sink.push(file, place, says);
}

fn report_warning(sink: &mut Sink<'_>, warning: Warning) {
    let Some(file) = file_index(sink, &warning.at.file) else {
        return;
    };
    let place = sink.files[file].field(warning.at.line, last_key(&warning.field));
    let says = match warning.kind {
        WarningKind::UnknownField => Says::new(Severity::Error, Code::UnknownField, warning.message).help(
            "Suture ignores it, and kubectl apply (strict field validation, the default) refuses the object: a typo, or a field of another version?",
        ),
        WarningKind::OlderVersion => Says::new(Severity::Warning, Code::DeprecatedApiVersion, warning.message),
        WarningKind::SutureExtension => Says::new(Severity::Warning, Code::SutureExtension, warning.message),
    };
    sink.push(file, place, says.field(warning.field));
}
