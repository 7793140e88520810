//! The log: the `EventLog` contract and its one implementation over a backend.

use crate::backend::memory::MemoryBackend;
use crate::backend::sled_db::SledBackend;
use crate::backend::{Backend, RunSlot};
use crate::blocks::Chain;
use crate::chain::{read_start, ChainWalker, Checked};
use crate::error::{Result, StoreError};
use crate::frame;
use crate::types::{Direction, Durability, Head, Record, RecordRef, RunMeta, VerifyReport};
use crate::writer::{self, Msg, Shared};
use crossbeam_channel::{Receiver, Sender};
use std::path::Path;
use std::sync::Arc;
use std::thread::JoinHandle;

/// The largest record accepted (the event codec's limit).
pub const MAX_RECORD_BYTES: usize = 16 * 1024 * 1024;

/// An append-only, hash-chained log of runs. Object-safe and synchronous, with nothing
/// specific to one storage engine in its signatures: sled and memory implement it today.
pub trait EventLog: Send + Sync + std::fmt::Debug {
    /// Appends `bodies` to `run` atomically, after checking that the run's head seq is
    /// `expected` (0 for a new run; `None` skips the check). Returns the new head once the
    /// records are as durable as the log's [`Durability`] promises.
    fn append(&self, run: &str, expected: Option<u64>, bodies: Vec<Vec<u8>>) -> Result<Head>;
    /// Creates `run` with its first records, linked by `chain`: how a copy of a run (an
    /// import, a salvage) keeps the hashes it had. [`EventLog::append`] links a new run by
    /// [`Chain::Blocked`].
    fn create(&self, run: &str, chain: Chain, bodies: Vec<Vec<u8>>) -> Result<Head>;
    /// How `run`'s records are chained, `None` if it has none.
    fn chain(&self, run: &str) -> Result<Option<Chain>>;
    /// The run's head, `None` if it has no records.
    fn head(&self, run: &str) -> Result<Option<Head>>;
    /// Every run with its head, sorted by id.
    fn runs(&self) -> Result<Vec<RunMeta>>;
    /// Calls `f` for each record with seq in `from..=to`, oldest first, until it returns false.
    /// Bodies are checksum- and chain-verified before `f` sees them.
    fn scan(
        &self,
        run: &str,
        from: u64,
        to: u64,
        f: &mut dyn FnMut(RecordRef<'_>) -> Result<bool>,
    ) -> Result<()>;
    /// [`EventLog::scan`] without each record's chain hash: the records are checked all the
    /// same, and a store whose chain is hashed in blocks checks a block's records together.
    /// What a fold reads.
    fn scan_bodies(
        &self,
        run: &str,
        from: u64,
        to: u64,
        f: &mut dyn FnMut(u64, &[u8]) -> Result<bool>,
    ) -> Result<()> {
        self.scan(run, from, to, &mut |r| f(r.seq, r.body))
    }
    /// A channel receiving every record appended from now on (to `run`, or to any run).
    fn subscribe(&self, run: Option<&str>) -> Receiver<Record>;
    /// Walks the run's checksums and chain; reports the first bad seq.
    fn verify(&self, run: &str) -> Result<VerifyReport>;
    /// Makes everything appended so far durable.
    fn sync(&self) -> Result<()>;
    /// Stores bytes in the content-addressed blob area; returns their blake3 hash.
    fn put_blob(&self, bytes: &[u8]) -> Result<[u8; 32]>;
    /// Stores bytes as `put_blob` does, where the store can keeping only what they add to
    /// `like` (an earlier blob's hash and bytes they likely share most of theirs with: a
    /// conversation's previous request) and compressed. Read back whole by `get_blob`.
    fn put_blob_like(&self, bytes: &[u8], like: Option<(&[u8; 32], &[u8])>) -> Result<[u8; 32]> {
        let _ = like;
        self.put_blob(bytes)
    }
    /// Reads a blob by hash.
    fn get_blob(&self, hash: &[u8; 32]) -> Result<Option<Vec<u8>>>;
    /// Stores a cache entry beside the log (snapshots). Never trusted by readers.
    fn cache_put(&self, key: &[u8], value: &[u8]) -> Result<()>;
    /// Reads a cache entry.
    fn cache_get(&self, key: &[u8]) -> Result<Option<Vec<u8>>>;
    /// Cache keys with a prefix.
    fn cache_keys(&self, prefix: &[u8]) -> Result<Vec<Vec<u8>>>;
    /// Bytes the store occupies.
    fn size_bytes(&self) -> Result<u64>;
    /// What an acknowledged append guarantees.
    fn durability(&self) -> Durability;

    /// Records with seq in `from..=to` in the given direction.
    fn read(&self, run: &str, from: u64, to: u64, direction: Direction) -> Result<Vec<Record>> {
        let mut out = Vec::new();
        self.scan(run, from, to, &mut |r| {
            out.push(Record {
                run: run.to_owned(),
                seq: r.seq,
                hash: *r.hash,
                body: r.body.to_vec(),
            });
            Ok(true)
        })?;
        if direction == Direction::Backward {
            out.reverse();
        }
        Ok(out)
    }

    /// The chain hash after `seq`.
    fn hash_at(&self, run: &str, seq: u64) -> Result<Option<[u8; 32]>> {
        let mut found = None;
        self.scan(run, seq, seq, &mut |r| {
            found = Some(*r.hash);
            Ok(false)
        })?;
        Ok(found)
    }
}

/// How to open a store.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// What an acknowledged append guarantees.
    pub durability: Durability,
    /// Create the store if the directory is missing or empty.
    pub create: bool,
    /// Checkpoint (sled flushed and synced, the write-ahead log emptied) once the write-ahead
    /// log grows past this many bytes. Small values exercise checkpoints in crash tests.
    pub checkpoint_bytes: u64,
    /// Bytes of entries in each compressed frame of the archive (see [`crate::archive`]): what
    /// one damaged frame costs. Small values exercise damaged frames in tests.
    pub archive_frame_bytes: usize,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            durability: Durability::Durable,
            create: true,
            checkpoint_bytes: crate::wal::CHECKPOINT_BYTES,
            archive_frame_bytes: crate::archive::FRAME_BYTES,
        }
    }
}

/// The log over a backend, with one writer thread doing group commit.
#[derive(Debug)]
pub struct Log {
    shared: Arc<Shared>,
    tx: Option<Sender<Msg>>,
    writer: Option<JoinHandle<()>>,
    durability: Durability,
}

impl Log {
    /// Opens the sled store in `dir`.
    pub fn open(dir: &Path, options: Options) -> Result<Self> {
        // A forget a crash cut short is finished before anything reads the store.
        crate::forget::finish_pending(dir)?;
        let backend = SledBackend::open(
            dir,
            options.create,
            options.checkpoint_bytes,
            options.archive_frame_bytes,
        )?;
        Self::start(Box::new(backend), options.durability)
    }

    /// What opening the store had to set aside or repair, in words, for the user to hear
    /// (e.g. the torn tail of the write-ahead log after a power cut, and where it was kept).
    pub fn recovery_notes(&self) -> Vec<String> {
        self.shared.backend.recovery_notes()
    }

    /// How many syncs acknowledged how many appends since the log opened, as (the smallest
    /// group of the class, syncs): 1, 2–3, 4–7, …, 128 and more. The shape of group commit.
    pub fn sync_groups(&self) -> Vec<(usize, u64)> {
        self.shared
            .sync_groups()
            .iter()
            .enumerate()
            .map(|(class, n)| (1 << class, *n))
            .collect()
    }

    /// A fresh log in memory.
    pub fn memory() -> Result<Self> {
        Self::with_memory(Arc::new(MemoryBackend::default()))
    }

    /// A log in memory over a backend the caller keeps (tests use it to simulate damage).
    pub fn with_memory(backend: Arc<MemoryBackend>) -> Result<Self> {
        Self::start(Box::new(SharedMemory(backend)), Durability::Durable)
    }

    /// A log over any backend (the seam for other storage engines, and for tests that need a
    /// disk that fails).
    pub fn with_backend(backend: Box<dyn Backend>, durability: Durability) -> Result<Self> {
        Self::start(backend, durability)
    }

    fn start(backend: Box<dyn Backend>, durability: Durability) -> Result<Self> {
        let next_num = backend.max_run_num()? + 1;
        let shared = Arc::new(Shared::new(backend, next_num));
        let (tx, rx) = crossbeam_channel::unbounded();
        let worker = Arc::clone(&shared);
        let writer = std::thread::Builder::new()
            .name("runlog-writer".into())
            .spawn(move || writer::run(&worker, &rx, durability))
            .map_err(|source| StoreError::Io {
                what: "cannot start the writer thread for",
                path: "store".into(),
                cause: source,
            })?;
        Ok(Self {
            shared,
            tx: Some(tx),
            writer: Some(writer),
            durability,
        })
    }

    /// Appends `bodies`, linking them by `chain` if they create the run.
    fn append_linked(
        &self,
        run: &str,
        expected: Option<u64>,
        chain: Chain,
        bodies: Vec<Vec<u8>>,
    ) -> Result<Head> {
        if let Some(cause) = self.shared.poison_cause() {
            return Err(StoreError::Poisoned { cause });
        }
        validate_append(run, &bodies)?;
        let (reply, answer) = oneshot::channel();
        let msg = Msg::Append {
            run: run.to_owned(),
            expected,
            chain,
            bodies,
            reply,
        };
        let in_flight = InFlight::enter(&self.shared.in_flight);
        let queued = self.tx.as_ref().is_some_and(|tx| !tx.is_empty());
        if let Some(msg) = self.shared.try_commit_inline(msg, queued, self.durability) {
            self.send(msg)?;
        }
        let result = answer.recv().map_err(|_| StoreError::Closed)?;
        drop(in_flight);
        result
    }

    /// Hands on the records of `run` with seq in `from..=to`, checked, with each one's chain
    /// hash when `hashes` asks for it. A run of the blocked chain is read from the start of the
    /// block holding `from`, without the hashes of the records before `from`.
    fn walk(
        &self,
        run: &str,
        from: u64,
        to: u64,
        hashes: bool,
        f: &mut dyn FnMut(Checked<'_>) -> Result<bool>,
    ) -> Result<()> {
        let backend = &*self.shared.backend;
        let Some(slot) = backend.run_slot(run)? else {
            return Ok(());
        };
        let from = from.max(1);
        if from > to {
            return Ok(());
        }
        let start = read_start(backend, slot.num, from)?;
        let mut walker = ChainWalker::new(run, start);
        let mut stop = false;
        backend.scan_frames(slot.num, start, to, &mut |first, bytes| {
            let reaches_from =
                frame::header(bytes, first).map_or(true, |h| first + u64::from(h.count) > from);
            walker
                .frame(backend, first, bytes, hashes && reaches_from, &mut |r| {
                    if r.seq < from {
                        return Ok(true);
                    }
                    if r.seq > to || stop {
                        stop = true;
                        return Ok(false);
                    }
                    let go = f(r)?;
                    stop = !go;
                    Ok(go)
                })
                .map_err(|e| e.into_store_error(run))?;
            Ok(!stop)
        })
    }

    fn send(&self, msg: Msg) -> Result<()> {
        self.tx
            .as_ref()
            .ok_or(StoreError::Closed)?
            .send(msg)
            .map_err(|_| StoreError::Closed)
    }

    /// Closes the log: the writer syncs what is buffered and stops.
    pub fn close(mut self) -> Result<()> {
        self.shutdown()
    }

    fn shutdown(&mut self) -> Result<()> {
        drop(self.tx.take());
        if let Some(w) = self.writer.take() {
            let _ = w.join();
        }
        match self.shared.poison_cause() {
            Some(cause) => Err(StoreError::Poisoned { cause }),
            None => Ok(()),
        }
    }
}

#[derive(Debug)]
struct SharedMemory(Arc<MemoryBackend>);

macro_rules! delegate {
    ($($name:ident($($arg:ident: $ty:ty),*) -> $ret:ty;)*) => {
        impl Backend for SharedMemory {
            $(fn $name(&self, $($arg: $ty),*) -> $ret { self.0.$name($($arg),*) })*
        }
    };
}

delegate! {
    run_slot(run: &str) -> Result<Option<RunSlot>>;
    create_run(run: &str, slot: RunSlot) -> Result<()>;
    runs() -> Result<Vec<(String, RunSlot)>>;
    max_run_num() -> Result<u64>;
    insert_frames(frames: Vec<(u64, u64, Vec<u8>)>, logged: &mut dyn FnMut()) -> Result<()>;
    frame_at_or_before(num: u64, seq: u64) -> Result<Option<(u64, Vec<u8>)>>;
    scan_frames(num: u64, from: u64, to: u64, f: &mut dyn FnMut(u64, &[u8]) -> Result<bool>) -> Result<()>;
    sync() -> Result<()>;
    put_blob(hash: &[u8; 32], bytes: &[u8]) -> Result<()>;
    get_blob(hash: &[u8; 32]) -> Result<Option<Vec<u8>>>;
    cache_put(key: &[u8], value: &[u8]) -> Result<()>;
    cache_get(key: &[u8]) -> Result<Option<Vec<u8>>>;
    cache_keys(prefix: &[u8]) -> Result<Vec<Vec<u8>>>;
    size_bytes() -> Result<u64>;
}

impl Drop for Log {
    fn drop(&mut self) {
        let _ = self.shutdown();
    }
}

impl EventLog for Log {
    fn append(&self, run: &str, expected: Option<u64>, bodies: Vec<Vec<u8>>) -> Result<Head> {
        self.append_linked(run, expected, Chain::Blocked, bodies)
    }

    fn create(&self, run: &str, chain: Chain, bodies: Vec<Vec<u8>>) -> Result<Head> {
        self.append_linked(run, Some(0), chain, bodies)
    }

    fn chain(&self, run: &str) -> Result<Option<Chain>> {
        Ok(self
            .shared
            .load_head(run)?
            .filter(|h| h.seq > 0)
            .map(|h| h.chain()))
    }

    fn head(&self, run: &str) -> Result<Option<Head>> {
        Ok(self.shared.load_head(run)?.and_then(|h| h.head()))
    }

    fn runs(&self) -> Result<Vec<RunMeta>> {
        let mut out = Vec::new();
        for (run, slot) in self.shared.backend.runs()? {
            // A damaged run is still listed (without a head): `verify` says what is wrong.
            let head = match self.shared.load_head(&run) {
                Ok(h) => h.and_then(|h| h.head()),
                Err(StoreError::Damaged { .. }) => None,
                Err(e) => return Err(e),
            };
            out.push(RunMeta {
                run,
                created_ms: slot.created_ms,
                head,
            });
        }
        Ok(out)
    }

    fn scan(
        &self,
        run: &str,
        from: u64,
        to: u64,
        f: &mut dyn FnMut(RecordRef<'_>) -> Result<bool>,
    ) -> Result<()> {
        self.walk(run, from, to, true, &mut |r| match r.hash {
            Some(hash) => f(RecordRef {
                seq: r.seq,
                body: r.body,
                hash,
            }),
            None => Err(StoreError::Invalid(format!(
                "the chain hash of {run} at seq {} was not worked out",
                r.seq
            ))),
        })
    }

    fn scan_bodies(
        &self,
        run: &str,
        from: u64,
        to: u64,
        f: &mut dyn FnMut(u64, &[u8]) -> Result<bool>,
    ) -> Result<()> {
        self.walk(run, from, to, false, &mut |r| f(r.seq, r.body))
    }

    fn subscribe(&self, run: Option<&str>) -> Receiver<Record> {
        self.shared.subscribe(run)
    }

    fn verify(&self, run: &str) -> Result<VerifyReport> {
        crate::verify::verify(&self.shared, run)
    }

    fn sync(&self) -> Result<()> {
        let (reply, answer) = oneshot::channel();
        self.send(Msg::Sync { reply })?;
        answer.recv().map_err(|_| StoreError::Closed)?
    }

    fn put_blob(&self, bytes: &[u8]) -> Result<[u8; 32]> {
        let hash = *blake3::hash(bytes).as_bytes();
        self.shared.backend.put_blob(&hash, bytes)?;
        Ok(hash)
    }

    fn put_blob_like(&self, bytes: &[u8], like: Option<(&[u8; 32], &[u8])>) -> Result<[u8; 32]> {
        let hash = *blake3::hash(bytes).as_bytes();
        self.shared.backend.put_blob_packed(&hash, bytes, like)?;
        Ok(hash)
    }

    fn get_blob(&self, hash: &[u8; 32]) -> Result<Option<Vec<u8>>> {
        self.shared.backend.get_blob(hash)
    }

    fn cache_put(&self, key: &[u8], value: &[u8]) -> Result<()> {
        self.shared.backend.cache_put(key, value)
    }

    fn cache_get(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        self.shared.backend.cache_get(key)
    }

    fn cache_keys(&self, prefix: &[u8]) -> Result<Vec<Vec<u8>>> {
        self.shared.backend.cache_keys(prefix)
    }

    fn size_bytes(&self) -> Result<u64> {
        self.shared.backend.size_bytes()
    }

    fn durability(&self) -> Durability {
        self.durability
    }
}

/// Counts an append as in flight until dropped (also on early return).
struct InFlight<'a>(&'a std::sync::atomic::AtomicUsize);

impl<'a> InFlight<'a> {
    fn enter(counter: &'a std::sync::atomic::AtomicUsize) -> Self {
        counter.fetch_add(1, std::sync::atomic::Ordering::AcqRel);
        Self(counter)
    }
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, std::sync::atomic::Ordering::AcqRel);
    }
}

pub(crate) fn validate_append(run: &str, bodies: &[Vec<u8>]) -> Result<()> {
    if run.is_empty() || run.len() > 256 || run.chars().any(char::is_control) {
        return Err(StoreError::Invalid(format!(
            "run id {run:?} must be 1 to 256 printable characters"
        )));
    }
    if bodies.is_empty() {
        return Err(StoreError::Invalid("nothing to append".into()));
    }
    if let Some(big) = bodies.iter().find(|b| b.len() > MAX_RECORD_BYTES) {
        return Err(StoreError::Invalid(format!(
            "a record of {} bytes exceeds {MAX_RECORD_BYTES}",
            big.len()
        )));
    }
    Ok(())
}

/// Where `bodies` ended, if the log holds exactly them right after `expected` (whatever was
/// appended after them since): an append whose answer was lost, found to have gone through.
pub(crate) fn landed(
    log: &dyn EventLog,
    run: &str,
    expected: Option<u64>,
    bodies: &[Vec<u8>],
) -> Result<Option<Head>> {
    let Some(expected) = expected else {
        return Ok(None);
    };
    let Some(head) = log.head(run)? else {
        return Ok(None);
    };
    let last = expected + bodies.len() as u64;
    if head.seq < last || bodies.is_empty() {
        return Ok(None);
    }
    let found = log.read(run, expected + 1, last, Direction::Forward)?;
    let same = found.len() == bodies.len() && found.iter().zip(bodies).all(|(r, b)| &r.body == b);
    Ok(found.last().filter(|_| same).map(|r| Head {
        seq: r.seq,
        hash: r.hash,
    }))
}
