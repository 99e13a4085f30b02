//! `--self-signed`: a throwaway CA and a serving certificate it signs, for local runs. The CA's
//! PEM, base64-encoded, is the webhook configuration's `caBundle`.

use base64::Engine;
use rcgen::{
    BasicConstraints, CertificateParams, CertifiedIssuer, DnType, ExtendedKeyUsagePurpose, IsCa, KeyPair,
    KeyUsagePurpose,
};

use crate::tls::TlsError;

/// A generated CA and serving pair, as PEM text.
#[derive(Debug, Clone)]
pub struct SelfSigned {
    pub ca_pem: String,
    pub cert_pem: String,
    pub key_pem: String,
}

impl SelfSigned {
    /// A new CA and a serving certificate for `sans` (DNS names or IP addresses).
    pub fn generate(sans: &[String]) -> Result<Self, TlsError> {
        let mut ca = CertificateParams::new(Vec::<String>::new())?;
        ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        ca.distinguished_name
            .push(DnType::CommonName, "suture-gateway self-signed CA");
        ca.key_usages = vec![
            KeyUsagePurpose::KeyCertSign,
            KeyUsagePurpose::CrlSign,
            KeyUsagePurpose::DigitalSignature,
        ];
        let ca = CertifiedIssuer::self_signed(ca, KeyPair::generate()?)?;

        let mut leaf = CertificateParams::new(sans.to_vec())?;
        leaf.distinguished_name.push(DnType::CommonName, "suture-gateway");
        leaf.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
        let key = KeyPair::generate()?;
        let cert = leaf.signed_by(&key, &ca)?;
        Ok(Self {
            ca_pem: ca.pem(),
            cert_pem: cert.pem(),
            key_pem: key.serialize_pem(),
        })
    }

    /// The `caBundle` of a ValidatingWebhookConfiguration: the CA PEM in base64, one line.
    pub fn ca_bundle(&self) -> String {
        base64::engine::general_purpose::STANDARD.encode(self.ca_pem.as_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bundle_is_the_ca_in_base64() {
        let pair = SelfSigned::generate(&["localhost".into(), "127.0.0.1".into()]).unwrap();
        let decoded = base64::engine::general_purpose::STANDARD
            .decode(pair.ca_bundle())
            .unwrap();
        assert_eq!(decoded, pair.ca_pem.as_bytes());
        assert!(pair.cert_pem.starts_with("-----BEGIN CERTIFICATE-----"));
        assert_ne!(pair.ca_pem, pair.cert_pem);
    }
}
