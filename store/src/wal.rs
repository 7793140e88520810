//! runlog's write-ahead log beside sled: what makes a commit durable with one write and one
//! `fdatasync`.
//!
//! sled's `flush()` writes each of its buffers with `sync_file_range(WAIT_AFTER)`: measured
//! here, a one-record commit cost two such device round trips (302 µs and 130 µs) before the
//! `fdatasync` that makes it durable (222 µs). Instead, each commit appends one entry here and
//! syncs only this file; sled receives the same frames in memory and is flushed and synced at
//! checkpoints, after which the WAL is sealed into the archive (see [`crate::archive`]). Opening replays the WAL into sled, so every
//! acknowledged commit is in sled before anyone reads.
//!
//! ```text
//! entry: "V" kind:u8 len:u32be synced:u64be hcheck:[4] check:[8] payload
//!        hcheck = blake3("V" ‖ kind ‖ len ‖ synced)[..4]    check = blake3(kind ‖ payload)[..8]
//!        synced = bytes of this WAL known durable (fdatasynced) when the entry was written
//! kind 1 (run created): num:u64be created_ms:u64be name
//! kind 2 (frames):      repeated num:u64be first_seq:u64be len:u32be frame
//! kind 3 (blob):        hash:[32] packed:u8 file
//! ```
//!
//! A blob entry holds a blob's file as the blob area will keep it (see [`crate::blob_dir`]):
//! a small blob is made durable by the WAL's sync that acknowledges the append naming it,
//! instead of by syncs of a file and its directory of its own, and reaches its file at the
//! next checkpoint.
//!
//! The file is kept written with zeros ahead of its last entry (see [`Room`]): an append then
//! overwrites bytes the file already has, and its `fdatasync` writes the data alone, not the
//! file's new size as well. So zeros after the last entry are room, not damage.
//!
//! Where the entries stop checking out — a torn tail, an entry lost while a later one of the
//! same sync survived, a flipped byte — the rest is either damage to acknowledged data or
//! bytes that were never acknowledged. `synced` tells them apart: if a later valid entry
//! says the WAL was durable past that point, acknowledged data is damaged and opening refuses,
//! touching nothing. Otherwise nothing there is known to have been acknowledged: the bytes are
//! moved aside to `wal.aside-<ms>` (never deleted) and the store opens, saying so. Entries of
//! the first format ("W", no `synced`) are still read, so a WAL left by an older build replays.

use crate::error::{Damage, Result, StoreError};
use crate::layout::{io, sync_dir, write_synced};
use std::fs::{File, OpenOptions};
use std::io::Read;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

pub(crate) const MAGIC: u8 = b'V';
const ENTRY_HEADER: usize = 1 + 1 + 4 + 8 + 4 + 8;
/// The first format's magic and header (no `synced`, no header check).
pub(crate) const MAGIC_V1: u8 = b'W';
const ENTRY_HEADER_V1: usize = 1 + 1 + 4 + 8;
/// Checkpoint (flush sled, sync it, truncate the WAL) once the WAL grows past this.
pub const CHECKPOINT_BYTES: u64 = 64 * 1024 * 1024;

/// How far ahead of its last entry the WAL is written with zeros. Measured on this project's
/// VM: a 200-byte append and its `fdatasync` took 118–165 µs at the end of a growing file and
/// 91–110 µs inside zeros written earlier, where the sync has no new size to write. The room
/// grows with the WAL, so a store that holds a few appends stays small.
#[derive(Debug, Clone, Copy)]
struct Room;

impl Room {
    /// The least written ahead at a time.
    const LEAST: u64 = 64 * 1024;
    /// The most written ahead at a time.
    const MOST: u64 = 1024 * 1024;

    /// Where the file's zeros should end for an entry ending at `end`: past it by as much as
    /// the WAL holds, within [`Room::LEAST`] and [`Room::MOST`].
    fn after(end: u64) -> u64 {
        end + end.clamp(Self::LEAST, Self::MOST)
    }
}

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
    /// A blob, as its file in the blob area holds it.
    Blob {
        /// Its blake3 hash.
        hash: [u8; 32],
        /// Whether `file` is packed (see [`crate::packed`]) or the bytes themselves.
        packed: bool,
        /// The file's bytes.
        file: Vec<u8>,
    },
}

fn checksum(kind: u8, payload: &[u8]) -> [u8; 8] {
    let mut h = blake3::Hasher::new();
    h.update(&[kind]);
    h.update(payload);
    let mut out = [0u8; 8];
    out.copy_from_slice(&h.finalize().as_bytes()[..8]);
    out
}

fn header_check(kind: u8, len: u32, synced: u64) -> [u8; 4] {
    let mut h = blake3::Hasher::new();
    h.update(&[MAGIC, kind]);
    h.update(&len.to_be_bytes());
    h.update(&synced.to_be_bytes());
    let mut out = [0u8; 4];
    out.copy_from_slice(&h.finalize().as_bytes()[..4]);
    out
}

pub(crate) fn encode(entry: &Entry, synced: u64) -> Vec<u8> {
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
        Entry::Blob { hash, packed, file } => {
            let mut p = Vec::with_capacity(33 + file.len());
            p.extend_from_slice(hash);
            p.push(u8::from(*packed));
            p.extend_from_slice(file);
            (3u8, p)
        }
    };
    let len = payload.len() as u32;
    let mut out = Vec::with_capacity(ENTRY_HEADER + payload.len());
    out.push(MAGIC);
    out.push(kind);
    out.extend_from_slice(&len.to_be_bytes());
    out.extend_from_slice(&synced.to_be_bytes());
    out.extend_from_slice(&header_check(kind, len, synced));
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
        3 => Some(Entry::Blob {
            hash: p.get(..32)?.try_into().ok()?,
            packed: match p.get(32)? {
                0 => false,
                1 => true,
                _ => return None,
            },
            file: p.get(33..)?.to_vec(),
        }),
        _ => None,
    }
}

/// The entry at `at`, where it ends and its `synced`, if everything about it checks out.
pub(crate) fn entry_at(bytes: &[u8], at: usize) -> Option<(Entry, usize, u64)> {
    if bytes.get(at) != Some(&MAGIC) {
        return None;
    }
    let kind = *bytes.get(at + 1)?;
    let len = be_u32(bytes, at + 2)?;
    let synced = be_u64(bytes, at + 6)?;
    if bytes.get(at + 14..at + 18)? != header_check(kind, len, synced) {
        return None;
    }
    let end = (at + ENTRY_HEADER).checked_add(len as usize)?;
    let payload = bytes.get(at + ENTRY_HEADER..end)?;
    if bytes.get(at + 18..at + ENTRY_HEADER)? != checksum(kind, payload) {
        return None;
    }
    Some((decode_payload(kind, payload)?, end, synced))
}

/// A sealed WAL image without its blob entries (their files were placed, synced, before it was
/// sealed), if every entry checks out.
pub(crate) fn without_blobs(bytes: &[u8]) -> Option<Vec<u8>> {
    let mut kept = Vec::with_capacity(bytes.len());
    let mut at = 0;
    while at < bytes.len() {
        let (entry, end, _) = entry_at(bytes, at)?;
        if !matches!(entry, Entry::Blob { .. }) {
            kept.extend_from_slice(bytes.get(at..end)?);
        }
        at = end;
    }
    Some(kept)
}

/// Parses a WAL image: its entries and where the valid prefix ends. Bytes after it were never
/// shown to be acknowledged (see the module's documentation); damage that a later entry proves
/// was acknowledged is an error.
pub fn parse(bytes: &[u8]) -> std::result::Result<(Vec<Entry>, usize), Damage> {
    if bytes.first() == Some(&MAGIC_V1) {
        return parse_v1(bytes);
    }
    let mut entries = Vec::new();
    let mut at = 0;
    while let Some((entry, end, _)) = entry_at(bytes, at) {
        entries.push(entry);
        at = end;
    }
    let later = (at + 1..bytes.len())
        .filter(|&pos| bytes.get(pos) == Some(&MAGIC))
        .filter_map(|pos| entry_at(bytes, pos).map(|(_, _, synced)| (pos, synced)))
        .find(|&(_, synced)| synced > at as u64);
    match later {
        Some((pos, synced)) => Err(Damage::corrupt(
            0,
            format!(
                "write-ahead log entry at byte {at} is damaged, and the entry at byte {pos} shows the log was durable up to byte {synced}: acknowledged data is damaged"
            ),
        )),
        None => Ok((entries, at)),
    }
}

/// The first format: a torn last entry is cut off, a bad middle entry is damage.
/// (Also how the archive reads a segment sealed from a WAL of the first format.)
pub(crate) fn parse_v1(bytes: &[u8]) -> std::result::Result<(Vec<Entry>, usize), Damage> {
    let mut entries = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        let torn = at + ENTRY_HEADER_V1 > bytes.len();
        let len = be_u32(bytes, at + 2).map_or(usize::MAX, |l| l as usize);
        let end = (at + ENTRY_HEADER_V1).checked_add(len);
        if torn || end.is_none_or(|e| e > bytes.len()) {
            return Ok((entries, at));
        }
        let end = end.unwrap_or(bytes.len());
        let kind = bytes.get(at + 1).copied().unwrap_or(0);
        let payload = bytes.get(at + ENTRY_HEADER_V1..end).unwrap_or(&[]);
        let stored = bytes.get(at + 6..at + ENTRY_HEADER_V1);
        let entry = (bytes.get(at) == Some(&MAGIC_V1)
            && stored == Some(&checksum(kind, payload)[..]))
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

/// Bytes at the end of the WAL that were moved aside when it was opened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SetAside {
    /// Where they are now.
    pub path: PathBuf,
    /// Where they began in the WAL.
    pub offset: u64,
    /// How many.
    pub bytes: u64,
}

impl std::fmt::Display for SetAside {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the write-ahead log ended in {} bytes at byte {} that are not whole entries and were never shown to be acknowledged (a crash during a write leaves such bytes); they were moved to {}",
            self.bytes,
            self.offset,
            self.path.display()
        )
    }
}

/// The WAL's bytes up to `len`, to be made durable by [`SyncPoint::sync`].
#[derive(Debug)]
pub struct SyncPoint {
    file: Arc<File>,
    path: PathBuf,
    len: u64,
    segment: u64,
}

impl SyncPoint {
    /// fdatasync: every byte appended before the point was taken is durable after it.
    pub fn sync(&self) -> Result<()> {
        self.file
            .sync_data()
            .map_err(io("fdatasync failed on", &self.path))
    }
}

/// Moves `rest`, the bytes of the WAL at `path` after its valid entries, to a file beside it
/// (synced, never deleted), and cuts the WAL to its entries.
fn set_aside(path: &Path, file: &File, valid: usize, rest: &[u8]) -> Result<SetAside> {
    let ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis());
    let name = format!(
        "{}.aside-{ms}",
        path.file_name().and_then(|n| n.to_str()).unwrap_or("wal")
    );
    let kept = path.with_file_name(name);
    write_synced(&kept, rest)?;
    if let Some(dir) = path.parent() {
        sync_dir(dir)?;
    }
    file.set_len(valid as u64)
        .map_err(io("cannot cut the set-aside tail of", path))?;
    file.sync_all().map_err(io("cannot sync", path))?;
    Ok(SetAside {
        path: kept,
        offset: valid as u64,
        bytes: rest.len() as u64,
    })
}

/// The open WAL file.
#[derive(Debug)]
pub struct Wal {
    path: PathBuf,
    /// Shared with a sync in progress outside the WAL's lock ([`Wal::sync_point`]).
    file: Arc<File>,
    /// Which file `file` is: a new one starts at each seal.
    segment: u64,
    len: u64,
    /// Bytes the file holds: its entries, then zeros up to here.
    room: u64,
    /// Bytes known durable: the length at the last successful sync.
    synced: u64,
    /// Why it refuses writes: an earlier write failed part way.
    broken: Option<String>,
}

impl Wal {
    /// Opens (creating) the WAL and returns it with the entries to replay. Bytes after the
    /// valid entries are moved aside (see [`SetAside`]), never deleted.
    pub fn open(path: &Path) -> Result<(Self, Vec<Entry>)> {
        Self::open_reporting(path).map(|(wal, entries, _)| (wal, entries))
    }

    /// [`Wal::open`], also saying what was set aside.
    pub fn open_reporting(path: &Path) -> Result<(Self, Vec<Entry>, Option<SetAside>)> {
        let existed = path.exists();
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)
            .map_err(io("cannot open the write-ahead log", path))?;
        if !existed {
            // The first commit is acknowledged after syncing this file only: its directory
            // entry must be durable before that.
            if let Some(dir) = path.parent() {
                sync_dir(dir)?;
            }
        }
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes)
            .map_err(io("cannot read the write-ahead log", path))?;
        let (entries, valid) = parse(&bytes).map_err(|damage| StoreError::Damaged {
            run: "(write-ahead log)".into(),
            damage,
        })?;
        // Zeros after the entries are the room an earlier append wrote ahead: kept as room.
        // Anything else there is set aside, up to its last byte that is not a zero.
        let rest = bytes.get(valid..).unwrap_or_default();
        let written = rest.iter().rposition(|b| *b != 0).map(|last| last + 1);
        let aside = match written {
            None => None,
            Some(n) => Some(set_aside(
                path,
                &file,
                valid,
                rest.get(..n).unwrap_or(rest),
            )?),
        };
        let room = if aside.is_some() { valid } else { bytes.len() } as u64;
        Ok((
            Self {
                path: path.to_path_buf(),
                file: Arc::new(file),
                segment: 0,
                len: valid as u64,
                room,
                synced: valid as u64,
                broken: None,
            },
            entries,
            aside,
        ))
    }

    /// Appends an entry (not yet durable). A failed write leaves the WAL refusing every later
    /// one: part of the entry may be on disk, and nothing may be acknowledged behind it.
    pub fn append(&mut self, entry: &Entry) -> Result<()> {
        if let Some(cause) = &self.broken {
            return Err(StoreError::Poisoned {
                cause: cause.clone(),
            });
        }
        let bytes = encode(entry, self.synced);
        let end = self.len + bytes.len() as u64;
        // A large entry's sync writes far more than the file's size: zeros ahead of it would
        // double its writes and save nothing worth it.
        if end > self.room && (bytes.len() as u64) < Room::LEAST {
            self.write_ahead(end);
        }
        if let Err(e) = self.file.write_all_at(&bytes, self.len) {
            let err = io("cannot write the write-ahead log", &self.path)(e);
            self.broken = Some(err.to_string());
            // Best effort: cut the partial entry so the file ends on a whole one.
            let _ = self.file.set_len(self.len);
            return Err(err);
        }
        self.len = end;
        self.room = self.room.max(end);
        Ok(())
    }

    /// Writes zeros from the end of the file to [`Room::after`] `end`. Best effort: where the
    /// disk has no room for them, the file is cut back to its entries and the append writes
    /// past its end, as into a file without room, and fails only if its own bytes do not fit.
    fn write_ahead(&mut self, end: u64) {
        let from = self.room.max(self.len);
        let to = Room::after(end);
        let zeros = vec![0u8; usize::try_from(to - from).unwrap_or(0)];
        match self.file.write_all_at(&zeros, from) {
            Ok(()) => self.room = to,
            Err(_) => {
                let _ = self.file.set_len(self.len);
                self.room = self.len;
            }
        }
    }

    /// Makes every appended entry durable.
    pub fn sync(&mut self) -> Result<()> {
        self.file
            .sync_data()
            .map_err(io("fdatasync failed on", &self.path))?;
        self.synced = self.len;
        Ok(())
    }

    /// What a sync of everything appended so far needs, for a caller that syncs without
    /// holding the WAL (the writer appends the next group meanwhile); then [`Wal::synced_to`].
    pub fn sync_point(&self) -> SyncPoint {
        SyncPoint {
            file: Arc::clone(&self.file),
            path: self.path.clone(),
            len: self.len,
            segment: self.segment,
        }
    }

    /// Records a [`SyncPoint`] that was synced. One taken before a seal says nothing of the
    /// new file (the seal synced the old one itself).
    pub fn synced_to(&mut self, point: &SyncPoint) {
        if point.segment == self.segment {
            self.synced = self.synced.max(point.len);
        }
    }

    /// Bytes in the WAL.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether the WAL is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Moves the WAL, synced, to `to` (the archive) once its entries are durable in sled, and
    /// starts an empty one. Both directories are synced: the sealed segment is the store's
    /// independent copy, and a new WAL's name must be durable before anything is acknowledged
    /// behind it.
    pub fn seal_into(&mut self, to: &Path) -> Result<()> {
        if let Some(cause) = &self.broken {
            return Err(StoreError::Poisoned {
                cause: cause.clone(),
            });
        }
        // The archive keeps the entries alone: its readers need no room.
        self.file
            .set_len(self.len)
            .map_err(io("cannot cut the room ahead of", &self.path))?;
        self.room = self.len;
        self.sync()?;
        std::fs::rename(&self.path, to).map_err(io("cannot move the write-ahead log to", to))?;
        if let Some(dir) = to.parent() {
            sync_dir(dir)?;
        }
        let fresh = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(&self.path)
            .and_then(|f| f.sync_all().map(|()| f));
        match fresh {
            Ok(file) => {
                self.file = Arc::new(file);
                self.segment += 1;
            }
            Err(e) => {
                let err = io("cannot start a new write-ahead log", &self.path)(e);
                self.broken = Some(err.to_string());
                return Err(err);
            }
        }
        if let Some(dir) = self.path.parent() {
            sync_dir(dir)?;
        }
        self.len = 0;
        self.room = 0;
        self.synced = 0;
        Ok(())
    }
}
