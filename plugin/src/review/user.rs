//! Who makes a request (`userInfo`, with the groups kube-apiserver's authenticators give), and
//! stable request uids.

use serde_json::{Map, Value as Json, json};

use crate::review::spec::UserInfoSpec;

/// The `userInfo` of a request (see [`UserInfoSpec`] for the defaults).
pub fn user_info(spec: Option<&UserInfoSpec>) -> Json {
    let Some(spec) = spec else {
        return json!({"username": "admin", "groups": ["system:masters", "system:authenticated"]});
    };
    let mut info = Map::new();
    info.insert("username".into(), Json::String(spec.username.clone()));
    let service_account = spec.username.strip_prefix("system:serviceaccount:");
    if let Some(uid) = spec
        .uid
        .clone()
        .or_else(|| service_account.map(|_| uid_from(&spec.username)))
    {
        info.insert("uid".into(), Json::String(uid));
    }
    let groups =
        spec.groups
            .clone()
            .unwrap_or_else(|| match service_account.and_then(|sa| sa.split_once(':')) {
                Some((namespace, _)) => vec![
                    "system:serviceaccounts".to_owned(),
                    format!("system:serviceaccounts:{namespace}"),
                    "system:authenticated".to_owned(),
                ],
                None if spec.username.starts_with("system:node:") => {
                    vec!["system:nodes".to_owned(), "system:authenticated".to_owned()]
                }
                None => vec!["system:authenticated".to_owned()],
            });
    info.insert("groups".into(), json!(groups));
    if !spec.extra.is_empty() {
        info.insert("extra".into(), json!(spec.extra));
    }
    Json::Object(info)
}

/// A stable, UUID-shaped id derived from `seed` (a random-looking v4 layout, so reviews built from
/// the same case are identical from run to run).
pub fn uid_from(seed: &str) -> String {
    fn fnv1a(bytes: &[u8], basis: u64) -> u64 {
        bytes.iter().fold(basis, |hash, byte| {
            (hash ^ u64::from(*byte)).wrapping_mul(0x0100_0000_01b3)
        })
    }
    let high = fnv1a(seed.as_bytes(), 0xcbf2_9ce4_8422_2325);
    let low = fnv1a(seed.as_bytes(), high ^ 0x9e37_79b9_7f4a_7c15);
    format!(
        "{:08x}-{:04x}-4{:03x}-{:x}{:03x}-{:012x}",
        high >> 32,
        (high >> 16) & 0xffff,
        high & 0x0fff,
        0x8 | (low >> 62),
        (low >> 48) & 0x0fff,
        low & 0xffff_ffff_ffff
    )
}
