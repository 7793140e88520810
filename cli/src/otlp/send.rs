//! One OTLP/HTTP request with protobuf, as every receiver accepts it.

use super::Endpoint;
use axum::body::Bytes;
use http_body_util::{BodyExt, Full};
use std::time::Duration;

/// Why a request was not accepted.
#[derive(Debug, thiserror::Error)]
pub enum SendError {
    /// Could not connect or talk to it.
    #[error("{url}: {why}")]
    Unreachable {
        /// The endpoint.
        url: String,
        /// Why.
        why: String,
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
            SendError::Unreachable { .. } => true,
            SendError::Refused { status, .. } => matches!(status, 429 | 502 | 503 | 504),
        }
    }
}

/// The longest one request may take.
const TIMEOUT: Duration = Duration::from_secs(10);

/// Sends `body` (an encoded `ExportTraceServiceRequest`) to `endpoint`.
pub async fn post(endpoint: &Endpoint, body: Vec<u8>) -> Result<(), SendError> {
    let url = endpoint.url();
    let unreachable = |why: &dyn std::fmt::Display| SendError::Unreachable {
        url: url.clone(),
        why: why.to_string(),
    };
    let exchange = async {
        let stream = tokio::net::TcpStream::connect(&endpoint.authority)
            .await
            .map_err(|e| unreachable(&e))?;
        let (mut sender, connection) =
            hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream))
                .await
                .map_err(|e| unreachable(&e))?;
        tokio::spawn(connection);
        let mut request = axum::http::Request::post(endpoint.path.as_str())
            .header(axum::http::header::HOST, endpoint.authority.as_str())
            .header(axum::http::header::CONTENT_TYPE, "application/x-protobuf");
        for (k, v) in &endpoint.headers {
            request = request.header(k.as_str(), v.as_str());
        }
        let request = request
            .body(Full::new(Bytes::from(body)))
            .map_err(|e| unreachable(&e))?;
        let response = sender
            .send_request(request)
            .await
            .map_err(|e| unreachable(&e))?;
        let status = response.status().as_u16();
        let answer = response
            .into_body()
            .collect()
            .await
            .map(|b| b.to_bytes())
            .unwrap_or_default();
        if (200..300).contains(&status) {
            Ok(())
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
        Err(_) => Err(unreachable(&format!(
            "no answer within {} s",
            TIMEOUT.as_secs()
        ))),
    }
}
