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
//!
//! Once sealed, a segment is compressed by a thread of its own, off the append path
//! ([`zst`]: zstd frames of about 256 KiB of entries each): written to a temp file, synced,
//! decoded again and compared, then renamed over the raw segment. A crash at any point leaves
//! the raw segment or the compressed one under the segment's name, never neither; a raw
//! segment left by a crash (or an older build) is compressed at the next open. Compressing drops
//! the segment's blob entries: their files were placed, synced, before it was sealed, and the
//! archive is what rebuilds sled.

mod zst;

use crate::error::Result;
use crate::layout::{io, sync_dir, temp_name};
use crate::wal::{self, Entry, Wal};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::thread::JoinHandle;

pub use zst::FRAME_BYTES;

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
    frame_bytes: usize,
    /// The thread compressing the segments sealed so far (one at a time).
    compressing: Option<JoinHandle<()>>,
}

impl Archive {
    /// Opens the archive of a store (as its owner: temp files a crash left are removed) and
    /// compresses what a crash or an older build left raw; `frame_bytes` is how many bytes of
    /// entries a compressed frame holds.
    pub fn open(store: &Path, frame_bytes: usize) -> Result<Self> {
        let next = segments(store)?.last().map_or(0, |(n, _)| n + 1);
        sweep_temps(store);
        let mut archive = Self {
            store: store.to_path_buf(),
            next,
            frame_bytes,
            compressing: None,
        };
        // Only a segment's first byte is read to tell a raw one: an open costs one small read
        // per segment, not the archive's size.
        let raw: Vec<PathBuf> = segments(store)?
            .into_iter()
            .map(|(_, path)| path)
            .filter(|path| first_byte(path) == Some(wal::MAGIC))
            .collect();
        archive.compress_in_background(raw);
        Ok(archive)
    }

    /// Compresses `paths` on a thread of its own, after the previous round ends.
    fn compress_in_background(&mut self, paths: Vec<PathBuf>) {
        self.finish();
        if paths.is_empty() {
            return;
        }
        let store = self.store.clone();
        let frame_bytes = self.frame_bytes;
        let spawned = std::thread::Builder::new()
            .name("runlog-archive".into())
            .spawn(move || {
                for path in paths {
                    // A segment that cannot be compressed now stays raw (and readable); the
                    // next open tries again.
                    let _ = compress_segment(&store, &path, frame_bytes);
                }
            });
        self.compressing = spawned.ok();
    }

    /// Waits for the segments sealed so far to be compressed.
    pub fn finish(&mut self) {
        if let Some(thread) = self.compressing.take() {
            let _ = thread.join();
        }
    }

    /// The number the next segment sealed or written gets.
    pub fn next_segment(&self) -> u64 {
        self.next
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
        wal.seal_into(&to)?;
        self.compress_in_background(vec![to]);
        Ok(())
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
        sync_dir(&self.store)?;
        self.compress_in_background(vec![to]);
        Ok(())
    }
}

impl Drop for Archive {
    fn drop(&mut self) {
        self.finish();
    }
}

/// A segment's bytes as WAL entries: decoded if compressed (every frame that decodes), as they
/// are if not.
pub fn decompressed(bytes: &[u8]) -> Vec<u8> {
    if !zst::is_compressed(bytes) {
        return bytes.to_vec();
    }
    resync(bytes, zst::frame_at, &mut |_, _| {})
        .into_iter()
        .flat_map(|(_, _, decoded)| decoded)
        .collect()
}

/// The first byte of a file, if it has one.
fn first_byte(path: &Path) -> Option<u8> {
    use std::io::Read;
    let mut byte = [0u8; 1];
    let mut file = std::fs::File::open(path).ok()?;
    let read = file.read(&mut byte).ok()?;
    byte.first().copied().filter(|_| read == 1)
}

/// Removes the temp files a crashed process left in the store's directory (a compression or a
/// segment cut short); this process's own are in use.
fn sweep_temps(store: &Path) {
    let ours = format!(".tmp-{}-", std::process::id());
    let Ok(entries) = std::fs::read_dir(store) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if name.starts_with(".tmp-") && !name.starts_with(&ours) {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// Compresses one raw segment in place (see the module's documentation); a segment already
/// compressed, empty, of the first format or damaged is left as it is. Returns whether it was
/// compressed.
pub fn compress_segment(store: &Path, path: &Path, frame_bytes: usize) -> Result<bool> {
    let raw = std::fs::read(path).map_err(io("cannot read", path))?;
    if raw.first() != Some(&wal::MAGIC) {
        return Ok(false);
    }
    // The archive keeps what rebuilds sled: the blobs the WAL held have their files by now.
    let Some(raw) = wal::without_blobs(&raw) else {
        return Ok(false);
    };
    let Some(compressed) = zst::compress(&raw, frame_bytes)? else {
        return Ok(false);
    };
    let mut decoded = Vec::with_capacity(raw.len());
    let mut at = 0;
    while let Some((bytes, end)) = zst::frame_at(&compressed, at) {
        decoded.extend(bytes);
        at = end;
    }
    if decoded != raw || at != compressed.len() {
        return Ok(false);
    }
    let tmp = store.join(temp_name());
    crate::layout::write_synced(&tmp, &compressed)?;
    if let Err(e) = std::fs::rename(&tmp, path) {
        let _ = std::fs::remove_file(&tmp);
        return Err(io("cannot move into the archive", path)(e));
    }
    sync_dir(store)?;
    Ok(true)
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

/// Every entry of one segment that checks out; bytes between them are reported (in a
/// compressed segment, the compressed bytes of the frames that do not decode).
fn read_segment(bytes: &[u8], path: &Path, unreadable: &mut Vec<Unreadable>) -> Vec<Entry> {
    let mut skip = |from: usize, to: usize| {
        unreadable.push(Unreadable {
            segment: path.to_path_buf(),
            from: from as u64,
            to: to as u64,
        });
    };
    if bytes.first() == Some(&wal::MAGIC_V1) {
        // A segment sealed from a WAL of the first format: no resynchronisation possible.
        let (entries, end) = wal::parse_v1(bytes).unwrap_or_default();
        if end < bytes.len() {
            skip(end, bytes.len());
        }
        return entries;
    }
    if zst::is_compressed(bytes) {
        let mut entries = Vec::new();
        for (from, to, decoded) in resync(bytes, zst::frame_at, &mut skip) {
            let mut damaged = false;
            entries.extend(raw_entries(&decoded, &mut |_, _| damaged = true));
            if damaged {
                skip(from, to);
            }
        }
        return entries;
    }
    raw_entries(bytes, &mut skip)
}

fn raw_entries(bytes: &[u8], skip: &mut dyn FnMut(usize, usize)) -> Vec<Entry> {
    let entry_at = |b: &[u8], at| wal::entry_at(b, at).map(|(e, end, _)| (e, end));
    resync(bytes, entry_at, skip)
        .into_iter()
        .map(|(_, _, entry)| entry)
        .collect()
}

/// Reads `bytes` as a sequence of items (`item_at` gives one and where it ends): each with the
/// bytes it spans; where none checks out, skips to the next one that does and reports the
/// stretch.
fn resync<T>(
    bytes: &[u8],
    item_at: impl Fn(&[u8], usize) -> Option<(T, usize)>,
    skip: &mut dyn FnMut(usize, usize),
) -> Vec<(usize, usize, T)> {
    let mut items = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        match item_at(bytes, at) {
            Some((item, end)) => {
                items.push((at, end, item));
                at = end;
            }
            None => {
                let next = (at + 1..bytes.len())
                    .find(|&pos| item_at(bytes, pos).is_some())
                    .unwrap_or(bytes.len());
                skip(at, next);
                at = next;
            }
        }
    }
    items
}
