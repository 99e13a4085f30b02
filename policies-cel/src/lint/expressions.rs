//! The expressions of each policy, judged one by one: conditions and validations decided before
//! any request is seen, estimated cost, and fields the schema of a matched kind (built in, or a
//! custom resource of a known CRD) does not declare ([`crate::lint::fields`]). (Types, messageExpressions' included, are the type
//! checker's: the loader reports them.)

use crate::policy::path::FieldPath;

use crate::cel::parsed::Parsed;
use crate::lint::cost::costly;
use crate::lint::crds::Crds;
use crate::lint::fields::undefined;
use crate::lint::finding::{Code, Severity};
use crate::lint::fold::truth;
use crate::lint::kinds::{KnownKind, kinds_to_check};
use crate::lint::objects::{Object, ObjectKind};
use crate::lint::schema::At;
use crate::lint::sink::{Says, Sink};

/// What an expression is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    MatchCondition,
    Variable,
    Validation,
    MessageExpression,
    AuditAnnotation,
}

/// One expression of a policy: where it is and its text.
#[derive(Debug)]
struct Site {
    role: Role,
    /// The path of the expression field inside the object.
    rel: FieldPath,
    /// The name of the matchCondition / variable, when it has one.
    name: Option<String>,
    /// A validation with a message or messageExpression.
    explained: bool,
    source: String,
}

/// Judges every expression of the policies among `objects`; returns how many were looked at.
/// `crds` are the custom resources whose schema is known.
pub(crate) fn check(sink: &mut Sink<'_>, objects: &[Object], crds: &Crds) -> usize {
    let mut count = 0;
    for object in objects {
        if !matches!(
            object.kind(),
            ObjectKind::ValidatingAdmissionPolicy | ObjectKind::SafetyPolicy
        ) {
            continue;
        }
        let kinds = matched_kinds(object, crds);
        for site in sites(object) {
            count += 1;
            if let Some(parsed) = Parsed::new(&site.source) {
                judge(sink, object, &site, &parsed, &kinds);
            }
        }
    }
    count
}

/// The known kinds the policy's `matchConstraints` names (none when it cannot be read).
fn matched_kinds(object: &Object, crds: &Crds) -> Vec<KnownKind> {
    let at = FieldPath::root().key("spec").key("matchConstraints");
    object
        .get(&at)
        .and_then(|constraints| serde_json::from_value(constraints.clone()).ok())
        .map(|constraints| kinds_to_check(&constraints, crds))
        .unwrap_or_default()
}

fn sites(object: &Object) -> Vec<Site> {
    let spec = FieldPath::root().key("spec");
    let list = |field: &str| {
        object
            .get(&spec.key(field))
            .and_then(|v| v.as_array())
            .cloned()
            .unwrap_or_default()
    };
    let mut out = Vec::new();
    let mut add = |role, rel: FieldPath, item: &serde_json::Value, key: &str| {
        if let Some(source) = item.get(key).and_then(|v| v.as_str())
            && !source.trim().is_empty()
        {
            out.push(Site {
                role,
                rel: rel.key(key),
                name: item.get("name").and_then(|v| v.as_str()).map(str::to_owned),
                explained: ["message", "messageExpression"].iter().any(|k| {
                    item.get(k)
                        .and_then(|v| v.as_str())
                        .is_some_and(|m| !m.trim().is_empty())
                }),
                source: source.to_owned(),
            });
        }
    };
    for (i, item) in list("matchConditions").iter().enumerate() {
        add(
            Role::MatchCondition,
            spec.key("matchConditions").index(i),
            item,
            "expression",
        );
    }
    for (i, item) in list("variables").iter().enumerate() {
        add(Role::Variable, spec.key("variables").index(i), item, "expression");
    }
    for (i, item) in list("validations").iter().enumerate() {
        let at = spec.key("validations").index(i);
        add(Role::Validation, at.clone(), item, "expression");
        add(Role::MessageExpression, at, item, "messageExpression");
    }
    for (i, item) in list("auditAnnotations").iter().enumerate() {
        add(
            Role::AuditAnnotation,
            spec.key("auditAnnotations").index(i),
            item,
            "valueExpression",
        );
    }
    out
}

fn judge(sink: &mut Sink<'_>, object: &Object, site: &Site, parsed: &Parsed, kinds: &[KnownKind]) {
    let line = object.line_of(&site.rel);
    let key = match site.rel.0.last() {
        Some(crate::policy::path::Seg::Key(key)) => key.clone(),
        _ => "expression".to_owned(),
    };
    let field = object.path(&site.rel);
    let policy = object.name();
    let file = object.file;
    let place_of =
        |sink: &Sink<'_>, node| sink.files[file].in_expression(line, &key, &site.source, parsed.offset(node));
    let named = |what: &str| match &site.name {
        Some(name) => format!("{what} `{name}`"),
        None => what.to_owned(),
    };

    match (site.role, truth(&parsed.root)) {
        (Role::MatchCondition, Some(decided)) if !decided.value => {
            let says = Says::new(
                Severity::Error,
                Code::UnreachableMatch,
                format!(
                    "{} is never true: the policy never judges a request",
                    named("matchCondition")
                ),
            )
            .help(format!("{}; remove the policy or fix the condition", decided.why));
            let place = place_of(sink, decided.at);
            sink.push(file, place, says.field(field.clone()).policy(policy));
        }
        (Role::MatchCondition, Some(decided)) => {
            let says = Says::new(
                Severity::Warning,
                Code::AlwaysTrue,
                format!("{} is always true: it filters nothing", named("matchCondition")),
            )
            .help(decided.why);
            let place = place_of(sink, decided.at);
            sink.push(file, place, says.field(field.clone()).policy(policy));
        }
        // A bare `false` with a message refuses every matching request on purpose.
        (Role::Validation, Some(_)) if site.source.trim() == "false" && site.explained => {}
        (Role::Validation, Some(decided)) if !decided.value => {
            let severity = if site.source.trim() == "false" {
                Severity::Warning
            } else {
                Severity::Error
            };
            let says = Says::new(
                severity,
                Code::NeverTrue,
                "validation can never be true: every request the policy judges fails it",
            )
            .help(format!(
                "{}; to refuse every matching request on purpose, write `false` with a message",
                decided.why
            ));
            let place = place_of(sink, decided.at);
            sink.push(file, place, says.field(field.clone()).policy(policy));
        }
        (Role::Validation, Some(decided)) => {
            let says = Says::new(
                Severity::Warning,
                Code::AlwaysTrue,
                "validation is always true: it checks nothing",
            )
            .help(decided.why);
            let place = place_of(sink, decided.at);
            sink.push(file, place, says.field(field.clone()).policy(policy));
        }
        _ => {}
    }

    for found in costly(&parsed.root) {
        let says = Says::new(Severity::Warning, Code::Cost, found.message).help(found.help);
        let place = place_of(sink, found.at);
        sink.push(file, place, says.field(field.clone()).policy(policy));
    }

    // One finding per selection, naming every matched kind that lacks the field.
    let mut missing: Vec<(crate::lint::fields::Undefined, Vec<String>)> = Vec::new();
    for kind in kinds {
        for found in undefined(&parsed.root, At::root(kind.schema())) {
            match missing.iter_mut().find(|(seen, _)| *seen == found) {
                Some((_, names)) => names.push(kind.describe()),
                None => missing.push((found, vec![kind.describe()])),
            }
        }
    }
    for (found, names) in missing {
        let says = Says::new(
            Severity::Warning,
            Code::SchemaField,
            format!("undefined field '{}' ({})", found.field, names.join(", ")),
        )
        .help(
            "kube-apiserver checks expressions against the schema of each kind the policy matches and reports this as a warning (status.typeChecking.expressionWarnings); the field is never set on such an object: a typo?",
        );
        let offset = field_offset(&site.source, parsed.offset_of(found.id), &found.field);
        let place = sink.files[file].in_expression(line, &key, &site.source, offset);
        sink.push(file, place, says.field(field.clone()).policy(policy));
    }
}

/// Where `field` is written in `source`, at or just after the selection's offset (its `.` or
/// `.?`); the selection's offset when it is not found there.
fn field_offset(source: &str, at: usize, field: &str) -> usize {
    source
        .get(at..)
        .and_then(|rest| {
            let skipped = rest.len() - rest.trim_start_matches(['.', '?', ' ', '\n', '\t']).len();
            rest[skipped..].starts_with(field).then_some(at + skipped)
        })
        .unwrap_or(at)
}
