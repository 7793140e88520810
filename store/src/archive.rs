//! The archive: every write-ahead-log entry the store ever committed, kept outside sled so that
//! sled can be rebuilt from it (`runlog repair`).
//!
//! A checkpoint used to truncate the WAL once sled held its entries. Now it renames the synced
//! WAL to `DIR/archive-NNNNNNNNNNNN.wal` (one segment per checkpoint, numbered in order) and
//! starts an empty one: the copy costs a rename and two directory syncs per checkpoint, nothing
//! on the append path, and as many bytes as the WAL held (each entry checksummed). Segments
//! live beside the WAL, in the store's own directory, because a rename between two directories
//! is made durable by two syncs: a sync of the store's directory by another thread (a blob
//! write) in between, then a power cut, loses the segment (the power-loss test found this).
//! Segment 0 is what the store held when its archive began: empty for a new store, sled's whole
//! content for a store made before the archive existed.
//!
//! Reading never stops at a bad entry: it skips to the next one that checks out and says which
//! bytes of which segment it could not read, so a damaged copy still gives back every run up to
//! its first missing record.

use crate::error::Result;
use crate::layout::{io, sync_dir, temp_name};
use crate::wal::{self, Entry, Wal};
use std::io::Write;
use std::path::{Path, PathBuf};

/// How a segment's file name starts (then 12 digits and `.wal`).
pub const PREFIX: &str = "archive-";

/// Bytes of a segment that could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unreadable {
    /// The segment.
    pub segment: PathBuf,
    /// First byte skipped.
    pub from: u64,
    /// One past the last byte skipped.
    pub to: u64,
}

impl std::fmt::Display for Unreadable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "bytes {}..{} of {} do not check out and were skipped",
            self.from,
            self.to,
            self.segment.display()
        )
    }
}

/// Unreadable parts in one line.
pub fn describe(unreadable: &[Unreadable]) -> String {
    unreadable
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("; ")
}

/// The archive of a store, open for sealing segments into it.
#[derive(Debug)]
pub struct Archive {
    store: PathBuf,
    next: u64,
}

impl Archive {
    /// Opens the archive of a store.
    pub fn open(store: &Path) -> Result<Self> {
        let next = segments(store)?.last().map_or(0, |(n, _)| n + 1);
        Ok(Self {
            store: store.to_path_buf(),
            next,
        })
    }

    fn claim(&mut self) -> PathBuf {
        let path = self.store.join(format!("{PREFIX}{:012}.wal", self.next));
        self.next += 1;
        path
    }

    /// Moves the WAL's entries (durable in sled by now) into a new segment.
    pub fn seal(&mut self, wal: &mut Wal) -> Result<()> {
        if wal.is_empty() {
            return Ok(());
        }
        let to = self.claim();
        wal.seal_into(&to)
    }

    /// Writes entries made elsewhere (a store's content from before the archive) as a segment.
    pub fn write_segment(
        &mut self,
        fill: impl FnOnce(&mut dyn FnMut(&Entry) -> Result<()>) -> Result<()>,
    ) -> Result<()> {
        let tmp = self.store.join(temp_name());
        let file = std::fs::File::create(&tmp).map_err(io("cannot create", &tmp))?;
        let mut out = std::io::BufWriter::new(file);
        fill(&mut |entry| {
            out.write_all(&wal::encode(entry, 0))
                .map_err(io("cannot write", &tmp))
        })?;
        let file = out
            .into_inner()
            .map_err(|e| io("cannot write", &tmp)(e.into_error()))?;
        file.sync_data().map_err(io("cannot sync", &tmp))?;
        let to = self.claim();
        std::fs::rename(&tmp, &to).map_err(io("cannot move into the archive", &to))?;
        sync_dir(&self.store)
    }
}

/// The segments of a store's archive, in order (none: the store has no archive).
pub fn segments(store: &Path) -> Result<Vec<(u64, PathBuf)>> {
    let mut out = Vec::new();
    let entries = std::fs::read_dir(store).map_err(io("cannot list", store))?;
    for entry in entries.flatten() {
        let name = entry.file_name();
        let number = name
            .to_str()
            .and_then(|n| n.strip_prefix(PREFIX))
            .and_then(|n| n.strip_suffix(".wal"))
            .filter(|n| n.len() == 12)
            .and_then(|n| n.parse::<u64>().ok());
        if let Some(n) = number {
            out.push((n, entry.path()));
        }
    }
    out.sort();
    Ok(out)
}

/// Calls `f` with every entry of the archive, oldest first; returns what could not be read.
pub fn read(store: &Path, f: &mut dyn FnMut(Entry) -> Result<()>) -> Result<Vec<Unreadable>> {
    let mut unreadable = Vec::new();
    for (_, path) in segments(store)? {
        let bytes = std::fs::read(&path).map_err(io("cannot read", &path))?;
        for entry in read_segment(&bytes, &path, &mut unreadable) {
            f(entry)?;
        }
    }
    Ok(unreadable)
}

/// Every entry of one segment that checks out; bytes between them are reported.
fn read_segment(bytes: &[u8], path: &Path, unreadable: &mut Vec<Unreadable>) -> Vec<Entry> {
    let mut skip = |from: usize, to: usize| {
        unreadable.push(Unreadable {
            segment: path.to_path_buf(),
            from: from as u64,
            to: to as u64,
        });
    };
    if bytes.first() == Some(&b'W') {
        // A segment sealed from a WAL of the first format: no resynchronisation possible.
        let (entries, end) = wal::parse_v1(bytes).unwrap_or_default();
        if end < bytes.len() {
            skip(end, bytes.len());
        }
        return entries;
    }
    let mut entries = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        match wal::entry_at(bytes, at) {
            Some((entry, end, _)) => {
                entries.push(entry);
                at = end;
            }
            None => {
                let next = (at + 1..bytes.len())
                    .find(|&pos| wal::entry_at(bytes, pos).is_some())
                    .unwrap_or(bytes.len());
                skip(at, next);
                at = next;
            }
        }
    }
    entries
}
