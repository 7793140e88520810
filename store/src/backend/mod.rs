//! Where frames live: a sled database or memory. The log above does everything else
//! (framing, chain, group commit, verification), so both honour one contract.

pub mod memory;
pub mod sled_db;

use crate::error::Result;

pub use crate::heads::RunSlot;

/// Storage of runs, frames and blobs.
pub trait Backend: Send + Sync + std::fmt::Debug {
    /// The slot of a run, if it exists.
    fn run_slot(&self, run: &str) -> Result<Option<RunSlot>>;
    /// Creates a run's slot.
    fn create_run(&self, run: &str, slot: RunSlot) -> Result<()>;
    /// Every run with its slot, sorted by run id.
    fn runs(&self) -> Result<Vec<(String, RunSlot)>>;
    /// The largest run number in use (0 if none).
    fn max_run_num(&self) -> Result<u64>;
    /// Inserts frames keyed by (run number, first seq), all or none. `logged` is called once
    /// they are in the write-ahead log (written, not synced) and before they are readable: a
    /// sync may begin from there while the rest of the insert goes on.
    fn insert_frames(
        &self,
        frames: Vec<(u64, u64, Vec<u8>)>,
        logged: &mut dyn FnMut(),
    ) -> Result<()>;
    /// The frame with the largest first seq ≤ `seq` (or the last frame if `seq` is `u64::MAX`).
    fn frame_at_or_before(&self, num: u64, seq: u64) -> Result<Option<(u64, Vec<u8>)>>;
    /// Frames with first seq in `from..=to`, in order, passed to `f` until it returns false.
    fn scan_frames(
        &self,
        num: u64,
        from: u64,
        to: u64,
        f: &mut dyn FnMut(u64, &[u8]) -> Result<bool>,
    ) -> Result<()>;
    /// Makes everything written so far durable (a real fdatasync for a disk store).
    fn sync(&self) -> Result<()>;
    /// Stores a blob under its hash (idempotent). Durable at the latest with the next sync: an
    /// append acknowledged after it, or [`Backend::sync`].
    fn put_blob(&self, hash: &[u8; 32], bytes: &[u8]) -> Result<()>;
    /// Stores a blob under its hash packed, against `like` (an earlier blob's hash and bytes
    /// it likely shares most of its own with) where the backend can; as `put_blob` otherwise.
    fn put_blob_packed(
        &self,
        hash: &[u8; 32],
        bytes: &[u8],
        _like: Option<(&[u8; 32], &[u8])>,
    ) -> Result<()> {
        self.put_blob(hash, bytes)
    }
    /// Reads a blob.
    fn get_blob(&self, hash: &[u8; 32]) -> Result<Option<Vec<u8>>>;
    /// A key-value cache beside the log (snapshots); never trusted, may be dropped.
    fn cache_put(&self, key: &[u8], value: &[u8]) -> Result<()>;
    /// Reads from the cache.
    fn cache_get(&self, key: &[u8]) -> Result<Option<Vec<u8>>>;
    /// Cache keys with a prefix, sorted.
    fn cache_keys(&self, prefix: &[u8]) -> Result<Vec<Vec<u8>>>;
    /// Bytes the store occupies (on disk, or in memory).
    fn size_bytes(&self) -> Result<u64>;
    /// What opening had to repair or set aside, in words (nothing for most backends).
    fn recovery_notes(&self) -> Vec<String> {
        Vec::new()
    }
    /// The run's head as committed, remembered outside the storage engine, and when that memory
    /// was last written (see [`crate::heads`]; `None` where nothing is kept apart).
    fn remembered(&self, _run: &str) -> Option<(crate::heads::Remembered, u64)> {
        None
    }
}

/// The fixed-width big-endian key of a frame: run number then first seq.
pub fn frame_key(num: u64, first_seq: u64) -> [u8; 16] {
    let mut k = [0u8; 16];
    k[..8].copy_from_slice(&num.to_be_bytes());
    k[8..].copy_from_slice(&first_seq.to_be_bytes());
    k
}

/// The first seq encoded in a frame key.
pub fn key_seq(key: &[u8]) -> Option<u64> {
    key.get(8..16)
        .and_then(|b| <[u8; 8]>::try_from(b).ok())
        .map(u64::from_be_bytes)
}
