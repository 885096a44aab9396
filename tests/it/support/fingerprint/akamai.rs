//! The client's opening HTTP/2 frames and their Akamai fingerprint
//! (`settings|window_update|priority|pseudo-header order`, Akamai's Black Hat EU 2017 paper).

/// The connection preface every HTTP/2 client sends first.
pub const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

const HEADERS: u8 = 1;
const PRIORITY: u8 = 2;
const SETTINGS: u8 = 4;
const WINDOW_UPDATE: u8 = 8;
const CONTINUATION: u8 = 9;
const FLAG_ACK: u8 = 0x1;
const FLAG_END_HEADERS: u8 = 0x4;
const FLAG_PADDED: u8 = 0x8;
const FLAG_PRIORITY: u8 = 0x20;

/// What the client sent before and with its first request.
#[derive(Debug, Clone, Default)]
pub struct H2Opening {
    /// SETTINGS (id, value) in the order sent.
    pub settings: Vec<(u16, u32)>,
    /// The connection-level WINDOW_UPDATE increment.
    pub window_update: Option<u32>,
    /// PRIORITY frames as `stream:exclusive:depends_on:weight`.
    pub priorities: Vec<String>,
    /// The first request's header list, pseudo-headers included, in the order sent.
    pub headers: Vec<(String, String)>,
    /// The HEADERS frame's own priority (exclusive, depends_on, weight), if flagged.
    pub headers_priority: Option<(bool, u32, u16)>,
}

/// Parses the frames that follow the preface in `plain` (the decrypted client bytes) up to and
/// including the first complete header block.
pub fn parse_opening(plain: &[u8]) -> Result<H2Opening, String> {
    let mut rest = plain
        .strip_prefix(PREFACE)
        .ok_or("the client did not start with the HTTP/2 preface")?;
    let mut out = H2Opening::default();
    let mut block: Option<Vec<u8>> = None;
    loop {
        if rest.len() < 9 {
            return Err("the first HEADERS frame never completed".into());
        }
        let len = usize::from(rest[0]) << 16 | usize::from(rest[1]) << 8 | usize::from(rest[2]);
        let (kind, flags) = (rest[3], rest[4]);
        let stream = u32::from_be_bytes([rest[5], rest[6], rest[7], rest[8]]) & 0x7fff_ffff;
        let payload = rest
            .get(9..9 + len)
            .ok_or("a frame is longer than what was recorded")?;
        rest = &rest[9 + len..];
        match kind {
            SETTINGS if flags & FLAG_ACK == 0 => {
                for pair in payload.chunks_exact(6) {
                    out.settings.push((
                        u16::from_be_bytes([pair[0], pair[1]]),
                        u32::from_be_bytes([pair[2], pair[3], pair[4], pair[5]]),
                    ));
                }
            }
            WINDOW_UPDATE if stream == 0 && payload.len() == 4 => {
                let inc = u32::from_be_bytes([payload[0], payload[1], payload[2], payload[3]]);
                out.window_update = Some(inc & 0x7fff_ffff);
            }
            PRIORITY if payload.len() == 5 => {
                let dep = u32::from_be_bytes([payload[0], payload[1], payload[2], payload[3]]);
                out.priorities.push(format!(
                    "{stream}:{}:{}:{}",
                    dep >> 31,
                    dep & 0x7fff_ffff,
                    u16::from(payload[4]) + 1
                ));
            }
            HEADERS if block.is_none() => {
                let mut body = payload;
                let mut pad = 0;
                if flags & FLAG_PADDED != 0 {
                    pad = usize::from(*body.first().ok_or("empty padded HEADERS")?);
                    body = &body[1..];
                }
                if flags & FLAG_PRIORITY != 0 {
                    let p = body.get(..5).ok_or("short HEADERS priority")?;
                    let dep = u32::from_be_bytes([p[0], p[1], p[2], p[3]]);
                    out.headers_priority =
                        Some((dep >> 31 == 1, dep & 0x7fff_ffff, u16::from(p[4]) + 1));
                    body = &body[5..];
                }
                let body = body
                    .get(..body.len().checked_sub(pad).ok_or("bad padding")?)
                    .ok_or("bad padding")?;
                block = Some(body.to_vec());
                if flags & FLAG_END_HEADERS != 0 {
                    break;
                }
            }
            CONTINUATION if block.is_some() => {
                block.as_mut().unwrap().extend_from_slice(payload);
                if flags & FLAG_END_HEADERS != 0 {
                    break;
                }
            }
            _ => {}
        }
    }
    let decoded = loona_hpack::Decoder::new()
        .decode(&block.unwrap_or_default())
        .map_err(|e| format!("HPACK: {e:?}"))?;
    out.headers = decoded
        .into_iter()
        .map(|(n, v)| {
            (
                String::from_utf8_lossy(&n).into_owned(),
                String::from_utf8_lossy(&v).into_owned(),
            )
        })
        .collect();
    Ok(out)
}

impl H2Opening {
    /// `1:65536;2:0;…|15663105|0|m,a,s,p`.
    pub fn akamai(&self) -> String {
        let settings: Vec<String> = self
            .settings
            .iter()
            .map(|(id, value)| format!("{id}:{value}"))
            .collect();
        let window = self
            .window_update
            .map_or_else(|| "00".to_string(), |w| w.to_string());
        let priority = if self.priorities.is_empty() {
            "0".to_string()
        } else {
            self.priorities.join(",")
        };
        let pseudo: Vec<&str> = self
            .headers
            .iter()
            .filter_map(|(n, _)| n.strip_prefix(':'))
            .map(|n| &n[..1])
            .collect();
        format!(
            "{}|{window}|{priority}|{}",
            settings.join(";"),
            pseudo.join(",")
        )
    }

    /// The regular header names of the first request, in the order sent.
    pub fn header_names(&self) -> Vec<&str> {
        self.headers
            .iter()
            .map(|(n, _)| n.as_str())
            .filter(|n| !n.starts_with(':'))
            .collect()
    }

    /// The value of the first header called `name`.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

#[test]
fn a_missing_preface_or_a_cut_frame_is_an_error() {
    assert!(parse_opening(b"GET / HTTP/1.1\r\n\r\n").is_err());
    let mut cut = PREFACE.to_vec();
    cut.extend_from_slice(&[0, 0, 6, SETTINGS, 0, 0, 0, 0, 0, 0, 1]);
    assert!(parse_opening(&cut).is_err());
}
