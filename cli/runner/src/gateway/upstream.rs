//! Reaching a provider: `http://` as it is, `https://` through rustls with the system's roots
//! (and a provider's own CA file, for a proxy in between), one HTTP/1.1 connection a call.

use super::providers::Provider;
use axum::body::Bytes;
use hyper::body::Incoming;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tokio::io::{AsyncRead, AsyncWrite};

/// Why a provider's TLS cannot be set up.
#[derive(Debug, thiserror::Error)]
pub enum GatewayError {
    /// The loopback listener could not be opened.
    #[error("cannot listen on 127.0.0.1")]
    Listen(#[source] std::io::Error),
    /// A provider's `ca_file` is not a file of PEM CA certificates.
    #[error("provider {provider}'s ca_file {}: {why}", path.display())]
    Ca {
        /// The provider.
        provider: String,
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        why: String,
    },
}

/// The TLS client of each `https://` provider, by name.
#[derive(Default)]
pub(super) struct Upstreams {
    tls: HashMap<String, tokio_rustls::TlsConnector>,
}

impl std::fmt::Debug for Upstreams {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Upstreams")
            .field("tls", &self.tls.keys().collect::<Vec<_>>())
            .finish()
    }
}

impl Upstreams {
    /// Sets up each `https://` provider's TLS: the system's roots and its own CA file.
    pub(super) fn of(providers: &[Provider]) -> Result<Upstreams, GatewayError> {
        let mut tls = HashMap::new();
        for p in providers
            .iter()
            .filter(|p| p.base_url.starts_with("https://"))
        {
            let mut roots = rustls::RootCertStore::empty();
            for cert in rustls_native_certs::load_native_certs().certs {
                let _ = roots.add(cert);
            }
            if let Some(path) = &p.ca_file {
                for cert in ca_certificates(path).map_err(|why| GatewayError::Ca {
                    provider: p.name.clone(),
                    path: path.clone(),
                    why,
                })? {
                    let _ = roots.add(cert);
                }
            }
            let config = rustls::ClientConfig::builder_with_provider(Arc::new(
                rustls::crypto::ring::default_provider(),
            ))
            .with_safe_default_protocol_versions()
            .map_err(|e| GatewayError::Ca {
                provider: p.name.clone(),
                path: p.ca_file.clone().unwrap_or_default(),
                why: e.to_string(),
            })?
            .with_root_certificates(roots)
            .with_no_client_auth();
            tls.insert(
                p.name.clone(),
                tokio_rustls::TlsConnector::from(Arc::new(config)),
            );
        }
        Ok(Upstreams { tls })
    }

    /// Sends `request` (its path already the provider's) to `provider`.
    pub(super) async fn send(
        &self,
        provider: &Provider,
        request: axum::http::request::Builder,
        path: &str,
        body: Bytes,
    ) -> Result<axum::http::Response<Incoming>, String> {
        let (secure, rest) = match provider.base_url.split_once("://") {
            Some(("https", rest)) => (true, rest),
            Some(("http", rest)) => (false, rest),
            _ => {
                return Err(format!(
                    "{} is not an http:// or https:// address",
                    provider.base_url
                ))
            }
        };
        let authority = rest.split('/').next().unwrap_or(rest);
        let request = request
            .uri(path)
            .header(axum::http::header::HOST, authority)
            .body(http_body_util::Full::new(body))
            .map_err(|e| e.to_string())?;
        let address = if authority.contains(':') {
            authority.to_owned()
        } else {
            format!("{authority}:{}", if secure { 443 } else { 80 })
        };
        let tcp = tokio::net::TcpStream::connect(&address)
            .await
            .map_err(|e| e.to_string())?;
        // A request's head and body are written apart: without this the body waits on the
        // provider's delayed acknowledgement.
        tcp.set_nodelay(true).map_err(|e| e.to_string())?;
        if !secure {
            return exchange(tcp, request).await;
        }
        let connector = self
            .tls
            .get(&provider.name)
            .ok_or_else(|| "no TLS set up for this provider".to_owned())?;
        let host = authority.rsplit_once(':').map_or(authority, |(h, _)| h);
        let name = ServerName::try_from(host.to_owned()).map_err(|e| e.to_string())?;
        let tls = connector
            .connect(name, tcp)
            .await
            .map_err(|e| format!("TLS: {e}"))?;
        exchange(tls, request).await
    }
}

/// The path of a call at `provider`: its base URL's path, then the API's path (a base URL
/// that ends in `/v1`, as the SDKs' are written, does not double it).
pub(super) fn path_at(provider: &Provider, api_path: &str) -> String {
    let rest = provider
        .base_url
        .split_once("://")
        .map_or(provider.base_url.as_str(), |(_, r)| r);
    let prefix = rest
        .split_once('/')
        .map_or("", |(_, p)| p)
        .trim_end_matches('/');
    match prefix.strip_suffix("v1") {
        Some(_) if api_path.starts_with("/v1") => {
            format!("/{prefix}{}", api_path.trim_start_matches("/v1"))
        }
        _ if prefix.is_empty() => api_path.to_owned(),
        _ => format!("/{prefix}{api_path}"),
    }
}

async fn exchange<S>(
    stream: S,
    request: axum::http::Request<http_body_util::Full<Bytes>>,
) -> Result<axum::http::Response<Incoming>, String>
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let (mut sender, connection) =
        hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream))
            .await
            .map_err(|e| e.to_string())?;
    tokio::spawn(connection);
    sender
        .send_request(request)
        .await
        .map_err(|e| e.to_string())
}

fn ca_certificates(path: &Path) -> Result<Vec<CertificateDer<'static>>, String> {
    let certs = CertificateDer::pem_file_iter(path)
        .map_err(|e| format!("cannot read: {e}"))?
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("not PEM certificates: {e}"))?;
    if certs.is_empty() {
        return Err("holds no certificate (a PEM `BEGIN CERTIFICATE` block)".into());
    }
    Ok(certs)
}
