//! The one HTTP client runlog uses to reach services outside it: the model gateway's calls to
//! providers and the traces sent to OTLP receivers. `http://` as it is; `https://` through
//! rustls with the system's roots, a CA file beside them (a private CA, a proxy in between),
//! and a client certificate for mutual TLS. HTTP/1.1 connections are kept open between requests
//! (each address's idle ones, at most [`MAX_IDLE`]), so a request pays no TCP or TLS handshake
//! while a connection is there. A client made [`Client::offering_http2`] speaks HTTP/2 with a
//! server that agrees to it over TLS (ALPN), every request to it on one connection at once.

use axum::body::Bytes;
use hyper::body::Incoming;
use runlog_store::tls;
use rustls::pki_types::ServerName;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use tokio::io::{AsyncRead, AsyncWrite};

/// What TLS trusts and shows, beside the system's roots.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TlsFiles {
    /// PEM CA certificates trusted beside the system's.
    pub ca_file: Option<PathBuf>,
    /// A PEM certificate (chain) and its key, shown to a server that asks (mutual TLS).
    pub client: Option<(PathBuf, PathBuf)>,
}

pub use runlog_store::tls::TlsError;

/// Why a request got no answer.
#[derive(Debug, thiserror::Error)]
pub enum Unanswered {
    /// Not an `http://` or `https://` URL.
    #[error("{0} is not an http:// or https:// address")]
    NotHttp(String),
    /// No connection could be made.
    #[error("cannot connect to {address}")]
    Connect {
        /// Host and port.
        address: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The TLS handshake failed: most often a certificate that does not verify.
    #[error("TLS with {host} failed")]
    Tls {
        /// The host.
        host: String,
        /// Why (rustls' words: an unknown issuer, a name mismatch, an expired certificate...).
        #[source]
        source: std::io::Error,
    },
    /// The request could not be made or its answer read.
    #[error("HTTP")]
    Http(#[source] hyper::Error),
    /// The request itself is not one (a header value that is not one).
    #[error("the request cannot be made: {0}")]
    Request(String),
}

impl Unanswered {
    /// Whether the server showed a CA certificate as its own, and it was not the one given.
    pub fn is_ca_as_own(&self) -> bool {
        self.tls_words()
            .is_some_and(|w| runlog_store::tls::is_ca_as_own(&w))
    }

    /// Whether the certificate the server showed is what failed (it does not verify).
    pub fn is_certificate(&self) -> bool {
        // rustls' words for a server certificate it refused.
        self.tls_words()
            .is_some_and(|w| w.contains("invalid peer certificate"))
    }

    /// Whether the server wanted a client certificate this client did not show, or refused
    /// the one it showed.
    pub fn wants_client_certificate(&self) -> bool {
        self.tls_words().is_some_and(|w| {
            w.contains("CertificateRequired")
                || w.contains("BadCertificate")
                || w.contains("UnknownCA")
                || w.contains("HandshakeFailure")
        })
    }

    fn tls_words(&self) -> Option<String> {
        match self {
            Unanswered::Tls { source, .. } => Some(source.to_string()),
            _ => None,
        }
    }
}

/// A client: its TLS set up once, and the connections it keeps open, for every request it
/// sends (its clones share them).
#[derive(Clone)]
pub struct Client {
    /// None for a client of `http://` only.
    tls: Option<tokio_rustls::TlsConnector>,
    /// The connections kept, by address and scheme.
    kept: Arc<Mutex<HashMap<String, Vec<Sender>>>>,
}

/// One connection's way to send requests.
enum Sender {
    /// HTTP/1.1: one request at a time, taken from the kept ones while it is under way.
    One(hyper::client::conn::http1::SendRequest<http_body_util::Full<Bytes>>),
    /// HTTP/2: many at once; it stays kept and each request sends on a clone of it.
    Many(hyper::client::conn::http2::SendRequest<http_body_util::Full<Bytes>>),
}

type Asked = axum::http::Request<http_body_util::Full<Bytes>>;
type Answer = axum::http::Response<Incoming>;

impl Sender {
    fn is_closed(&self) -> bool {
        match self {
            Sender::One(s) => s.is_closed(),
            Sender::Many(s) => s.is_closed(),
        }
    }

    fn is_ready(&self) -> bool {
        match self {
            Sender::One(s) => s.is_ready(),
            Sender::Many(s) => s.is_ready(),
        }
    }

    /// Sends `request` unless the connection closed before it was written: then it is given
    /// back to be sent on another.
    async fn try_send(
        &mut self,
        request: Asked,
    ) -> Result<Answer, hyper::client::conn::TrySendError<Asked>> {
        match self {
            Sender::One(s) => s.try_send_request(request).await,
            Sender::Many(s) => s.try_send_request(request).await,
        }
    }

    async fn send(&mut self, request: Asked) -> hyper::Result<Answer> {
        match self {
            Sender::One(s) => s.send_request(request).await,
            Sender::Many(s) => s.send_request(request).await,
        }
    }
}

/// Connections kept per address: more than the requests a process has in flight to one
/// provider at once is rare; past it, a connection closes when its answer is read.
pub const MAX_IDLE: usize = 64;

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client").finish_non_exhaustive()
    }
}

/// Where a URL's requests go.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// `https://`.
    pub secure: bool,
    /// Host and port as the URL gives them (the `Host` header).
    pub authority: String,
    /// The URL's path, without a trailing `/` (empty for none).
    pub path: String,
}

impl Target {
    /// The target of `url` (`http://HOST[:PORT][/PATH]` or `https://...`).
    pub fn of(url: &str) -> Result<Target, Unanswered> {
        let (secure, rest) = match url.split_once("://") {
            Some(("https", rest)) => (true, rest),
            Some(("http", rest)) => (false, rest),
            _ => return Err(Unanswered::NotHttp(url.to_owned())),
        };
        let (authority, path) = rest.split_once('/').unwrap_or((rest, ""));
        if authority.is_empty() {
            return Err(Unanswered::NotHttp(url.to_owned()));
        }
        let path = path.trim_end_matches('/');
        Ok(Target {
            secure,
            authority: authority.to_owned(),
            path: if path.is_empty() {
                String::new()
            } else {
                format!("/{path}")
            },
        })
    }

    /// The URL again (`https://HOST:PORT/PATH`).
    pub fn url(&self) -> String {
        let scheme = if self.secure { "https" } else { "http" };
        format!("{scheme}://{}{}", self.authority, self.path)
    }

    /// The host and the port the URL names (`[::1]:443`, `host:443`: the port follows the last
    /// colon, when it is digits).
    fn split(&self) -> (&str, Option<&str>) {
        match self.authority.rsplit_once(':') {
            Some((h, p)) if !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()) => (h, Some(p)),
            _ => (&self.authority, None),
        }
    }

    fn host(&self) -> &str {
        self.split().0.trim_start_matches('[').trim_end_matches(']')
    }

    fn address(&self) -> String {
        match self.split().1 {
            Some(_) => self.authority.clone(),
            None => format!("{}:{}", self.authority, if self.secure { 443 } else { 80 }),
        }
    }
}

impl Client {
    /// A client trusting the system's roots and `files`' CA, showing `files`' certificate.
    pub fn new(files: &TlsFiles) -> Result<Client, TlsError> {
        Client::speaking(files, Vec::new())
    }

    /// [`Client::new`], offering HTTP/2 to `https://` servers (ALPN `h2`, then `http/1.1`):
    /// with one that takes it, every request goes on one connection at once.
    pub fn offering_http2(files: &TlsFiles) -> Result<Client, TlsError> {
        Client::speaking(files, vec![b"h2".to_vec(), b"http/1.1".to_vec()])
    }

    /// A TLS client offering `protocols` (ALPN; none offered: HTTP/1.1).
    fn speaking(files: &TlsFiles, protocols: Vec<Vec<u8>>) -> Result<Client, TlsError> {
        let verifier = tls::verifier_of(&tls::Roots::SystemAnd(files.ca_file.clone()))?;
        let client = files
            .client
            .as_ref()
            .map(|(c, k)| (c.as_path(), k.as_path()));
        let mut config = tls::client_config(verifier, client)?;
        config.alpn_protocols = protocols;
        Ok(Client {
            tls: Some(tokio_rustls::TlsConnector::from(Arc::new(config))),
            kept: Arc::default(),
        })
    }

    /// A client of `http://` only (no TLS set up: an `https://` target is refused).
    pub fn plain() -> Client {
        Client {
            tls: None,
            kept: Arc::default(),
        }
    }

    fn kept(&self) -> std::sync::MutexGuard<'_, HashMap<String, Vec<Sender>>> {
        self.kept.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A kept connection to `key` free for a request, if one is (an HTTP/2 one stays kept: its
    /// clone is given); the closed ones are dropped.
    fn take_kept(&self, key: &str) -> Option<Sender> {
        let mut kept = self.kept();
        let senders = kept.get_mut(key)?;
        senders.retain(|s| !s.is_closed());
        let free = senders.iter().position(Sender::is_ready)?;
        match senders.get(free)? {
            Sender::Many(shared) => Some(Sender::Many(shared.clone())),
            Sender::One(_) => Some(senders.swap_remove(free)),
        }
    }

    /// Keeps `sender` for the next request to `key` (it is free again once its answer is read;
    /// an HTTP/2 one was never taken).
    fn keep(&self, key: String, sender: Sender) {
        let mut kept = self.kept();
        let senders = kept.entry(key).or_default();
        if senders.len() < MAX_IDLE {
            senders.push(sender);
        }
    }

    /// [`Client::keep`] for a connection taken from the kept ones.
    fn give_back(&self, key: String, sender: Sender) {
        if let Sender::One(_) = sender {
            self.keep(key, sender);
        }
    }

    /// Sends `request` (its URI the path and query) to `target`; the answer's head, its body
    /// to be read as it comes. On a kept connection when one is free; a kept connection the
    /// other side closed before the request was written is left for a new one (a request it
    /// may have read is never sent twice).
    pub async fn send(
        &self,
        target: &Target,
        request: axum::http::request::Builder,
        body: Bytes,
    ) -> Result<axum::http::Response<Incoming>, Unanswered> {
        let mut request = request
            .header(axum::http::header::HOST, target.authority.as_str())
            .body(http_body_util::Full::new(body))
            .map_err(|e| Unanswered::Request(e.to_string()))?;
        let key = format!(
            "{}://{}",
            if target.secure { "https" } else { "http" },
            target.address()
        );
        while let Some(mut sender) = self.take_kept(&key) {
            match sender.try_send(request).await {
                Ok(answer) => {
                    self.give_back(key, sender);
                    return Ok(answer);
                }
                Err(mut unsent) => match unsent.take_message() {
                    Some(again) => request = again,
                    None => return Err(Unanswered::Http(unsent.into_error())),
                },
            }
        }
        let mut sender = self.connect(target).await?;
        let answer = sender.send(request).await.map_err(Unanswered::Http)?;
        self.keep(key, sender);
        Ok(answer)
    }

    /// A new connection to `target`.
    async fn connect(&self, target: &Target) -> Result<Sender, Unanswered> {
        let address = target.address();
        let tcp = tokio::net::TcpStream::connect(&address)
            .await
            .map_err(|source| Unanswered::Connect {
                address: address.clone(),
                source,
            })?;
        // A request's head and body are written apart: without this the body waits on the
        // server's delayed acknowledgement.
        tcp.set_nodelay(true)
            .map_err(|source| Unanswered::Connect { address, source })?;
        if !target.secure {
            return handshake(tcp).await;
        }
        let host = target.host().to_owned();
        let name = ServerName::try_from(host.clone()).map_err(|e| Unanswered::Tls {
            host: host.clone(),
            source: std::io::Error::other(e.to_string()),
        })?;
        let Some(connector) = &self.tls else {
            return Err(Unanswered::Tls {
                host,
                source: std::io::Error::other("no TLS was set up for this address"),
            });
        };
        let tls = connector
            .connect(name, tcp)
            .await
            .map_err(|source| Unanswered::Tls { host, source })?;
        if tls.get_ref().1.alpn_protocol() == Some(b"h2") {
            return handshake_http2(tls).await;
        }
        handshake(tls).await
    }
}

/// An HTTP/1.1 connection over `stream`, driven on its own task until either side closes it.
async fn handshake<S>(stream: S) -> Result<Sender, Unanswered>
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let (sender, connection) =
        hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream))
            .await
            .map_err(Unanswered::Http)?;
    tokio::spawn(connection);
    Ok(Sender::One(sender))
}

/// An HTTP/2 connection over `stream` (the server agreed to it), driven on its own task.
async fn handshake_http2<S>(stream: S) -> Result<Sender, Unanswered>
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let (sender, connection) = hyper::client::conn::http2::handshake(
        hyper_util::rt::TokioExecutor::new(),
        hyper_util::rt::TokioIo::new(stream),
    )
    .await
    .map_err(Unanswered::Http)?;
    tokio::spawn(connection);
    Ok(Sender::Many(sender))
}

/// An error and each cause behind it, in one line (`TLS with HOST failed: invalid peer
/// certificate: UnknownIssuer`).
pub fn in_one_line(e: &dyn std::error::Error) -> String {
    let mut words = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        words.push_str(": ");
        words.push_str(&c.to_string());
        cause = c.source();
    }
    words
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_url_is_its_scheme_authority_and_path() {
        let t = Target::of("https://cloud.langfuse.com/api/public/otel/").unwrap();
        assert_eq!(
            (t.secure, t.authority.as_str(), t.path.as_str()),
            (true, "cloud.langfuse.com", "/api/public/otel")
        );
        assert_eq!(
            (t.host(), t.address().as_str()),
            ("cloud.langfuse.com", "cloud.langfuse.com:443")
        );
        let t = Target::of("http://127.0.0.1:6006").unwrap();
        assert_eq!(
            (t.path.as_str(), t.address().as_str()),
            ("", "127.0.0.1:6006")
        );
        let t = Target::of("https://[::1]:4318/v1/traces").unwrap();
        assert_eq!(t.host(), "::1");
        assert!(Target::of("ftp://x").is_err());
        assert!(Target::of("https:///x").is_err());
    }
}
