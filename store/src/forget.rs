//! `forget`: runs removed from a sled store for good, and the space they took given back.
//!
//! sled keeps stale values in its log until it happens to reuse the space, and the WAL and the
//! archive hold every entry ever committed: deleting keys would leave a forgotten run's bytes
//! on disk. So a forget rebuilds instead. With the store held (sled's lock, as `repair` takes
//! it), it copies every run it keeps from sled into a new database, writes the archive again
//! from that database as one compressed segment and the heads manifest from it too, swaps the
//! databases, then deletes the old one, the older segments, the forgotten runs' snapshots and
//! the blobs only they used.
//!
//! A journal (`DIR/forgetting`, written before anything else and removed last) makes it
//! survive a kill -9 at any point: opening the store finishes a forget it finds. Until the
//! journal says the new database is built, the old one is whole and the forget starts over;
//! after, it goes on from the swap. Either way the runs end forgotten and nothing else changes.

use crate::archive::{self, Archive};
use crate::backend::key_seq;
use crate::backend::sled_db::{
    closed_here, each_entry, make_sled_files_durable, open_sled, sled_lock, SledBackend,
    FRAMES_TREE, RUNS_TREE,
};
use crate::blob_dir::BlobDir;
use crate::error::{Result, StoreError};
use crate::frame::{self, Stored};
use crate::heads::Heads;
use crate::layout::{self, hex, io, sync_dir, unhex32, CacheDir};
use crate::wal::Entry;
use std::collections::BTreeSet;
use std::path::Path;

/// The journal's file name in the store's directory.
pub const JOURNAL: &str = "forgetting";
const JOURNAL_HEADER: &str = "runlog-forget 1";
const BUILDING: &str = "db.forgetting";

/// What a forget removed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Forgot {
    /// Runs removed (those the store did not hold are left out).
    pub runs: Vec<String>,
    /// Frames removed with them.
    pub frames: u64,
    /// Blobs deleted (spilled bodies and the given ones no kept run uses).
    pub blobs: u64,
    /// Snapshots deleted.
    pub snapshots: u64,
}

/// What a forget is doing, as the journal keeps it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Journal {
    runs: BTreeSet<String>,
    /// Blobs the caller knows only forgotten runs' records name.
    blobs: BTreeSet<[u8; 32]>,
    /// Once the new database is whole: the first archive segment written from it.
    built: Option<u64>,
}

impl Journal {
    fn encode(&self) -> String {
        let mut out = format!("{JOURNAL_HEADER}\n");
        for run in &self.runs {
            out.push_str(&format!("run {run}\n"));
        }
        for blob in &self.blobs {
            out.push_str(&format!("blob {}\n", hex(blob)));
        }
        if let Some(segment) = self.built {
            out.push_str(&format!("built {segment}\n"));
        }
        out
    }

    fn decode(text: &str) -> Option<Self> {
        let mut lines = text.lines();
        if lines.next()? != JOURNAL_HEADER {
            return None;
        }
        let mut journal = Self::default();
        for line in lines {
            match line.split_once(' ')? {
                ("run", run) => {
                    journal.runs.insert(run.to_owned());
                }
                ("blob", h) => {
                    journal.blobs.insert(unhex32(h)?);
                }
                ("built", n) => journal.built = Some(n.parse().ok()?),
                _ => return None,
            }
        }
        Some(journal)
    }

    /// Written whole (temp file, sync, rename, directory sync) or not at all.
    fn save(&self, dir: &Path) -> Result<()> {
        let tmp = dir.join(layout::temp_name());
        layout::write_synced(&tmp, self.encode().as_bytes())?;
        let path = dir.join(JOURNAL);
        std::fs::rename(&tmp, &path).map_err(io("cannot write", &path))?;
        sync_dir(dir)
    }

    fn load(dir: &Path) -> Result<Option<Self>> {
        let path = dir.join(JOURNAL);
        match std::fs::read_to_string(&path) {
            Ok(text) => Self::decode(&text).map(Some).ok_or_else(|| {
                StoreError::Invalid(format!(
                    "{} is not a forget's journal runlog can read: the store is left as it is",
                    path.display()
                ))
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(io("cannot read", &path)(e)),
        }
    }
}

/// Removes `runs` from the sled store in `dir` (see the module's documentation). `blobs` are
/// blobs the caller found named only by the forgotten runs' records; they are deleted unless a
/// kept record spilled into one of them. The store must not be open anywhere (as for
/// `repair`): an open store is refused as locked.
pub fn forget(dir: &Path, runs: &[String], blobs: &[[u8; 32]]) -> Result<Forgot> {
    // An earlier forget finished, then the WAL replayed and sealed: sled holds everything.
    finish_pending(dir)?;
    drop(SledBackend::open(
        dir,
        false,
        crate::wal::CHECKPOINT_BYTES,
        archive::FRAME_BYTES,
    )?);
    let journal = Journal {
        runs: runs.iter().cloned().collect(),
        blobs: blobs.iter().copied().collect(),
        built: None,
    };
    journal.save(dir)?;
    carry_out(dir, journal)
}

/// Finishes a forget a crash cut short, if the store has one; called as the store opens.
pub(crate) fn finish_pending(dir: &Path) -> Result<()> {
    // Not a store directory (missing, a file): opening it says what is wrong.
    if !dir.is_dir() {
        return Ok(());
    }
    match Journal::load(dir)? {
        Some(journal) => carry_out(dir, journal).map(drop),
        None => Ok(()),
    }
}

fn carry_out(dir: &Path, mut journal: Journal) -> Result<Forgot> {
    let sled_path = dir.join("db");
    let building = dir.join(BUILDING);
    let mut forgot = Forgot::default();
    let segment = match journal.built {
        Some(segment) => segment,
        None => {
            if building.exists() {
                std::fs::remove_dir_all(&building).map_err(io("cannot remove", &building))?;
            }
            let built = build(dir, &sled_path, &building, &journal)?;
            forgot = built.forgot;
            journal.blobs = built.blobs;
            journal.built = Some(built.segment);
            journal.save(dir)?;
            built.segment
        }
    };
    // sled's lock on the new database, taken once every handle of this process has let go
    // (sled's threads write by path as they close: none may write into a directory after it
    // was swapped) and held to the end, keeps every other runlog out.
    let held = match building.exists() {
        true => sled_lock(dir, &building)?,
        false => sled_lock(dir, &sled_path)?,
    };
    if building.exists() {
        if sled_path.exists() {
            std::fs::remove_dir_all(&sled_path).map_err(io("cannot remove", &sled_path))?;
        }
        std::fs::rename(&building, &sled_path).map_err(io("cannot move into place", &building))?;
        sync_dir(dir)?;
    }
    for (n, path) in archive::segments(dir)? {
        if n < segment {
            std::fs::remove_file(&path).map_err(io("cannot remove", &path))?;
        }
    }
    let blob_dir = BlobDir::new(dir);
    forgot.blobs += blob_dir.remove_all(&journal.blobs)?;
    let cache = CacheDir::new(dir);
    for run in &journal.runs {
        let prefix = snapshot_prefix(run);
        for key in cache.keys(&prefix) {
            cache.remove(&key)?;
            forgot.snapshots += u64::from(is_snapshot_key(&prefix, key.len()));
        }
    }
    let path = dir.join(JOURNAL);
    std::fs::remove_file(&path).map_err(io("cannot remove", &path))?;
    sync_dir(dir)?;
    drop(held);
    closed_here(dir);
    Ok(forgot)
}

/// A new database, closed, and what the journal must remember of it.
struct Built {
    segment: u64,
    blobs: BTreeSet<[u8; 32]>,
    forgot: Forgot,
}

/// Copies what sled keeps into a new database at `to`, then writes the archive's new segment
/// and the heads manifest from it. Spilled blobs only forgotten records used join the
/// journal's blobs.
fn build(dir: &Path, sled_path: &Path, to: &Path, journal: &Journal) -> Result<Built> {
    let sled_err = |path: &Path| {
        let path = path.to_path_buf();
        move |source| StoreError::Sled {
            path,
            cause: source,
        }
    };
    let mut forgot = Forgot::default();
    let mut spilled_kept = BTreeSet::new();
    let mut spilled_gone = BTreeSet::new();
    let new = opened(dir, to)?;
    let runs = new.open_tree(RUNS_TREE).map_err(sled_err(to))?;
    let frames = new.open_tree(FRAMES_TREE).map_err(sled_err(to))?;
    {
        let old = opened(dir, sled_path)?;
        let old_runs = old.open_tree(RUNS_TREE).map_err(sled_err(sled_path))?;
        let old_frames = old.open_tree(FRAMES_TREE).map_err(sled_err(sled_path))?;
        let mut gone = BTreeSet::new();
        for item in old_runs.iter() {
            let (name, slot) = item.map_err(sled_err(sled_path))?;
            let name_text = String::from_utf8_lossy(&name).into_owned();
            if journal.runs.contains(&name_text) {
                forgot.runs.push(name_text);
                gone.extend(run_num(&slot));
            } else {
                runs.insert(name, slot).map_err(sled_err(to))?;
            }
        }
        for item in old_frames.iter() {
            let (key, bytes) = item.map_err(sled_err(sled_path))?;
            let spilled = spilled_in(&bytes, key_seq(&key).unwrap_or(1));
            if run_num(&key).is_some_and(|n| gone.contains(&n)) {
                forgot.frames += 1;
                spilled_gone.extend(spilled);
            } else {
                spilled_kept.extend(spilled);
                frames.insert(key, bytes).map_err(sled_err(to))?;
            }
        }
    }
    // The old database's threads let go before anything else happens to its directory.
    drop(sled_lock(dir, sled_path)?);
    new.flush().map_err(sled_err(to))?;
    make_sled_files_durable(dir, to)?;
    // The new archive segment and manifest, from the new database alone.
    let mut heads = Heads::default();
    let mut archive = Archive::open(dir, archive::FRAME_BYTES)?;
    let segment = archive.next_segment();
    archive.write_segment(|put| {
        each_entry(&runs, &frames, &mut |entry: &Entry| {
            heads.note(entry);
            put(entry)
        })
    })?;
    archive.finish();
    heads.save(dir)?;
    // Spills only forgotten records used; the kept records' own spills stay, even if the
    // caller named them.
    let mut blobs = journal.blobs.clone();
    blobs.extend(spilled_gone.difference(&spilled_kept).copied());
    blobs.retain(|b| !spilled_kept.contains(b));
    drop((runs, frames, new));
    closed_here(dir);
    Ok(Built {
        segment,
        blobs,
        forgot,
    })
}

/// A sled database opened, and what its opening wrote made durable at once (as the store's own
/// open does): a power cut must not leave a torn recovery behind in a database a forget that
/// starts over reads again.
fn opened(dir: &Path, sled_path: &Path) -> Result<sled::Db> {
    let db = open_sled(dir, sled_path)?;
    make_sled_files_durable(dir, sled_path)?;
    Ok(db)
}

/// The cache keys of a run's snapshots start with this (the replay crate's key layout, which
/// this crate cannot import), and so do those of other entries derived from its history.
pub(crate) fn snapshot_prefix(run: &str) -> Vec<u8> {
    let mut prefix = b"snap/".to_vec();
    prefix.extend_from_slice(run.as_bytes());
    prefix.push(0);
    prefix
}

/// Whether a key under `prefix` ([`snapshot_prefix`]) is a snapshot's: the prefix and a seq's
/// 8 bytes, where another entry derived from the run has a name of another length.
pub(crate) fn is_snapshot_key(prefix: &[u8], key_len: usize) -> bool {
    key_len == prefix.len() + 8
}

/// The run number a slot value or a frame key starts with.
fn run_num(bytes: &[u8]) -> Option<u64> {
    bytes
        .get(..8)
        .and_then(|b| <[u8; 8]>::try_from(b).ok())
        .map(u64::from_be_bytes)
}

/// The blobs a frame's spilled records live in.
fn spilled_in(bytes: &[u8], first: u64) -> Vec<[u8; 32]> {
    let mut out = Vec::new();
    let _ = frame::walk(
        bytes,
        first,
        |_, record| {
            if let Stored::Spilled(hash) = record.stored {
                out.push(*hash);
            }
            Ok(())
        },
        |_| false,
    );
    out
}
