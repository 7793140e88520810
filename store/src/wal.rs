//! runlog's write-ahead log beside sled: what makes a commit durable with one write and one
//! `fdatasync`.
//!
//! sled's `flush()` writes each of its buffers with `sync_file_range(WAIT_AFTER)`: measured
//! here, a one-record commit cost two such device round trips (302 µs and 130 µs) before the
//! `fdatasync` that makes it durable (222 µs). Instead, each commit appends one entry here and
//! syncs only this file; sled receives the same frames in memory and is flushed and synced at
//! checkpoints, after which the WAL is truncated. Opening replays the WAL into sled, so every
//! acknowledged commit is in sled before anyone reads.
//!
//! ```text
//! entry: "W" kind:u8 len:u32be check:[8] payload      check = blake3(kind ‖ payload)[..8]
//! kind 1 (run created): num:u64be created_ms:u64be name
//! kind 2 (frames):      repeated num:u64be first_seq:u64be len:u32be frame
//! ```
//!
//! A crash can leave the last entry incomplete (a torn tail): it was never acknowledged, so it
//! is dropped. A complete entry with a bad checksum is damage, and opening refuses to guess.

use crate::error::{Damage, Result, StoreError};
use crate::layout::io;
use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

const MAGIC: u8 = b'W';
const ENTRY_HEADER: usize = 1 + 1 + 4 + 8;
/// Checkpoint (flush sled, sync it, truncate the WAL) once the WAL grows past this.
pub const CHECKPOINT_BYTES: u64 = 64 * 1024 * 1024;

/// One thing the WAL records.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Entry {
    /// A run was created.
    Run {
        /// Run id.
        name: String,
        /// Its number.
        num: u64,
        /// Creation time.
        created_ms: u64,
    },
    /// Frames committed together.
    Frames(Vec<(u64, u64, Vec<u8>)>),
}

fn checksum(kind: u8, payload: &[u8]) -> [u8; 8] {
    let mut h = blake3::Hasher::new();
    h.update(&[kind]);
    h.update(payload);
    let mut out = [0u8; 8];
    out.copy_from_slice(&h.finalize().as_bytes()[..8]);
    out
}

fn encode(entry: &Entry) -> Vec<u8> {
    let (kind, payload) = match entry {
        Entry::Run {
            name,
            num,
            created_ms,
        } => {
            let mut p = Vec::with_capacity(16 + name.len());
            p.extend_from_slice(&num.to_be_bytes());
            p.extend_from_slice(&created_ms.to_be_bytes());
            p.extend_from_slice(name.as_bytes());
            (1u8, p)
        }
        Entry::Frames(frames) => {
            let mut p = Vec::with_capacity(frames.iter().map(|f| f.2.len() + 20).sum());
            for (num, first, bytes) in frames {
                p.extend_from_slice(&num.to_be_bytes());
                p.extend_from_slice(&first.to_be_bytes());
                p.extend_from_slice(&(bytes.len() as u32).to_be_bytes());
                p.extend_from_slice(bytes);
            }
            (2u8, p)
        }
    };
    let mut out = Vec::with_capacity(ENTRY_HEADER + payload.len());
    out.push(MAGIC);
    out.push(kind);
    out.extend_from_slice(&(payload.len() as u32).to_be_bytes());
    out.extend_from_slice(&checksum(kind, &payload));
    out.extend_from_slice(&payload);
    out
}

fn be_u64(b: &[u8], at: usize) -> Option<u64> {
    b.get(at..at + 8)
        .and_then(|s| s.try_into().ok())
        .map(u64::from_be_bytes)
}

fn be_u32(b: &[u8], at: usize) -> Option<u32> {
    b.get(at..at + 4)
        .and_then(|s| s.try_into().ok())
        .map(u32::from_be_bytes)
}

fn decode_payload(kind: u8, p: &[u8]) -> Option<Entry> {
    match kind {
        1 => Some(Entry::Run {
            num: be_u64(p, 0)?,
            created_ms: be_u64(p, 8)?,
            name: String::from_utf8(p.get(16..)?.to_vec()).ok()?,
        }),
        2 => {
            let mut frames = Vec::new();
            let mut at = 0;
            while at < p.len() {
                let num = be_u64(p, at)?;
                let first = be_u64(p, at + 8)?;
                let len = be_u32(p, at + 16)? as usize;
                let bytes = p.get(at + 20..at + 20 + len)?.to_vec();
                frames.push((num, first, bytes));
                at += 20 + len;
            }
            Some(Entry::Frames(frames))
        }
        _ => None,
    }
}

/// Parses a WAL image: the entries, and where the valid prefix ends (a torn tail is cut off).
pub fn parse(bytes: &[u8]) -> std::result::Result<(Vec<Entry>, usize), Damage> {
    let mut entries = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        let torn = at + ENTRY_HEADER > bytes.len();
        let len = be_u32(bytes, at + 2).map_or(usize::MAX, |l| l as usize);
        let end = (at + ENTRY_HEADER).checked_add(len);
        if torn || end.is_none_or(|e| e > bytes.len()) {
            // The last entry was cut short by a crash: it was never acknowledged.
            return Ok((entries, at));
        }
        let end = end.unwrap_or(bytes.len());
        let kind = bytes.get(at + 1).copied().unwrap_or(0);
        let payload = bytes.get(at + ENTRY_HEADER..end).unwrap_or(&[]);
        let stored = bytes.get(at + 6..at + ENTRY_HEADER);
        let entry = (bytes.get(at) == Some(&MAGIC) && stored == Some(&checksum(kind, payload)[..]))
            .then(|| decode_payload(kind, payload))
            .flatten();
        match entry {
            Some(e) => entries.push(e),
            None if end == bytes.len() => return Ok((entries, at)),
            None => {
                return Err(Damage::corrupt(
                    0,
                    format!("write-ahead log entry at byte {at} fails its checksum and is followed by more entries"),
                ))
            }
        }
        at = end;
    }
    Ok((entries, at))
}

/// The open WAL file.
#[derive(Debug)]
pub struct Wal {
    path: PathBuf,
    file: File,
    len: u64,
}

impl Wal {
    /// Opens (creating) the WAL and returns it with the entries to replay.
    pub fn open(path: &Path) -> Result<(Self, Vec<Entry>)> {
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)
            .map_err(io("cannot open the write-ahead log", path))?;
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes)
            .map_err(io("cannot read the write-ahead log", path))?;
        let (entries, valid) = parse(&bytes).map_err(|damage| StoreError::Damaged {
            run: "(write-ahead log)".into(),
            damage,
        })?;
        if valid < bytes.len() {
            file.set_len(valid as u64)
                .map_err(io("cannot cut the torn tail of", path))?;
        }
        file.seek(SeekFrom::Start(valid as u64))
            .map_err(io("cannot seek in", path))?;
        Ok((
            Self {
                path: path.to_path_buf(),
                file,
                len: valid as u64,
            },
            entries,
        ))
    }

    /// Appends an entry (not yet durable).
    pub fn append(&mut self, entry: &Entry) -> Result<()> {
        let bytes = encode(entry);
        self.file
            .write_all(&bytes)
            .map_err(io("cannot write the write-ahead log", &self.path))?;
        self.len += bytes.len() as u64;
        Ok(())
    }

    /// Makes every appended entry durable.
    pub fn sync(&self) -> Result<()> {
        self.file
            .sync_data()
            .map_err(io("fdatasync failed on", &self.path))
    }

    /// Bytes in the WAL.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether the WAL is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Empties the WAL once its entries are durable elsewhere.
    pub fn truncate(&mut self) -> Result<()> {
        self.file
            .set_len(0)
            .map_err(io("cannot truncate", &self.path))?;
        self.file
            .seek(SeekFrom::Start(0))
            .map_err(io("cannot seek in", &self.path))?;
        self.file
            .sync_all()
            .map_err(io("cannot sync", &self.path))?;
        self.len = 0;
        Ok(())
    }
}
