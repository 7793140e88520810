//! The archive: every write-ahead-log entry the store ever committed, kept outside sled so that
//! sled can be rebuilt from it (`runlog repair`).
//!
//! A checkpoint used to truncate the WAL once sled held its entries. Now it renames the synced
//! WAL into `DIR/archive/NNNNNNNNNNNN.wal` (one segment per checkpoint, numbered in order) and
//! starts an empty one: the copy costs a rename and two directory syncs per checkpoint, nothing
//! on the append path, and as many bytes as the WAL held (each entry checksummed). A store made
//! before the archive existed gets a first segment written from sled when it is opened.
//!
//! Reading never stops at a bad entry: it skips to the next one that checks out and says which
//! bytes of which segment it could not read, so a damaged copy still gives back every run up to
//! its first missing record.

use crate::error::Result;
use crate::layout::{io, sync_dir, temp_name};
use crate::wal::{self, Entry, Wal};
use std::io::Write;
use std::path::{Path, PathBuf};

/// The archive's directory in a store.
pub const DIR: &str = "archive";

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
    dir: PathBuf,
    next: u64,
}

impl Archive {
    /// Whether the store has an archive.
    pub fn exists(store: &Path) -> bool {
        store.join(DIR).is_dir()
    }

    /// Opens the archive of a store, creating its directory.
    pub fn open(store: &Path) -> Result<Self> {
        let dir = store.join(DIR);
        if !dir.is_dir() {
            std::fs::create_dir(&dir).map_err(io("cannot create the archive", &dir))?;
            sync_dir(store)?;
        }
        let next = segments(store)?.last().map_or(1, |(n, _)| n + 1);
        Ok(Self { dir, next })
    }

    fn claim(&mut self) -> PathBuf {
        let path = self.dir.join(format!("{:012}.wal", self.next));
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
        let tmp = self.dir.join(temp_name());
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
        sync_dir(&self.dir)
    }
}

/// The segments of a store's archive, in order.
pub fn segments(store: &Path) -> Result<Vec<(u64, PathBuf)>> {
    let dir = store.join(DIR);
    let mut out = Vec::new();
    let entries = match std::fs::read_dir(&dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(out),
        Err(e) => return Err(io("cannot list the archive", &dir)(e)),
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let number = name
            .to_str()
            .and_then(|n| n.strip_suffix(".wal"))
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
