//! `-o/--output` as kubectl spells it: `text`, `json`, `yaml`, and `jsonpath=TEMPLATE` (kubectl's
//! `{.a.b}` form or a plain JSONPath `$.a.b`), rendering the command's JSON document.

use std::fmt::Write as _;

use jsonpath_rust::JsonPath;
use serde::Serialize;
use serde_json::Value as Json;

/// A parsed `-o` value.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Output {
    #[default]
    Text,
    Json,
    Yaml,
    /// The JSONPath (`$...`), converted from kubectl's template form.
    JsonPath(String),
}

/// Parses `-o` for a command that offers `formats` (a subset of text, json, yaml, jsonpath).
pub fn parser(formats: &'static [&'static str]) -> impl Fn(&str) -> Result<Output, String> + Clone {
    move |value: &str| {
        let (name, template) = value.split_once('=').unwrap_or((value, ""));
        if !formats.contains(&name) {
            return Err(format!(
                "unknown output format {value:?} (choose from {})",
                formats.join(", ")
            ));
        }
        match name {
            "text" => Ok(Output::Text),
            "json" => Ok(Output::Json),
            "yaml" => Ok(Output::Yaml),
            _ => jsonpath(template).map(Output::JsonPath),
        }
    }
}

/// kubectl's `{.items[*].name}` (or a plain `$.items[*].name`) as a JSONPath.
fn jsonpath(template: &str) -> Result<String, String> {
    let template = template.trim();
    let inner = template
        .strip_prefix('{')
        .and_then(|t| t.strip_suffix('}'))
        .unwrap_or(template)
        .trim();
    if inner.is_empty() {
        return Err("jsonpath needs a template, e.g. -o jsonpath='{.allowed}'".into());
    }
    let path = if inner.starts_with('$') {
        inner.to_owned()
    } else {
        format!("${inner}")
    };
    Json::Null
        .query(&path)
        .map_err(|e| format!("invalid jsonpath {template:?}: {e}"))?;
    Ok(path)
}

/// Renders `document` as JSON, YAML, or the JSONPath's matches (strings bare, everything else as
/// compact JSON, separated by spaces as kubectl does); `None` for `Text`.
pub fn render(output: &Output, document: &impl Serialize) -> Result<Option<String>, String> {
    let value = serde_json::to_value(document).map_err(|e| e.to_string())?;
    Ok(match output {
        Output::Text => None,
        Output::Json => Some(format!(
            "{}\n",
            serde_json::to_string_pretty(&value).map_err(|e| e.to_string())?
        )),
        Output::Yaml => Some(serde_yaml_ng::to_string(&value).map_err(|e| e.to_string())?),
        Output::JsonPath(path) => {
            let matches = value.query(path).map_err(|e| e.to_string())?;
            let mut out = String::new();
            for (i, item) in matches.iter().enumerate() {
                if i > 0 {
                    out.push(' ');
                }
                match item {
                    Json::String(s) => out.push_str(s),
                    other => {
                        let _ = write!(out, "{other}");
                    }
                }
            }
            out.push('\n');
            Some(out)
        }
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use serde_json::json;

    use super::*;

    const ALL: &[&str] = &["text", "json", "yaml", "jsonpath"];

    #[test]
    fn kubectl_templates_become_jsonpaths() {
        let parse = parser(ALL);
        assert_eq!(
            parse("jsonpath={.allowed}").unwrap(),
            Output::JsonPath("$.allowed".into())
        );
        assert_eq!(
            parse("jsonpath=$.denials[*].policy").unwrap(),
            Output::JsonPath("$.denials[*].policy".into())
        );
        assert!(parse("jsonpath=").unwrap_err().contains("needs a template"));
        assert!(parse("jsonpath={.a[}").unwrap_err().contains("invalid jsonpath"));
        assert!(
            parser(&["text", "json"])("yaml")
                .unwrap_err()
                .contains("choose from text, json")
        );
    }

    #[test]
    fn matches_print_like_kubectl() {
        let doc = json!({"allowed": false, "denials": [{"policy": "a"}, {"policy": "b"}], "n": {"x": 1}});
        let render = |path: &str| render(&Output::JsonPath(path.into()), &doc).unwrap().unwrap();
        assert_eq!(render("$.denials[*].policy"), "a b\n");
        assert_eq!(render("$.allowed"), "false\n");
        assert_eq!(render("$.n"), "{\"x\":1}\n");
        assert_eq!(render("$.missing"), "\n");
    }
}
