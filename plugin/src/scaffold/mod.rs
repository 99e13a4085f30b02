//! `kubectl suture scaffold`: a new policy and its test suite, ready to edit — a SafetyPolicy
//! (the default) or a ValidatingAdmissionPolicy with its binding — that pass `kubectl suture
//! test` as written.

/// What to scaffold.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum PolicyKind {
    /// A Suture SafetyPolicy (judges chosen subjects; may read `impact`)
    #[value(name = "safetypolicy", alias = "SafetyPolicy")]
    SafetyPolicy,
    /// A ValidatingAdmissionPolicy with its binding
    #[value(name = "vap", alias = "ValidatingAdmissionPolicy")]
    Vap,
}

/// The two files (policy, suite) for `name`, with `dir` named in their comments.
pub fn render(kind: PolicyKind, name: &str, dir: &str) -> [(String, String); 2] {
    let (policy, suite) = match kind {
        PolicyKind::SafetyPolicy => (
            include_str!("safety-policy.yaml"),
            include_str!("safety-policy.test.yaml"),
        ),
        PolicyKind::Vap => (include_str!("vap.yaml"), include_str!("vap.test.yaml")),
    };
    let fill = |text: &str| text.replace("__NAME__", name).replace("__DIR__", dir);
    [
        (format!("{name}.yaml"), fill(policy)),
        (format!("{name}.test.yaml"), fill(suite)),
    ]
}

/// A policy name as Kubernetes accepts it (a DNS subdomain: lower-case alphanumerics, `-`, `.`).
pub fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 253
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '.')
        && name.starts_with(|c: char| c.is_ascii_alphanumeric())
        && name.ends_with(|c: char| c.is_ascii_alphanumeric())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_kubernetes() {
        assert!(valid_name("protect-volumes"));
        assert!(!valid_name("Protect"));
        assert!(!valid_name("-x"));
        assert!(!valid_name(""));
    }

    #[test]
    fn every_placeholder_is_filled() {
        for kind in [PolicyKind::SafetyPolicy, PolicyKind::Vap] {
            for (_, text) in render(kind, "p", "policies") {
                assert!(!text.contains("__"), "{text}");
            }
        }
    }
}
