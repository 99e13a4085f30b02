//! The CustomResourceDefinitions Suture ships — SafetyPolicy and SafetyPackParams — rendered as
//! the YAML committed under `policies-cel/crds/`, which a test keeps in sync with the types.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;

/// Every shipped CRD with the file it is committed as (under `policies-cel/crds/`) and the
/// source file of its types.
pub fn all() -> [(&'static str, &'static str, CustomResourceDefinition); 2] {
    [
        (
            "safetypolicy.yaml",
            "policies-cel/src/policy/safety.rs",
            crate::policy::safety::crd(),
        ),
        (
            "safetypackparams.yaml",
            "policies-cel/src/pack/params.rs",
            crate::pack::params::crd(),
        ),
    ]
}

/// `crd` as committed: a header naming its `source` and how to regenerate it, then the YAML.
pub fn render(crd: &CustomResourceDefinition, source: &str) -> Result<String, serde_yaml_ng::Error> {
    let body = serde_yaml_ng::to_string(crd)?;
    let kind = &crd.spec.names.kind;
    Ok(format!(
        "# The {kind} CustomResourceDefinition, generated from {source}.\n\
         # Do not edit: regenerate with `SUTURE_UPDATE_CRD=1 cargo test -p policies-cel --lib crd`.\n\
         ---\n{body}"
    ))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use super::*;

    /// The committed CRDs are what the types generate. `SUTURE_UPDATE_CRD=1` rewrites them.
    #[test]
    fn crd_files_are_up_to_date() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("crds");
        for (file, source, crd) in all() {
            let path = dir.join(file);
            let generated = render(&crd, source).unwrap();
            if std::env::var_os("SUTURE_UPDATE_CRD").is_some() {
                std::fs::create_dir_all(&dir).unwrap();
                std::fs::write(&path, &generated).unwrap();
                continue;
            }
            let committed = std::fs::read_to_string(&path).unwrap_or_default();
            assert!(
                committed == generated,
                "{} is out of date with the types in {source}.\n\
                 Regenerate it with: SUTURE_UPDATE_CRD=1 cargo test -p policies-cel --lib crd",
                path.display()
            );
        }
    }
}
