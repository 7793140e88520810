//! Reaching a provider through runlog's one HTTP client ([`crate::http`]): `http://` as it is,
//! `https://` through rustls with the system's roots and a provider's own CA file (for a proxy
//! in between), in HTTP/2 when the provider offers it.

use super::providers::Provider;
use crate::http::{Client, Target, TlsFiles};
use axum::body::Bytes;
use hyper::body::Incoming;
use std::collections::HashMap;
use std::path::PathBuf;

/// Why the gateway cannot open.
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

/// The client of each `https://` provider, by name, and the one of the `http://` ones: each
/// keeps its connections for the next call.
#[derive(Debug)]
pub(super) struct Upstreams {
    tls: HashMap<String, Client>,
    plain: Client,
}

impl Default for Upstreams {
    fn default() -> Self {
        Upstreams {
            tls: HashMap::new(),
            plain: Client::plain(),
        }
    }
}

impl Upstreams {
    /// Sets up each `https://` provider's client: the system's roots and its own CA file.
    pub(super) fn of(providers: &[Provider]) -> Result<Upstreams, GatewayError> {
        let mut tls = HashMap::new();
        for p in providers
            .iter()
            .filter(|p| p.base_url.starts_with("https://"))
        {
            let files = TlsFiles {
                ca_file: p.ca_file.clone(),
                client: None,
            };
            let client = Client::offering_http2(&files).map_err(|e| GatewayError::Ca {
                provider: p.name.clone(),
                path: p.ca_file.clone().unwrap_or_default(),
                why: match e {
                    crate::http::TlsError::File { why, .. } => why,
                    other => other.to_string(),
                },
            })?;
            tls.insert(p.name.clone(), client);
        }
        Ok(Upstreams {
            tls,
            plain: Client::plain(),
        })
    }

    /// Sends `request` (its path already the provider's) to `provider`.
    pub(super) async fn send(
        &self,
        provider: &Provider,
        request: axum::http::request::Builder,
        path: &str,
        body: Bytes,
    ) -> Result<axum::http::Response<Incoming>, String> {
        let target = Target::of(&provider.base_url).map_err(|e| e.to_string())?;
        let client = self.tls.get(&provider.name).unwrap_or(&self.plain);
        client
            .send(&target, request.uri(path), body)
            .await
            .map_err(|e| crate::http::in_one_line(&e))
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
