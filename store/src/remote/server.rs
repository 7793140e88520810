//! The owner's side: every process that opens a store serves it on `STORE/store.sock` (mode
//! 0600) for as long as it holds it, so other processes use the store through it instead of
//! failing on sled's lock. One thread per connection, at most [`MAX_CONNECTIONS`]; a subscriber
//! that stops reading is dropped, never waited for.

use super::wire::{self, Request, Response, WireError};
use crate::log::EventLog;
use crate::types::Record;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

/// Connections served at once; more wait in the listen queue until one ends.
pub const MAX_CONNECTIONS: usize = 256;

/// How long a write to a client may take before the client is dropped.
const WRITE_TIMEOUT: Duration = Duration::from_secs(10);

/// Records a subscriber may fall behind before it is dropped.
const MAX_LAG: usize = 10_000;

/// The socket of a store directory.
pub fn socket_path(store: &Path) -> PathBuf {
    store.join("store.sock")
}

/// The connections being served, by number: closed when the server stops.
type Open = std::collections::HashMap<u64, UnixStream>;

/// A store being served; dropping it stops serving and closes every connection.
#[derive(Debug)]
pub struct Server {
    path: PathBuf,
    stop: Arc<AtomicBool>,
    open: Arc<Mutex<Open>>,
    accept: Option<JoinHandle<()>>,
}

impl Server {
    /// Starts serving `log` on the store's socket, replacing a socket a dead owner left.
    pub fn start(log: Arc<dyn EventLog>, store: &Path, owner: String) -> std::io::Result<Self> {
        let path = socket_path(store);
        let _ = std::fs::remove_file(&path);
        let listener = UnixListener::bind(&path)?;
        std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o600))?;
        listener.set_nonblocking(true)?;
        let stop = Arc::new(AtomicBool::new(false));
        let open: Arc<Mutex<Open>> = Arc::default();
        let accept = {
            let (stop, open) = (stop.clone(), open.clone());
            std::thread::Builder::new()
                .name("runlog-store-server".into())
                .spawn(move || accept_loop(&listener, &log, &owner, &stop, &open))?
        };
        Ok(Self {
            path,
            stop,
            open,
            accept: Some(accept),
        })
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
        if let Some(accept) = self.accept.take() {
            let _ = accept.join();
        }
        // Clients see the connection end and find the store's next owner.
        for (_, stream) in self.open.lock().unwrap_or_else(|p| p.into_inner()).drain() {
            let _ = stream.shutdown(std::net::Shutdown::Both);
        }
        let _ = std::fs::remove_file(&self.path);
    }
}

fn accept_loop(
    listener: &UnixListener,
    log: &Arc<dyn EventLog>,
    owner: &str,
    stop: &Arc<AtomicBool>,
    open: &Arc<Mutex<Open>>,
) {
    let mut numbers = 0u64..;
    while !stop.load(Ordering::Acquire) {
        match listener.accept() {
            Ok((stream, _)) => {
                let mut conns = open.lock().unwrap_or_else(|p| p.into_inner());
                if conns.len() >= MAX_CONNECTIONS {
                    continue;
                }
                let (Ok(kept), Ok(())) = (stream.try_clone(), stream.set_nonblocking(false)) else {
                    continue;
                };
                let n = numbers.next().unwrap_or_default();
                conns.insert(n, kept);
                let (log, owner, stop, open) =
                    (log.clone(), owner.to_owned(), stop.clone(), open.clone());
                let spawned = std::thread::Builder::new()
                    .name("runlog-store-client".into())
                    .spawn(move || {
                        serve_connection(stream, &*log, &owner, &stop);
                        open.lock().unwrap_or_else(|p| p.into_inner()).remove(&n);
                    });
                if spawned.is_err() {
                    conns.remove(&n);
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                std::thread::sleep(Duration::from_millis(5));
            }
            Err(_) => std::thread::sleep(Duration::from_millis(50)),
        }
    }
}

fn serve_connection(mut stream: UnixStream, log: &dyn EventLog, owner: &str, stop: &AtomicBool) {
    let _ = stream.set_write_timeout(Some(WRITE_TIMEOUT));
    while let Ok(request) = wire::receive::<Request>(&mut stream) {
        let response = match request {
            Request::Subscribe { run } => return stream_appends(stream, log, run.as_deref(), stop),
            Request::Hello { .. } => Response::Hello {
                protocol: wire::PROTOCOL,
                version: env!("CARGO_PKG_VERSION").into(),
                owner: owner.to_owned(),
            },
            other => answer(log, other),
        };
        if wire::send(&mut stream, &response).is_err() {
            return;
        }
    }
}

/// One request against the owner's log.
fn answer(log: &dyn EventLog, request: Request) -> Response {
    let result = match request {
        Request::Append {
            run,
            expected,
            bodies,
        } => log
            .append(&run, expected, bodies)
            .map(|h| Response::Head(Some(h.into()))),
        Request::Head { run } => log.head(&run).map(|h| Response::Head(h.map(Into::into))),
        Request::Runs => log
            .runs()
            .map(|r| Response::Runs(r.into_iter().map(Into::into).collect())),
        Request::Scan { run, from, to } => {
            let to = to.min(from.saturating_add(wire::SCAN_BATCH as u64 - 1));
            log.read(&run, from, to, crate::types::Direction::Forward)
                .map(|r| Response::Records(r.into_iter().map(Into::into).collect()))
        }
        Request::Verify { run } => log.verify(&run).map(|v| Response::Verify(v.into())),
        Request::Sync => log.sync().map(|()| Response::Done),
        Request::PutBlob { bytes } => log.put_blob(&bytes).map(Response::Hash),
        Request::GetBlob { hash } => log.get_blob(&hash).map(Response::Bytes),
        Request::CachePut { key, value } => log.cache_put(&key, &value).map(|()| Response::Done),
        Request::CacheGet { key } => log.cache_get(&key).map(Response::Bytes),
        Request::CacheKeys { prefix } => log.cache_keys(&prefix).map(Response::Keys),
        Request::SizeBytes => log.size_bytes().map(Response::Size),
        Request::Durability => Ok(Response::Durability(wire::durability_to_wire(
            log.durability(),
        ))),
        Request::Create { run, chain, bodies } => match crate::blocks::Chain::from_number(chain) {
            Some(chain) => log
                .create(&run, chain, bodies)
                .map(|h| Response::Head(Some(h.into()))),
            None => Err(crate::error::StoreError::Invalid(format!(
                "no chain numbered {chain}"
            ))),
        },
        Request::Chain { run } => log
            .chain(&run)
            .map(|c| Response::Chain(c.map(crate::blocks::Chain::number))),
        Request::ScanBodies { run, from, to } => {
            let to = to.min(from.saturating_add(wire::SCAN_BATCH as u64 - 1));
            let mut bodies = Vec::new();
            log.scan_bodies(&run, from, to, &mut |seq, body| {
                bodies.push((seq, body.to_vec()));
                Ok(true)
            })
            .map(|()| Response::Bodies(bodies))
        }
        Request::Hello { .. } | Request::Subscribe { .. } => Ok(Response::Done),
    };
    result.unwrap_or_else(|e| Response::Error(WireError::from(&e)))
}

/// Sends every record appended to `run` (or to any run) until the client goes or falls behind.
fn stream_appends(
    mut stream: UnixStream,
    log: &dyn EventLog,
    run: Option<&str>,
    stop: &AtomicBool,
) {
    let appended = log.subscribe(run);
    // The subscription is live from here: say so, so the client can read history after it.
    if wire::send(&mut stream, &Response::Done).is_err() {
        return;
    }
    while !stop.load(Ordering::Acquire) {
        let record = match appended.recv_timeout(Duration::from_millis(100)) {
            Ok(record) => record,
            Err(crossbeam_channel::RecvTimeoutError::Timeout) => continue,
            Err(crossbeam_channel::RecvTimeoutError::Disconnected) => return,
        };
        if appended.len() > MAX_LAG {
            return;
        }
        let batch: Vec<Record> = std::iter::once(record).chain(appended.try_iter()).collect();
        let records = Response::Records(batch.into_iter().map(Into::into).collect());
        if wire::send(&mut stream, &records).is_err() {
            return;
        }
    }
}
