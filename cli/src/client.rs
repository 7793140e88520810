//! Talking to a live `runlog serve`: over the store's API socket (`runlog run` submitting to the
//! server of its own store, `runlog ui` finding it), or over HTTPS to a server on another host
//! (`runlog run --server https://HOST:PORT`), trusting a CA file or the system's roots, with a
//! bearer token from `RUNLOG_TOKEN` and, for mutual TLS, a client certificate.

use crate::error::{CliError, Result};
use axum::body::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use rustls::pki_types::ServerName;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A server that answers: its socket, or its HTTPS address.
#[derive(Debug, Clone)]
pub struct Server {
    at: At,
}

#[derive(Clone)]
enum At {
    Socket(PathBuf),
    Https {
        /// `HOST:PORT`, as the URL says.
        authority: String,
        /// The name its certificate must hold.
        name: ServerName<'static>,
        tls: tokio_rustls::TlsConnector,
        /// Sent as `Authorization: Bearer`; never printed.
        token: Option<String>,
    },
}

impl std::fmt::Debug for At {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            At::Socket(p) => write!(f, "Socket({})", p.display()),
            At::Https { authority, .. } => write!(f, "Https({authority})"),
        }
    }
}

/// How to reach a server on another host (`runlog run --server`).
#[derive(Debug, Clone, clap::Args)]
pub struct RemoteArgs {
    /// Submit the run to the `runlog serve` at this `https://HOST:PORT` and follow it from
    /// here (its workflow path is the server's: relative to its working directory). The token,
    /// if the server wants one, is read from RUNLOG_TOKEN.
    #[arg(long, value_name = "URL", env = "RUNLOG_SERVER")]
    pub server: Option<String>,
    /// Trust the server's certificate if this CA (PEM) signed it [default: the system's roots].
    #[arg(long, value_name = "FILE", requires = "server")]
    pub ca: Option<PathBuf>,
    /// A client certificate (PEM) for a server that requires one (mutual TLS); with --key.
    #[arg(long, value_name = "FILE", requires_all = ["server", "key"])]
    pub cert: Option<PathBuf>,
    /// The private key of --cert (PEM).
    #[arg(long, value_name = "FILE", requires = "cert")]
    pub key: Option<PathBuf>,
}

impl Server {
    /// The server of the store in `dir`, if one is serving it now.
    pub fn find(dir: &Path) -> Option<Self> {
        let socket = crate::server::socket_path(dir);
        std::os::unix::net::UnixStream::connect(&socket).ok()?;
        Some(Self {
            at: At::Socket(socket),
        })
    }

    /// The server `--server` names, if any.
    pub fn remote(a: &RemoteArgs) -> Result<Option<Self>> {
        let Some(url) = &a.server else {
            return Ok(None);
        };
        let hint = "give --server as https://HOST:PORT (the address `runlog serve --http ADDR --tls-cert ...` prints)";
        let authority = url
            .strip_prefix("https://")
            .ok_or_else(|| {
                CliError::input(format!("{url} is not an https:// URL: tokens and runs cross the network only encrypted")).with_hint(hint)
            })?
            .trim_end_matches('/')
            .to_owned();
        let host = match authority.rsplit_once(':') {
            Some((host, port)) if port.parse::<u16>().is_ok() => host,
            _ => &authority,
        };
        let host = host.trim_start_matches('[').trim_end_matches(']');
        let name = ServerName::try_from(host.to_owned())
            .map_err(|e| CliError::input(format!("{url}: {e}")).with_hint(hint))?;
        let tls = connector(a)?;
        Ok(Some(Self {
            at: At::Https {
                authority,
                name,
                tls,
                token: std::env::var("RUNLOG_TOKEN").ok().filter(|t| !t.is_empty()),
            },
        }))
    }

    /// On another host (HTTPS), not this store's socket.
    pub fn is_remote(&self) -> bool {
        matches!(self.at, At::Https { .. })
    }

    /// Where it is, for messages.
    pub fn describe(&self) -> String {
        match &self.at {
            At::Socket(p) => p.display().to_string(),
            At::Https { authority, .. } => format!("https://{authority}"),
        }
    }

    fn failed(&self, e: &dyn std::fmt::Display) -> CliError {
        CliError::failed(format!(
            "talking to runlog serve on {}: {e}",
            self.describe()
        ))
    }

    /// Sends one request on a new connection; the response, its body still to read.
    async fn send(
        &self,
        method: &str,
        path: &str,
        body: Option<String>,
    ) -> Result<hyper::Response<Incoming>> {
        let mut request = axum::http::Request::builder()
            .method(method)
            .uri(path)
            .header(axum::http::header::CONTENT_TYPE, "application/json");
        match &self.at {
            At::Socket(socket) => {
                let stream = tokio::net::UnixStream::connect(socket)
                    .await
                    .map_err(|e| self.failed(&e))?;
                request = request.header(axum::http::header::HOST, "runlog");
                self.exchange(stream, request, body).await
            }
            At::Https {
                authority,
                name,
                tls,
                token,
            } => {
                let tcp = tokio::net::TcpStream::connect(authority.as_str())
                    .await
                    .map_err(|e| self.failed(&e))?;
                let stream = tls
                    .connect(name.clone(), tcp)
                    .await
                    .map_err(|e| self.tls_failed(&e))?;
                request = request.header(axum::http::header::HOST, authority.as_str());
                if let Some(token) = token {
                    request = request
                        .header(axum::http::header::AUTHORIZATION, format!("Bearer {token}"));
                }
                self.exchange(stream, request, body).await
            }
        }
    }

    fn tls_failed(&self, e: &std::io::Error) -> CliError {
        if runlog_store::tls::is_ca_as_own(&e.to_string()) {
            return self
                .failed(&e)
                .with_hint(runlog_store::tls::ca_as_own_hint("--ca"));
        }
        self.failed(&e).with_hint(
            "the server's certificate must be signed by the CA given with --ca (or a system root) and name the host of --server; a server with --client-ca also wants --cert and --key",
        )
    }

    async fn exchange<Io>(
        &self,
        io: Io,
        request: axum::http::request::Builder,
        body: Option<String>,
    ) -> Result<hyper::Response<Incoming>>
    where
        Io: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
    {
        let (mut sender, connection) =
            hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(io))
                .await
                .map_err(|e| self.failed(&e))?;
        tokio::spawn(connection);
        let request = request
            .body(Full::new(Bytes::from(body.unwrap_or_default())))
            .map_err(|e| self.failed(&e))?;
        sender
            .send_request(request)
            .await
            .map_err(|e| self.failed(&e))
    }

    /// `POST path` with a JSON body: the status and the JSON answer.
    pub async fn post(
        &self,
        path: &str,
        body: &serde_json::Value,
    ) -> Result<(u16, serde_json::Value)> {
        let response = self.send("POST", path, Some(body.to_string())).await?;
        let status = response.status().as_u16();
        let bytes = response
            .into_body()
            .collect()
            .await
            .map_err(|e| self.failed(&e))?
            .to_bytes();
        let answer = serde_json::from_slice(&bytes).map_err(|e| self.failed(&e))?;
        Ok((status, answer))
    }

    /// `GET path` of an event stream: its events' `data` lines as they come, until it ends.
    pub async fn stream(
        &self,
        path: &str,
        data: tokio::sync::mpsc::Sender<Result<String>>,
    ) -> Result<()> {
        let response = self.send("GET", path, None).await?;
        let status = response.status().as_u16();
        let mut body = response.into_body();
        if status != 200 {
            let bytes = body
                .collect()
                .await
                .map_err(|e| self.failed(&e))?
                .to_bytes();
            let answer = serde_json::from_slice(&bytes).unwrap_or_default();
            return Err(refused(status, &answer));
        }
        let mut pending = String::new();
        while let Some(frame) = body.frame().await {
            let frame = frame.map_err(|e| self.failed(&e))?;
            let Some(chunk) = frame.data_ref() else {
                continue;
            };
            pending.push_str(&String::from_utf8_lossy(chunk));
            while let Some(end) = pending.find("\n\n") {
                let event: String = pending.drain(..end + 2).collect();
                let lines: Vec<&str> = event
                    .lines()
                    .filter_map(|l| l.strip_prefix("data:"))
                    .map(str::trim_start)
                    .collect();
                if !lines.is_empty() && data.send(Ok(lines.join("\n"))).await.is_err() {
                    return Ok(());
                }
            }
        }
        Ok(())
    }
}

/// The TLS client of `--ca`, `--cert` and `--key`.
fn connector(a: &RemoteArgs) -> Result<tokio_rustls::TlsConnector> {
    use runlog_store::tls::{self, Roots, TlsError};
    let roots = match &a.ca {
        Some(ca) => Roots::File(ca.clone()),
        None => Roots::System,
    };
    let verifier = tls::verifier_of(&roots).map_err(|e| {
        CliError::input(e.to_string()).with_hint("--ca takes a PEM file of CA certificates")
    })?;
    let client = match (&a.cert, &a.key) {
        (Some(cert), Some(key)) => Some((cert.as_path(), key.as_path())),
        _ => None,
    };
    let mut config = tls::client_config(verifier, client).map_err(|e| match e {
        TlsError::Setup(why) => CliError::failed(why),
        e @ TlsError::Pair { .. } => {
            CliError::input(format!("not a client certificate for its key: {e}"))
        }
        e => CliError::input(e.to_string()).with_hint("--ca, --cert and --key take PEM files"),
    })?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(tokio_rustls::TlsConnector::from(Arc::new(config)))
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
