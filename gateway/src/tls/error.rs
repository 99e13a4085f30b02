//! What can go wrong setting up TLS.

use std::path::PathBuf;

/// A certificate, key or TLS configuration problem.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    #[error("cannot read {}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{}: {message}", path.display())]
    Certificate { path: PathBuf, message: String },
    #[error("{}: {message}", path.display())]
    Key { path: PathBuf, message: String },
    #[error("the key does not match the certificate ({})", cert.display())]
    Mismatch { cert: PathBuf },
    #[error("client CA {}: {message}", path.display())]
    ClientCa { path: PathBuf, message: String },
    #[error("cannot generate the self-signed certificate")]
    Generate(#[from] rcgen::Error),
    #[error("TLS configuration")]
    Rustls(#[from] rustls::Error),
}
