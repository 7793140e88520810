//! One OTLP/HTTP request with protobuf, as every receiver accepts it, through runlog's one HTTP
//! client (`runlog_gateway::http`, the model gateway's): over TLS for `https://`, gzipped when
//! asked, with the endpoint's headers (never shown).

use super::Endpoint;
use axum::body::Bytes;
use http_body_util::BodyExt;
use runlog_gateway::http::Unanswered;
use std::io::Write;
use std::time::Duration;

/// Why a request was not accepted.
#[derive(Debug, thiserror::Error)]
pub enum SendError {
    /// Could not connect or talk to it.
    #[error("{url} cannot be reached")]
    Unreachable {
        /// The endpoint.
        url: String,
        /// Why.
        #[source]
        why: Unanswered,
    },
    /// No answer in time.
    #[error("{url} gave no answer within {} s", TIMEOUT.as_secs())]
    Slow {
        /// The endpoint.
        url: String,
    },
    /// It answered with an error status.
    #[error("{url} answered {status}: {body}")]
    Refused {
        /// The endpoint.
        url: String,
        /// The status.
        status: u16,
        /// The start of its answer.
        body: String,
    },
}

impl SendError {
    /// Whether trying again later may succeed (down, busy, overloaded), as the OTLP spec says
    /// of 429, 502, 503 and 504.
    pub fn retryable(&self) -> bool {
        match self {
            SendError::Unreachable { why, .. } => !why.is_certificate(),
            SendError::Slow { .. } => true,
            SendError::Refused { status, .. } => matches!(status, 429 | 502 | 503 | 504),
        }
    }

    /// What to do about it, naming the flags (and the headers by name, never their values).
    pub fn fix(&self, endpoint: &Endpoint) -> String {
        match self {
            SendError::Unreachable { why, .. } if why.is_ca_as_own() => {
                runlog_store::tls::ca_as_own_hint("--otlp-ca")
            }
            SendError::Unreachable { why, .. } if why.is_certificate() => {
                "the receiver's certificate does not verify against the system's roots: give the CA that signed it with --otlp-ca FILE (or OTEL_EXPORTER_OTLP_CERTIFICATE)".into()
            }
            SendError::Unreachable { why, .. } if why.wants_client_certificate() => {
                "the receiver wants a client certificate it trusts (mutual TLS): give --otlp-client-cert FILE and --otlp-client-key FILE (or OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE and _CLIENT_KEY)".into()
            }
            // TLS 1.3 settles the client's certificate after the handshake: a receiver that
            // wants one and got none closes the connection as the request goes.
            SendError::Unreachable {
                why: Unanswered::Http(_),
                ..
            } if endpoint.target.secure && !endpoint.client_certificate => {
                "the receiver closed the connection as the request went: if it asks for a client certificate (mutual TLS), give --otlp-client-cert FILE and --otlp-client-key FILE (or OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE and _CLIENT_KEY)".into()
            }
            SendError::Unreachable { .. } | SendError::Slow { .. } => format!(
                "is the receiver up at {}? check the URL's host, port and scheme",
                endpoint.target.authority
            ),
            SendError::Refused { status: 401 | 403, .. } => match endpoint.header_names() {
                names if names.is_empty() => "the receiver wants credentials: give its header with --otlp-header NAME=VALUE (or OTEL_EXPORTER_OTLP_HEADERS), e.g. authorization=\"Bearer KEY\"".into(),
                names => format!(
                    "the receiver refused the credentials sent in the header(s) {}: check the key and the header's name",
                    names.join(", ")
                ),
            },
            SendError::Refused { status: 404, .. } => {
                "the receiver has no traces endpoint at this path: give its OTLP/HTTP base URL or the whole traces URL".into()
            }
            SendError::Refused { .. } => "see the receiver's answer above".into(),
        }
    }
}

/// The longest one request may take.
const TIMEOUT: Duration = Duration::from_secs(10);

/// Sends `body` (an encoded `ExportTraceServiceRequest`) to `endpoint`.
pub async fn post(endpoint: &Endpoint, body: Vec<u8>) -> Result<(), SendError> {
    post_to(
        endpoint,
        &endpoint.target.path,
        "application/x-protobuf",
        body,
    )
    .await
}

/// Sends `body` of `content_type` to `path` on `endpoint`'s server, with its headers, TLS and
/// compression: the trace's path, or another API of the same receiver (Phoenix's annotations).
pub async fn post_to(
    endpoint: &Endpoint,
    path: &str,
    content_type: &str,
    body: Vec<u8>,
) -> Result<(), SendError> {
    send_to(endpoint, axum::http::Method::POST, path, content_type, body)
        .await
        .map(|_| ())
}

/// `method` on `path` of `endpoint`'s server with a JSON `body` (none: no body), and its JSON
/// answer (Phoenix's REST API).
pub async fn ask_json(
    endpoint: &Endpoint,
    method: axum::http::Method,
    path: &str,
    body: Option<&serde_json::Value>,
) -> Result<serde_json::Value, SendError> {
    let bytes = body.map(|b| b.to_string().into_bytes()).unwrap_or_default();
    let answer = send_to(endpoint, method, path, "application/json", bytes).await?;
    serde_json::from_slice(&answer).map_err(|e| SendError::Refused {
        url: runlog_gateway::http::Target {
            path: path.to_owned(),
            ..endpoint.target.clone()
        }
        .url(),
        status: 200,
        body: format!(
            "not JSON ({e}): {}",
            String::from_utf8_lossy(answer.get(..200).unwrap_or(&answer))
        ),
    })
}

/// One request to `path` on `endpoint`'s server; the answer's body when its status is 2xx.
async fn send_to(
    endpoint: &Endpoint,
    method: axum::http::Method,
    path: &str,
    content_type: &str,
    body: Vec<u8>,
) -> Result<Bytes, SendError> {
    let url = runlog_gateway::http::Target {
        path: path.to_owned(),
        ..endpoint.target.clone()
    }
    .url();
    let unreachable = |why: Unanswered| SendError::Unreachable {
        url: url.clone(),
        why,
    };
    let exchange = async {
        let mut request = axum::http::Request::builder()
            .method(method)
            .uri(path)
            .header(axum::http::header::CONTENT_TYPE, content_type);
        let body = if endpoint.gzip && !body.is_empty() {
            request = request.header(axum::http::header::CONTENT_ENCODING, "gzip");
            gzipped(&body)
        } else {
            body
        };
        for (k, v) in &endpoint.headers {
            request = request.header(k.as_str(), v.as_str());
        }
        let response = endpoint
            .client
            .send(&endpoint.target, request, Bytes::from(body))
            .await
            .map_err(unreachable)?;
        let status = response.status().as_u16();
        let answer = response
            .into_body()
            .collect()
            .await
            .map(|b| b.to_bytes())
            .unwrap_or_default();
        if (200..300).contains(&status) {
            Ok(answer)
        } else {
            Err(SendError::Refused {
                url: url.clone(),
                status,
                body: String::from_utf8_lossy(answer.get(..200).unwrap_or(&answer)).into_owned(),
            })
        }
    };
    match tokio::time::timeout(TIMEOUT, exchange).await {
        Ok(result) => result,
        Err(_) => Err(SendError::Slow { url: url.clone() }),
    }
}

fn gzipped(body: &[u8]) -> Vec<u8> {
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    // Writing to a Vec cannot fail.
    let _ = gz.write_all(body);
    gz.finish().unwrap_or_default()
}
