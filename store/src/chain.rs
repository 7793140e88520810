//! The hash chain: walking a run's frames in order, checking framing, seq continuity, every
//! record's checksum tag and that each frame continues the previous one's chain; and the head
//! of a run computed from its last frame. The writer, reads and verify all walk through here.

use crate::backend::Backend;
use crate::blocks::{self, Blocks};
use crate::error::{Damage, Result, StoreError};
use crate::frame::{self, ChainHash, RawRecord, Stored};
use crate::types::Head;
use std::borrow::Cow;

/// What the writer knows about a run's end: its slot, last seq and chain hash, and for a run
/// of the blocked chain, its block so far.
#[derive(Debug, Clone)]
pub(crate) struct RunHead {
    pub num: u64,
    pub seq: u64,
    pub hash: ChainHash,
    pub blocks: Option<Blocks>,
}

impl RunHead {
    /// How the run is chained.
    pub(crate) fn chain(&self) -> crate::blocks::Chain {
        match self.blocks {
            Some(_) => crate::blocks::Chain::Blocked,
            None => crate::blocks::Chain::PerRecord,
        }
    }

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

/// A record handed on by a walk, checked: its chain hash when the walk was asked for it (a
/// version 1 frame always has it).
pub(crate) struct Checked<'a> {
    pub seq: u64,
    pub body: &'a [u8],
    pub hash: Option<&'a ChainHash>,
}

/// Walks consecutive frames of a run, checking framing, seq continuity, every record's tag,
/// and that each frame's chain continues the previous one's. A run's frames are all of one
/// version: [`frame::VERSION`] (a hash a record) or [`frame::VERSION_BLOCKED`] (see
/// [`crate::blocks`]), whose walk must start at a block's first record.
pub(crate) struct ChainWalker {
    next_seq: u64,
    prev: Option<ChainHash>,
    /// The blocked chain up to `next_seq - 1`, once a blocked frame was walked.
    blocks: Option<Blocks>,
    version: Option<u8>,
    /// The geneses of both chains, for a walk from the run's start.
    geneses: Option<(ChainHash, ChainHash)>,
}

impl ChainWalker {
    /// Starts at a frame beginning at `first_seq`: at 1, from the run's genesis; elsewhere
    /// trusting the frame's own header, as a read from the middle must.
    pub(crate) fn new(run: &str, first_seq: u64) -> Self {
        Self {
            next_seq: first_seq,
            prev: None,
            blocks: None,
            version: None,
            geneses: (first_seq == 1).then(|| (frame::genesis(run), blocks::genesis(run))),
        }
    }

    /// Starts at a frame whose header's previous hash is trusted as it is (a salvage, which
    /// knows no run id).
    pub(crate) fn detached(first_seq: u64) -> Self {
        Self {
            next_seq: first_seq,
            prev: None,
            blocks: None,
            version: None,
            geneses: None,
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

    /// The blocked chain so far, for a writer going on from it (`None` for a version 1 run).
    pub(crate) fn blocks(&self) -> Option<&Blocks> {
        self.blocks.as_ref()
    }

    pub(crate) fn frame(
        &mut self,
        backend: &dyn Backend,
        first: u64,
        bytes: &[u8],
        hashes: bool,
        f: &mut dyn FnMut(Checked<'_>) -> Result<bool>,
    ) -> std::result::Result<bool, WalkError> {
        self.frame_with(&|h| backend.get_blob(h), first, bytes, hashes, f)
    }

    /// [`ChainWalker::frame`] with spilled bodies read by `blob`. `hashes` asks for each
    /// record's chain hash (a blocked frame otherwise checks its records together).
    pub(crate) fn frame_with(
        &mut self,
        blob: &BlobReader<'_>,
        first: u64,
        bytes: &[u8],
        hashes: bool,
        f: &mut dyn FnMut(Checked<'_>) -> Result<bool>,
    ) -> std::result::Result<bool, WalkError> {
        if first != self.next_seq {
            return Err(WalkError::Damage(Damage::corrupt(
                self.next_seq.min(first),
                format!("frames skip from seq {} to {first}", self.next_seq),
            )));
        }
        let header = frame::header(bytes, first).map_err(WalkError::Damage)?;
        match self.version {
            Some(v) if v != header.version => {
                return Err(WalkError::Damage(Damage::corrupt(
                    first,
                    format!(
                        "a frame of version {} in a run of version {v} frames",
                        header.version
                    ),
                )))
            }
            _ => self.version = Some(header.version),
        }
        let genesis = self.geneses.map(|(v1, v2)| {
            if header.version == frame::VERSION {
                v1
            } else {
                v2
            }
        });
        let start_hash = match self.prev.or(genesis) {
            Some(p) if p != header.prev => {
                return Err(WalkError::Damage(Damage::corrupt(
                    first,
                    "frame does not continue the previous frame's chain",
                )))
            }
            Some(p) => p,
            None => header.prev,
        };
        let count = u64::from(header.count);
        let walked = if header.version == frame::VERSION {
            self.per_record(blob, first, bytes, start_hash, f)
        } else {
            self.blocked(blob, (first, bytes, count), start_hash, hashes, f)
        };
        // Whether or not the reader stopped, the frame was checked through its end.
        let (end, keep_going, user_error) = walked?;
        self.prev = Some(end);
        self.next_seq = first + count;
        if let Some(e) = user_error {
            return Err(WalkError::Reader(e));
        }
        Ok(keep_going)
    }

    /// A version 1 frame: each record's hash checked against its tag as it is handed on.
    fn per_record(
        &mut self,
        blob: &BlobReader<'_>,
        first: u64,
        bytes: &[u8],
        start_hash: ChainHash,
        f: &mut dyn FnMut(Checked<'_>) -> Result<bool>,
    ) -> std::result::Result<(ChainHash, bool, Option<StoreError>), WalkError> {
        let hash = std::cell::Cell::new(start_hash);
        let mut keep_going = true;
        let mut user_error = None;
        let (header, end_hash) = frame::walk(
            bytes,
            first,
            |seq, raw| {
                let body = body_of(blob, seq, &raw)?;
                let body = body.as_ref();
                let next = frame::link(&hash.get(), body);
                if next.get(..frame::TAG_LEN) != Some(raw.tag) {
                    return Err(Damage::corrupt(
                        seq,
                        "checksum mismatch: the record's bytes changed",
                    ));
                }
                hash.set(next);
                self.next_seq = seq + 1;
                hand_on(
                    f,
                    Checked {
                        seq,
                        body,
                        hash: Some(&next),
                    },
                    &mut keep_going,
                    &mut user_error,
                );
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
        Ok((hash, keep_going, user_error))
    }

    /// A version 2 frame: its records' forms hashed together and checked against its end
    /// hash before any record is handed on; each record's own hash only when asked for.
    fn blocked(
        &mut self,
        blob: &BlobReader<'_>,
        (first, bytes, count): (u64, &[u8], u64),
        start_hash: ChainHash,
        hashes: bool,
        f: &mut dyn FnMut(Checked<'_>) -> Result<bool>,
    ) -> std::result::Result<(ChainHash, bool, Option<StoreError>), WalkError> {
        let mut chain = match self.blocks.take() {
            Some(b) => b,
            None if first == blocks::block_first(first) => {
                Blocks::at_block_end(first - 1, start_hash)
            }
            None => {
                return Err(WalkError::Damage(Damage::corrupt(
                    first,
                    "a read of the blocked chain must start at a block's first record",
                )))
            }
        };
        let stored_end = bytes
            .len()
            .checked_sub(32)
            .and_then(|at| bytes.get(at..))
            .and_then(|b| <[u8; 32]>::try_from(b).ok());
        let middle = bytes
            .get(frame::HEADER_LEN..bytes.len().saturating_sub(32))
            .unwrap_or_default();
        let before = chain.clone();
        // Each record's own hash when asked for: taken in one record at a time, the last of
        // them is the frame's check; otherwise the frame's records are taken in together.
        let mut own: Vec<ChainHash> = Vec::new();
        let taken = count <= chain.room()
            && if hashes {
                own.reserve(count as usize);
                let framed = frame::walk(
                    bytes,
                    first,
                    |_, raw| {
                        own.push(chain.push_form(raw.form));
                        Ok(())
                    },
                    |_| false,
                );
                framed.is_ok() && own.len() as u64 == count
            } else {
                chain.absorb(middle, count);
                true
            };
        if !taken || Some(chain.hash()) != stored_end {
            return Err(WalkError::Damage(blocked_damage(
                first, bytes, count, &before,
            )));
        }
        let mut keep_going = true;
        let mut user_error = None;
        let mut hashes_of = own.iter();
        frame::walk(
            bytes,
            first,
            |seq, raw| {
                let body = body_of(blob, seq, &raw)?;
                hand_on(
                    f,
                    Checked {
                        seq,
                        body: body.as_ref(),
                        hash: hashes_of.next(),
                    },
                    &mut keep_going,
                    &mut user_error,
                );
                Ok(())
            },
            |_| false,
        )
        .map_err(WalkError::Damage)?;
        let end = chain.hash();
        self.blocks = Some(chain);
        Ok((end, keep_going, user_error))
    }
}

/// Hands a checked record to the reader until it says stop or fails.
fn hand_on(
    f: &mut dyn FnMut(Checked<'_>) -> Result<bool>,
    record: Checked<'_>,
    keep_going: &mut bool,
    user_error: &mut Option<StoreError>,
) {
    if *keep_going && user_error.is_none() {
        match f(record) {
            Ok(go) => *keep_going = go,
            Err(e) => *user_error = Some(e),
        }
    }
}

/// A record's body: in its frame, or (spilled) from the blob area, of the length its record
/// says and with the hash it is stored by.
fn body_of<'a>(
    blob: &BlobReader<'_>,
    seq: u64,
    raw: &RawRecord<'a>,
) -> std::result::Result<Cow<'a, [u8]>, Damage> {
    let hash = match raw.stored {
        Stored::Inline(b) => return Ok(Cow::Borrowed(b)),
        Stored::Spilled(h) => h,
    };
    let body = blob(hash)
        .map_err(|e| Damage::corrupt(seq, format!("spilled body unreadable: {e}")))?
        .ok_or_else(|| Damage::corrupt(seq, "spilled body missing from the blob area"))?;
    if body.len() as u64 != raw.body_len {
        return Err(Damage::corrupt(seq, "spilled body has the wrong length"));
    }
    if blake3::hash(&body).as_bytes() != hash {
        return Err(Damage::corrupt(seq, "spilled body does not match its hash"));
    }
    Ok(Cow::Owned(body))
}

/// The bodies of a blocked frame read alone (a salvage's), each checked by its CRC-32 (and a
/// spilled one by its hash), or `None` if any is damaged. Its chain hash is not checked: a
/// frame inside a block needs the block's records before it.
pub(crate) fn blocked_bodies(blob: &BlobReader<'_>, bytes: &[u8]) -> Option<Vec<Vec<u8>>> {
    let mut bodies = Vec::new();
    frame::walk(
        bytes,
        1,
        |seq, raw| {
            let rest = raw.form.get(frame::CRC_LEN..).unwrap_or_default();
            if raw.tag != crc32fast::hash(rest).to_be_bytes() {
                return Err(Damage::corrupt(seq, "checksum mismatch"));
            }
            bodies.push(body_of(blob, seq, &raw)?.into_owned());
            Ok(())
        },
        |_| false,
    )
    .ok()?;
    Some(bodies)
}

/// What is wrong with a blocked frame whose hash does not match: the first record whose
/// framing or CRC-32 fails, a frame reaching past its block, or else its end hash.
fn blocked_damage(first: u64, bytes: &[u8], count: u64, chain: &Blocks) -> Damage {
    // The chain over the records read so far, to tell a frame whose count was damaged (its
    // records end in their end hash) from one cut short.
    let running = std::cell::RefCell::new(chain.clone());
    let framed = frame::walk(
        bytes,
        first,
        |seq, raw| {
            let rest = raw.form.get(frame::CRC_LEN..).unwrap_or_default();
            if raw.tag != crc32fast::hash(rest).to_be_bytes() {
                return Err(Damage::corrupt(
                    seq,
                    "checksum mismatch: the record's bytes changed",
                ));
            }
            running.borrow_mut().push_form(raw.form);
            Ok(())
        },
        |tail| tail == running.borrow().hash().as_slice(),
    );
    if let Err(damage) = framed {
        return damage;
    }
    if count > chain.room() {
        return Damage::corrupt(first, "frame holds records of two blocks");
    }
    Damage::corrupt(
        first + count - 1,
        "frame end hash does not match its records",
    )
}

/// Where a read of a run's records from `from` starts: the frame holding `from` (or the last
/// one before it), or for a run of the blocked chain, the first frame of that frame's block.
pub(crate) fn read_start(backend: &dyn Backend, num: u64, from: u64) -> Result<u64> {
    Ok(match backend.frame_at_or_before(num, from)? {
        Some((first, bytes)) if bytes.get(2) == Some(&frame::VERSION_BLOCKED) => {
            blocks::block_first(first)
        }
        Some((first, _)) => first,
        None => 1,
    })
}

/// The head of a run computed from its last frame (and the frames of its block before it, for
/// the blocked chain), verified.
pub(crate) fn head_from_backend(backend: &dyn Backend, run: &str) -> Result<Option<RunHead>> {
    // Taken before sled is read: the store remembers a head only once sled holds it, so a
    // concurrent append can put sled ahead of this, never behind it.
    let remembered = backend.remembered(run);
    let Some(slot) = backend.run_slot(run)? else {
        return Ok(None);
    };
    let start = read_start(backend, slot.num, u64::MAX)?;
    let mut walker = ChainWalker::new(run, start);
    backend.scan_frames(slot.num, start, u64::MAX, &mut |first, bytes| {
        walker
            .frame(backend, first, bytes, false, &mut |_| Ok(true))
            .map_err(|e| e.into_store_error(run))
    })?;
    let head = match (walker.hash(), walker.blocks()) {
        (None, _) => {
            check_remembered(run, remembered, None)?;
            // A run created and never written to: new runs take the blocked chain.
            return Ok(Some(RunHead {
                num: slot.num,
                seq: 0,
                hash: blocks::genesis(run),
                blocks: Some(Blocks::genesis(run)),
            }));
        }
        (Some(hash), blocks) => RunHead {
            num: slot.num,
            seq: walker.next_seq() - 1,
            hash,
            blocks: blocks.cloned(),
        },
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
