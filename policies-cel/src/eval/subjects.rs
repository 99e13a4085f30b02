//! Whose requests a SafetyPolicy judges: users, groups and service accounts with `*` wildcards.

use kube_core::DynamicObject;
use kube_core::admission::AdmissionRequest;

use crate::policy::Subjects;

/// True when `pattern` (with `*` matching any run of characters) matches `text` entirely.
pub fn glob(pattern: &str, text: &str) -> bool {
    let Some((head, last)) = pattern.rsplit_once('*') else {
        return pattern == text;
    };
    let mut parts = head.split('*');
    let first = parts.next().unwrap_or_default();
    let Some(mut rest) = text.strip_prefix(first) else {
        return false;
    };
    for part in parts {
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    rest.len() >= last.len() && rest.ends_with(last)
}

/// `namespace/name` of a service-account user name (`system:serviceaccount:NS:NAME`).
pub fn service_account(username: &str) -> Option<String> {
    let rest = username.strip_prefix("system:serviceaccount:")?;
    let (namespace, name) = rest.split_once(':')?;
    Some(format!("{namespace}/{name}"))
}

/// True when the request's user is among `subjects` and not excluded.
pub fn judges(subjects: &Subjects, request: &AdmissionRequest<DynamicObject>) -> bool {
    let user = request.user_info.username.as_deref().unwrap_or_default();
    judges_user(subjects, request, service_account(user).as_deref())
}

/// [`judges`], with the user's `namespace/name` service account already read (once per
/// request, however many policies ask).
pub fn judges_user(
    subjects: &Subjects,
    request: &AdmissionRequest<DynamicObject>,
    account: Option<&str>,
) -> bool {
    let user = request.user_info.username.as_deref().unwrap_or_default();
    let groups = request.user_info.groups.as_deref().unwrap_or_default();
    let hit = |users: &[String], group_patterns: &[String], accounts: &[String]| {
        users.iter().any(|p| glob(p, user))
            || group_patterns.iter().any(|p| groups.iter().any(|g| glob(p, g)))
            || account.is_some_and(|sa| accounts.iter().any(|p| glob(p, sa)))
    };
    if hit(
        &subjects.exclude_users,
        &subjects.exclude_groups,
        &subjects.exclude_service_accounts,
    ) {
        return false;
    }
    let everyone =
        subjects.users.is_empty() && subjects.groups.is_empty() && subjects.service_accounts.is_empty();
    everyone || hit(&subjects.users, &subjects.groups, &subjects.service_accounts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_match_whole_strings() {
        assert!(glob("*", "anything"));
        assert!(glob("system:serviceaccount:*", "system:serviceaccount:db:pg"));
        assert!(glob("*/postgres-operator", "databases/postgres-operator"));
        assert!(glob("a*b*c", "aXXbYYc"));
        assert!(!glob("a*b*c", "aXXbYYcd"));
        assert!(!glob("admin", "admin2"));
        assert!(glob("ab*ab", "abab"));
        assert!(!glob("ab*ab", "aba"));
    }

    #[test]
    fn service_accounts_are_read_from_usernames() {
        assert_eq!(
            service_account("system:serviceaccount:db:pg-operator").as_deref(),
            Some("db/pg-operator")
        );
        assert_eq!(service_account("kubernetes-admin"), None);
    }
}
