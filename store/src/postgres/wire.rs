//! A relay between a client and a PostgreSQL server that counts what the client asks of the
//! server: round trips (each `Sync` of the extended protocol and each simple query waits for
//! the server's answer), statements executed and statements prepared. The benches put it in
//! front of the server to count an append's or a claim's cost in messages, not only in time;
//! it adds a hop, so what they time goes to the server directly.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// What crossed the relay since it started, or since [`Relay::reset`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Wire {
    /// Messages the client waited on the server for: `Sync` and simple `Query`.
    pub round_trips: u64,
    /// Statements executed: `Execute` and simple `Query` messages.
    pub statements: u64,
    /// Statements prepared (`Parse`).
    pub prepared: u64,
}

#[derive(Debug, Default)]
struct Counts {
    round_trips: AtomicU64,
    statements: AtomicU64,
    prepared: AtomicU64,
}

/// A counting relay on a port of this host's loopback, for as long as it lives.
#[derive(Debug)]
pub struct Relay {
    /// `url` with the relay in place of the server, without TLS (the relay reads the bytes).
    pub url: String,
    counts: Arc<Counts>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
}

/// Why a relay could not start.
#[derive(Debug, thiserror::Error)]
pub enum RelayError {
    /// No port could be bound.
    #[error(transparent)]
    Io(#[from] std::io::Error),
    /// The URL names no single TCP host.
    #[error("cannot read the URL: {0}")]
    Url(String),
}

impl Relay {
    /// Starts relaying to the server `url` names (one host and port).
    ///
    /// # Errors
    /// When the URL names no single TCP host, or no port of loopback can be bound.
    pub fn start(url: &str) -> Result<Self, RelayError> {
        let (plain, _) = super::tls::split(url).map_err(|e| RelayError::Url(e.to_string()))?;
        let config: tokio_postgres::Config = plain
            .parse()
            .map_err(|e: tokio_postgres::Error| RelayError::Url(e.to_string()))?;
        let host = match config.get_hosts() {
            [tokio_postgres::config::Host::Tcp(h)] => h.clone(),
            _ => return Err(RelayError::Url("the URL must name one TCP host".into())),
        };
        let port = config.get_ports().first().copied().unwrap_or(5432);
        let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
        listener.set_nonblocking(true)?;
        let at = listener.local_addr()?;
        let counts = Arc::new(Counts::default());
        let (stop, stopped) = tokio::sync::oneshot::channel();
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let served = counts.clone();
        std::thread::spawn(move || {
            runtime.block_on(async move {
                let Ok(listener) = TcpListener::from_std(listener) else {
                    return;
                };
                tokio::select! {
                    () = accept(listener, (host, port), served) => {}
                    _ = stopped => {}
                }
            });
        });
        Ok(Self {
            url: through(&plain, at),
            counts,
            stop: Some(stop),
        })
    }

    /// What crossed since the start or the last reset.
    pub fn counts(&self) -> Wire {
        Wire {
            round_trips: self.counts.round_trips.load(Ordering::Relaxed),
            statements: self.counts.statements.load(Ordering::Relaxed),
            prepared: self.counts.prepared.load(Ordering::Relaxed),
        }
    }

    /// Counts from zero again.
    pub fn reset(&self) {
        self.counts.round_trips.store(0, Ordering::Relaxed);
        self.counts.statements.store(0, Ordering::Relaxed);
        self.counts.prepared.store(0, Ordering::Relaxed);
    }
}

impl Drop for Relay {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

/// `url` (without its TLS settings) pointed at `at`, asking for no TLS.
fn through(url: &str, at: SocketAddr) -> String {
    let (base, query) = url.split_once('?').unwrap_or((url, ""));
    let start = base.find("://").map_or(0, |i| i + 3);
    let end = base[start..].find('/').map_or(base.len(), |i| start + i);
    let user = base[start..end]
        .rfind('@')
        .map_or("", |i| &base[start..=start + i]);
    let mut out = format!(
        "{}{user}{at}{}?sslmode=disable",
        &base[..start],
        &base[end..]
    );
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        out.push('&');
        out.push_str(pair);
    }
    out
}

async fn accept(listener: TcpListener, server: (String, u16), counts: Arc<Counts>) {
    while let Ok((client, _)) = listener.accept().await {
        let (server, counts) = (server.clone(), counts.clone());
        tokio::spawn(async move {
            if let Ok(upstream) = TcpStream::connect((server.0.as_str(), server.1)).await {
                relay(client, upstream, counts).await;
            }
        });
    }
}

async fn relay(client: TcpStream, server: TcpStream, counts: Arc<Counts>) {
    let _ = client.set_nodelay(true);
    let _ = server.set_nodelay(true);
    let (mut from_client, mut to_client) = client.into_split();
    let (mut from_server, mut to_server) = server.into_split();
    let answers = tokio::io::copy(&mut from_server, &mut to_client);
    let asks = async {
        // The startup message has a length and no type byte; every later one has both.
        let mut started = false;
        loop {
            let kind = if started {
                match from_client.read_u8().await {
                    Ok(k) => Some(k),
                    Err(_) => return,
                }
            } else {
                None
            };
            let Ok(len) = from_client.read_u32().await else {
                return;
            };
            let mut body = vec![0; (len as usize).saturating_sub(4)];
            if from_client.read_exact(&mut body).await.is_err() {
                return;
            }
            started = true;
            match kind {
                Some(b'S') => bump(&counts.round_trips),
                Some(b'Q') => {
                    bump(&counts.round_trips);
                    bump(&counts.statements);
                }
                Some(b'E') => bump(&counts.statements),
                Some(b'P') => bump(&counts.prepared),
                _ => {}
            }
            let mut frame = Vec::with_capacity(body.len() + 5);
            frame.extend(kind);
            frame.extend(len.to_be_bytes());
            frame.extend(body);
            if to_server.write_all(&frame).await.is_err() {
                return;
            }
        }
    };
    tokio::select! {
        _ = answers => {}
        () = asks => {}
    }
}

fn bump(n: &AtomicU64) {
    n.fetch_add(1, Ordering::Relaxed);
}

#[cfg(test)]
mod tests {
    use super::through;

    #[test]
    fn the_relay_takes_the_servers_place_in_the_url() {
        let at = "127.0.0.1:4000".parse().unwrap_or_else(|_| unreachable!());
        assert_eq!(
            through("postgres://u:p@db.example:5432/runs?application_name=x", at),
            "postgres://u:p@127.0.0.1:4000/runs?sslmode=disable&application_name=x"
        );
        assert_eq!(
            through("postgres://db.example/runs", at),
            "postgres://127.0.0.1:4000/runs?sslmode=disable"
        );
    }
}
