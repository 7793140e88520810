//! HTTPS for the API and the web view (`--tls-cert`, `--tls-key`), with client certificates
//! required when `--client-ca` is given (mutual TLS: the certificate's subject is who acts).
//! The files are read again on SIGHUP: new connections get the new certificate, open ones and
//! the runs go on; a file that no longer loads keeps the old certificate, with why.
//!
//! Handshakes run apart from `accept`, each bounded in time and in number, so a client that
//! opens a connection and says nothing holds up no one.

use axum::serve::Listener;

use rustls::server::WebPkiClientVerifier;
use rustls::ServerConfig;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, RwLock};
use std::time::Duration;
use tokio::net::{TcpListener, TcpStream};
use tokio_rustls::server::TlsStream;
use tokio_rustls::TlsAcceptor;

/// How long a client has to finish its handshake.
const HANDSHAKE_TIME: Duration = Duration::from_secs(10);
/// Handshakes under way at once; more wait in the kernel's backlog.
const HANDSHAKES_AT_ONCE: usize = 64;

pub use runlog_store::tls::{certificates, private_key, provider, TlsError};

/// Where the server's certificate, key and (for mutual TLS) client CA are.
#[derive(Debug, Clone)]
pub struct TlsFiles {
    /// The certificate chain (PEM), the server's first.
    pub cert: PathBuf,
    /// Its private key (PEM).
    pub key: PathBuf,
    /// The CA whose certificates clients must present, if any (PEM).
    pub client_ca: Option<PathBuf>,
}

/// The server's TLS configuration, replaced whole on a reload.
#[derive(Debug)]
pub struct Tls {
    files: TlsFiles,
    current: RwLock<Arc<ServerConfig>>,
}

impl Tls {
    /// Reads the files; an error names the file and what is wrong with it.
    pub fn load(files: TlsFiles) -> Result<Self, TlsError> {
        let config = config(&files)?;
        Ok(Self {
            files,
            current: RwLock::new(Arc::new(config)),
        })
    }

    /// Whether clients must present a certificate.
    pub fn mutual(&self) -> bool {
        self.files.client_ca.is_some()
    }

    /// Reads the files again; on an error the certificate in use stays.
    pub fn reload(&self) -> Result<(), TlsError> {
        let fresh = Arc::new(config(&self.files)?);
        *self.current.write().unwrap_or_else(|p| p.into_inner()) = fresh;
        Ok(())
    }

    fn acceptor(&self) -> TlsAcceptor {
        TlsAcceptor::from(
            self.current
                .read()
                .unwrap_or_else(|p| p.into_inner())
                .clone(),
        )
    }
}

fn config(files: &TlsFiles) -> Result<ServerConfig, TlsError> {
    let certs = certificates(&files.cert)?;
    let key = private_key(&files.key)?;
    let refused = |why: String| TlsError::Pair {
        cert: files.cert.clone(),
        key: files.key.clone(),
        why,
    };
    let builder = ServerConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .map_err(|e| refused(e.to_string()))?;
    let builder = match &files.client_ca {
        Some(ca) => {
            let verifier = WebPkiClientVerifier::builder_with_provider(
                Arc::new(runlog_store::tls::Roots::File(ca.clone()).load()?.0),
                provider(),
            )
            .build()
            .map_err(|e| TlsError::File {
                path: ca.clone(),
                why: e.to_string(),
            })?;
            builder.with_client_cert_verifier(verifier)
        }
        None => builder.with_no_client_auth(),
    };
    let mut config = builder
        .with_single_cert(certs, key)
        .map_err(|e| refused(e.to_string()))?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(config)
}

/// TCP connections after their handshake, and where they come from.
#[derive(Debug)]
pub struct TlsListener {
    ready: tokio::sync::mpsc::Receiver<(TlsStream<TcpStream>, SocketAddr)>,
    local: SocketAddr,
}

/// Accepts on `tcp` and hands over each connection whose handshake succeeded.
pub fn listen(tcp: TcpListener, tls: Arc<Tls>) -> std::io::Result<TlsListener> {
    let local = tcp.local_addr()?;
    let (tx, ready) = tokio::sync::mpsc::channel(HANDSHAKES_AT_ONCE);
    let handshakes = Arc::new(tokio::sync::Semaphore::new(HANDSHAKES_AT_ONCE));
    tokio::spawn(async move {
        loop {
            let Ok(permit) = handshakes.clone().acquire_owned().await else {
                return;
            };
            let (stream, addr) = match tcp.accept().await {
                Ok(accepted) => accepted,
                // Out of descriptors, say: wait a little rather than spin.
                Err(_) => {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            };
            if tx.is_closed() {
                return;
            }
            let acceptor = tls.acceptor();
            let tx = tx.clone();
            tokio::spawn(async move {
                let _permit = permit;
                let shaken = tokio::time::timeout(HANDSHAKE_TIME, acceptor.accept(stream)).await;
                if let Ok(Ok(stream)) = shaken {
                    let _ = tx.send((stream, addr)).await;
                }
            });
        }
    });
    Ok(TlsListener { ready, local })
}

impl Listener for TlsListener {
    type Io = TlsStream<TcpStream>;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        match self.ready.recv().await {
            Some(accepted) => accepted,
            None => std::future::pending().await,
        }
    }

    fn local_addr(&self) -> std::io::Result<Self::Addr> {
        Ok(self.local)
    }
}

/// The subject of the client's certificate (`CN=alice,O=team`), when it presented one.
pub fn subject(stream: &TlsStream<TcpStream>) -> Option<String> {
    use x509_cert::der::Decode;
    let cert = stream.get_ref().1.peer_certificates()?.first()?;
    let parsed = x509_cert::Certificate::from_der(cert.as_ref()).ok()?;
    Some(parsed.tbs_certificate.subject.to_string())
}
