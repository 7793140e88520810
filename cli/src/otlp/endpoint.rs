//! Where traces go: a URL (`--otlp`, `RUNLOG_OTLP_ENDPOINT`, or the standard
//! `OTEL_EXPORTER_OTLP_ENDPOINT`), headers (`--otlp-header K=V`, `OTEL_EXPORTER_OTLP_HEADERS`:
//! secrets, never shown), TLS files (`--otlp-ca`, `--otlp-client-cert`/`-key`, or the standard
//! `OTEL_EXPORTER_OTLP_CERTIFICATE`, `_CLIENT_CERTIFICATE`, `_CLIENT_KEY`) and compression
//! (`--otlp-compression gzip`, `OTEL_EXPORTER_OTLP_COMPRESSION`).

use crate::error::{CliError, Result};
use runlog_gateway::http::{Client, Target, TlsFiles};
use std::path::PathBuf;

/// How traces are delivered, as the flags give it (the standard variables fill what they leave).
#[derive(Debug, Clone, Default, clap::Args)]
pub struct Delivery {
    /// A header sent with each OTLP request (repeatable), beside OTEL_EXPORTER_OTLP_HEADERS;
    /// its value is a secret: never printed, logged or recorded
    #[arg(
        long = "otlp-header",
        id = "otlp_header",
        visible_alias = "header",
        value_name = "K=V"
    )]
    pub headers: Vec<String>,
    /// CA certificates (PEM) an https:// receiver is also trusted by, beside the system's
    /// [env: OTEL_EXPORTER_OTLP_CERTIFICATE]
    #[arg(long = "otlp-ca", id = "otlp_ca", value_name = "FILE")]
    pub ca: Option<PathBuf>,
    /// A client certificate (PEM) for a receiver that asks for one (mutual TLS), with
    /// --otlp-client-key [env: OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE]
    #[arg(
        long = "otlp-client-cert",
        id = "otlp_client_cert",
        value_name = "FILE"
    )]
    pub client_cert: Option<PathBuf>,
    /// The client certificate's private key (PEM) [env: OTEL_EXPORTER_OTLP_CLIENT_KEY]
    #[arg(long = "otlp-client-key", id = "otlp_client_key", value_name = "FILE")]
    pub client_key: Option<PathBuf>,
    /// Compress each request: gzip, or none [env: OTEL_EXPORTER_OTLP_COMPRESSION; default:
    /// none]
    #[arg(
        long = "otlp-compression",
        id = "otlp_compression",
        value_name = "gzip|none"
    )]
    pub compression: Option<String>,
}

/// An OTLP/HTTP traces endpoint and how requests reach it.
#[derive(Clone)]
pub struct Endpoint {
    /// Where: scheme, host and port, and the path requests go to (`/v1/traces` unless the URL
    /// names another).
    pub target: Target,
    /// Headers sent with each request (their values secrets).
    pub headers: Vec<(String, String)>,
    /// Whether requests are gzipped.
    pub gzip: bool,
    /// Whether a client certificate is shown (mutual TLS).
    pub client_certificate: bool,
    /// The client, its TLS set up.
    pub client: Client,
}

impl std::fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // A header's value is a secret: its name only.
        let names: Vec<&str> = self.headers.iter().map(|(k, _)| k.as_str()).collect();
        f.debug_struct("Endpoint")
            .field("url", &self.url())
            .field("headers", &names)
            .field("gzip", &self.gzip)
            .finish_non_exhaustive()
    }
}

/// A standard variable, the traces-only one first.
fn standard(name: &str) -> Option<String> {
    [
        format!("OTEL_EXPORTER_OTLP_TRACES_{name}"),
        format!("OTEL_EXPORTER_OTLP_{name}"),
    ]
    .iter()
    .find_map(|k| std::env::var(k).ok().filter(|v| !v.trim().is_empty()))
}

impl Endpoint {
    /// The endpoint `url` names, delivered as `delivery` and the standard variables say.
    pub fn parse(url: &str, delivery: &Delivery) -> Result<Self> {
        let hint = "an OTLP/HTTP endpoint: http(s)://HOST:PORT (requests go to /v1/traces) or a URL ending in the traces path";
        let uri: axum::http::Uri = url
            .parse()
            .map_err(|e| CliError::input(format!("{url:?} is not a URL: {e}")).with_hint(hint))?;
        if !matches!(uri.scheme_str(), Some("http" | "https")) {
            return Err(
                CliError::input(format!("{url:?} is not an http:// or https:// URL"))
                    .with_hint(hint),
            );
        }
        let mut target = Target::of(url)
            .map_err(|e| CliError::input(format!("{url:?}: {e}")).with_hint(hint))?;
        // A base URL, as OTEL_EXPORTER_OTLP_ENDPOINT gives it, gets the traces path.
        if !target.path.ends_with("/v1/traces") {
            target.path = format!("{}/v1/traces", target.path);
        }
        let mut all = Vec::new();
        let from_env = std::env::var("OTEL_EXPORTER_OTLP_HEADERS").unwrap_or_default();
        for pair in from_env
            .split(',')
            .map(str::trim)
            .filter(|p| !p.is_empty())
            .chain(delivery.headers.iter().map(String::as_str))
        {
            let Some((k, v)) = pair.split_once('=') else {
                // Never the pair itself: it may be a value given without its name.
                return Err(CliError::input(
                    "an OTLP header is not K=V (its text is not shown: it may hold a secret)",
                )
                .with_hint("e.g. --otlp-header authorization=\"Bearer TOKEN\""));
            };
            all.push((k.trim().to_owned(), percent_decoded(v.trim())));
        }
        let gzip =
            match delivery
                .compression
                .clone()
                .or_else(|| standard("COMPRESSION"))
                .as_deref()
            {
                None | Some("none") => false,
                Some("gzip") => true,
                Some(other) => return Err(CliError::input(format!(
                    "OTLP compression {other:?} is not gzip or none"
                ))
                .with_hint(
                    "--otlp-compression gzip, or none (OTEL_EXPORTER_OTLP_COMPRESSION the same)",
                )),
            };
        let files = TlsFiles {
            ca_file: delivery
                .ca
                .clone()
                .or_else(|| standard("CERTIFICATE").map(PathBuf::from)),
            client: match (
                delivery
                    .client_cert
                    .clone()
                    .or_else(|| standard("CLIENT_CERTIFICATE").map(PathBuf::from)),
                delivery
                    .client_key
                    .clone()
                    .or_else(|| standard("CLIENT_KEY").map(PathBuf::from)),
            ) {
                (Some(cert), Some(key)) => Some((cert, key)),
                (None, None) => None,
                _ => {
                    return Err(CliError::input(
                        "a client certificate needs its key, and a key its certificate",
                    )
                    .with_hint("give both --otlp-client-cert FILE and --otlp-client-key FILE"))
                }
            },
        };
        let client_certificate = files.client.is_some();
        let client = Client::new(&files).map_err(|e| {
            CliError::input(e.to_string())
                .with_hint("give PEM files: --otlp-ca a CA certificate, --otlp-client-cert a certificate and --otlp-client-key its key")
        })?;
        Ok(Self {
            target,
            headers: all,
            gzip,
            client_certificate,
            client,
        })
    }

    /// The endpoint of `--otlp URL`, else of `RUNLOG_OTLP_ENDPOINT`, else of
    /// `OTEL_EXPORTER_OTLP_ENDPOINT`; none when none is set.
    pub fn from_flag_or_env(url: Option<&str>, delivery: &Delivery) -> Result<Option<Self>> {
        let env = |k: &str| std::env::var(k).ok().filter(|v| !v.trim().is_empty());
        let url = url
            .map(str::to_owned)
            .or_else(|| env("RUNLOG_OTLP_ENDPOINT"))
            .or_else(|| env("OTEL_EXPORTER_OTLP_ENDPOINT"));
        url.map(|u| Self::parse(&u, delivery)).transpose()
    }

    /// The endpoint as a URL, for messages (never a header).
    pub fn url(&self) -> String {
        self.target.url()
    }

    /// The names of the headers sent, for messages.
    pub fn header_names(&self) -> Vec<&str> {
        self.headers.iter().map(|(k, _)| k.as_str()).collect()
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
        let none = Delivery::default();
        let e = Endpoint::parse("http://127.0.0.1:6006", &none).unwrap();
        assert_eq!(e.url(), "http://127.0.0.1:6006/v1/traces");
        let with = Delivery {
            headers: vec!["k=a%20b".into()],
            compression: Some("gzip".into()),
            ..Delivery::default()
        };
        let e = Endpoint::parse("https://collector:4318/v1/traces", &with).unwrap();
        assert_eq!(
            (e.url().as_str(), e.gzip),
            ("https://collector:4318/v1/traces", true)
        );
        assert_eq!(e.headers, vec![("k".to_owned(), "a b".to_owned())]);
        // A header's value is never shown, in Debug either.
        assert!(!format!("{e:?}").contains("a b"));
        let e = Endpoint::parse("https://cloud.langfuse.com/api/public/otel", &none).unwrap();
        assert_eq!(
            e.url(),
            "https://cloud.langfuse.com/api/public/otel/v1/traces"
        );
        assert!(Endpoint::parse("ftp://x", &none).is_err());
        let novalue = Delivery {
            headers: vec!["sk-secret-value".into()],
            ..Delivery::default()
        };
        let refused = Endpoint::parse("http://x", &novalue).unwrap_err();
        assert!(
            !refused.message.contains("sk-secret-value"),
            "{}",
            refused.message
        );
        let zip = Delivery {
            compression: Some("zip".into()),
            ..Delivery::default()
        };
        assert!(Endpoint::parse("http://x", &zip).is_err());
    }
}
