//! Snapshots: the run state at a seq, cached beside the log.
//!
//! A snapshot is keyed by run and seq and carries the state format version and the chain hash
//! at its seq. Loading checks all three against the code and the log; any mismatch, or bytes
//! that do not decode, and the snapshot is ignored (and rebuilt by the next fold): a cache,
//! never trusted.

use runlog_core::codec::{decode_state, encode_state_into, STATE_FORMAT};
use runlog_core::RunState;
use runlog_store::EventLog;

const MAGIC: &[u8; 4] = b"RLS1";
const HEADER: usize = 4 + 4 + 8 + 32;

/// Bytes reserved for each task of a state before its snapshot is encoded: a task takes about
/// 200, so a large state's buffer is not grown (and copied) a dozen times on the way.
const BYTES_PER_TASK: usize = 256;

/// The cache key prefix of a run's snapshots.
pub fn prefix(run: &str) -> Vec<u8> {
    let mut k = b"snap/".to_vec();
    k.extend_from_slice(run.as_bytes());
    k.push(0);
    k
}

/// The cache key, beside a run's snapshots (so that forgetting the run removes it too), of
/// another entry derived from its history: `name`'s length is not a seq's 8 bytes, so it is
/// never listed as a snapshot.
pub fn derived_key(run: &str, name: &str) -> Vec<u8> {
    debug_assert_ne!(
        name.len(),
        8,
        "a derived entry's name cannot look like a seq"
    );
    let mut k = prefix(run);
    k.extend_from_slice(name.as_bytes());
    k
}

/// The cache key of a run's snapshot at `seq`.
pub fn key(run: &str, seq: u64) -> Vec<u8> {
    let mut k = prefix(run);
    k.extend_from_slice(&seq.to_be_bytes());
    k
}

/// Seqs of a run's stored snapshots, ascending.
pub fn list(log: &dyn EventLog, run: &str) -> Vec<u64> {
    let p = prefix(run);
    log.cache_keys(&p)
        .unwrap_or_default()
        .iter()
        .filter_map(|k| {
            k.get(p.len()..)
                .and_then(|s| <[u8; 8]>::try_from(s).ok())
                .map(u64::from_be_bytes)
        })
        .collect()
}

/// Stores a snapshot of `state` (whose seq is its key) with the chain hash at that seq; returns
/// its size. Failing to store a cache entry is not worth stopping a replay for: `None`.
pub fn store(log: &dyn EventLog, run: &str, state: &RunState, hash: &[u8; 32]) -> Option<usize> {
    let mut value = Vec::with_capacity(HEADER + state.tasks.len() * BYTES_PER_TASK);
    value.extend_from_slice(MAGIC);
    value.extend_from_slice(&STATE_FORMAT.to_be_bytes());
    value.extend_from_slice(&state.seq.to_be_bytes());
    value.extend_from_slice(hash);
    encode_state_into(state, &mut value).ok()?;
    log.cache_put(&key(run, state.seq), &value)
        .ok()
        .map(|()| value.len())
}

/// The snapshot at `seq` with the chain hash it was taken at, if it is valid for this code:
/// not yet checked against the log (a fold from it checks that hash as it reads on).
pub fn read(log: &dyn EventLog, run: &str, seq: u64) -> Option<(RunState, [u8; 32])> {
    let value = log.cache_get(&key(run, seq)).ok()??;
    if value.get(..4)? != MAGIC
        || value.get(4..8)? != STATE_FORMAT.to_be_bytes()
        || value.get(8..16)? != seq.to_be_bytes()
    {
        return None;
    }
    let hash: [u8; 32] = value.get(16..HEADER)?.try_into().ok()?;
    let state = decode_state(value.get(HEADER..)?).ok()?;
    (state.seq == seq).then_some((state, hash))
}
