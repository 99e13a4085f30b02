//! Field paths (`spec.validations[2].expression`): how errors name a field, and how the loader
//! finds the field's line.

use std::fmt;

/// One step of a field path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Seg {
    Key(String),
    Index(usize),
}

/// A path to a field, displayed as `spec.validations[2].expression`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct FieldPath(pub(crate) Vec<Seg>);

#[cfg(test)]
impl FieldPath {
    /// A path from its segments written as text; numbers are list indexes.
    pub(crate) fn from_segments(segments: &[&str]) -> Self {
        FieldPath(
            segments
                .iter()
                .map(|s| {
                    s.parse::<usize>()
                        .map_or_else(|_| Seg::Key((*s).to_owned()), Seg::Index)
                })
                .collect(),
        )
    }
}

impl FieldPath {
    /// The empty path (the document itself).
    pub(crate) fn root() -> Self {
        Self(Vec::new())
    }

    /// This path followed by `key`.
    pub(crate) fn key(&self, key: &str) -> Self {
        let mut segs = self.0.clone();
        segs.push(Seg::Key(key.to_owned()));
        Self(segs)
    }

    /// This path followed by `[index]`.
    pub(crate) fn index(&self, index: usize) -> Self {
        let mut segs = self.0.clone();
        segs.push(Seg::Index(index));
        Self(segs)
    }

    /// This path followed by all of `rest`.
    pub(crate) fn join(&self, rest: &FieldPath) -> Self {
        let mut segs = self.0.clone();
        segs.extend(rest.0.iter().cloned());
        Self(segs)
    }

    /// The path `serde_path_to_error` reports, relative to the deserialized value.
    pub(crate) fn from_serde(path: &serde_path_to_error::Path) -> Self {
        let mut segs = Vec::new();
        for segment in path.iter() {
            match segment {
                serde_path_to_error::Segment::Seq { index } => segs.push(Seg::Index(*index)),
                serde_path_to_error::Segment::Map { key } => segs.push(Seg::Key(key.clone())),
                serde_path_to_error::Segment::Enum { .. } => {}
                serde_path_to_error::Segment::Unknown => break,
            }
        }
        Self(segs)
    }

    /// The path `serde_ignored` reports for an ignored (unknown) field.
    pub(crate) fn from_ignored(path: &serde_ignored::Path<'_>) -> Self {
        fn walk(path: &serde_ignored::Path<'_>, segs: &mut Vec<Seg>) {
            match path {
                serde_ignored::Path::Root => {}
                serde_ignored::Path::Seq { parent, index } => {
                    walk(parent, segs);
                    segs.push(Seg::Index(*index));
                }
                serde_ignored::Path::Map { parent, key } => {
                    walk(parent, segs);
                    segs.push(Seg::Key(key.clone()));
                }
                serde_ignored::Path::Some { parent }
                | serde_ignored::Path::NewtypeStruct { parent }
                | serde_ignored::Path::NewtypeVariant { parent } => walk(parent, segs),
            }
        }
        let mut segs = Vec::new();
        walk(path, &mut segs);
        Self(segs)
    }
}

impl fmt::Display for FieldPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_empty() {
            return f.write_str("(document)");
        }
        for (i, seg) in self.0.iter().enumerate() {
            match seg {
                Seg::Index(index) => write!(f, "[{index}]")?,
                Seg::Key(key) if is_identifier(key) => {
                    if i > 0 {
                        f.write_str(".")?;
                    }
                    f.write_str(key)?;
                }
                Seg::Key(key) => write!(f, "[{key:?}]")?,
            }
        }
        Ok(())
    }
}

fn is_identifier(key: &str) -> bool {
    !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '$')
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::path::FieldPath as P;
    fn path(segs: &[&str]) -> FieldPath {
        P::from_segments(segs)
    }

    #[test]
    fn path_display() {
        assert_eq!(
            path(&["spec", "validations", "2", "expression"]).to_string(),
            "spec.validations[2].expression"
        );
        assert_eq!(
            FieldPath(vec![
                Seg::Key("metadata".into()),
                Seg::Key("annotations".into()),
                Seg::Key("a.b/c".into())
            ])
            .to_string(),
            "metadata.annotations[\"a.b/c\"]"
        );
    }
}
