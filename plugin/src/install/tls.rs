//! The serving certificate: generated here (`--self-signed`: a CA and a leaf it signs), read
//! from files, or issued by cert-manager (a Certificate, and a self-signed Issuer when none is
//! named); and the TLS Secret the Deployment mounts.

use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::Secret;
use rcgen::{
    BasicConstraints, CertificateParams, DistinguishedName, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer,
    KeyPair, KeyUsagePurpose,
};
use serde_json::{Value, json};

use crate::install::names;
use crate::install::options::{InstallOptions, IssuerRef, TlsMaterial};
use crate::install::rbac::meta;

/// Days from the Unix epoch to a civil date (proleptic Gregorian), and back.
fn civil_from_days(days: i64) -> (i32, u8, u8) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    (
        i32::try_from(year).unwrap_or(1970),
        u8::try_from(month).unwrap_or(1),
        u8::try_from(day).unwrap_or(1),
    )
}

/// Today (UTC) as year, month, day.
fn today() -> (i32, u8, u8) {
    let seconds = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    civil_from_days(i64::try_from(seconds / 86_400).unwrap_or(0))
}

/// Valid from today for `years` years.
fn set_validity(params: &mut CertificateParams, years: i32) {
    let (year, month, day) = today();
    params.not_before = rcgen::date_time_ymd(year, month, day);
    params.not_after = rcgen::date_time_ymd(year + years, month, day.min(28));
}

/// A CA (10 years) and a serving certificate for the gateway's Service names signed by it
/// (1 year: re-run `install --self-signed` to rotate, or use cert-manager).
pub fn self_signed(namespace: &str) -> Result<TlsMaterial, rcgen::Error> {
    self_signed_for(&names::service_dns_names(namespace))
}

/// A CA (10 years) and a serving certificate for `names` (DNS names or IP addresses) signed by it.
pub fn self_signed_for(names: &[String]) -> Result<TlsMaterial, rcgen::Error> {
    let ca_key = KeyPair::generate()?;
    let mut ca_params = CertificateParams::new(Vec::<String>::new())?;
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Constrained(0));
    ca_params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
    let mut ca_name = DistinguishedName::new();
    ca_name.push(DnType::CommonName, "suture-gateway CA");
    ca_params.distinguished_name = ca_name;
    set_validity(&mut ca_params, 10);
    let ca_cert = ca_params.self_signed(&ca_key)?;
    let issuer = Issuer::new(ca_params, ca_key);

    let key = KeyPair::generate()?;
    let mut params = CertificateParams::new(names.to_vec())?;
    let mut name = DistinguishedName::new();
    name.push(DnType::CommonName, names.first().cloned().unwrap_or_default());
    params.distinguished_name = name;
    params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
    params.key_usages = vec![KeyUsagePurpose::DigitalSignature];
    set_validity(&mut params, 1);
    let cert = params.signed_by(&key, &issuer)?;
    Ok(TlsMaterial {
        cert_pem: cert.pem(),
        key_pem: key.serialize_pem(),
        ca_pem: ca_cert.pem(),
    })
}

/// Why a serving certificate is not one kube-apiserver would accept.
#[derive(Debug, thiserror::Error)]
pub enum VerifyError {
    #[error("the {what} is not PEM")]
    Pem {
        what: &'static str,
        #[source]
        source: rustls::pki_types::pem::Error,
    },
    #[error("the CA bundle holds no usable certificate")]
    NoCa,
    #[error("`{0}` is not a DNS name")]
    Name(String),
    #[error("the certificate does not verify against the CA bundle for {name}")]
    Untrusted {
        name: String,
        #[source]
        source: rustls::Error,
    },
}

/// Checks, as kube-apiserver will, that `cert_pem` (a chain, leaf first) verifies against
/// `ca_pem` for the host name `name` (the Service's `<svc>.<ns>.svc`).
pub fn verify(ca_pem: &str, cert_pem: &str, name: &str) -> Result<(), VerifyError> {
    use rustls::client::danger::ServerCertVerifier;
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
    use std::sync::Arc;

    let mut roots = rustls::RootCertStore::empty();
    for ca in CertificateDer::pem_slice_iter(ca_pem.as_bytes()) {
        let ca = ca.map_err(|source| VerifyError::Pem {
            what: "CA bundle",
            source,
        })?;
        roots.add(ca).map_err(|_| VerifyError::NoCa)?;
    }
    let chain = CertificateDer::pem_slice_iter(cert_pem.as_bytes())
        .collect::<Result<Vec<_>, _>>()
        .map_err(|source| VerifyError::Pem {
            what: "certificate",
            source,
        })?;
    let (leaf, intermediates) = chain.split_first().ok_or(VerifyError::Pem {
        what: "certificate",
        source: rustls::pki_types::pem::Error::NoItemsFound,
    })?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let verifier = rustls::client::WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider)
        .build()
        .map_err(|_| VerifyError::NoCa)?;
    let server = ServerName::try_from(name.to_owned()).map_err(|_| VerifyError::Name(name.to_owned()))?;
    verifier
        .verify_server_cert(leaf, intermediates, &server, &[], UnixTime::now())
        .map(|_| ())
        .map_err(|source| VerifyError::Untrusted {
            name: name.to_owned(),
            source,
        })
}

/// The `kubernetes.io/tls` Secret the gateway serves from.
pub fn secret(options: &InstallOptions, material: &TlsMaterial) -> Secret {
    let data = [
        ("tls.crt", &material.cert_pem),
        ("tls.key", &material.key_pem),
        ("ca.crt", &material.ca_pem),
    ]
    .into_iter()
    .map(|(key, pem)| (key.to_owned(), ByteString(pem.as_bytes().to_vec())))
    .collect();
    Secret {
        metadata: meta(names::TLS_SECRET, Some(&options.namespace)),
        type_: Some("kubernetes.io/tls".to_owned()),
        data: Some(data),
        ..Secret::default()
    }
}

/// A namespaced cert-manager Issuer that self-signs (the default when no issuer is named).
pub fn self_signed_issuer(options: &InstallOptions) -> Value {
    json!({
        "apiVersion": "cert-manager.io/v1",
        "kind": "Issuer",
        "metadata": meta(names::SELF_SIGNED_ISSUER, Some(&options.namespace)),
        "spec": {"selfSigned": {}}
    })
}

/// The cert-manager Certificate that fills the TLS Secret (renewed a month before expiry; the
/// gateway reloads the mounted files without dropping connections).
pub fn certificate(options: &InstallOptions, issuer: Option<&IssuerRef>) -> Value {
    let issuer_ref = match issuer {
        Some(issuer) => json!({"group": "cert-manager.io", "kind": issuer.kind, "name": issuer.name}),
        None => json!({"group": "cert-manager.io", "kind": "Issuer", "name": names::SELF_SIGNED_ISSUER}),
    };
    json!({
        "apiVersion": "cert-manager.io/v1",
        "kind": "Certificate",
        "metadata": meta(names::CERTIFICATE, Some(&options.namespace)),
        "spec": {
            "secretName": names::TLS_SECRET,
            "dnsNames": names::service_dns_names(&options.namespace),
            "issuerRef": issuer_ref,
            "duration": "8760h",
            "renewBefore": "720h",
            "privateKey": {"algorithm": "ECDSA", "size": 256, "rotationPolicy": "Always"},
            "usages": ["server auth", "digital signature"]
        }
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use super::*;

    #[test]
    fn civil_dates() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(11_016), (2000, 2, 29));
        assert_eq!(civil_from_days(20_819), (2027, 1, 1));
    }

    fn check(material: &TlsMaterial, name: &str) -> Result<(), VerifyError> {
        verify(&material.ca_pem, &material.cert_pem, name)
    }

    #[test]
    fn the_ca_verifies_the_serving_certificate_for_the_service_name() {
        let material = self_signed("suture-system").unwrap();
        check(&material, "suture-gateway.suture-system.svc").unwrap();
        check(&material, "suture-gateway.suture-system.svc.cluster.local").unwrap();
        assert!(check(&material, "other.suture-system.svc").is_err());
        let other = self_signed("suture-system").unwrap();
        let mixed = TlsMaterial {
            ca_pem: other.ca_pem,
            ..material.clone()
        };
        assert!(check(&mixed, "suture-gateway.suture-system.svc").is_err());
    }
}
