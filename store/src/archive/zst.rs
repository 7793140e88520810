//! A sealed segment compressed (in place: the file keeps its name, its first bytes say which it
//! is): the same WAL entries, cut into independent zstd frames of about
//! [`FRAME_BYTES`] each (content size and checksum in every frame), so that a damaged frame
//! costs the entries inside it and reading resumes at the next frame's magic.
//!
//! Why frames and not one stream: one flipped byte in a single zstd stream loses everything
//! after it; here it loses at most one frame's worth of entries, and the reader names the
//! compressed bytes it skipped as it does for a raw segment.

use crate::error::{Result, StoreError};
use crate::wal;
use std::io::Read;

/// A frame is closed once it holds this many bytes of entries (an entry is never split).
pub const FRAME_BYTES: usize = 256 * 1024;
/// zstd's level: its default. A command that wrote waits for its segment's compression as it
/// closes the store, and level 9 took 4.5 times as long as this one for 2–7 % fewer bytes.
const LEVEL: i32 = 3;
/// zstd's frame magic, little-endian on disk.
const MAGIC: [u8; 4] = [0x28, 0xb5, 0x2f, 0xfd];
/// A frame that decodes to more than this is damage, never an allocation.
const MAX_DECODED: u64 = 1 << 30;

/// Compresses a raw segment's bytes, if every entry of it checks out (a damaged raw segment
/// is kept as it is, so that what cannot be read is still reported the same way).
pub fn compress(raw: &[u8], frame_bytes: usize) -> Result<Option<Vec<u8>>> {
    let mut cuts = vec![0];
    let mut at = 0;
    while at < raw.len() {
        let Some((_, end, _)) = wal::entry_at(raw, at) else {
            return Ok(None);
        };
        at = end;
        if at - cuts.last().copied().unwrap_or(0) >= frame_bytes.max(1) || at == raw.len() {
            cuts.push(at);
        }
    }
    let mut compressor = zstd::bulk::Compressor::new(LEVEL).map_err(zstd_error)?;
    compressor.include_checksum(true).map_err(zstd_error)?;
    compressor.include_contentsize(true).map_err(zstd_error)?;
    let mut out = Vec::with_capacity(raw.len() / 4);
    for pair in cuts.windows(2) {
        if let (Some(&from), Some(&to)) = (pair.first(), pair.last()) {
            let entries = raw.get(from..to).unwrap_or_default();
            out.extend(compressor.compress(entries).map_err(zstd_error)?);
        }
    }
    Ok(Some(out))
}

fn zstd_error(source: std::io::Error) -> StoreError {
    StoreError::Io {
        what: "zstd cannot compress an archive segment",
        path: std::path::PathBuf::from("(archive)"),
        cause: source,
    }
}

/// The frame starting at `at`, decoded, and where it ends, if it decodes and checks out.
pub fn frame_at(bytes: &[u8], at: usize) -> Option<(Vec<u8>, usize)> {
    let rest = bytes.get(at..)?;
    if !rest.starts_with(&MAGIC) {
        return None;
    }
    let size = zstd::zstd_safe::find_frame_compressed_size(rest).ok()?;
    let frame = rest.get(..size)?;
    let mut out = Vec::new();
    zstd::stream::read::Decoder::with_buffer(frame)
        .ok()?
        .single_frame()
        .take(MAX_DECODED)
        .read_to_end(&mut out)
        .ok()?;
    Some((out, at + size))
}

/// Whether a segment's bytes are compressed: they start with a frame, or (the first one
/// damaged) they are no WAL and some frame in them decodes.
pub fn is_compressed(bytes: &[u8]) -> bool {
    bytes.starts_with(&MAGIC)
        || (!matches!(bytes.first(), Some(&wal::MAGIC | &wal::MAGIC_V1))
            && (0..bytes.len()).any(|at| frame_at(bytes, at).is_some()))
}
