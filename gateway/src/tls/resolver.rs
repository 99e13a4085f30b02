//! The serving certificate, swappable at run time: every handshake asks the resolver for the
//! current pair, so a rotated certificate (cert-manager swaps the secret's symlinks) serves new
//! connections at once while established ones keep their session. A broken new pair is logged
//! and the old one keeps serving.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use arc_swap::ArcSwap;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::{ClientHello, ResolvesServerCert};
use rustls::sign::CertifiedKey;

use crate::tls::TlsError;

/// The certificate and key files a resolver reloads from.
#[derive(Debug, Clone)]
struct Files {
    cert: PathBuf,
    key: PathBuf,
}

/// Serves the current certificate; reloads it from files when they change.
#[derive(Debug)]
pub struct ReloadingResolver {
    current: ArcSwap<CertifiedKey>,
    files: Option<Files>,
    /// The file contents the current pair was built from (compared on each poll).
    loaded: Mutex<(Vec<u8>, Vec<u8>)>,
}

impl ReloadingResolver {
    /// A resolver serving the pair in `cert` and `key`, reloaded by [`Self::reload_if_changed`].
    pub fn from_files(cert: &Path, key: &Path) -> Result<Self, TlsError> {
        let (cert_pem, key_pem) = read_pair(cert, key)?;
        let certified = certified_key(&cert_pem, &key_pem, cert, key)?;
        Ok(Self {
            current: ArcSwap::from_pointee(certified),
            files: Some(Files {
                cert: cert.to_path_buf(),
                key: key.to_path_buf(),
            }),
            loaded: Mutex::new((cert_pem, key_pem)),
        })
    }

    /// A resolver serving a fixed pair given as PEM text (a generated self-signed pair).
    pub fn from_pem(cert_pem: &str, key_pem: &str) -> Result<Self, TlsError> {
        let here = Path::new("<generated>");
        let certified = certified_key(cert_pem.as_bytes(), key_pem.as_bytes(), here, here)?;
        Ok(Self {
            current: ArcSwap::from_pointee(certified),
            files: None,
            loaded: Mutex::new((Vec::new(), Vec::new())),
        })
    }

    /// The certificate chain being served now.
    pub fn current_chain(&self) -> Vec<CertificateDer<'static>> {
        self.current.load().cert.clone()
    }

    /// Re-reads the files; swaps in the new pair when they changed and are valid. `Ok(true)` when
    /// a new pair now serves; an error leaves the old pair serving.
    pub fn reload_if_changed(&self) -> Result<bool, TlsError> {
        let Some(files) = &self.files else {
            return Ok(false);
        };
        let (cert_pem, key_pem) = read_pair(&files.cert, &files.key)?;
        let mut loaded = self.loaded.lock().unwrap_or_else(|p| p.into_inner());
        if loaded.0 == cert_pem && loaded.1 == key_pem {
            return Ok(false);
        }
        let certified = certified_key(&cert_pem, &key_pem, &files.cert, &files.key);
        // Remember the contents either way: a broken pair is reported once, not on every poll.
        *loaded = (cert_pem, key_pem);
        self.current.store(Arc::new(certified?));
        Ok(true)
    }

    /// Polls the files every `interval` until the future is dropped, logging each rotation
    /// and each broken pair.
    pub async fn watch(self: Arc<Self>, interval: Duration) {
        if self.files.is_none() {
            return std::future::pending().await;
        }
        let mut ticker = tokio::time::interval(interval);
        ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            ticker.tick().await;
            let this = Arc::clone(&self);
            match tokio::task::spawn_blocking(move || this.reload_if_changed()).await {
                Ok(Ok(true)) => tracing::info!("serving certificate reloaded"),
                Ok(Ok(false)) => {}
                Ok(Err(error)) => tracing::error!(
                    error = %crate::error_chain(&error),
                    "new certificate rejected; the previous one keeps serving"
                ),
                Err(error) => tracing::error!(%error, "certificate reload task failed"),
            }
        }
    }
}

impl ResolvesServerCert for ReloadingResolver {
    fn resolve(&self, _hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        Some(self.current.load_full())
    }
}

fn read_pair(cert: &Path, key: &Path) -> Result<(Vec<u8>, Vec<u8>), TlsError> {
    let read = |path: &Path| {
        std::fs::read(path).map_err(|source| TlsError::Read {
            path: path.to_path_buf(),
            source,
        })
    };
    Ok((read(cert)?, read(key)?))
}

/// Parses a PEM chain and key into a signing pair, checking that they belong together.
fn certified_key(
    cert_pem: &[u8],
    key_pem: &[u8],
    cert_path: &Path,
    key_path: &Path,
) -> Result<CertifiedKey, TlsError> {
    let chain = CertificateDer::pem_slice_iter(cert_pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| TlsError::Certificate {
            path: cert_path.to_path_buf(),
            message: e.to_string(),
        })?;
    if chain.is_empty() {
        return Err(TlsError::Certificate {
            path: cert_path.to_path_buf(),
            message: "no PEM certificate in the file".into(),
        });
    }
    let key = PrivateKeyDer::from_pem_slice(key_pem).map_err(|e| TlsError::Key {
        path: key_path.to_path_buf(),
        message: e.to_string(),
    })?;
    let signing = rustls::crypto::ring::sign::any_supported_type(&key).map_err(|e| TlsError::Key {
        path: key_path.to_path_buf(),
        message: e.to_string(),
    })?;
    let certified = CertifiedKey::new(chain, signing);
    certified.keys_match().map_err(|_| TlsError::Mismatch {
        cert: cert_path.to_path_buf(),
    })?;
    Ok(certified)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tls::SelfSigned;

    #[test]
    fn a_changed_pair_is_swapped_in_and_a_broken_one_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let (cert, key) = (dir.path().join("tls.crt"), dir.path().join("tls.key"));
        let first = SelfSigned::generate(&["localhost".into()]).unwrap();
        std::fs::write(&cert, &first.cert_pem).unwrap();
        std::fs::write(&key, &first.key_pem).unwrap();
        let resolver = ReloadingResolver::from_files(&cert, &key).unwrap();
        assert!(!resolver.reload_if_changed().unwrap());
        let before = resolver.current_chain();

        let second = SelfSigned::generate(&["localhost".into()]).unwrap();
        std::fs::write(&cert, &second.cert_pem).unwrap();
        // The key is still the old one: a mismatched pair must not serve.
        assert!(matches!(
            resolver.reload_if_changed(),
            Err(TlsError::Mismatch { .. })
        ));
        assert_eq!(resolver.current_chain(), before);

        std::fs::write(&key, &second.key_pem).unwrap();
        assert!(resolver.reload_if_changed().unwrap());
        assert_ne!(resolver.current_chain(), before);
    }

    #[test]
    fn missing_files_are_named() {
        let error = ReloadingResolver::from_files(Path::new("/nonexistent/tls.crt"), Path::new("k"))
            .unwrap_err()
            .to_string();
        assert!(error.contains("/nonexistent/tls.crt"), "{error}");
    }
}
