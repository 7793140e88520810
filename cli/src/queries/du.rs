//! Where a store's space goes (`runlog du`): each run's events, the outputs and patches its
//! events keep in the blob area, its cached snapshots and its worktrees on this host; and the
//! store's files as the disk counts them (sled's database, the WAL, the archive, the blob area,
//! the snapshot cache), so sled's overhead over the events it holds shows. Files count what the
//! disk gives them (allocated blocks, as `du` says), not their length.

use runlog_core::codec::decode_event;
use runlog_core::Hash;
use runlog_replay::Result;
use runlog_store::EventLog;
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::path::Path;

/// One run's share.
#[derive(Debug, Clone, Default, Serialize)]
pub struct RunSpace {
    /// The run.
    pub run: String,
    /// Events recorded.
    pub events: u64,
    /// Bytes of its encoded events.
    pub event_bytes: u64,
    /// Blobs its events point to (outputs and patches larger than an event holds).
    pub blobs: u64,
    /// Their bytes (a blob two runs share is counted in each).
    pub blob_bytes: u64,
    /// Snapshots cached.
    pub snapshots: u64,
    /// Their bytes.
    pub snapshot_bytes: u64,
    /// Bytes of its worktrees, feedback and history files on this host.
    pub worktree_bytes: u64,
    /// All of the above.
    pub total_bytes: u64,
}

/// The store's files, by kind (a directory store; the shared store has no files of this
/// host's but worktrees).
#[derive(Debug, Clone, Default, Serialize)]
pub struct StoreSpace {
    /// sled's database directory.
    pub sled_bytes: u64,
    /// The write-ahead log.
    pub wal_bytes: u64,
    /// The sealed archive segments.
    pub archive_bytes: u64,
    /// How many.
    pub archive_segments: u64,
    /// The blob area.
    pub blob_bytes: u64,
    /// The snapshot cache.
    pub snapshot_bytes: u64,
    /// Worktrees, feedback and history files.
    pub worktree_bytes: u64,
    /// Everything else (heads, sockets, markers, logs).
    pub other_bytes: u64,
    /// All files under the store directory.
    pub total_bytes: u64,
    /// sled's bytes beyond the events it holds (its index, free space, stale values).
    pub sled_overhead_bytes: u64,
}

/// What a run's history takes: its events and the blobs they point to (`runs`' SIZE).
pub fn history_bytes(log: &dyn EventLog, store_dir: &Path, run: &str) -> Result<u64> {
    let space = history(log, store_dir, run)?;
    Ok(space.event_bytes + space.blob_bytes)
}

/// The bytes of a run's encoded events.
pub fn event_bytes(log: &dyn EventLog, run: &str) -> Result<u64> {
    Ok(Counted::now(log, run)?.event_bytes)
}

/// One run's space; `store_dir` is this host's directory of the store (its worktrees, and for
/// a directory store its blob files).
pub fn run_space(log: &dyn EventLog, store_dir: &Path, run: &str) -> Result<RunSpace> {
    let mut space = history(log, store_dir, run)?;
    for seq in runlog_replay::snapshot::list(log, run) {
        let key = runlog_replay::snapshot::key(run, seq);
        space.snapshots += 1;
        space.snapshot_bytes += log.cache_get(&key)?.map_or(0, |v| v.len() as u64);
    }
    let work = runlog_runner::Layout::new(store_dir, run).work();
    space.worktree_bytes = disk_bytes(&work);
    space.total_bytes =
        space.event_bytes + space.blob_bytes + space.snapshot_bytes + space.worktree_bytes;
    Ok(space)
}

/// A run's history as last counted, up to `seq` whose chain hash is `hash`: kept in the store's
/// cache, so that counting again decodes only the events appended since (`runlog runs` decoded
/// every event of every run, 0.42 s for a run of 1M events).
#[derive(Debug, Default, Serialize, Deserialize)]
struct Counted {
    seq: u64,
    hash: Hash,
    events: u64,
    event_bytes: u64,
    blobs: BTreeSet<Hash>,
}

impl Counted {
    const NAME: &'static str = "counted";

    /// The run's count as cached, if it counts a prefix of the history the log holds now (a
    /// run forgotten and recorded again under its id has another).
    fn cached(log: &dyn EventLog, run: &str) -> Result<Option<Self>> {
        let key = runlog_replay::snapshot::derived_key(run, Self::NAME);
        let Some(c) = log
            .cache_get(&key)?
            .and_then(|bytes| serde_json::from_slice::<Counted>(&bytes).ok())
        else {
            return Ok(None);
        };
        Ok((log.hash_at(run, c.seq)? == Some(c.hash.0)).then_some(c))
    }

    /// The run's count now: the one kept, taken on past where it stopped, and kept again when
    /// it moved.
    fn now(log: &dyn EventLog, run: &str) -> Result<Self> {
        let mut counted = Self::cached(log, run)?.unwrap_or_default();
        let before = counted.seq;
        counted.count_on(log, run)?;
        if counted.seq > before {
            // A cache: a count that cannot be kept is counted again next time.
            if let Ok(bytes) = serde_json::to_vec(&counted) {
                let key = runlog_replay::snapshot::derived_key(run, Self::NAME);
                let _ = log.cache_put(&key, &bytes);
            }
        }
        Ok(counted)
    }

    /// Counts the events after the last one counted.
    fn count_on(&mut self, log: &dyn EventLog, run: &str) -> Result<()> {
        log.scan(run, self.seq + 1, u64::MAX, &mut |r| {
            self.seq = r.seq;
            self.hash = Hash(*r.hash);
            self.events += 1;
            self.event_bytes += r.body.len() as u64;
            self.blobs.extend(blobs_named(r.body).into_iter().map(Hash));
            Ok(true)
        })?;
        Ok(())
    }
}

/// A run's events and blobs.
fn history(log: &dyn EventLog, store_dir: &Path, run: &str) -> Result<RunSpace> {
    let counted = Counted::now(log, run)?;
    let mut space = RunSpace {
        run: run.to_owned(),
        events: counted.events,
        event_bytes: counted.event_bytes,
        ..RunSpace::default()
    };
    let blob_area = runlog_store::blob_dir::BlobDir::new(store_dir);
    for Hash(hash) in &counted.blobs {
        let on_disk = blob_area.file(hash).and_then(|p| std::fs::metadata(p).ok());
        let bytes = match on_disk {
            Some(m) => allocated(&m),
            None => log.get_blob(hash)?.map_or(0, |b| b.len() as u64),
        };
        space.blob_bytes += bytes;
    }
    space.blobs = counted.blobs.len() as u64;
    Ok(space)
}

/// The blobs an event's body names (see `EventKind::blobs_named`).
pub fn blobs_named(body: &[u8]) -> Vec<[u8; 32]> {
    decode_event(body)
        .map(|e| e.kind.blobs_named().into_iter().map(|h| h.0).collect())
        .unwrap_or_default()
}

/// The store directory's files by kind; `event_bytes` is what all its runs' events take, for
/// sled's overhead.
pub fn store_space(dir: &Path, event_bytes: u64) -> StoreSpace {
    let size = |name: &str| disk_bytes(&dir.join(name));
    let mut s = StoreSpace {
        sled_bytes: size("db"),
        blob_bytes: size("blobs"),
        snapshot_bytes: size("cache"),
        worktree_bytes: size("worktrees"),
        total_bytes: disk_bytes(dir),
        ..StoreSpace::default()
    };
    if let Ok(entries) = std::fs::read_dir(dir) {
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let len = e
                .metadata()
                .map_or(0, |m| if m.is_file() { allocated(&m) } else { 0 });
            if name == "wal" {
                s.wal_bytes += len;
            } else if name.starts_with("archive-") && name.ends_with(".wal") {
                s.archive_bytes += len;
                s.archive_segments += 1;
            }
        }
    }
    s.other_bytes = s.total_bytes.saturating_sub(
        s.sled_bytes
            + s.wal_bytes
            + s.archive_bytes
            + s.blob_bytes
            + s.snapshot_bytes
            + s.worktree_bytes,
    );
    s.sled_overhead_bytes = s.sled_bytes.saturating_sub(event_bytes);
    s
}

/// Bytes the disk gives a file: its allocated blocks (a sparse file counts what it holds, a
/// small one a whole block), as `du` counts.
fn allocated(m: &std::fs::Metadata) -> u64 {
    std::os::unix::fs::MetadataExt::blocks(m) * 512
}

/// [`allocated`] of every file under `path`.
fn disk_bytes(path: &Path) -> u64 {
    let mut total = 0;
    let mut stack = vec![path.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for entry in entries.flatten() {
            match entry.metadata() {
                Ok(m) if m.is_dir() => stack.push(entry.path()),
                Ok(m) => total += allocated(&m),
                Err(_) => {}
            }
        }
    }
    total
}
