//! Whose requests a SafetyPolicy judges: users, groups and service accounts with `*` wildcards.

use std::cell::RefCell;

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
        // A one-character part (`*/*`, `*:*`) is searched as a byte: a string searcher's set-up
        // costs more than the search.
        let found = match part.as_bytes() {
            [byte] => rest.bytes().position(|b| b == *byte),
            _ => rest.find(part),
        };
        match found {
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
    ) || (subjects.exclude_control_plane && crate::control_plane::is_control_plane(user, groups))
    {
        return false;
    }
    let everyone =
        subjects.users.is_empty() && subjects.groups.is_empty() && subjects.service_accounts.is_empty();
    everyone || hit(&subjects.users, &subjects.groups, &subjects.service_accounts)
}

/// Whether `subjects` lists judge one request's user, each distinct list matched once: the
/// policies of a pack repeat the same list, and the pre-filter and `evaluate()` ask per policy.
pub(crate) struct UserJudge<'a> {
    admission: &'a AdmissionRequest<DynamicObject>,
    /// The user's service account as `namespace/name`, when the user is one.
    account: Option<String>,
    judged: RefCell<Vec<(&'a Subjects, bool)>>,
}

impl<'a> UserJudge<'a> {
    pub fn new(admission: &'a AdmissionRequest<DynamicObject>) -> Self {
        let user = admission.user_info.username.as_deref().unwrap_or_default();
        Self {
            admission,
            account: service_account(user),
            judged: RefCell::new(Vec::new()),
        }
    }

    /// [`judges_user`], answered from the first equal list asked about when there is one.
    pub fn judges(&self, subjects: &'a Subjects) -> bool {
        if let Some((_, judged)) = self.judged.borrow().iter().find(|(seen, _)| *seen == subjects) {
            return *judged;
        }
        let judged = judges_user(subjects, self.admission, self.account.as_deref());
        self.judged.borrow_mut().push((subjects, judged));
        judged
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_subjects_list_is_matched_once_per_request_and_answers_for_equal_lists() {
        let request = crate::eval::Request::from_review(serde_json::json!({
            "apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
            "request": {
                "uid": "1", "operation": "DELETE", "name": "db-0", "namespace": "db",
                "kind": {"group": "", "version": "v1", "kind": "Pod"},
                "resource": {"group": "", "version": "v1", "resource": "pods"},
                "userInfo": {"username": "system:serviceaccount:db:operator"},
            }
        }))
        .unwrap();
        let users = UserJudge::new(&request.admission);
        let accounts = |list: &[&str]| list.iter().map(|p| p.to_string()).collect::<Vec<_>>();
        let operators = Subjects {
            service_accounts: accounts(&["db/*"]),
            ..Subjects::default()
        };
        let same_operators = operators.clone();
        let excluded = Subjects {
            exclude_service_accounts: accounts(&["db/operator"]),
            ..Subjects::default()
        };
        for _ in 0..2 {
            assert!(users.judges(&operators));
            assert!(users.judges(&same_operators));
            assert!(!users.judges(&excluded));
        }
        assert_eq!(users.judged.borrow().len(), 2, "one match per distinct list");
    }

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
        assert!(glob("*/*", "db/pg"));
        assert!(!glob("*/*", "db"));
        assert!(glob("a*/*z", "ab/cz"));
        assert!(!glob("a*/*z", "abcz"));
        assert!(glob("*é*", "café au lait"));
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
