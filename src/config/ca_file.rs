//! `upstream.ca_file`, read once with a size cap and checked when the settings are validated,
//! so a wrong path or a file without a certificate stops the service with its name instead of
//! failing every lookup later. The upstream clients read it through here too.

use std::io::Read;
use std::path::Path;

/// Largest `ca_file` read: a bundle of every public root is about 250 KiB.
pub const MAX_CA_FILE_BYTES: u64 = 4 * 1024 * 1024;

/// The PEM text of `path`, once it is known to hold at least one certificate that decodes;
/// otherwise what is wrong with it.
pub fn read_pem_roots(path: &Path) -> Result<Vec<u8>, String> {
    let file = std::fs::File::open(path).map_err(|e| e.to_string())?;
    let mut pem = Vec::new();
    file.take(MAX_CA_FILE_BYTES + 1)
        .read_to_end(&mut pem)
        .map_err(|e| e.to_string())?;
    if pem.len() as u64 > MAX_CA_FILE_BYTES {
        return Err(format!("larger than {MAX_CA_FILE_BYTES} bytes"));
    }
    let certs = reqwest::Certificate::from_pem_bundle(&pem)
        .map_err(|e| format!("not a PEM certificate bundle: {e}"))?;
    if certs.is_empty() {
        return Err("holds no PEM certificate".into());
    }
    Ok(pem)
}
