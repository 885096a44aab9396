//! Proxy URLs as the configuration gives them: checked at load, and masked in every message.
//!
//! A proxy URL may carry a user name and a password, so no error here quotes one; the
//! configuration (`upstream.proxies`, `<platform>.proxies`) is checked with
//! [`check_proxies`], and `upstream::egress` builds its clients from [`parse_proxy`]'s
//! result. It lives with the configuration (as `ca_file` does) so that the upstream layer
//! reads the config and never the other way round.

use url::Url;

/// The most proxies one list may name (the fleet reads all their rests in one call).
pub const MAX_PROXIES: usize = 256;

/// What a gateway's URL holds, in its user name or password, where each session's id goes: a
/// URL holding it is a provider's gateway (one host and port, the exit address chosen by the
/// session id in the credentials), not a fixed proxy.
pub const SESSION: &str = "{session}";

/// What stands for the session id while a gateway's URL is checked: letters and digits, as
/// every provider accepts (so it is never percent-encoded, and is found again as written).
const SAMPLE_SESSION: &str = "zq0session0zq";

/// Whether proxy URL `raw` is a gateway (it holds [`SESSION`]).
pub fn is_gateway(raw: &str) -> bool {
    raw.contains(SESSION)
}

/// Gateway `raw`'s URL for session `id` (letters and digits), as the clients take it.
pub fn with_session(raw: &str, id: &str) -> Result<Url, &'static str> {
    parse_proxy(&raw.replace(SESSION, id))
}

/// Checks one proxy list (`name` is its config path): each entry an `http://`, `https://` or
/// `socks5h://` URL with a host and a port, nothing else. The error names the position and
/// the URL with its credentials masked.
pub fn check_proxies(name: &str, list: &[String]) -> Result<(), String> {
    if list.len() > MAX_PROXIES {
        return Err(format!(
            "{name} lists {} proxies; at most {MAX_PROXIES}",
            list.len()
        ));
    }
    for (at, raw) in list.iter().enumerate() {
        parse_proxy(raw).map_err(|why| match masked(raw) {
            Some(shown) => format!("{name}[{at}] ({shown}): {why}"),
            None => format!("{name}[{at}]: {why}"),
        })?;
    }
    Ok(())
}

/// A proxy URL as the clients take it, or why it cannot be one (the reason quotes nothing).
///
/// A gateway's URL ([`is_gateway`]) is checked with a sample session id in place of
/// [`SESSION`], which must stand in the user name or the password and nowhere else.
pub fn parse_proxy(raw: &str) -> Result<Url, &'static str> {
    if is_gateway(raw) {
        let url = parse_fixed(&raw.replace(SESSION, SAMPLE_SESSION))?;
        let in_credentials = url.username().contains(SAMPLE_SESSION)
            || url.password().is_some_and(|p| p.contains(SAMPLE_SESSION));
        if !in_credentials || url.host_str().is_some_and(|h| h.contains(SAMPLE_SESSION)) {
            return Err("{session} goes in the user name or the password, nowhere else");
        }
        return Ok(url);
    }
    parse_fixed(raw)
}

/// A fixed proxy's URL as the clients take it, or why it cannot be one.
fn parse_fixed(raw: &str) -> Result<Url, &'static str> {
    let url = Url::parse(raw.trim()).map_err(|_| {
        "not a URL: write http://host:port, https://host:port or socks5h://host:port, with \
         user:pass@ before the host if the proxy wants credentials"
    })?;
    if !matches!(url.scheme(), "http" | "https" | "socks5h") {
        return Err("the scheme must be http, https or socks5h");
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err("it has no host");
    }
    if !has_port(raw) {
        return Err(
            "it has no port: write the proxy's port after its host, e.g. \
                    http://proxy.example:3128 (a proxy's port is rarely the scheme's own)",
        );
    }
    if !matches!(url.path(), "" | "/") || url.query().is_some() || url.fragment().is_some() {
        return Err("a proxy URL has no path, query or fragment");
    }
    Ok(url)
}

/// Whether the URL `raw` writes a port after its host (`url` forgets a port that is the
/// scheme's own, so the text is read).
fn has_port(raw: &str) -> bool {
    let rest = raw.trim().split_once("://").map_or(raw, |(_, rest)| rest);
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    let host_port = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let port = match host_port.rsplit_once(']') {
        Some((_, after)) => after.strip_prefix(':'),
        None => host_port.rsplit_once(':').map(|(_, port)| port),
    };
    port.is_some_and(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
}

/// `raw` fit for a message or `check`'s output: user name and password masked (a provider's
/// user name often carries an account id too); `None` when it is no URL (nothing of it is
/// shown then).
pub fn masked(raw: &str) -> Option<String> {
    let mut url = Url::parse(raw.trim()).ok()?;
    if !url.username().is_empty() {
        let _ = url.set_username("***");
    }
    if url.password().is_some() {
        let _ = url.set_password(Some("***"));
    }
    let shown = url.to_string();
    Some(match shown.strip_suffix('/') {
        Some(bare) if url.path() == "/" && !raw.trim().ends_with('/') => bare.to_owned(),
        _ => shown,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proxy_lists_are_checked_without_showing_a_password() {
        let ok = [
            "http://127.0.0.1:3128",
            "https://user:pass@proxy.example:443/",
            "socks5h://u:p@10.0.0.1:1080",
            "http://[::1]:3128",
        ];
        assert!(check_proxies("upstream.proxies", &ok.map(String::from)).is_ok());
        for (bad, says) in [
            ("ftp://u:hunter2@h:21", "scheme"),
            ("socks5://u:hunter2@h:1080", "scheme"),
            ("socks5h://u:hunter2@h", "port"),
            ("http://u:hunter2@proxy.example", "no port"),
            ("http://[::1]", "no port"),
            ("http://h:/", "no port"),
            ("http://u:hunter2@h:1/path", "path"),
            ("not a url hunter2", "not a URL"),
            ("http://u:hunter2@:8080", "not a URL"),
        ] {
            let err = check_proxies("short_video.proxies", &[bad.to_owned()]).unwrap_err();
            assert!(err.contains(says), "{bad}: {err}");
            assert!(err.contains("short_video.proxies[0]"), "{err}");
            assert!(!err.contains("hunter2"), "{err}");
        }
        let many = vec!["http://h:1".to_owned(); MAX_PROXIES + 1];
        assert!(check_proxies("upstream.proxies", &many).is_err());
    }

    #[test]
    fn a_gateway_holds_its_session_in_the_credentials_only() {
        let good = [
            "http://customer-acme-sessid-{session}-sesstime-10:hunter2@pr.example:7777",
            "http://acme:hunter2_session-{session}_lifetime-10m@geo.example:12321",
            "socks5h://u-{session}:hunter2@10.0.0.1:1080",
        ];
        for raw in good {
            assert!(is_gateway(raw));
            assert!(
                check_proxies("upstream.proxies", &[raw.to_owned()]).is_ok(),
                "{raw}"
            );
            let url = with_session(raw, "ab12cd34").unwrap();
            let credentials = format!("{}:{}", url.username(), url.password().unwrap());
            assert!(credentials.contains("ab12cd34"), "{credentials}");
            assert!(!url.as_str().contains("session}"), "{url}");
        }
        for bad in [
            "http://u:hunter2@{session}.example:8080",
            "http://u:hunter2@h.example:8080/{session}",
        ] {
            let err = check_proxies("upstream.proxies", &[bad.to_owned()]).unwrap_err();
            assert!(!err.contains("hunter2"), "{err}");
        }
        assert!(!is_gateway("http://u:p@h:1"));
    }

    #[test]
    fn the_mask_hides_user_and_password() {
        assert_eq!(
            masked("http://acct-7:s3cret@proxy.example:8080").unwrap(),
            "http://***:***@proxy.example:8080"
        );
        assert_eq!(
            masked("http://proxy.example:8080/").unwrap(),
            "http://proxy.example:8080/"
        );
        assert_eq!(masked("no url s3cret"), None);
    }
}
