//! The CustomResourceDefinitions Suture ships — SafetyPolicy, SafetyPackParams and
//! OperatorProfile — rendered as
//! the YAML committed under `policies-cel/crds/`, which a test keeps in sync with the types.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    CustomResourceDefinition, JSONSchemaProps, JSONSchemaPropsOrArray, JSONSchemaPropsOrBool,
};

/// Every shipped CRD with the file it is committed as (under `policies-cel/crds/`) and the
/// source file of its types.
pub fn all() -> [(&'static str, &'static str, CustomResourceDefinition); 3] {
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
        (
            "operatorprofile.yaml",
            "policies-cel/src/operators/spec.rs",
            crate::operators::spec::crd(),
        ),
    ]
}

/// The string formats kube-apiserver 1.34+ recognises (apiextensions' `supportedVersionedFormats`,
/// compared after removing dashes, as go-openapi normalises names).
const STRING_FORMATS: &[&str] = &[
    "bsonobjectid",
    "uri",
    "email",
    "hostname",
    "ipv4",
    "ipv6",
    "cidr",
    "mac",
    "uuid",
    "uuid3",
    "uuid4",
    "uuid5",
    "isbn",
    "isbn10",
    "isbn13",
    "creditcard",
    "ssn",
    "hexcolor",
    "rgbcolor",
    "byte",
    "password",
    "date",
    "duration",
    "datetime",
    "k8sshortname",
    "k8slongname",
];

/// Whether kube-apiserver knows `format` on a schema of `schema_type` (it warns
/// `unrecognized format` on a CRD carrying any other, and ignores it).
fn known_format(schema_type: Option<&str>, format: &str) -> bool {
    match schema_type {
        None | Some("string") => STRING_FORMATS.contains(&format.replace('-', "").as_str()),
        Some("integer") => matches!(format, "int32" | "int64"),
        Some("number") => matches!(format, "float" | "double"),
        Some(_) => false,
    }
}

/// Removes, at every depth of `schema`, the formats kube-apiserver does not know (schemars writes
/// `uint32`, `uint64`, `uint8`... for unsigned fields; their `minimum: 0` stays).
pub(crate) fn strip_unknown_formats(schema: &mut JSONSchemaProps) {
    if let Some(format) = &schema.format
        && !known_format(schema.type_.as_deref(), format)
    {
        schema.format = None;
    }
    let children = schema
        .properties
        .iter_mut()
        .flat_map(|map| map.values_mut())
        .chain(
            schema
                .pattern_properties
                .iter_mut()
                .flat_map(|map| map.values_mut()),
        )
        .chain(schema.definitions.iter_mut().flat_map(|map| map.values_mut()))
        .chain(schema.all_of.iter_mut().flatten())
        .chain(schema.any_of.iter_mut().flatten())
        .chain(schema.one_of.iter_mut().flatten())
        .chain(schema.not.as_deref_mut());
    let mut nested: Vec<&mut JSONSchemaProps> = children.collect();
    for either in [&mut schema.additional_properties, &mut schema.additional_items]
        .into_iter()
        .flatten()
    {
        if let JSONSchemaPropsOrBool::Schema(inner) = either {
            nested.push(inner);
        }
    }
    match &mut schema.items {
        Some(JSONSchemaPropsOrArray::Schema(inner)) => nested.push(inner),
        Some(JSONSchemaPropsOrArray::Schemas(list)) => nested.extend(list.iter_mut()),
        None => {}
    }
    for child in nested {
        strip_unknown_formats(child);
    }
}

/// `crd` with only the formats kube-apiserver knows, in every version's schema.
pub(crate) fn with_known_formats(mut crd: CustomResourceDefinition) -> CustomResourceDefinition {
    for version in &mut crd.spec.versions {
        if let Some(schema) = version
            .schema
            .as_mut()
            .and_then(|validation| validation.open_api_v3_schema.as_mut())
        {
            strip_unknown_formats(schema);
        }
    }
    crd
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

    fn formats(schema: &serde_json::Value, out: &mut Vec<(String, String)>) {
        match schema {
            serde_json::Value::Object(map) => {
                if let Some(serde_json::Value::String(format)) = map.get("format") {
                    let ty = map.get("type").and_then(|t| t.as_str()).unwrap_or("");
                    out.push((ty.to_owned(), format.clone()));
                }
                map.values().for_each(|value| formats(value, out));
            }
            serde_json::Value::Array(items) => items.iter().for_each(|value| formats(value, out)),
            _ => {}
        }
    }

    /// kube-apiserver warns `unrecognized format "uint32"` when a CRD carries a format it does
    /// not know: every shipped CRD carries only known ones.
    #[test]
    fn shipped_crds_carry_only_formats_kubernetes_knows() {
        for (file, _, crd) in all() {
            let mut found = Vec::new();
            formats(&serde_json::to_value(&crd).unwrap(), &mut found);
            for (ty, format) in found {
                let ty = (!ty.is_empty()).then_some(ty.as_str());
                assert!(known_format(ty, &format), "{file}: format {format} on {ty:?}");
            }
        }
    }

    #[test]
    fn unsigned_formats_are_stripped_and_known_ones_kept() {
        let mut schema: JSONSchemaProps = serde_json::from_value(serde_json::json!({
            "type": "object",
            "properties": {
                "count": {"type": "integer", "format": "uint32", "minimum": 0},
                "size": {"type": "integer", "format": "int64"},
                "when": {"type": "string", "format": "date-time"},
                "list": {"type": "array", "items": {"type": "integer", "format": "uint8"}},
                "map": {"type": "object", "additionalProperties": {"type": "number", "format": "float"}}
            }
        }))
        .unwrap();
        strip_unknown_formats(&mut schema);
        let value = serde_json::to_value(&schema).unwrap();
        assert_eq!(value["properties"]["count"].get("format"), None);
        assert_eq!(value["properties"]["count"]["minimum"], 0.0);
        assert_eq!(value["properties"]["size"]["format"], "int64");
        assert_eq!(value["properties"]["when"]["format"], "date-time");
        assert_eq!(value["properties"]["list"]["items"].get("format"), None);
        assert_eq!(
            value["properties"]["map"]["additionalProperties"]["format"],
            "float"
        );
    }
}
