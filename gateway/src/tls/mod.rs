//! TLS for the webhook listener: a rustls `ServerConfig` (ring, ALPN h2 + http/1.1) whose
//! certificate comes from a [`ReloadingResolver`] (files reloaded on change, or a generated
//! self-signed pair), with optional verification of the API server's client certificate.

mod error;
mod resolver;
mod self_signed;

use std::path::Path;
use std::sync::Arc;

use rustls::RootCertStore;
use rustls::crypto::CryptoProvider;
use rustls::pki_types::CertificateDer;
use rustls::pki_types::pem::PemObject;
use rustls::server::WebPkiClientVerifier;

pub use error::TlsError;
pub use resolver::ReloadingResolver;
pub use self_signed::SelfSigned;

/// The crypto provider everything uses (ring: no C toolchain for crypto).
pub fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// The webhook's server configuration: certificates from `resolver`, client certificates
/// required and verified against `client_ca` when given.
pub fn server_config(
    resolver: Arc<ReloadingResolver>,
    client_ca: Option<&Path>,
) -> Result<rustls::ServerConfig, TlsError> {
    let builder =
        rustls::ServerConfig::builder_with_provider(provider()).with_safe_default_protocol_versions()?;
    let builder = match client_ca {
        Some(path) => {
            let verifier = WebPkiClientVerifier::builder_with_provider(Arc::new(roots(path)?), provider())
                .build()
                .map_err(|e| TlsError::ClientCa {
                    path: path.to_path_buf(),
                    message: e.to_string(),
                })?;
            builder.with_client_cert_verifier(verifier)
        }
        None => builder.with_no_client_auth(),
    };
    let mut config = builder.with_cert_resolver(resolver);
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(config)
}

/// The trust anchors in a PEM bundle.
fn roots(path: &Path) -> Result<RootCertStore, TlsError> {
    let text = std::fs::read(path).map_err(|source| TlsError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    let certs = CertificateDer::pem_slice_iter(&text)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| TlsError::ClientCa {
            path: path.to_path_buf(),
            message: e.to_string(),
        })?;
    let mut store = RootCertStore::empty();
    let (added, _) = store.add_parsable_certificates(certs);
    if added == 0 {
        return Err(TlsError::ClientCa {
            path: path.to_path_buf(),
            message: "no usable CA certificate in the file".into(),
        });
    }
    Ok(store)
}
