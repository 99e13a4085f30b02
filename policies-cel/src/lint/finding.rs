//! A lint finding: where (file, line, column, field), how bad, a stable code, and what to do.

use std::fmt;

use serde::Serialize;

/// How bad a finding is. Errors fail `kubectl suture lint`; warnings fail it only with `--strict`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Error,
    Warning,
}

impl Severity {
    /// `error` or `warning`.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
        }
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a finding is about. The kebab-case names are stable: scripts and `--strict` users may
/// rely on them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Code {
    /// The YAML or JSON of a document does not parse.
    YamlSyntax,
    /// A field has the wrong type or value, or a required one is missing.
    InvalidField,
    /// A document of a kind that is neither a policy, a binding nor a param object.
    UnknownKind,
    /// Two policies or two bindings with one name.
    DuplicateName,
    /// A CEL expression does not compile.
    CompileError,
    /// A CEL expression calls a function that a later Kubernetes version than the one linted
    /// for introduced.
    KubernetesVersion,
    /// A field the Kubernetes type does not have.
    UnknownField,
    /// An older apiVersion, read as the current one.
    DeprecatedApiVersion,
    /// A ValidatingAdmissionPolicy reading Suture's `impact` or `cluster`.
    SutureExtension,
    /// A binding, rule or condition that can never select a request.
    UnreachableMatch,
    /// A ValidatingAdmissionPolicy that no binding names, in a set that has bindings.
    UnboundPolicy,
    /// An expression that can never be true.
    NeverTrue,
    /// A validation that is always true (it checks nothing) or a matchCondition that filters nothing.
    AlwaysTrue,
    /// An expression whose estimated evaluation cost is high.
    Cost,
    /// A messageExpression whose type is not `string`.
    MessageType,
    /// A validation or matchCondition whose type is not `bool`, or an auditAnnotation
    /// valueExpression that is neither `string` nor `null`.
    ResultType,
    /// A field below `object`/`oldObject` that the schema of a kind the policy matches does not
    /// declare (kube-apiserver's type-check warning).
    SchemaField,
}

impl Code {
    /// Every code, in a fixed order (for documentation and tests).
    pub const ALL: [Code; 17] = [
        Code::YamlSyntax,
        Code::InvalidField,
        Code::UnknownKind,
        Code::DuplicateName,
        Code::CompileError,
        Code::KubernetesVersion,
        Code::UnknownField,
        Code::DeprecatedApiVersion,
        Code::SutureExtension,
        Code::UnreachableMatch,
        Code::UnboundPolicy,
        Code::NeverTrue,
        Code::AlwaysTrue,
        Code::Cost,
        Code::MessageType,
        Code::ResultType,
        Code::SchemaField,
    ];

    /// The stable kebab-case name (`compile-error`).
    pub fn as_str(self) -> &'static str {
        match self {
            Code::YamlSyntax => "yaml-syntax",
            Code::InvalidField => "invalid-field",
            Code::UnknownKind => "unknown-kind",
            Code::DuplicateName => "duplicate-name",
            Code::CompileError => "compile-error",
            Code::KubernetesVersion => "kubernetes-version",
            Code::UnknownField => "unknown-field",
            Code::DeprecatedApiVersion => "deprecated-api-version",
            Code::SutureExtension => "suture-extension",
            Code::UnreachableMatch => "unreachable-match",
            Code::UnboundPolicy => "unbound-policy",
            Code::NeverTrue => "never-true",
            Code::AlwaysTrue => "always-true",
            Code::Cost => "cost",
            Code::MessageType => "message-type",
            Code::ResultType => "result-type",
            Code::SchemaField => "schema-field",
        }
    }

    /// True for the problems that keep the policies from loading at all (what `check` and `test`
    /// refuse with exit status 3).
    pub fn is_load_failure(self) -> bool {
        matches!(
            self,
            Code::YamlSyntax
                | Code::InvalidField
                | Code::UnknownKind
                | Code::DuplicateName
                | Code::CompileError
                | Code::KubernetesVersion
                | Code::MessageType
                | Code::ResultType
        )
    }
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One problem found in the policies.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    pub severity: Severity,
    pub code: Code,
    /// The file as it was named (or `<stdin>`, or `pack/<name>.yaml` for the built-in pack).
    pub file: String,
    /// 1-based line in the file.
    pub line: usize,
    /// 1-based column (in characters) in the file.
    pub column: usize,
    /// The field the finding is about (`spec.validations[0].expression`), when there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
    /// The policy or binding, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub policy: Option<String>,
    /// What is wrong, on one line.
    pub message: String,
    /// Why, or what to do (several lines allowed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub help: Option<String>,
    /// The text of line `line`, for a caret under `column` (not serialized).
    #[serde(skip)]
    pub source_line: Option<String>,
}

impl Finding {
    /// True for an error.
    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }
}

impl fmt::Display for Finding {
    /// `file:line:column: severity[code]: message`, as compilers print.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}:{}: {}[{}]: {}",
            self.file, self.line, self.column, self.severity, self.code, self.message
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_kebab_case_and_serialize_as_shown() {
        for code in Code::ALL {
            let json = serde_json::to_value(code).unwrap_or_default();
            assert_eq!(json, code.as_str(), "{code:?}");
        }
        assert_eq!(
            serde_json::to_value(Severity::Warning).unwrap_or_default(),
            "warning"
        );
    }
}
