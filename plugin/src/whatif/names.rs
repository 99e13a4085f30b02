//! The objects a what-if action names, read as kubectl reads them: `TYPE/NAME` (several of them,
//! of any types: `delete pod/a sts/b`) or `TYPE NAME...` (one type, several names: `delete pod a
//! b`). The two forms are not mixed, as in kubectl.

use thiserror::Error;

/// One object named by an action: its type as given (`sts`, `statefulset`, `pods`) and name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Named<'a> {
    pub type_name: &'a str,
    pub name: &'a str,
}

/// What is wrong with the words after the verb.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum NamesError {
    #[error(
        "a what-if action is `delete TYPE/NAME` (or `delete TYPE NAME...`), `scale TYPE/NAME --replicas N` or `evict pod/NAME`"
    )]
    Missing,
    #[error(
        "{0:?}: expected TYPE/NAME or TYPE NAME, e.g. statefulset/db or statefulset db (a collection: `delete TYPE` with -l, --field-selector or --all)"
    )]
    NoName(String),
    #[error("{0:?}: expected TYPE/NAME, e.g. statefulset/db (neither part may be empty)")]
    EmptyPart(String),
    #[error(
        "{0:?}: there is no need to give a resource type as a separate argument when passing arguments in TYPE/NAME form (`delete pod/a pod/b`, or `delete pod a b`)"
    )]
    Mixed(String),
    #[error("{0:?}: in TYPE/NAME form every object is TYPE/NAME (`delete pod/a pod/b`, or `delete pod a b`)")]
    NotSlashed(String),
}

/// The objects `words` (the action's words after its verb) name, in order.
pub fn parse<'a>(words: &'a [String]) -> Result<Vec<Named<'a>>, NamesError> {
    let Some(first) = words.first() else {
        return Err(NamesError::Missing);
    };
    if first.contains('/') {
        return words.iter().map(|word| slashed(word)).collect();
    }
    let names = &words[1..];
    if names.is_empty() {
        return Err(NamesError::NoName(first.clone()));
    }
    names
        .iter()
        .map(|name| {
            if name.contains('/') {
                return Err(NamesError::Mixed(name.clone()));
            }
            Ok(Named {
                type_name: first,
                name,
            })
        })
        .collect()
}

/// `TYPE/NAME`, both parts non-empty.
fn slashed(word: &str) -> Result<Named<'_>, NamesError> {
    let (type_name, name) = word
        .split_once('/')
        .ok_or_else(|| NamesError::NotSlashed(word.to_owned()))?;
    if type_name.is_empty() || name.is_empty() {
        return Err(NamesError::EmptyPart(word.to_owned()));
    }
    Ok(Named { type_name, name })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn words(text: &str) -> Vec<String> {
        text.split_whitespace().map(str::to_owned).collect()
    }

    fn pairs(text: &str) -> Result<Vec<(String, String)>, NamesError> {
        let words = words(text);
        parse(&words).map(|named| {
            named
                .into_iter()
                .map(|n| (n.type_name.to_owned(), n.name.to_owned()))
                .collect()
        })
    }

    fn pair(type_name: &str, name: &str) -> (String, String) {
        (type_name.to_owned(), name.to_owned())
    }

    #[test]
    fn both_kubectl_forms_name_the_same_object() {
        assert_eq!(pairs("sts/db").unwrap(), [pair("sts", "db")]);
        assert_eq!(pairs("sts db").unwrap(), [pair("sts", "db")]);
    }

    #[test]
    fn several_names_keep_their_order() {
        assert_eq!(
            pairs("pod b a c").unwrap(),
            [pair("pod", "b"), pair("pod", "a"), pair("pod", "c")]
        );
        assert_eq!(
            pairs("pod/a statefulset/db").unwrap(),
            [pair("pod", "a"), pair("statefulset", "db")]
        );
    }

    #[test]
    fn malformed_forms_say_what_is_expected() {
        assert_eq!(pairs(""), Err(NamesError::Missing));
        assert_eq!(
            pairs("statefulset"),
            Err(NamesError::NoName("statefulset".into()))
        );
        assert_eq!(pairs("pod/"), Err(NamesError::EmptyPart("pod/".into())));
        assert_eq!(pairs("/a"), Err(NamesError::EmptyPart("/a".into())));
        assert_eq!(pairs("pod/a b"), Err(NamesError::NotSlashed("b".into())));
        assert_eq!(pairs("pod a/b"), Err(NamesError::Mixed("a/b".into())));
        assert!(
            NamesError::NoName("statefulset".into())
                .to_string()
                .contains("expected TYPE/NAME or TYPE NAME")
        );
    }
}
