//! The in-memory backend: the same frames in ordered maps, for tests and throwaway runs.

use super::{Backend, RunSlot};
use crate::error::Result;
use std::collections::BTreeMap;
use std::sync::{Mutex, MutexGuard};

#[derive(Debug, Default)]
struct Inner {
    runs: BTreeMap<String, RunSlot>,
    frames: BTreeMap<(u64, u64), Vec<u8>>,
    blobs: BTreeMap<[u8; 32], Vec<u8>>,
    cache: BTreeMap<Vec<u8>, Vec<u8>>,
}

/// Frames, runs and blobs in memory.
#[derive(Debug, Default)]
pub struct MemoryBackend {
    inner: Mutex<Inner>,
}

impl MemoryBackend {
    fn lock(&self) -> Result<MutexGuard<'_, Inner>> {
        // A panic while holding the lock cannot leave a half-inserted frame batch (inserts
        // happen after all frames are built), so the data is still consistent.
        Ok(self.inner.lock().unwrap_or_else(|p| p.into_inner()))
    }

    /// Overwrites the frame stored at (run, first seq), to simulate damage in tests.
    pub fn tamper(&self, run: &str, first_seq: u64, f: impl FnOnce(&mut Vec<u8>)) -> Result<bool> {
        let mut inner = self.lock()?;
        let Some(slot) = inner.runs.get(run).copied() else {
            return Ok(false);
        };
        Ok(match inner.frames.get_mut(&(slot.num, first_seq)) {
            Some(frame) => {
                f(frame);
                true
            }
            None => false,
        })
    }
}

impl Backend for MemoryBackend {
    fn run_slot(&self, run: &str) -> Result<Option<RunSlot>> {
        Ok(self.lock()?.runs.get(run).copied())
    }

    fn create_run(&self, run: &str, slot: RunSlot) -> Result<()> {
        self.lock()?.runs.insert(run.to_owned(), slot);
        Ok(())
    }

    fn runs(&self) -> Result<Vec<(String, RunSlot)>> {
        Ok(self
            .lock()?
            .runs
            .iter()
            .map(|(k, v)| (k.clone(), *v))
            .collect())
    }

    fn max_run_num(&self) -> Result<u64> {
        Ok(self.lock()?.runs.values().map(|s| s.num).max().unwrap_or(0))
    }

    fn insert_frames(
        &self,
        frames: Vec<(u64, u64, Vec<u8>)>,
        logged: &mut dyn FnMut(),
    ) -> Result<()> {
        // Nothing to log ahead: memory is as durable as it gets.
        logged();
        let mut inner = self.lock()?;
        for (num, first, bytes) in frames {
            inner.frames.insert((num, first), bytes);
        }
        Ok(())
    }

    fn frame_at_or_before(&self, num: u64, seq: u64) -> Result<Option<(u64, Vec<u8>)>> {
        let inner = self.lock()?;
        Ok(inner
            .frames
            .range((num, 0)..=(num, seq))
            .next_back()
            .map(|((_, first), bytes)| (*first, bytes.clone())))
    }

    fn scan_frames(
        &self,
        num: u64,
        from: u64,
        to: u64,
        f: &mut dyn FnMut(u64, &[u8]) -> Result<bool>,
    ) -> Result<()> {
        if from > to {
            return Ok(());
        }
        // Copy out first: `f` may be slow or call back into the log.
        let frames: Vec<(u64, Vec<u8>)> = {
            let inner = self.lock()?;
            inner
                .frames
                .range((num, from)..=(num, to))
                .map(|((_, s), b)| (*s, b.clone()))
                .collect()
        };
        for (first, bytes) in frames {
            if !f(first, &bytes)? {
                break;
            }
        }
        Ok(())
    }

    fn sync(&self) -> Result<()> {
        Ok(())
    }

    fn put_blob(&self, hash: &[u8; 32], bytes: &[u8]) -> Result<()> {
        self.lock()?
            .blobs
            .entry(*hash)
            .or_insert_with(|| bytes.to_vec());
        Ok(())
    }

    fn get_blob(&self, hash: &[u8; 32]) -> Result<Option<Vec<u8>>> {
        Ok(self.lock()?.blobs.get(hash).cloned())
    }

    fn cache_put(&self, key: &[u8], value: &[u8]) -> Result<()> {
        self.lock()?.cache.insert(key.to_vec(), value.to_vec());
        Ok(())
    }

    fn cache_get(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        Ok(self.lock()?.cache.get(key).cloned())
    }

    fn cache_keys(&self, prefix: &[u8]) -> Result<Vec<Vec<u8>>> {
        Ok(self
            .lock()?
            .cache
            .keys()
            .filter(|k| k.starts_with(prefix))
            .cloned()
            .collect())
    }

    fn size_bytes(&self) -> Result<u64> {
        let inner = self.lock()?;
        let frames: usize = inner.frames.values().map(|f| f.len() + 16).sum();
        let blobs: usize = inner.blobs.values().map(|b| b.len() + 32).sum();
        Ok((frames + blobs) as u64)
    }
}
