//! The sled backend: runs, frames and cache in sled trees; durability from runlog's own
//! write-ahead log (see [`crate::wal`]).
//!
//! sled 0.34's `flush()` writes its buffers with `sync_file_range`, which never flushes the
//! disk cache or file metadata: it is no power-loss barrier, and it costs a device round trip
//! per buffer. So a commit is durable when its WAL entry is fdatasynced; sled is flushed and
//! its `db` file fdatasynced only at checkpoints, before the WAL is truncated.

use super::{frame_key, key_seq, Backend, RunSlot};
use crate::archive::Archive;
use crate::blob_dir::BlobDir;
use crate::error::{Damage, Result, StoreError};
use crate::heads::{self, Heads, Manifest, Remembered};
use crate::layout::{self, CacheDir};
use crate::wal::{Entry, Wal};
use nix::errno::Errno;
use nix::fcntl::{Flock, FlockArg};
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

/// Tree of run id → (run number, created ms).
pub const RUNS_TREE: &str = "runs";
/// Tree of (run number, first seq) → frame.
pub const FRAMES_TREE: &str = "frames";
/// Tree where earlier builds kept the snapshot cache; dropped on open (see [`CacheDir`]).
pub const CACHE_TREE: &str = "cache";
/// The largest blob file kept in the WAL first. Larger ones are placed at once: their bytes
/// would lengthen the sync of whatever append comes next.
const LOGGED_BLOB_BYTES: usize = 64 * 1024;

/// A sled database in a store directory.
#[derive(Debug)]
pub struct SledBackend {
    dir: PathBuf,
    db: sled::Db,
    runs: sled::Tree,
    frames: sled::Tree,
    cache: CacheDir,
    db_file: File,
    blobs: BlobDir,
    wal: Mutex<Wal>,
    /// Every run's head as committed, kept outside sled (see [`crate::heads`]).
    heads: Mutex<Heads>,
    archive: Mutex<Archive>,
    notes: Vec<String>,
    checkpoint_bytes: u64,
}

impl SledBackend {
    /// Opens (creating when asked) the store in `dir`; it checkpoints when the write-ahead log
    /// grows past `checkpoint_bytes`, and compresses the archive in frames of
    /// `archive_frame_bytes` of entries.
    pub fn open(
        dir: &Path,
        create: bool,
        checkpoint_bytes: u64,
        archive_frame_bytes: usize,
    ) -> Result<Self> {
        let sled_path = layout::prepare(dir, create)?;
        let db = open_sled(dir, &sled_path)?;
        layout::write_owner(dir);
        let sled_err = |source| StoreError::Sled {
            path: dir.to_path_buf(),
            cause: source,
        };
        let runs = db.open_tree(RUNS_TREE).map_err(sled_err)?;
        let frames = db.open_tree(FRAMES_TREE).map_err(sled_err)?;
        // Snapshots are files now; an older build's cache tree is only a risk.
        db.drop_tree(CACHE_TREE).map_err(sled_err)?;
        let db_path = sled_path.join("db");
        let db_file = File::open(&db_path).map_err(|source| StoreError::Io {
            what: "cannot open sled's log file for syncing",
            path: db_path,
            cause: source,
        })?;
        make_sled_files_durable(dir, &sled_path)?;
        let (wal, replay, aside) = Wal::open_reporting(&dir.join("wal"))?;
        let cache = CacheDir::new(dir);
        // A cache: a store whose older entries cannot be removed now (a read-only directory)
        // opens all the same, and the next open tries again.
        let _ = cache.remove_older_entries();
        let mut backend = Self {
            dir: dir.to_path_buf(),
            db,
            runs,
            frames,
            cache,
            db_file,
            blobs: BlobDir::new(dir),
            wal: Mutex::new(wal),
            heads: Mutex::new(Heads::default()),
            archive: Mutex::new(Archive::open(dir, archive_frame_bytes)?),
            notes: aside.iter().map(ToString::to_string).collect(),
            checkpoint_bytes,
        };
        backend.remember()?;
        let replayed = !replay.is_empty();
        for entry in replay {
            backend.apply(&entry)?;
            backend.lock_heads().note(&entry);
            backend.blobs.logged(entry);
        }
        if replayed {
            backend.checkpoint()?;
        }
        // After the WAL's segment: the archive keeps each run's frames in seq order.
        backend.archive_what_only_sled_kept()?;
        let heads = backend.lock_heads().clone();
        for run in heads.all() {
            if let Some(damage) = backend.shortfall(run, heads.written_ms()) {
                backend.notes.push(format!("run {}: {damage}", run.run));
            }
        }
        Ok(backend)
    }

    /// Loads the heads manifest; rebuilds it from the archive if it is lost or damaged. A store
    /// without an archive (new, or made before the archive existed) starts one with sled's
    /// content as segment 0, and its heads from sled.
    fn remember(&mut self) -> Result<()> {
        let loaded = Heads::load(&self.dir)?;
        let archived = crate::archive::segments(&self.dir)?;
        let heads = match loaded {
            Manifest::Read(heads) => {
                if archived.is_empty() {
                    self.restart_archive(&heads)?;
                }
                heads
            }
            Manifest::Missing if archived.is_empty() => {
                let mut heads = self.heads_from_sled()?;
                self.write_base_segment()?;
                // Written now, not at the first checkpoint: another process opening the store
                // meanwhile (a sub-project's child run, `runlog status`) finds it, instead of
                // an archive without a manifest, which reads as a lost manifest.
                heads.create(&self.dir)?;
                heads
            }
            other => {
                let why = match other {
                    Manifest::Damaged(damage) => damage.to_string(),
                    _ => "it is missing".to_owned(),
                };
                let mut heads = Heads::default();
                let unreadable = crate::archive::read(&self.dir, &mut |e| {
                    heads.note(&e);
                    Ok(())
                })?;
                self.notes.push(format!(
                    "the heads manifest {} was rebuilt from the archive: {why}{}",
                    self.dir.join(heads::FILE).display(),
                    if unreadable.is_empty() {
                        String::new()
                    } else {
                        format!(
                            " (the archive has unreadable bytes: {})",
                            crate::archive::describe(&unreadable)
                        )
                    }
                ));
                heads
            }
        };
        *self.lock_heads() = heads;
        Ok(())
    }

    /// A power cut can keep sled's unsynced writes and drop the WAL's (any subset of unsynced
    /// writes may survive): sled then holds the end of an append that was never acknowledged,
    /// and the run goes on from it. Those frames go to the archive too, so that it keeps holding
    /// everything sled holds.
    fn archive_what_only_sled_kept(&mut self) -> Result<()> {
        let mut kept = Vec::new();
        let mut said = Vec::new();
        for (run, slot) in self.runs()? {
            let Some((first, bytes)) = self.frame_at_or_before(slot.num, u64::MAX)? else {
                continue;
            };
            let Some((last, _)) = heads::frame_end(first, &bytes) else {
                continue;
            };
            let from = match self.lock_heads().get(&run).map(|r| r.seq) {
                Some(seq) if last <= seq => continue,
                Some(seq) => seq + 1,
                None => {
                    kept.push(run_entry(&run, slot));
                    1
                }
            };
            self.scan_frames(slot.num, from, u64::MAX, &mut |first, bytes| {
                kept.push(Entry::Frames(vec![(slot.num, first, bytes.to_vec())]));
                Ok(true)
            })?;
            said.push(format!("{run} {from}..={last}"));
        }
        if kept.is_empty() {
            return Ok(());
        }
        self.lock_archive()
            .write_segment(|put| kept.iter().try_for_each(put))?;
        let mut heads = self.lock_heads();
        for entry in &kept {
            heads.note(entry);
        }
        heads.save(&self.dir)?;
        drop(heads);
        self.notes.push(format!(
            "sled kept the end of appends a crash stopped before they were acknowledged (runs and seqs: {}); the runs go on from them, and the archive now holds them too",
            said.join(", ")
        ));
        Ok(())
    }

    /// The archive is gone but the manifest is not: a new archive starts from sled if sled
    /// still holds every run the manifest remembers (otherwise only `runlog salvage` can help).
    fn restart_archive(&mut self, heads: &Heads) -> Result<()> {
        let short: Vec<String> = heads
            .all()
            .filter(|r| self.shortfall(r, heads.written_ms()).is_some())
            .map(|r| r.run.clone())
            .collect();
        if short.is_empty() {
            self.write_base_segment()?;
            self.notes.push(format!(
                "the archive ({}{}archive-*.wal) was missing; a new one was started from sled, which holds every run the heads manifest remembers",
                self.dir.display(),
                std::path::MAIN_SEPARATOR
            ));
        } else {
            self.notes.push(format!(
                "the archive ({}{}archive-*.wal) is missing and sled is short of runs {}: nothing can rebuild them (`runlog salvage` exports what sled still holds)",
                self.dir.display(),
                std::path::MAIN_SEPARATOR,
                short.join(", ")
            ));
        }
        Ok(())
    }

    fn heads_from_sled(&self) -> Result<Heads> {
        let mut heads = Heads::default();
        for (run, slot) in self.runs()? {
            heads.note(&run_entry(&run, slot));
            if let Some((first, bytes)) = self.frame_at_or_before(slot.num, u64::MAX)? {
                heads.frame(slot.num, first, &bytes);
            }
        }
        Ok(heads)
    }

    /// sled's whole content as the archive's first segment.
    fn write_base_segment(&self) -> Result<()> {
        self.lock_archive()
            .write_segment(|put| each_entry(&self.runs, &self.frames, put))
    }

    /// Damage if sled holds less of a remembered run than was committed.
    fn shortfall(&self, remembered: &Remembered, written_ms: u64) -> Option<Damage> {
        let found = match self.frame_at_or_before(remembered.slot.num, u64::MAX) {
            Ok(last) => last.and_then(|(first, bytes)| heads::frame_end(first, &bytes)),
            Err(e) => {
                return Some(Damage::corrupt(
                    1,
                    format!("sled cannot read it ({e}); `runlog repair` rebuilds it from the store's archive"),
                ))
            }
        };
        heads::shortfall(remembered, found, written_ms)
    }

    fn wal(&self) -> MutexGuard<'_, Wal> {
        // The WAL's state (file offset, length) is updated only after each write succeeds.
        self.wal.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn lock_heads(&self) -> MutexGuard<'_, Heads> {
        self.heads.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn lock_archive(&self) -> MutexGuard<'_, Archive> {
        self.archive.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Applies a WAL entry to sled (in memory until the next checkpoint).
    fn apply(&self, entry: &Entry) -> Result<()> {
        apply_to(&self.runs, &self.frames, entry).map_err(|e| self.err(e))
    }

    /// Makes sled durable on its own (flush, fdatasync of its log), writes the heads manifest,
    /// then seals the WAL into the archive. A crash between any two steps leaves the WAL to
    /// replay or the manifest ahead of sled's synced content, never behind it.
    fn checkpoint(&self) -> Result<()> {
        // What sled is about to make durable is durable in the WAL first (so it reaches the
        // archive whatever a power cut keeps of sled's writes).
        self.wal().sync()?;
        self.db.flush().map_err(|e| self.err(e))?;
        self.db_file.sync_data().map_err(|source| StoreError::Io {
            what: "fdatasync failed on",
            path: self.dir.join("db/db"),
            cause: source,
        })?;
        self.lock_heads().save(&self.dir)?;
        // The blobs the WAL holds are placed before it is sealed (the archive is not replayed):
        // most while appends go on, the few logged meanwhile under the WAL's lock.
        self.blobs.place_logged()?;
        let mut wal = self.wal();
        self.blobs.place_logged()?;
        self.lock_archive().seal(&mut wal)
    }

    /// Keeps a blob: a small one's file in the WAL, durable with the sync that acknowledges
    /// the append naming it (see [`crate::blob_dir`]); a larger one's in its own file, synced
    /// now, so that no acknowledgement waits for its bytes.
    fn keep_blob(
        &self,
        hash: &[u8; 32],
        bytes: &[u8],
        like: Option<(&[u8; 32], &[u8])>,
        pack: bool,
    ) -> Result<()> {
        let Some(prepared) = self.blobs.prepare(hash, bytes, like, pack)? else {
            return Ok(());
        };
        if prepared.file.len() > LOGGED_BLOB_BYTES {
            return self.blobs.place_prepared(hash, &prepared);
        }
        let entry = Entry::Blob {
            hash: *hash,
            packed: prepared.packed,
            file: prepared.file,
        };
        let mut wal = self.wal();
        wal.append(&entry)?;
        self.blobs.logged(entry);
        // A checkpoint runs with the commits (the next one past the size starts it).
        Ok(())
    }

    fn log_and_apply(&self, entry: Entry) -> Result<()> {
        self.log_and_apply_with(entry, &mut || {})
    }

    /// [`Self::log_and_apply`], calling `logged` between the WAL's write and sled's.
    fn log_and_apply_with(&self, entry: Entry, logged: &mut dyn FnMut()) -> Result<()> {
        let mut wal = self.wal();
        wal.append(&entry)?;
        let full = wal.len() > self.checkpoint_bytes;
        drop(wal);
        logged();
        self.apply(&entry)?;
        // Remembered after sled has it: a reader comparing the two never sees sled behind.
        self.lock_heads().note(&entry);
        if full {
            self.checkpoint()?;
        }
        Ok(())
    }

    fn err(&self, source: sled::Error) -> StoreError {
        StoreError::Sled {
            path: self.dir.clone(),
            cause: source,
        }
    }
}

/// sled's whole content as WAL entries: every run's creation, then each run's frames in order.
pub(crate) fn each_entry(
    runs: &sled::Tree,
    frames: &sled::Tree,
    put: &mut dyn FnMut(&Entry) -> Result<()>,
) -> Result<()> {
    let sled_err = |source| StoreError::Sled {
        path: PathBuf::from("(sled)"),
        cause: source,
    };
    for item in runs.iter() {
        let (name, slot) = item.map_err(sled_err)?;
        if let (Ok(name), Some(slot)) = (std::str::from_utf8(&name), decode_slot(&slot)) {
            put(&run_entry(name, slot))?;
        }
    }
    for item in frames.iter() {
        let (key, bytes) = item.map_err(sled_err)?;
        let num = key.get(..8).and_then(|b| <[u8; 8]>::try_from(b).ok());
        if let (Some(num), Some(first)) = (num, key_seq(&key)) {
            put(&Entry::Frames(vec![(
                u64::from_be_bytes(num),
                first,
                bytes.to_vec(),
            )]))?;
        }
    }
    Ok(())
}

/// The WAL entry that creates a run.
fn run_entry(run: &str, slot: RunSlot) -> Entry {
    Entry::Run {
        name: run.to_owned(),
        num: slot.num,
        created_ms: slot.created_ms,
    }
}

/// Applies a WAL entry to sled's trees (in memory until sled is flushed).
pub(crate) fn apply_to(
    runs: &sled::Tree,
    frames_tree: &sled::Tree,
    entry: &Entry,
) -> sled::Result<()> {
    match entry {
        Entry::Run {
            name,
            num,
            created_ms,
        } => {
            let slot = encode_slot(RunSlot {
                num: *num,
                created_ms: *created_ms,
            });
            runs.insert(name.as_bytes(), &slot[..])?;
        }
        Entry::Frames(frames) => {
            // A sled batch writes a manifest and forces its buffer to disk (a pwrite and a
            // sync_file_range per commit, measured). Only frames of one run committed
            // together need it (one append spanning frames stays atomic even if sled
            // persists part of it before a power loss); lone frames are inserted plainly.
            let mut by_run: std::collections::BTreeMap<u64, Vec<(u64, &[u8])>> = Default::default();
            for (num, first, bytes) in frames {
                by_run.entry(*num).or_default().push((*first, bytes));
            }
            for (num, mut frames) in by_run {
                if frames.len() == 1 {
                    if let Some((first, bytes)) = frames.pop() {
                        frames_tree.insert(&frame_key(num, first)[..], bytes)?;
                    }
                    continue;
                }
                let mut batch = sled::Batch::default();
                for (first, bytes) in frames {
                    batch.insert(&frame_key(num, first)[..], bytes);
                }
                frames_tree.apply_batch(batch)?;
            }
        }
        // The blob area keeps blobs, not sled.
        Entry::Blob { .. } => {}
    }
    Ok(())
}

/// sled creates `db/`, `db/conf` and `db/db` without syncing them or their directories; the
/// checkpoint syncs `db/db`'s data, which is worth nothing if its name can vanish. Every file
/// sled keeps in its directory is synced (a database a forget has just built holds its
/// snapshot and blob files too), then the directory and the store's.
pub(crate) fn make_sled_files_durable(dir: &Path, sled_path: &Path) -> Result<()> {
    let mut dirs = vec![sled_path.to_path_buf()];
    let mut at = 0;
    while let Some(d) = dirs.get(at).cloned() {
        at += 1;
        let entries = std::fs::read_dir(&d).map_err(|source| StoreError::Io {
            what: "cannot list",
            path: d.clone(),
            cause: source,
        })?;
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                dirs.push(path);
                continue;
            }
            File::open(&path)
                .and_then(|f| f.sync_all())
                .map_err(|source| StoreError::Io {
                    what: "cannot sync",
                    path,
                    cause: source,
                })?;
        }
    }
    for d in dirs.iter().rev() {
        layout::sync_dir(d)?;
    }
    layout::sync_dir(dir)
}

/// Holds the lock sled takes on its log file, so no runlog opens the store meanwhile (and a
/// store that is open is refused); waits, a few seconds at most, for a handle this process
/// dropped to let go (sled's threads finish a little after). A database sled cannot open is locked all the same.
pub(crate) fn sled_lock(dir: &Path, sled_path: &Path) -> Result<Option<Flock<File>>> {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(3);
    loop {
        match try_sled_lock(sled_path) {
            Ok(locked) => return Ok(locked),
            // sled lets go of the lock a little after this process dropped its last handle.
            Err(Errno::EWOULDBLOCK)
                if closing_here(dir) && std::time::Instant::now() < deadline =>
            {
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            Err(Errno::EWOULDBLOCK) => {
                return Err(StoreError::Locked {
                    path: dir.to_path_buf(),
                    owner: layout::read_owner(dir),
                })
            }
            Err(errno) => {
                return Err(layout::io("cannot lock", &sled_path.join("db"))(
                    errno.into(),
                ))
            }
        }
    }
}

/// sled's lock taken without waiting; none when its log file cannot be opened.
fn try_sled_lock(sled_path: &Path) -> std::result::Result<Option<Flock<File>>, Errno> {
    let Ok(file) = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(sled_path.join("db"))
    else {
        return Ok(None);
    };
    Flock::lock(file, FlockArg::LockExclusiveNonblock)
        .map(Some)
        .map_err(|(_, errno)| errno)
}

/// Stores open in this process. sled releases its lock only when its background threads let
/// go of the file, a little after the last handle is dropped: a reopen in the same process
/// waits for that, while a handle that is still open fails at once.
static OPEN_HERE: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

fn open_here() -> MutexGuard<'static, Vec<PathBuf>> {
    OPEN_HERE.lock().unwrap_or_else(|p| p.into_inner())
}

pub(crate) fn open_sled(dir: &Path, sled_path: &Path) -> Result<sled::Db> {
    let key = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(3);
    let _opening = opening_lock(dir)?;
    loop {
        clear_unfinished_snapshots(sled_path)?;
        let opened = sled::Config::new()
            .path(sled_path)
            // runlog decides when to write and sync; sled's own timer would only add writes.
            .flush_every_ms(None)
            // sled's default page cache is 1 GiB; replays stream frames once, so a small cache
            // keeps a long replay's memory flat.
            .cache_capacity(16 * 1024 * 1024)
            .open();
        match opened.map_err(|e| open_error(dir, e)) {
            Ok(db) => {
                open_here().push(key);
                return Ok(db);
            }
            Err(StoreError::Locked { .. })
                if !open_here().contains(&key)
                    && std::time::Instant::now() < deadline
                    && closing_here(dir) =>
            {
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            Err(e) => return Err(e),
        }
    }
}

/// Held while sled opens the database: one process at a time. At its first open sled writes
/// its settings file in place (not by a rename) before it takes its lock, and a second process
/// reading the half-written file calls the new database corrupt.
fn opening_lock(dir: &Path) -> Result<Flock<File>> {
    use std::os::unix::fs::OpenOptionsExt;
    let path = dir.join(OPENING);
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .mode(0o600)
        .open(&path)
        .map_err(layout::io("cannot open", &path))?;
    Flock::lock(file, FlockArg::LockExclusive)
        .map_err(|(_, errno)| layout::io("cannot lock", &path)(errno.into()))
}

/// The file `opening_lock` locks, in the store's directory.
const OPENING: &str = "opening.lock";

/// Removes the snapshots sled began and never finished, while nobody holds the database.
///
/// sled writes a snapshot (at every open that finds its log moved on) as
/// `snap.LSN.generating` and renames it once whole, but its open reads the unfinished name
/// too and, as it sorts last, takes it for the newest: after a kill -9 in the middle of that
/// write sled calls the database corrupt. Without the file the database is as it was just
/// before sled began the snapshot, a state its recovery is made for (the older snapshot is
/// removed only after the rename).
fn clear_unfinished_snapshots(sled_path: &Path) -> Result<()> {
    let Ok(entries) = std::fs::read_dir(sled_path) else {
        return Ok(());
    };
    let unfinished: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("snap.") && n.ends_with(".generating"))
        })
        .collect();
    if unfinished.is_empty() {
        return Ok(());
    }
    // Held by a live process, the file may be one it is writing now: its own open comes first.
    let Ok(Some(locked)) = try_sled_lock(sled_path) else {
        return Ok(());
    };
    for path in &unfinished {
        std::fs::remove_file(path).map_err(layout::io("cannot remove", path))?;
    }
    layout::sync_dir(sled_path)?;
    drop(locked);
    Ok(())
}

/// Whether the lock is held by this process (a handle that is being closed).
pub(crate) fn closing_here(dir: &Path) -> bool {
    layout::read_owner(dir).is_some_and(|o| o.starts_with(&format!("pid {}:", std::process::id())))
}

fn open_error(dir: &Path, e: sled::Error) -> StoreError {
    match e {
        sled::Error::Io(io) if io.to_string().contains("could not acquire lock") => {
            StoreError::Locked {
                path: dir.to_path_buf(),
                owner: layout::read_owner(dir),
            }
        }
        source => StoreError::Sled {
            path: dir.to_path_buf(),
            cause: source,
        },
    }
}

fn decode_slot(v: &[u8]) -> Option<RunSlot> {
    let num = u64::from_be_bytes(v.get(..8)?.try_into().ok()?);
    let created_ms = u64::from_be_bytes(v.get(8..16)?.try_into().ok()?);
    Some(RunSlot { num, created_ms })
}

fn encode_slot(slot: RunSlot) -> [u8; 16] {
    frame_key(slot.num, slot.created_ms)
}

impl Backend for SledBackend {
    fn run_slot(&self, run: &str) -> Result<Option<RunSlot>> {
        let stored = self
            .runs
            .get(run.as_bytes())
            .map_err(|e| self.err(e))?
            .and_then(|v| decode_slot(&v));
        // A run sled lost is still the run the manifest remembers: reads then find it short.
        Ok(stored.or_else(|| self.lock_heads().get(run).map(|r| r.slot)))
    }

    fn create_run(&self, run: &str, slot: RunSlot) -> Result<()> {
        self.log_and_apply(run_entry(run, slot))
    }

    fn runs(&self) -> Result<Vec<(String, RunSlot)>> {
        let mut out = std::collections::BTreeMap::new();
        for item in self.runs.iter() {
            let (k, v) = item.map_err(|e| self.err(e))?;
            if let (Ok(name), Some(slot)) = (String::from_utf8(k.to_vec()), decode_slot(&v)) {
                out.insert(name, slot);
            }
        }
        for r in self.lock_heads().all() {
            out.entry(r.run.clone()).or_insert(r.slot);
        }
        Ok(out.into_iter().collect())
    }

    fn remembered(&self, run: &str) -> Option<(Remembered, u64)> {
        let heads = self.lock_heads();
        heads.get(run).map(|r| (r.clone(), heads.written_ms()))
    }

    fn max_run_num(&self) -> Result<u64> {
        Ok(self.runs()?.iter().map(|(_, s)| s.num).max().unwrap_or(0))
    }

    fn insert_frames(
        &self,
        frames: Vec<(u64, u64, Vec<u8>)>,
        logged: &mut dyn FnMut(),
    ) -> Result<()> {
        // One WAL entry and one sled batch: a multi-frame append is all there after a crash,
        // or not at all.
        self.log_and_apply_with(Entry::Frames(frames), logged)
    }

    fn frame_at_or_before(&self, num: u64, seq: u64) -> Result<Option<(u64, Vec<u8>)>> {
        let lo = frame_key(num, 0);
        let hi = frame_key(num, seq);
        match self.frames.range(lo..=hi).next_back() {
            None => Ok(None),
            Some(item) => {
                let (k, v) = item.map_err(|e| self.err(e))?;
                Ok(key_seq(&k).map(|s| (s, v.to_vec())))
            }
        }
    }

    fn scan_frames(
        &self,
        num: u64,
        from: u64,
        to: u64,
        f: &mut dyn FnMut(u64, &[u8]) -> Result<bool>,
    ) -> Result<()> {
        if from > to {
            return Ok(());
        }
        for item in self.frames.range(frame_key(num, from)..=frame_key(num, to)) {
            let (k, v) = item.map_err(|e| self.err(e))?;
            let Some(first) = key_seq(&k) else { continue };
            if !f(first, &v)? {
                break;
            }
        }
        Ok(())
    }

    fn sync(&self) -> Result<()> {
        // fdatasync outside the WAL's lock: the writer appends the next group meanwhile, and
        // this sync covers every group appended before it began.
        let point = self.wal().sync_point();
        point.sync()?;
        self.wal().synced_to(&point);
        Ok(())
    }

    fn put_blob(&self, hash: &[u8; 32], bytes: &[u8]) -> Result<()> {
        self.keep_blob(hash, bytes, None, false)
    }

    fn put_blob_packed(
        &self,
        hash: &[u8; 32],
        bytes: &[u8],
        like: Option<(&[u8; 32], &[u8])>,
    ) -> Result<()> {
        self.keep_blob(hash, bytes, like, true)
    }

    fn get_blob(&self, hash: &[u8; 32]) -> Result<Option<Vec<u8>>> {
        self.blobs.get(hash)
    }

    fn cache_put(&self, key: &[u8], value: &[u8]) -> Result<()> {
        self.cache.put(key, value)
    }

    fn cache_get(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        Ok(self.cache.get(key))
    }

    fn cache_keys(&self, prefix: &[u8]) -> Result<Vec<Vec<u8>>> {
        Ok(self.cache.keys(prefix))
    }

    fn recovery_notes(&self) -> Vec<String> {
        self.notes.clone()
    }

    fn size_bytes(&self) -> Result<u64> {
        Ok(layout::dir_size(&self.dir))
    }
}

impl Drop for SledBackend {
    fn drop(&mut self) {
        // A clean close leaves sled complete and the WAL empty, so the next open replays nothing.
        // On failure the WAL stays and the next open replays it.
        let _ = self.checkpoint();
        closed_here(&self.dir);
    }
}

/// Forgets that this process has the store in `dir` open (its sled handle was dropped).
pub(crate) fn closed_here(dir: &Path) {
    let key = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
    open_here().retain(|p| p != &key);
}
