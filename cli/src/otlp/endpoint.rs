//! Where traces go: a URL (`--otlp`, `RUNLOG_OTLP_ENDPOINT`, or the standard
//! `OTEL_EXPORTER_OTLP_ENDPOINT`) and headers (`--header K=V`, `OTEL_EXPORTER_OTLP_HEADERS`).

use crate::error::{CliError, Result};

/// An OTLP/HTTP traces endpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    /// Host and port.
    pub authority: String,
    /// The path requests go to (`/v1/traces` unless the URL names another).
    pub path: String,
    /// Headers sent with each request.
    pub headers: Vec<(String, String)>,
}

impl Endpoint {
    /// The endpoint `url` names, with `headers` (`K=V`) and the standard variables' headers.
    pub fn parse(url: &str, headers: &[String]) -> Result<Self> {
        let hint = "an OTLP/HTTP endpoint: http://HOST:PORT (requests go to /v1/traces) or a URL ending in the traces path";
        let uri: axum::http::Uri = url
            .parse()
            .map_err(|e| CliError::input(format!("{url:?} is not a URL: {e}")).with_hint(hint))?;
        match uri.scheme_str() {
            Some("http") => {}
            Some("https") => {
                return Err(CliError::input(format!(
                    "{url}: runlog sends OTLP over plain HTTP only"
                ))
                .with_hint("send to an OpenTelemetry Collector on this host (http://127.0.0.1:4318), which forwards over TLS"))
            }
            _ => return Err(CliError::input(format!("{url:?} is not an http:// URL")).with_hint(hint)),
        }
        let Some(authority) = uri.authority().map(|a| a.to_string()) else {
            return Err(CliError::input(format!("{url:?} names no host")).with_hint(hint));
        };
        // A base URL, as OTEL_EXPORTER_OTLP_ENDPOINT gives it, gets the traces path.
        let path = match uri.path().trim_end_matches('/') {
            p if p.ends_with("/v1/traces") => p.to_owned(),
            p => format!("{p}/v1/traces"),
        };
        let mut all = Vec::new();
        let standard = std::env::var("OTEL_EXPORTER_OTLP_HEADERS").unwrap_or_default();
        for pair in standard
            .split(',')
            .map(str::trim)
            .filter(|p| !p.is_empty())
            .chain(headers.iter().map(String::as_str))
        {
            let Some((k, v)) = pair.split_once('=') else {
                return Err(CliError::input(format!("header {pair:?} is not K=V"))
                    .with_hint("e.g. --header authorization=\"Bearer TOKEN\""));
            };
            all.push((k.trim().to_owned(), percent_decoded(v.trim())));
        }
        Ok(Self {
            authority,
            path,
            headers: all,
        })
    }

    /// The endpoint of `--otlp URL`, else of `RUNLOG_OTLP_ENDPOINT`, else of
    /// `OTEL_EXPORTER_OTLP_ENDPOINT`; none when none is set.
    pub fn from_flag_or_env(url: Option<&str>, headers: &[String]) -> Result<Option<Self>> {
        let env = |k: &str| std::env::var(k).ok().filter(|v| !v.trim().is_empty());
        let url = url
            .map(str::to_owned)
            .or_else(|| env("RUNLOG_OTLP_ENDPOINT"))
            .or_else(|| env("OTEL_EXPORTER_OTLP_ENDPOINT"));
        url.map(|u| Self::parse(&u, headers)).transpose()
    }

    /// The endpoint as a URL, for messages.
    pub fn url(&self) -> String {
        format!("http://{}{}", self.authority, self.path)
    }
}

/// `OTEL_EXPORTER_OTLP_HEADERS` values are percent-encoded (W3C baggage format).
fn percent_decoded(v: &str) -> String {
    let bytes = v.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match (bytes.get(i), bytes.get(i + 1..i + 3)) {
            (Some(b'%'), Some(hex)) => match std::str::from_utf8(hex)
                .ok()
                .and_then(|h| u8::from_str_radix(h, 16).ok())
            {
                Some(b) => {
                    out.push(b);
                    i += 3;
                }
                None => {
                    out.push(b'%');
                    i += 1;
                }
            },
            (Some(b), _) => {
                out.push(*b);
                i += 1;
            }
            (None, _) => break,
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn urls_become_the_traces_endpoint() {
        let e = Endpoint::parse("http://127.0.0.1:6006", &[]).unwrap();
        assert_eq!(
            (e.authority.as_str(), e.path.as_str()),
            ("127.0.0.1:6006", "/v1/traces")
        );
        let e = Endpoint::parse("http://collector:4318/v1/traces", &["k=a%20b".into()]).unwrap();
        assert_eq!(e.path, "/v1/traces");
        assert_eq!(e.headers, vec![("k".to_owned(), "a b".to_owned())]);
        assert!(Endpoint::parse("https://cloud", &[]).is_err());
        assert!(Endpoint::parse("ftp://x", &[]).is_err());
        assert!(Endpoint::parse("http://x", &["novalue".into()]).is_err());
    }
}
