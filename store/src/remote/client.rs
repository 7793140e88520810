//! A client's side: the store's contract ([`EventLog`]) answered by the process that owns it.

use super::server::socket_path;
use super::wire::{self, Request, Response};
use crate::blocks::Chain;
use crate::error::{Result, StoreError};
use crate::log::EventLog;
use crate::types::{Durability, Head, Record, RecordRef, RunMeta, VerifyReport};
use crossbeam_channel::Receiver;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// A connection to the store's owner.
#[derive(Debug)]
pub struct Client {
    store: PathBuf,
    stream: Mutex<UnixStream>,
    /// Who owns the store, as it said.
    pub owner: String,
}

/// What connecting found.
#[derive(Debug)]
pub enum Connect {
    /// An owner answered.
    Connected(Client),
    /// Nobody serves the store (no socket, or nobody listening).
    NoOwner,
    /// An owner of another runlog version serves it.
    Incompatible(StoreError),
}

impl Client {
    /// Connects to the owner of the store in `dir` and shakes hands.
    pub fn connect(dir: &Path) -> Connect {
        let Ok(mut stream) = UnixStream::connect(socket_path(dir)) else {
            return Connect::NoOwner;
        };
        let hello = Request::Hello {
            protocol: wire::PROTOCOL,
            version: env!("CARGO_PKG_VERSION").into(),
        };
        if wire::send(&mut stream, &hello).is_err() {
            return Connect::NoOwner;
        }
        match wire::receive::<Response>(&mut stream) {
            Ok(Response::Hello { protocol, owner, .. }) if protocol == wire::PROTOCOL => {
                Connect::Connected(Client {
                    store: dir.to_path_buf(),
                    stream: Mutex::new(stream),
                    owner,
                })
            }
            Ok(Response::Hello {
                protocol, version, ..
            }) => Connect::Incompatible(StoreError::Locked {
                path: dir.to_path_buf(),
                owner: Some(format!(
                    "runlog {version}, store protocol {protocol}; this runlog {} speaks protocol {}",
                    env!("CARGO_PKG_VERSION"),
                    wire::PROTOCOL
                )),
            }),
            // The owner went away mid-handshake, or it is not a runlog owner at all.
            _ => Connect::NoOwner,
        }
    }

    fn gone(&self, e: &std::io::Error) -> StoreError {
        StoreError::OwnerGone {
            path: self.store.clone(),
            why: e.to_string(),
        }
    }

    fn call(&self, request: &Request) -> Result<Response> {
        let mut stream = self.stream.lock().unwrap_or_else(|p| p.into_inner());
        wire::send(&mut *stream, request).map_err(|e| self.gone(&e))?;
        match wire::receive::<Response>(&mut *stream).map_err(|e| self.gone(&e))? {
            Response::Error(e) => Err(e.into()),
            other => Ok(other),
        }
    }

    /// Asks for the records `from..=to` a batch at a time (`ask(next)`), handing each answer to
    /// `take`, which gives back the last seq in it, or `None` once the reader stopped or the
    /// answer held nothing.
    fn in_batches(
        &self,
        (from, to): (u64, u64),
        ask: &dyn Fn(u64) -> Request,
        take: &mut dyn FnMut(Response) -> Result<Option<u64>>,
    ) -> Result<()> {
        let mut next = from.max(1);
        while next <= to {
            match take(self.call(&ask(next))?)? {
                Some(last) => next = last + 1,
                None => return Ok(()),
            }
        }
        Ok(())
    }

    fn unexpected(&self, what: &str, got: &Response) -> StoreError {
        StoreError::Owner {
            message: format!("asked for {what}, the store's owner answered {got:?}"),
        }
    }
}

impl EventLog for Client {
    fn append(&self, run: &str, expected: Option<u64>, bodies: Vec<Vec<u8>>) -> Result<Head> {
        let request = Request::Append {
            run: run.to_owned(),
            expected,
            bodies,
        };
        match self.call(&request)? {
            Response::Head(Some(h)) => Ok(h.into()),
            other => Err(self.unexpected("an append", &other)),
        }
    }

    fn create(&self, run: &str, chain: Chain, bodies: Vec<Vec<u8>>) -> Result<Head> {
        let request = Request::Create {
            run: run.to_owned(),
            chain: chain.number(),
            bodies,
        };
        match self.call(&request)? {
            Response::Head(Some(h)) => Ok(h.into()),
            other => Err(self.unexpected("a new run", &other)),
        }
    }

    fn chain(&self, run: &str) -> Result<Option<Chain>> {
        match self.call(&Request::Chain {
            run: run.to_owned(),
        })? {
            Response::Chain(None) => Ok(None),
            Response::Chain(Some(n)) => Chain::from_number(n)
                .map(Some)
                .ok_or_else(|| self.unexpected("a run's chain", &Response::Chain(Some(n)))),
            other => Err(self.unexpected("a run's chain", &other)),
        }
    }

    fn head(&self, run: &str) -> Result<Option<Head>> {
        match self.call(&Request::Head {
            run: run.to_owned(),
        })? {
            Response::Head(h) => Ok(h.map(Into::into)),
            other => Err(self.unexpected("a head", &other)),
        }
    }

    fn runs(&self) -> Result<Vec<RunMeta>> {
        match self.call(&Request::Runs)? {
            Response::Runs(r) => Ok(r.into_iter().map(Into::into).collect()),
            other => Err(self.unexpected("the runs", &other)),
        }
    }

    fn scan(
        &self,
        run: &str,
        from: u64,
        to: u64,
        f: &mut dyn FnMut(RecordRef<'_>) -> Result<bool>,
    ) -> Result<()> {
        self.in_batches(
            (from, to),
            &|from| Request::Scan {
                run: run.to_owned(),
                from,
                to,
            },
            &mut |answer| match answer {
                Response::Records(records) => {
                    let mut last = None;
                    for r in records.into_iter().map(Record::from) {
                        let record = RecordRef {
                            seq: r.seq,
                            body: &r.body,
                            hash: &r.hash,
                        };
                        if !f(record)? {
                            return Ok(None);
                        }
                        last = Some(r.seq);
                    }
                    Ok(last)
                }
                other => Err(self.unexpected("records", &other)),
            },
        )
    }

    fn scan_bodies(
        &self,
        run: &str,
        from: u64,
        to: u64,
        f: &mut dyn FnMut(u64, &[u8]) -> Result<bool>,
    ) -> Result<()> {
        self.in_batches(
            (from, to),
            &|from| Request::ScanBodies {
                run: run.to_owned(),
                from,
                to,
            },
            &mut |answer| match answer {
                Response::Bodies(bodies) => {
                    for (seq, body) in &bodies {
                        if !f(*seq, body)? {
                            return Ok(None);
                        }
                    }
                    Ok(bodies.last().map(|(seq, _)| *seq))
                }
                other => Err(self.unexpected("records", &other)),
            },
        )
    }

    fn subscribe(&self, run: Option<&str>) -> Receiver<Record> {
        let (tx, rx) = crossbeam_channel::unbounded();
        let Ok(mut stream) = UnixStream::connect(socket_path(&self.store)) else {
            return rx;
        };
        let request = Request::Subscribe {
            run: run.map(str::to_owned),
        };
        let live = wire::send(&mut stream, &request).is_ok()
            && matches!(wire::receive::<Response>(&mut stream), Ok(Response::Done));
        if live {
            // Ends when the owner goes or the receiver is dropped.
            let _ = std::thread::Builder::new()
                .name("runlog-subscription".into())
                .spawn(move || {
                    while let Ok(Response::Records(records)) = wire::receive(&mut stream) {
                        for r in records {
                            if tx.send(Record::from(r)).is_err() {
                                return;
                            }
                        }
                    }
                });
        }
        rx
    }

    fn verify(&self, run: &str) -> Result<VerifyReport> {
        match self.call(&Request::Verify {
            run: run.to_owned(),
        })? {
            Response::Verify(v) => Ok(v.into()),
            other => Err(self.unexpected("a verification", &other)),
        }
    }

    fn sync(&self) -> Result<()> {
        self.call(&Request::Sync).map(|_| ())
    }

    fn put_blob(&self, bytes: &[u8]) -> Result<[u8; 32]> {
        match self.call(&Request::PutBlob {
            bytes: bytes.to_vec(),
        })? {
            Response::Hash(h) => Ok(h),
            other => Err(self.unexpected("a blob hash", &other)),
        }
    }

    fn get_blob(&self, hash: &[u8; 32]) -> Result<Option<Vec<u8>>> {
        match self.call(&Request::GetBlob { hash: *hash })? {
            Response::Bytes(b) => Ok(b),
            other => Err(self.unexpected("a blob", &other)),
        }
    }

    fn cache_put(&self, key: &[u8], value: &[u8]) -> Result<()> {
        let request = Request::CachePut {
            key: key.to_vec(),
            value: value.to_vec(),
        };
        self.call(&request).map(|_| ())
    }

    fn cache_get(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        match self.call(&Request::CacheGet { key: key.to_vec() })? {
            Response::Bytes(b) => Ok(b),
            other => Err(self.unexpected("a cache entry", &other)),
        }
    }

    fn cache_keys(&self, prefix: &[u8]) -> Result<Vec<Vec<u8>>> {
        match self.call(&Request::CacheKeys {
            prefix: prefix.to_vec(),
        })? {
            Response::Keys(k) => Ok(k),
            other => Err(self.unexpected("cache keys", &other)),
        }
    }

    fn size_bytes(&self) -> Result<u64> {
        match self.call(&Request::SizeBytes)? {
            Response::Size(n) => Ok(n),
            other => Err(self.unexpected("a size", &other)),
        }
    }

    fn durability(&self) -> Durability {
        match self.call(&Request::Durability) {
            Ok(Response::Durability(d)) => wire::durability_from_wire(d),
            // The owner's store is durable unless it says otherwise; asking again next time.
            _ => Durability::Durable,
        }
    }
}
