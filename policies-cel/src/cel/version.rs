//! The Kubernetes minor version whose CEL environment an expression is compiled against.
//!
//! kube-apiserver builds its CEL environment per compatibility version
//! (`k8s.io/apiserver/pkg/cel/environment/base.go`): each library enters at the version that
//! introduced it, so what compiles depends on the cluster's version. [`KubernetesVersion`] names
//! one of the versions Suture knows (1.33 to 1.37); the declarations that depend on it are in
//! `check/decls.rs`. The version decides what compiles, never how an expression runs.

use std::fmt;
use std::str::FromStr;

/// A Kubernetes release line (`1.36`), one Suture knows the CEL environment of.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct KubernetesVersion {
    minor: u16,
}

/// A version that cannot be read, or whose CEL environment Suture does not know.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum VersionError {
    #[error("`{0}` is not a Kubernetes version (expected MAJOR.MINOR, as in 1.36 or v1.36.2)")]
    Unreadable(String),
    #[error(
        "Kubernetes {found} is not supported: Suture knows the CEL environments of {} to {}",
        KubernetesVersion::OLDEST,
        KubernetesVersion::NEWEST
    )]
    Unsupported { found: String },
}

impl KubernetesVersion {
    pub const V1_33: Self = Self { minor: 33 };
    pub const V1_34: Self = Self { minor: 34 };
    pub const V1_35: Self = Self { minor: 35 };
    pub const V1_36: Self = Self { minor: 36 };
    pub const V1_37: Self = Self { minor: 37 };
    /// The oldest version Suture knows.
    pub const OLDEST: Self = Self::V1_33;
    /// The newest version Suture knows.
    pub const NEWEST: Self = Self::V1_37;
    /// The version policies are compiled for unless told otherwise.
    pub const DEFAULT: Self = Self::V1_36;

    /// Every supported version, oldest first.
    pub fn supported() -> impl Iterator<Item = Self> {
        (Self::OLDEST.minor..=Self::NEWEST.minor).map(|minor| Self { minor })
    }

    /// Version `major.minor`, if supported.
    pub fn new(major: u16, minor: u16) -> Result<Self, VersionError> {
        let version = Self { minor };
        if major != 1 || version < Self::OLDEST || version > Self::NEWEST {
            return Err(VersionError::Unsupported {
                found: format!("{major}.{minor}"),
            });
        }
        Ok(version)
    }

    /// The minor version (36 for 1.36).
    pub const fn minor(self) -> u16 {
        self.minor
    }
}

impl Default for KubernetesVersion {
    fn default() -> Self {
        Self::DEFAULT
    }
}

impl fmt::Display for KubernetesVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "1.{}", self.minor)
    }
}

impl FromStr for KubernetesVersion {
    type Err = VersionError;

    /// `1.36`, `v1.36`, `1.36.2`, `v1.36.2`, and a release's suffix after the patch
    /// (`v1.36.2-gke.1000`, `v1.36.2+k3s1`), as `kubectl version` prints them.
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let unreadable = || VersionError::Unreadable(text.to_owned());
        let trimmed = text.trim();
        let bare = trimmed
            .strip_prefix(['v', 'V'])
            .unwrap_or(trimmed)
            .split(['-', '+'])
            .next()
            .unwrap_or_default();
        let mut parts = bare.split('.');
        let number = |part: Option<&str>| {
            part.filter(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
                .and_then(|p| p.parse::<u16>().ok())
        };
        let major = number(parts.next()).ok_or_else(unreadable)?;
        let minor = number(parts.next()).ok_or_else(unreadable)?;
        if let Some(patch) = parts.next() {
            number(Some(patch)).ok_or_else(unreadable)?;
        }
        if parts.next().is_some() {
            return Err(unreadable());
        }
        Self::new(major, minor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_read_as_kubectl_prints_them() {
        for text in [
            "1.36",
            "v1.36",
            "1.36.2",
            "v1.36.2",
            "v1.36.2-gke.1000",
            "V1.36.0+k3s1",
            " 1.36 ",
        ] {
            assert_eq!(text.parse(), Ok(KubernetesVersion::V1_36), "{text}");
        }
        assert_eq!("1.33".parse(), Ok(KubernetesVersion::OLDEST));
        assert_eq!("v1.37.0".parse(), Ok(KubernetesVersion::NEWEST));
        assert_eq!(KubernetesVersion::default().to_string(), "1.36");
    }

    #[test]
    fn unreadable_and_unsupported_versions_are_refused_clearly() {
        for text in ["", "1", "v1.", "1.x", "1.36.2.1", "latest", "1.-3"] {
            assert_eq!(
                text.parse::<KubernetesVersion>(),
                Err(VersionError::Unreadable(text.to_owned())),
                "{text}"
            );
        }
        let error = "1.32".parse::<KubernetesVersion>().unwrap_err();
        assert_eq!(
            error.to_string(),
            "Kubernetes 1.32 is not supported: Suture knows the CEL environments of 1.33 to 1.37"
        );
        assert!(matches!(
            "2.36".parse::<KubernetesVersion>(),
            Err(VersionError::Unsupported { .. })
        ));
        assert!(matches!(
            "1.38".parse::<KubernetesVersion>(),
            Err(VersionError::Unsupported { .. })
        ));
    }

    #[test]
    fn supported_versions_are_listed_oldest_first() {
        let all: Vec<String> = KubernetesVersion::supported().map(|v| v.to_string()).collect();
        assert_eq!(all, ["1.33", "1.34", "1.35", "1.36", "1.37"]);
    }
}
