//! Talking to a live `runlog serve` over the store's API socket: what `runlog run` uses to
//! submit a run to the server instead of executing it itself.

use crate::error::{CliError, Result};
use axum::body::Bytes;
use http_body_util::{BodyExt, Full};
use std::path::{Path, PathBuf};

/// A server's API socket that answers.
#[derive(Debug, Clone)]
pub struct Server {
    socket: PathBuf,
}

impl Server {
    /// The server of the store in `dir`, if one is serving it now.
    pub fn find(dir: &Path) -> Option<Self> {
        let socket = crate::server::socket_path(dir);
        std::os::unix::net::UnixStream::connect(&socket).ok()?;
        Some(Self { socket })
    }

    /// `POST path` with a JSON body: the status and the JSON answer.
    pub async fn post(
        &self,
        path: &str,
        body: &serde_json::Value,
    ) -> Result<(u16, serde_json::Value)> {
        let failed = |e: &dyn std::fmt::Display| {
            CliError::failed(format!(
                "talking to runlog serve on {}: {e}",
                self.socket.display()
            ))
        };
        let stream = tokio::net::UnixStream::connect(&self.socket)
            .await
            .map_err(|e| failed(&e))?;
        let (mut sender, connection) =
            hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream))
                .await
                .map_err(|e| failed(&e))?;
        tokio::spawn(connection);
        let request = axum::http::Request::post(path)
            .header(axum::http::header::HOST, "runlog")
            .header(axum::http::header::CONTENT_TYPE, "application/json")
            .body(Full::new(Bytes::from(body.to_string())))
            .map_err(|e| failed(&e))?;
        let response = sender.send_request(request).await.map_err(|e| failed(&e))?;
        let status = response.status().as_u16();
        let bytes = response
            .into_body()
            .collect()
            .await
            .map_err(|e| failed(&e))?
            .to_bytes();
        let answer = serde_json::from_slice(&bytes).map_err(|e| failed(&e))?;
        Ok((status, answer))
    }
}

/// An error answer of the API as the CLI reports it.
pub fn refused(status: u16, answer: &serde_json::Value) -> CliError {
    let said = |key: &str| answer.get(key).and_then(serde_json::Value::as_str);
    let error = said("error").unwrap_or("the server refused").to_owned();
    let e = if status >= 500 {
        CliError::failed(error)
    } else {
        CliError::input(error)
    };
    match said("hint") {
        Some(hint) => e.with_hint(hint),
        None => e,
    }
}
