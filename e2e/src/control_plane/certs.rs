//! The control plane's own PKI, generated per run: a CA, kube-apiserver's serving certificate
//! (loopback and the in-cluster `kubernetes` Service names), client certificates for the admin
//! and kube-controller-manager, and the service-account token signing key.

use std::path::{Path, PathBuf};

use anyhow::Context;
use rcgen::{
    BasicConstraints, CertificateParams, DistinguishedName, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer,
    KeyPair, KeyUsagePurpose,
};

/// A certificate and its key, written as PEM files.
#[derive(Debug, Clone)]
pub struct Pair {
    /// The certificate file.
    pub cert: PathBuf,
    /// The private key file.
    pub key: PathBuf,
}

impl Pair {
    /// The certificate's PEM text.
    pub fn cert_pem(&self) -> anyhow::Result<String> {
        read(&self.cert)
    }

    /// The key's PEM text.
    pub fn key_pem(&self) -> anyhow::Result<String> {
        read(&self.key)
    }
}

fn read(path: &Path) -> anyhow::Result<String> {
    std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))
}

/// Every file the control plane is started with.
#[derive(Debug, Clone)]
pub struct Pki {
    /// The CA certificate: it signs every certificate below, and is the client CA.
    pub ca: PathBuf,
    /// kube-apiserver's serving certificate.
    pub apiserver: Pair,
    /// `system:masters` client certificate for the tests and kubectl.
    pub admin: Pair,
    /// `system:kube-controller-manager` client certificate.
    pub controller_manager: Pair,
    /// The service-account token signing key (private) and its public half.
    pub service_account_key: PathBuf,
    /// The public half of the signing key, for token verification.
    pub service_account_pub: PathBuf,
}

/// The names kube-apiserver is reached by: loopback, and the `kubernetes` Service's names and
/// first address of the service range the control plane is started with.
const APISERVER_NAMES: &[&str] = &[
    "127.0.0.1",
    "localhost",
    "10.0.0.1",
    "kubernetes",
    "kubernetes.default",
    "kubernetes.default.svc",
    "kubernetes.default.svc.cluster.local",
];

fn write(dir: &Path, name: &str, text: &str) -> anyhow::Result<PathBuf> {
    let path = dir.join(name);
    std::fs::write(&path, text).with_context(|| format!("cannot write {}", path.display()))?;
    Ok(path)
}

fn named(common_name: &str, organization: Option<&str>) -> DistinguishedName {
    let mut name = DistinguishedName::new();
    name.push(DnType::CommonName, common_name);
    if let Some(organization) = organization {
        name.push(DnType::OrganizationName, organization);
    }
    name
}

/// Generates the PKI into `dir`.
pub fn generate(dir: &Path) -> anyhow::Result<Pki> {
    let ca_key = KeyPair::generate()?;
    let mut ca_params = CertificateParams::new(Vec::<String>::new())?;
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca_params.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::CrlSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    ca_params.distinguished_name = named("suture-e2e-ca", None);
    let ca_cert = ca_params.self_signed(&ca_key)?;
    let ca = write(dir, "ca.crt", &ca_cert.pem())?;
    let issuer = Issuer::new(ca_params, ca_key);

    let leaf =
        |file: &str, sans: Vec<String>, cn: &str, org: Option<&str>, server: bool| -> anyhow::Result<Pair> {
            let key = KeyPair::generate()?;
            let mut params = CertificateParams::new(sans)?;
            params.distinguished_name = named(cn, org);
            params.key_usages = vec![
                KeyUsagePurpose::DigitalSignature,
                KeyUsagePurpose::KeyEncipherment,
            ];
            params.extended_key_usages = vec![if server {
                ExtendedKeyUsagePurpose::ServerAuth
            } else {
                ExtendedKeyUsagePurpose::ClientAuth
            }];
            let cert = params.signed_by(&key, &issuer)?;
            Ok(Pair {
                cert: write(dir, &format!("{file}.crt"), &cert.pem())?,
                key: write(dir, &format!("{file}.key"), &key.serialize_pem())?,
            })
        };
    let apiserver = leaf(
        "apiserver",
        APISERVER_NAMES.iter().map(|s| (*s).to_owned()).collect(),
        "kube-apiserver",
        None,
        true,
    )?;
    let admin = leaf(
        "admin",
        Vec::new(),
        "suture-e2e-admin",
        Some("system:masters"),
        false,
    )?;
    let controller_manager = leaf(
        "controller-manager",
        Vec::new(),
        "system:kube-controller-manager",
        None,
        false,
    )?;
    let sa_key = KeyPair::generate()?;
    Ok(Pki {
        ca,
        apiserver,
        admin,
        controller_manager,
        service_account_key: write(dir, "sa.key", &sa_key.serialize_pem())?,
        service_account_pub: write(dir, "sa.pub", &sa_key.public_key_pem())?,
    })
}
