//! `repair`: rebuilds sled from the archive (and the write-ahead log) when sled lost part of a
//! run or cannot be opened at all; the damaged database is kept aside, never deleted.
//!
//! Each run is rebuilt up to its first missing record: a frame that does not continue the run
//! (a gap left by an unreadable stretch of the archive) stops that run there, so nothing is
//! ever appended after a hole. The heads manifest is left as it was: a run the archive could
//! not restore in full stays reported as damaged, with the seqs that are gone.

use crate::archive::{self, Archive, Unreadable};
use crate::backend::sled_db::{
    apply_to, closed_here, open_sled, sled_lock, FRAMES_TREE, RUNS_TREE,
};
use crate::blob_dir::BlobDir;
use crate::error::{Damage, Result, StoreError};
use crate::heads::{frame_end, Heads};
use crate::layout::{self, io, sync_dir};
use crate::log::{EventLog, Log, Options};
use crate::types::Head;
use crate::wal::{Entry, Wal};
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

/// One run after a repair.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunRepaired {
    /// Run id.
    pub run: String,
    /// Events verified after the rebuild.
    pub verified: u64,
    /// The head the store remembers committing (from the heads manifest).
    pub remembered: Option<u64>,
    /// Its head now.
    pub head: Option<Head>,
    /// What is still wrong (the seqs lost with the archive), if anything.
    pub damage: Option<Damage>,
}

/// What a repair did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Repaired {
    /// Where the damaged sled database was moved.
    pub aside: Option<PathBuf>,
    /// Entries of the archive and the WAL replayed into the new database.
    pub entries: u64,
    /// Bytes of the archive that could not be read.
    pub unreadable: Vec<Unreadable>,
    /// Every run, verified.
    pub runs: Vec<RunRepaired>,
}

impl Repaired {
    /// Whether every run is whole again.
    pub fn is_whole(&self) -> bool {
        self.runs.iter().all(|r| r.damage.is_none())
    }
}

/// Rebuilds the sled database of the store in `dir` from its archive and WAL.
pub fn repair(dir: &Path) -> Result<Repaired> {
    let sled_path = layout::prepare(dir, false)?;
    let _lock = sled_lock(dir, &sled_path)?;
    if archive::segments(dir)?.is_empty() {
        return Err(StoreError::Invalid(format!(
            "{} has no archive to rebuild sled from (it was made by a runlog without one, or the archive was deleted): `runlog salvage` recovers what sled still holds",
            dir.display()
        )));
    }
    let ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis());
    let building = dir.join(format!("db.rebuilding-{ms}"));
    let (entries, unreadable) = rebuild(dir, &building)?;
    let aside = if sled_path.exists() {
        let aside = dir.join(format!("db.damaged-{ms}"));
        std::fs::rename(&sled_path, &aside).map_err(io("cannot move aside", &sled_path))?;
        Some(aside)
    } else {
        None
    };
    std::fs::rename(&building, &sled_path).map_err(io("cannot move into place", &building))?;
    sync_dir(dir)?;
    drop(_lock);
    let remembered = Heads::seqs(Heads::load(dir)?);
    let log = Log::open(
        dir,
        Options {
            create: false,
            ..Options::default()
        },
    )?;
    let mut runs = Vec::new();
    for meta in log.runs()? {
        let report = log.verify(&meta.run)?;
        runs.push(RunRepaired {
            remembered: remembered.get(&meta.run).copied(),
            run: meta.run,
            verified: report.verified,
            head: report.head,
            damage: report.damage,
        });
    }
    log.close()?;
    Ok(Repaired {
        aside,
        entries,
        unreadable,
        runs,
    })
}

/// Writes every archived entry, then the WAL's, into a new sled database at `to`; the WAL is
/// sealed into the archive once sled holds it, so opening does not replay it again.
fn rebuild(dir: &Path, to: &Path) -> Result<(u64, Vec<Unreadable>)> {
    // This process holds the store now: opening it after the rebuild waits for sled to let go
    // of the new database's lock instead of taking it for another process's.
    layout::write_owner(dir);
    let db = open_sled(dir, to)?;
    let sled_err = |source| StoreError::Sled {
        path: to.to_path_buf(),
        cause: source,
    };
    let runs = db.open_tree(RUNS_TREE).map_err(sled_err)?;
    let frames = db.open_tree(FRAMES_TREE).map_err(sled_err)?;
    let mut order = Continuity::default();
    let mut count = 0u64;
    let mut put = |entry: Entry| -> Result<()> {
        count += 1;
        if let Some(entry) = order.keep(entry) {
            apply_to(&runs, &frames, &entry).map_err(sled_err)?;
        }
        Ok(())
    };
    let unreadable = archive::read(dir, &mut put)?;
    let (mut wal, pending) = Wal::open(&dir.join("wal"))?;
    // The blobs only the WAL holds reach their files before it is sealed.
    let blobs = BlobDir::new(dir);
    for entry in pending {
        if let Entry::Blob { .. } = entry {
            blobs.logged(entry.clone());
        }
        put(entry)?;
    }
    blobs.place_logged()?;
    db.flush().map_err(sled_err)?;
    drop(db);
    closed_here(dir);
    let db_file = to.join("db");
    std::fs::File::open(&db_file)
        .and_then(|f| f.sync_all())
        .map_err(io("cannot sync", &db_file))?;
    sync_dir(to)?;
    Archive::open(dir, archive::FRAME_BYTES)?.seal(&mut wal)?;
    Ok((count, unreadable))
}

/// Keeps each run's frames gapless: a frame that does not start where the run ends stops the
/// run (nothing after a hole is kept); one already held is a duplicate and dropped.
#[derive(Default)]
struct Continuity {
    next: HashMap<u64, u64>,
    stopped: HashSet<u64>,
}

impl Continuity {
    fn keep(&mut self, entry: Entry) -> Option<Entry> {
        let Entry::Frames(frames) = entry else {
            return Some(entry);
        };
        let mut kept = Vec::with_capacity(frames.len());
        for (num, first, bytes) in frames {
            if self.stopped.contains(&num) {
                continue;
            }
            let next = self.next.entry(num).or_insert(1);
            if first < *next {
                continue;
            }
            match frame_end(first, &bytes) {
                Some((last, _)) if first == *next => {
                    *next = last + 1;
                    kept.push((num, first, bytes));
                }
                _ => {
                    self.stopped.insert(num);
                }
            }
        }
        (!kept.is_empty()).then_some(Entry::Frames(kept))
    }
}
