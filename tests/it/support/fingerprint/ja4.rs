//! The ClientHello as the client sent it, and its JA4 fingerprint (FoxIO's public JA4 spec).

use sha2::{Digest, Sha256};

/// TLS extension numbers the fingerprint needs.
pub const EXT_SNI: u16 = 0x0000;
pub const EXT_ALPN: u16 = 0x0010;
pub const EXT_SIG_ALGS: u16 = 0x000d;
pub const EXT_SUPPORTED_VERSIONS: u16 = 0x002b;
pub const EXT_KEY_SHARE: u16 = 0x0033;
/// The hybrid post-quantum group Chrome offers first since Chrome 131.
pub const X25519_MLKEM768: u16 = 0x11ec;

/// The parts of a ClientHello that JA4 and the tests read, in the order sent.
#[derive(Debug, Clone)]
pub struct ClientHello {
    pub legacy_version: u16,
    pub ciphers: Vec<u16>,
    pub extensions: Vec<(u16, Vec<u8>)>,
}

/// Whether `v` is a GREASE value (RFC 8701): 0x0a0a, 0x1a1a, … 0xfafa.
pub fn is_grease(v: u16) -> bool {
    v & 0x0f0f == 0x0a0a && (v >> 8) == (v & 0xff)
}

/// A cursor that never reads past its slice.
struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], String> {
        if self.0.len() < n {
            return Err(format!(
                "truncated: wanted {n} bytes, {} left",
                self.0.len()
            ));
        }
        let (head, tail) = self.0.split_at(n);
        self.0 = tail;
        Ok(head)
    }
    fn u8(&mut self) -> Result<u8, String> {
        Ok(self.take(1)?[0])
    }
    fn u16(&mut self) -> Result<u16, String> {
        let b = self.take(2)?;
        Ok(u16::from_be_bytes([b[0], b[1]]))
    }
    fn u24(&mut self) -> Result<usize, String> {
        let b = self.take(3)?;
        Ok(usize::from(b[0]) << 16 | usize::from(b[1]) << 8 | usize::from(b[2]))
    }
    fn vec8(&mut self) -> Result<&'a [u8], String> {
        let n = self.u8()?;
        self.take(n.into())
    }
    fn vec16(&mut self) -> Result<&'a [u8], String> {
        let n = self.u16()?;
        self.take(n.into())
    }
}

/// Reassembles the handshake message from the TLS records at the start of `raw` (the bytes the
/// client sent) and parses the ClientHello.
pub fn parse_client_hello(raw: &[u8]) -> Result<ClientHello, String> {
    let mut records = Reader(raw);
    let mut handshake = Vec::new();
    loop {
        let content_type = records.u8()?;
        let _version = records.u16()?;
        let fragment = records.vec16()?;
        if content_type != 22 {
            return Err(format!(
                "record type {content_type} before the ClientHello ended"
            ));
        }
        handshake.extend_from_slice(fragment);
        if handshake.len() >= 4 {
            let len = Reader(&handshake[1..4]).u24()?;
            if handshake.len() >= 4 + len {
                break;
            }
        }
    }
    let mut msg = Reader(&handshake);
    if msg.u8()? != 1 {
        return Err("the first handshake message is not a ClientHello".into());
    }
    let len = msg.u24()?;
    let mut hello = Reader(msg.take(len)?);
    let legacy_version = hello.u16()?;
    hello.take(32)?; // random
    hello.vec8()?; // legacy session id
    let mut suites = Reader(hello.vec16()?);
    let mut ciphers = Vec::new();
    while !suites.0.is_empty() {
        ciphers.push(suites.u16()?);
    }
    hello.vec8()?; // compression methods
    let mut exts = Reader(hello.vec16()?);
    let mut extensions = Vec::new();
    while !exts.0.is_empty() {
        let kind = exts.u16()?;
        extensions.push((kind, exts.vec16()?.to_vec()));
    }
    Ok(ClientHello {
        legacy_version,
        ciphers,
        extensions,
    })
}

fn hex4(v: &[u16]) -> Vec<String> {
    v.iter().map(|x| format!("{x:04x}")).collect()
}

/// The first 12 hex digits of SHA-256, or twelve zeros for nothing (as JA4 says).
fn hash12(text: &str) -> String {
    if text.is_empty() {
        return "000000000000".into();
    }
    Sha256::digest(text.as_bytes())
        .iter()
        .take(6)
        .map(|b| format!("{b:02x}"))
        .collect()
}

impl ClientHello {
    fn extension(&self, kind: u16) -> Option<&[u8]> {
        self.extensions
            .iter()
            .find(|(k, _)| *k == kind)
            .map(|(_, data)| data.as_slice())
    }

    /// Extension numbers in the order sent, GREASE included.
    pub fn extension_order(&self) -> Vec<u16> {
        self.extensions.iter().map(|(k, _)| *k).collect()
    }

    /// The ALPN protocols offered, in order.
    pub fn alpn(&self) -> Vec<String> {
        self.list(EXT_ALPN, Reader::vec16, |names| {
            names
                .vec8()
                .map(|name| String::from_utf8_lossy(name).into_owned())
        })
    }

    /// The versions of the supported_versions extension, GREASE included.
    pub fn supported_versions(&self) -> Vec<u16> {
        self.list(EXT_SUPPORTED_VERSIONS, Reader::vec8, Reader::u16)
    }

    /// The signature algorithms, in the order sent.
    pub fn signature_algorithms(&self) -> Vec<u16> {
        self.list(EXT_SIG_ALGS, Reader::vec16, Reader::u16)
    }

    /// The groups of the key shares the client sent, in order.
    pub fn key_share_groups(&self) -> Vec<u16> {
        self.list(EXT_KEY_SHARE, Reader::vec16, |shares| {
            let group = shares.u16()?;
            shares.vec16()?;
            Ok(group)
        })
    }

    /// The items of the list extension `id` carries, its length read by `length` and each
    /// item by `item`: empty when the extension is absent, as far as it reads when it is cut
    /// short.
    fn list<'a, T>(
        &'a self,
        id: u16,
        length: fn(&mut Reader<'a>) -> Result<&'a [u8], String>,
        item: impl Fn(&mut Reader<'a>) -> Result<T, String>,
    ) -> Vec<T> {
        let mut out = Vec::new();
        if let Some(data) = self.extension(id) {
            let mut list = Reader(data);
            if let Ok(inner) = length(&mut list) {
                let mut items = Reader(inner);
                while let Ok(value) = item(&mut items) {
                    out.push(value);
                }
            }
        }
        out
    }

    /// The JA4 fingerprint: `{t}{version}{d|i}{ciphers:02}{extensions:02}{alpn}_{b}_{c}`.
    pub fn ja4(&self) -> String {
        let version = self
            .supported_versions()
            .into_iter()
            .filter(|v| !is_grease(*v))
            .max()
            .unwrap_or(self.legacy_version);
        let version = match version {
            0x0304 => "13",
            0x0303 => "12",
            0x0302 => "11",
            0x0301 => "10",
            0x0300 => "s3",
            _ => "00",
        };
        let sni = if self.extension(EXT_SNI).is_some() {
            'd'
        } else {
            'i'
        };
        let mut ciphers: Vec<u16> = self
            .ciphers
            .iter()
            .copied()
            .filter(|c| !is_grease(*c))
            .collect();
        let exts: Vec<u16> = self
            .extension_order()
            .into_iter()
            .filter(|e| !is_grease(*e))
            .collect();
        let alpn = match self.alpn().first().map(String::as_bytes) {
            None | Some([]) => "00".to_string(),
            Some(name) => {
                let (first, last) = (name[0], name[name.len() - 1]);
                if first.is_ascii_alphanumeric() && last.is_ascii_alphanumeric() {
                    format!("{}{}", first as char, last as char)
                } else {
                    let (f, l) = (format!("{first:02x}"), format!("{last:02x}"));
                    format!("{}{}", &f[..1], &l[1..])
                }
            }
        };
        let a = format!(
            "t{version}{sni}{:02}{:02}{alpn}",
            ciphers.len().min(99),
            exts.len().min(99)
        );
        ciphers.sort_unstable();
        let b = hash12(&hex4(&ciphers).join(","));
        let mut sorted_exts: Vec<u16> = exts
            .into_iter()
            .filter(|e| *e != EXT_SNI && *e != EXT_ALPN)
            .collect();
        sorted_exts.sort_unstable();
        let mut c_text = hex4(&sorted_exts).join(",");
        let sig_algs = self.signature_algorithms();
        if !sig_algs.is_empty() && !c_text.is_empty() {
            c_text.push('_');
            c_text.push_str(&hex4(&sig_algs).join(","));
        }
        format!("{a}_{b}_{}", hash12(&c_text))
    }
}

#[test]
fn grease_values_are_recognised() {
    assert!(is_grease(0x0a0a) && is_grease(0xfafa) && is_grease(0x3a3a));
    assert!(!is_grease(0x1301) && !is_grease(0x0a1a) && !is_grease(0x11ec));
}

#[test]
fn truncated_hellos_are_errors_not_panics() {
    assert!(parse_client_hello(&[]).is_err());
    assert!(parse_client_hello(&[22, 3, 1, 0, 200, 1, 0]).is_err());
    assert!(parse_client_hello(&[23, 3, 3, 0, 1, 0]).is_err());
}
