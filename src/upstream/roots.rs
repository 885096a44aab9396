//! Extra certificate authorities the upstream clients trust (`upstream.ca_file`).
//!
//! A TLS-inspecting proxy in front of the service, or a loopback test server with a throwaway
//! CA, presents certificates no public root signed. Both clients (plain and browser) add the
//! certificates of this one PEM file to their public roots; nothing else about verification
//! changes. The file is read with a size cap and checked at config validation, so a wrong path
//! or a file that holds no certificate stops the service with its name instead of failing
//! every lookup later.

use std::path::{Path, PathBuf};

/// Why an upstream client could not be built.
#[derive(Debug, thiserror::Error)]
pub enum ClientBuildError {
    /// `upstream.ca_file` is missing, unreadable, too large or holds no PEM certificate.
    #[error("upstream.ca_file {path}: {reason}")]
    CaFile {
        /// The configured path.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
    /// The plain (rustls) client rejected its configuration.
    #[error(transparent)]
    Plain(#[from] reqwest::Error),
    /// A proxy URL was refused by the client (it is never quoted: it may hold a password).
    #[error("a proxy URL was refused by the HTTP client (the URL is not shown)")]
    Proxy,
    /// The browser-grade client rejected its configuration, or this build has none.
    #[error("the browser-grade client: {0}")]
    Browser(String),
}

/// Reads `path` and returns its PEM text after checking that it holds at least one certificate
/// that decodes.
pub fn read_pem_roots(path: &Path) -> Result<Vec<u8>, ClientBuildError> {
    crate::config::ca_file::read_pem_roots(path).map_err(|reason| ClientBuildError::CaFile {
        path: path.to_path_buf(),
        reason,
    })
}

/// The certificates of `upstream.ca_file` in the plain client's form.
pub fn plain_roots(path: &Path) -> Result<Vec<reqwest::Certificate>, ClientBuildError> {
    let pem = read_pem_roots(path)?;
    Ok(reqwest::Certificate::from_pem_bundle(&pem)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A file removed when the handle drops.
    fn temp_file(name: &str, content: &[u8]) -> tempfile::NamedTempFile {
        use std::io::Write;
        let mut file = tempfile::Builder::new().suffix(name).tempfile().unwrap();
        file.write_all(content).unwrap();
        file
    }

    #[test]
    fn a_missing_file_is_named_in_the_error() {
        let err = read_pem_roots(Path::new("/nonexistent/ca.pem")).unwrap_err();
        assert!(err.to_string().contains("/nonexistent/ca.pem"), "{err}");
    }

    #[test]
    fn a_file_without_certificates_is_refused() {
        let file = temp_file("empty.pem", b"just some text\n");
        let err = read_pem_roots(file.path()).unwrap_err().to_string();
        assert!(err.contains("no PEM certificate"), "{err}");
        let file = temp_file(
            "broken.pem",
            b"-----BEGIN CERTIFICATE-----\n!!!notbase64!!!\n-----END CERTIFICATE-----\n",
        );
        assert!(read_pem_roots(file.path()).is_err());
    }
}
