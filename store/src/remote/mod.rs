//! One store, many processes. sled lets one process open a store; so the process that opens it
//! owns it and serves it on a Unix socket in the store directory ([`server`]), and every other
//! process uses it through that socket ([`client`]). [`Store`] is the handle commands hold: it
//! finds the owner or becomes it, and when the owner goes (it finished, or was killed) it finds
//! the next owner or becomes it, and carries on with the call it was making.

mod client;
mod server;
mod wire;

pub use server::{socket_path, MAX_CONNECTIONS};

use crate::blocks::Chain;
use crate::error::{Result, StoreError};
use crate::log::{landed, EventLog, Log, Options};
use crate::postgres::PgLog;
use crate::types::{Direction, Durability, Head, Record, RecordRef, RunMeta, VerifyReport};
use client::{Client, Connect};
use crossbeam_channel::Receiver;
use server::Server;
use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

/// How long a process waits for a store's owner to answer or to let go before it says the
/// store is locked. An owner starting up or exiting takes milliseconds; this is for loaded CI.
pub const TAKEOVER_WAIT: Duration = Duration::from_secs(15);

/// How the store is reached now.
#[derive(Debug)]
enum Reach {
    /// This process owns the store and serves it.
    Owner { log: Arc<Log>, _server: Server },
    /// Another process owns it.
    Client(Client),
    /// The shared store in PostgreSQL: no owner, every process connects.
    Shared(Arc<PgLog>),
}

impl Reach {
    fn log(&self) -> &dyn EventLog {
        match self {
            Reach::Owner { log, .. } => &**log,
            Reach::Client(c) => c,
            Reach::Shared(log) => &**log,
        }
    }
}

/// A store directory, owned by this process or reached through its owner; or the shared store
/// in PostgreSQL ([`Store::connect`]).
#[derive(Debug)]
pub struct Store {
    route: Arc<Route>,
    notes: Vec<String>,
}

/// How this process reaches a store now, shared with the threads that follow subscriptions
/// across a change of owner.
#[derive(Debug)]
struct Route {
    dir: PathBuf,
    options: Options,
    reach: RwLock<Arc<Reach>>,
}

impl Route {
    fn current(&self) -> Arc<Reach> {
        self.reach.read().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// After `lost` stopped answering: the next owner (or this process, owning it now).
    fn take_over(&self, lost: &Arc<Reach>) -> Result<Arc<Reach>> {
        let mut reach = self.reach.write().unwrap_or_else(|p| p.into_inner());
        if Arc::ptr_eq(&reach, lost) {
            tracing::debug!(dir = %self.dir.display(), "the store's owner went: finding the next, or taking it over");
            let (found, _) = find(
                &self.dir,
                Options {
                    create: false,
                    ..self.options
                },
            )?;
            *reach = Arc::new(found);
        }
        Ok(reach.clone())
    }
}

impl Store {
    /// Opens the store in `dir`: through its owner if it has one, else by owning it.
    pub fn open(dir: &Path, options: Options) -> Result<Self> {
        let (reach, notes) = find(dir, options)?;
        let route = Route {
            dir: dir.to_path_buf(),
            options,
            reach: RwLock::new(Arc::new(reach)),
        };
        Ok(Self {
            route: Arc::new(route),
            notes,
        })
    }

    /// Connects to the shared store at a PostgreSQL URL.
    pub fn connect(url: &str) -> Result<Self> {
        let log = PgLog::connect(url)?;
        let route = Route {
            dir: PathBuf::from(log.at()),
            options: Options::default(),
            reach: RwLock::new(Arc::new(Reach::Shared(Arc::new(log)))),
        };
        Ok(Self {
            route: Arc::new(route),
            notes: Vec::new(),
        })
    }

    /// The shared store, when this is one (for what only it does: workers' leases).
    pub fn postgres(&self) -> Option<Arc<PgLog>> {
        match &*self.current() {
            Reach::Shared(log) => Some(log.clone()),
            _ => None,
        }
    }

    /// What opening the store had to repair (only the owner that opened it knows).
    pub fn recovery_notes(&self) -> &[String] {
        &self.notes
    }

    /// Whether this process owns the store.
    pub fn is_owner(&self) -> bool {
        matches!(*self.current(), Reach::Owner { .. })
    }

    /// Who owns the store, when another process does.
    pub fn owner(&self) -> Option<String> {
        match &*self.current() {
            Reach::Client(c) => Some(c.owner.clone()),
            Reach::Owner { .. } | Reach::Shared(_) => None,
        }
    }

    fn current(&self) -> Arc<Reach> {
        self.route.current()
    }

    fn take_over(&self, lost: &Arc<Reach>) -> Result<Arc<Reach>> {
        self.route.take_over(lost)
    }

    /// Calls `f` on the store, again on the next owner if the owner goes meanwhile. Only for
    /// calls that may safely run twice.
    /// An append through `op`: if the owner goes before it answers, the append is looked for
    /// in the log (it may have gone through) before the next owner is asked.
    fn appending(
        &self,
        run: &str,
        expected: Option<u64>,
        bodies: Vec<Vec<u8>>,
        op: &AppendOp<'_>,
    ) -> Result<Head> {
        let mut reach = self.current();
        loop {
            let Reach::Client(client) = &*reach else {
                return op(reach.log(), bodies);
            };
            match op(client, bodies.clone()) {
                // The answer was lost, not necessarily the append: if the log now holds exactly
                // these records after `expected`, it went through. The next owner may go too.
                Err(StoreError::OwnerGone { .. }) => loop {
                    reach = self.take_over(&reach)?;
                    match landed(reach.log(), run, expected, &bodies) {
                        Ok(Some(head)) => return Ok(head),
                        Ok(None) => break,
                        Err(StoreError::OwnerGone { .. }) => {}
                        Err(e) => return Err(e),
                    }
                },
                other => return other,
            }
        }
    }

    fn with<T>(&self, f: impl Fn(&dyn EventLog) -> Result<T>) -> Result<T> {
        let mut reach = self.current();
        loop {
            match f(reach.log()) {
                Err(StoreError::OwnerGone { .. }) => reach = self.take_over(&reach)?,
                other => return other,
            }
        }
    }
}

/// Connects to the store's owner, or opens the store and serves it; waits while an owner is
/// starting or leaving.
fn find(dir: &Path, options: Options) -> Result<(Reach, Vec<String>)> {
    let deadline = Instant::now() + TAKEOVER_WAIT;
    loop {
        match Client::connect(dir) {
            Connect::Connected(c) => {
                tracing::debug!(dir = %dir.display(), owner = %c.owner, "reaching the store through its owner");
                return Ok((Reach::Client(c), Vec::new()));
            }
            Connect::Incompatible(e) => return Err(e),
            Connect::NoOwner => {}
        }
        match Log::open(dir, options) {
            Ok(log) => {
                let notes = log.recovery_notes();
                let log = Arc::new(log);
                let owner = format!(
                    "pid {}: {}",
                    std::process::id(),
                    std::env::args().collect::<Vec<_>>().join(" ")
                );
                let served: Arc<dyn EventLog> = log.clone();
                let server =
                    Server::start(served, dir, owner).map_err(|source| StoreError::Io {
                        what: "cannot serve the store on its socket in",
                        path: dir.to_path_buf(),
                        cause: source,
                    })?;
                tracing::debug!(dir = %dir.display(), "owning the store, serving it on its socket");
                return Ok((
                    Reach::Owner {
                        log,
                        _server: server,
                    },
                    notes,
                ));
            }
            Err(e @ StoreError::Locked { .. }) if Instant::now() >= deadline => return Err(e),
            Err(StoreError::Locked { .. }) => {
                tracing::trace!(dir = %dir.display(), "the store is locked by an owner starting or leaving: waiting");
                std::thread::sleep(Duration::from_millis(10))
            }
            Err(e) => return Err(e),
        }
    }
}

/// An append to make through whichever log owns the store.
type AppendOp<'a> = dyn Fn(&dyn EventLog, Vec<Vec<u8>>) -> Result<Head> + 'a;

impl EventLog for Store {
    fn append(&self, run: &str, expected: Option<u64>, bodies: Vec<Vec<u8>>) -> Result<Head> {
        self.appending(run, expected, bodies, &|log, bodies| {
            log.append(run, expected, bodies)
        })
    }

    fn create(&self, run: &str, chain: Chain, bodies: Vec<Vec<u8>>) -> Result<Head> {
        self.appending(run, Some(0), bodies, &|log, bodies| {
            log.create(run, chain, bodies)
        })
    }

    fn chain(&self, run: &str) -> Result<Option<Chain>> {
        self.with(|l| l.chain(run))
    }

    fn head(&self, run: &str) -> Result<Option<Head>> {
        self.with(|l| l.head(run))
    }

    fn runs(&self) -> Result<Vec<RunMeta>> {
        self.with(|l| l.runs())
    }

    fn scan(
        &self,
        run: &str,
        from: u64,
        to: u64,
        f: &mut dyn FnMut(RecordRef<'_>) -> Result<bool>,
    ) -> Result<()> {
        // Resumes after the last record `f` saw if the owner goes mid-scan.
        let mut next = from;
        let mut reach = self.current();
        loop {
            let start = next;
            let mut track = |r: RecordRef<'_>| {
                next = r.seq + 1;
                f(r)
            };
            match reach.log().scan(run, start, to, &mut track) {
                Err(StoreError::OwnerGone { .. }) => reach = self.take_over(&reach)?,
                other => return other,
            }
        }
    }

    fn scan_bodies(
        &self,
        run: &str,
        from: u64,
        to: u64,
        f: &mut dyn FnMut(u64, &[u8]) -> Result<bool>,
    ) -> Result<()> {
        // Resumes after the last record `f` saw if the owner goes mid-scan.
        let mut next = from;
        let mut reach = self.current();
        loop {
            let start = next;
            let mut track = |seq: u64, body: &[u8]| {
                next = seq + 1;
                f(seq, body)
            };
            match reach.log().scan_bodies(run, start, to, &mut track) {
                Err(StoreError::OwnerGone { .. }) => reach = self.take_over(&reach)?,
                other => return other,
            }
        }
    }

    fn subscribe(&self, run: Option<&str>) -> Receiver<Record> {
        let reach = self.current();
        if !matches!(&*reach, Reach::Client(_)) {
            return reach.log().subscribe(run);
        }
        let first = reach.log().subscribe(run);
        let (tx, rx) = crossbeam_channel::unbounded();
        let (route, run) = (self.route.clone(), run.map(str::to_owned));
        let _ = std::thread::Builder::new()
            .name("runlog-subscription-route".into())
            .spawn(move || follow_owners(&route, reach, first, run.as_deref(), &tx));
        rx
    }

    fn verify(&self, run: &str) -> Result<VerifyReport> {
        self.with(|l| l.verify(run))
    }

    fn sync(&self) -> Result<()> {
        self.with(|l| l.sync())
    }

    fn put_blob(&self, bytes: &[u8]) -> Result<[u8; 32]> {
        self.with(|l| l.put_blob(bytes))
    }

    fn put_blob_like(&self, bytes: &[u8], like: Option<(&[u8; 32], &[u8])>) -> Result<[u8; 32]> {
        self.with(|l| l.put_blob_like(bytes, like))
    }

    fn get_blob(&self, hash: &[u8; 32]) -> Result<Option<Vec<u8>>> {
        self.with(|l| l.get_blob(hash))
    }

    fn cache_put(&self, key: &[u8], value: &[u8]) -> Result<()> {
        self.with(|l| l.cache_put(key, value))
    }

    fn cache_get(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        self.with(|l| l.cache_get(key))
    }

    fn cache_keys(&self, prefix: &[u8]) -> Result<Vec<Vec<u8>>> {
        self.with(|l| l.cache_keys(prefix))
    }

    fn size_bytes(&self) -> Result<u64> {
        self.with(|l| l.size_bytes())
    }

    fn durability(&self) -> Durability {
        self.current().log().durability()
    }
}

/// Forwards a subscription through whichever process owns the store: when the owner goes, the
/// next one (or this process) is subscribed to, and for one run what was appended in between is
/// read back, so the subscriber misses nothing and sees nothing twice.
fn follow_owners(
    route: &Route,
    mut reach: Arc<Reach>,
    mut source: Receiver<Record>,
    run: Option<&str>,
    to: &crossbeam_channel::Sender<Record>,
) {
    let mut last = 0u64;
    loop {
        for record in source.iter() {
            if run.is_some() && record.seq <= last {
                continue;
            }
            last = record.seq;
            if to.send(record).is_err() {
                return;
            }
        }
        // The owner went (a pause keeps a subscription that keeps failing from spinning).
        std::thread::sleep(Duration::from_millis(10));
        let Ok(next) = route.take_over(&reach) else {
            return;
        };
        reach = next;
        source = reach.log().subscribe(run);
        if let Some(run) = run {
            let missed = match reach
                .log()
                .read(run, last + 1, u64::MAX, Direction::Forward)
            {
                Ok(missed) => missed,
                // That owner went too: its subscription ends and the next one is found.
                Err(StoreError::OwnerGone { .. }) => continue,
                Err(_) => return,
            };
            for record in missed {
                last = record.seq;
                if to.send(record).is_err() {
                    return;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use super::*;
    use std::os::unix::net::UnixListener;

    /// A store served by a runlog that speaks another protocol is the one "locked" left: it
    /// says which version holds it, at once, instead of waiting for it to go.
    #[test]
    fn an_owner_of_another_protocol_is_named_not_waited_for() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("store");
        drop(Log::open(&path, Options::default()).unwrap());
        let listener = UnixListener::bind(server::socket_path(&path)).unwrap();
        let other = std::thread::spawn(move || {
            let (mut stream, _) = listener.accept().unwrap();
            let _: wire::Request = wire::receive(&mut stream).unwrap();
            let hello = wire::Response::Hello {
                protocol: wire::PROTOCOL + 1,
                version: "9.9.9".into(),
                owner: "pid 1: runlog run".into(),
            };
            wire::send(&mut stream, &hello).unwrap();
        });
        let started = Instant::now();
        let err = Store::open(&path, Options::default()).unwrap_err();
        other.join().unwrap();
        assert!(started.elapsed() < TAKEOVER_WAIT);
        match err {
            StoreError::Locked { owner: Some(o), .. } => {
                assert!(o.contains("runlog 9.9.9"), "{o}");
                assert!(
                    o.contains(&format!("protocol {}", wire::PROTOCOL + 1)),
                    "{o}"
                );
            }
            other => panic!("expected the other version to be named, got {other:?}"),
        }
    }
}
