//! The hash chain: walking a run's frames in order, checking framing, seq continuity, every
//! record's checksum tag and that each frame continues the previous one's chain; and the head
//! of a run computed from its last frame. The writer, reads and verify all walk through here.

use crate::backend::Backend;
use crate::error::{Damage, Result, StoreError};
use crate::frame::{self, ChainHash, Stored};
use crate::types::{Head, RecordRef};

/// What the writer knows about a run's end: its slot, last seq and chain hash.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RunHead {
    pub num: u64,
    pub seq: u64,
    pub hash: ChainHash,
}

impl RunHead {
    pub(crate) fn head(&self) -> Option<Head> {
        (self.seq > 0).then_some(Head {
            seq: self.seq,
            hash: self.hash,
        })
    }
}

/// Why a walk stopped early: the log is damaged, or the reader's callback failed.
#[derive(Debug)]
pub(crate) enum WalkError {
    Damage(Damage),
    Reader(StoreError),
}

impl WalkError {
    pub(crate) fn into_store_error(self, run: &str) -> StoreError {
        match self {
            WalkError::Damage(damage) => StoreError::Damaged {
                run: run.to_owned(),
                damage,
            },
            WalkError::Reader(e) => e,
        }
    }
}

/// Reads a spilled body by its hash.
pub(crate) type BlobReader<'a> = dyn Fn(&[u8; 32]) -> Result<Option<Vec<u8>>> + 'a;

/// Walks consecutive frames of a run, checking framing, seq continuity, every record's tag,
/// and that each frame's chain continues the previous one's.
pub(crate) struct ChainWalker {
    next_seq: u64,
    prev: Option<ChainHash>,
}

impl ChainWalker {
    /// Starts at a frame beginning at `first_seq`; `prev` is the chain hash before it when
    /// known (`None` trusts the frame's own header, as a read from the middle must).
    pub(crate) fn new(run: &str, first_seq: u64, prev: Option<ChainHash>) -> Self {
        let prev = prev.or_else(|| (first_seq == 1).then(|| frame::genesis(run)));
        Self {
            next_seq: first_seq,
            prev,
        }
    }

    /// Seq expected next.
    pub(crate) fn next_seq(&self) -> u64 {
        self.next_seq
    }

    /// Chain hash so far.
    pub(crate) fn hash(&self) -> Option<ChainHash> {
        self.prev
    }

    pub(crate) fn frame(
        &mut self,
        backend: &dyn Backend,
        first: u64,
        bytes: &[u8],
        f: &mut dyn FnMut(RecordRef<'_>) -> Result<bool>,
    ) -> std::result::Result<bool, WalkError> {
        self.frame_with(&|h| backend.get_blob(h), first, bytes, f)
    }

    /// [`ChainWalker::frame`] with spilled bodies read by `blob`.
    pub(crate) fn frame_with(
        &mut self,
        blob: &BlobReader<'_>,
        first: u64,
        bytes: &[u8],
        f: &mut dyn FnMut(RecordRef<'_>) -> Result<bool>,
    ) -> std::result::Result<bool, WalkError> {
        if first != self.next_seq {
            return Err(WalkError::Damage(Damage::corrupt(
                self.next_seq.min(first),
                format!("frames skip from seq {} to {first}", self.next_seq),
            )));
        }
        let header = frame::header(bytes, first).map_err(WalkError::Damage)?;
        let start_hash = match self.prev {
            Some(p) if p != header.prev => {
                return Err(WalkError::Damage(Damage::corrupt(
                    first,
                    "frame does not continue the previous frame's chain",
                )))
            }
            Some(p) => p,
            None => header.prev,
        };
        let hash = std::cell::Cell::new(start_hash);
        let mut keep_going = true;
        let mut user_error = None;
        let (_, end_hash) = frame::walk(
            bytes,
            first,
            |seq, raw| {
                let fetched;
                let body: &[u8] = match raw.stored {
                    Stored::Inline(b) => b,
                    Stored::Spilled(h) => {
                        fetched = blob(h)
                            .map_err(|e| {
                                Damage::corrupt(seq, format!("spilled body unreadable: {e}"))
                            })?
                            .ok_or_else(|| {
                                Damage::corrupt(seq, "spilled body missing from the blob area")
                            })?;
                        &fetched
                    }
                };
                if body.len() as u64 != raw.body_len {
                    return Err(Damage::corrupt(seq, "spilled body has the wrong length"));
                }
                let next = frame::link(&hash.get(), body);
                if next.get(..frame::TAG_LEN) != Some(raw.tag) {
                    return Err(Damage::corrupt(
                        seq,
                        "checksum mismatch: the record's bytes changed",
                    ));
                }
                hash.set(next);
                self.next_seq = seq + 1;
                if keep_going && user_error.is_none() {
                    match f(RecordRef {
                        seq,
                        body,
                        hash: &next,
                    }) {
                        Ok(go) => keep_going = go,
                        Err(e) => user_error = Some(e),
                    }
                }
                Ok(())
            },
            |tail| tail == hash.get().as_slice(),
        )
        .map_err(WalkError::Damage)?;
        let hash = hash.get();
        if end_hash != hash {
            let last = first + u64::from(header.count) - 1;
            return Err(WalkError::Damage(Damage::corrupt(
                last,
                "frame end hash does not match its records",
            )));
        }
        self.prev = Some(hash);
        if let Some(e) = user_error {
            return Err(WalkError::Reader(e));
        }
        Ok(keep_going)
    }
}

/// The head of a run computed from its last frame, verified.
pub(crate) fn head_from_backend(backend: &dyn Backend, run: &str) -> Result<Option<RunHead>> {
    // Taken before sled is read: the store remembers a head only once sled holds it, so a
    // concurrent append can put sled ahead of this, never behind it.
    let remembered = backend.remembered(run);
    let Some(slot) = backend.run_slot(run)? else {
        return Ok(None);
    };
    let Some((first, bytes)) = backend.frame_at_or_before(slot.num, u64::MAX)? else {
        check_remembered(run, remembered, None)?;
        return Ok(Some(RunHead {
            num: slot.num,
            seq: 0,
            hash: frame::genesis(run),
        }));
    };
    let mut walker = ChainWalker::new(run, first, None);
    walker
        .frame(backend, first, &bytes, &mut |_| Ok(true))
        .map_err(|e| e.into_store_error(run))?;
    let head = RunHead {
        num: slot.num,
        seq: walker.next_seq() - 1,
        hash: walker.hash().unwrap_or_else(|| frame::genesis(run)),
    };
    check_remembered(
        run,
        remembered,
        (head.seq > 0).then_some((head.seq, head.hash)),
    )?;
    Ok(Some(head))
}

/// Refuses a run whose stored end (`found`) falls short of the head the store remembers
/// committing: appending after a lost tail would fork its history. `remembered` (from
/// [`Backend::remembered`]) must be taken before `found` was read, or an append between the
/// two reads looks like a lost tail.
pub(crate) fn check_remembered(
    run: &str,
    remembered: Option<(crate::heads::Remembered, u64)>,
    found: Option<(u64, ChainHash)>,
) -> Result<()> {
    match remembered {
        Some((remembered, written_ms)) => {
            match crate::heads::shortfall(&remembered, found, written_ms) {
                Some(damage) => Err(StoreError::Damaged {
                    run: run.to_owned(),
                    damage,
                }),
                None => Ok(()),
            }
        }
        None => Ok(()),
    }
}
