//! The built-in catalog: the OperatorProfiles shipped in the binary, one file per operator
//! (`policies-cel/operators/*.yaml`), each citing the upstream behaviour it encodes. Loaded once,
//! through the same loader as files, so a mistake in one is a test failure, never a panic.

use std::sync::OnceLock;

use crate::operators::Profiles;

/// The catalog's files, by name.
pub const FILES: &[(&str, &str)] = &[
    ("argocd.yaml", include_str!("../../operators/argocd.yaml")),
    ("flux.yaml", include_str!("../../operators/flux.yaml")),
    ("crossplane.yaml", include_str!("../../operators/crossplane.yaml")),
    ("strimzi.yaml", include_str!("../../operators/strimzi.yaml")),
    ("keda.yaml", include_str!("../../operators/keda.yaml")),
    ("velero.yaml", include_str!("../../operators/velero.yaml")),
    ("snapshots.yaml", include_str!("../../operators/snapshots.yaml")),
    ("elastic.yaml", include_str!("../../operators/elastic.yaml")),
];

/// The built-in profiles (empty if one failed to load: `catalog_loads_clean` fails then).
pub fn catalog() -> &'static Profiles {
    static CATALOG: OnceLock<Profiles> = OnceLock::new();
    CATALOG.get_or_init(|| load().unwrap_or_default())
}

/// Loads the catalog's files.
pub fn load() -> Result<Profiles, crate::policy::LoadError> {
    let mut loader = crate::policy::Loader::new().without_catalog();
    for (name, text) in FILES {
        loader = loader.add_str(&format!("operators/{name}"), text)?;
    }
    Ok(loader.finish()?.profiles)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn catalog_loads_clean_and_cites_its_sources() {
        let catalog = load().unwrap();
        assert!(catalog.len() >= 10, "{} profiles", catalog.len());
        for profile in catalog.iter() {
            assert!(
                profile.references.iter().any(|r| r.starts_with("https://")),
                "{} cites no upstream source",
                profile.name
            );
        }
    }
}
