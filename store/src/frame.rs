//! The frame: one immutable value per committed batch of a run's records.
//!
//! ```text
//! "RL" version:u8 count:u32be prev_hash:[32]
//! count × ( len:varint  tag:[8]  body )      len's low bit set = body spilled to the blob area
//! end_hash:[32]
//! ```
//!
//! Each record's `tag` is the first 8 bytes of its chain hash
//! `hash_n = blake3(hash_{n-1} ‖ body)`, so one hash per record both checksums the body (before
//! anyone decodes it) and links the chain. `end_hash` is the full chain hash after the last
//! record: the run's head hash. A spilled body is stored as its 32-byte blake3 and the real
//! bytes live in the blob area; the chain always covers the real body.
//!
//! Version 2 holds the records of a run linked by the blocked chain ([`crate::blocks`]):
//!
//! ```text
//! "RL" 2:u8 count:u32be prev_hash:[32]
//! count × form                  form = crc:u32be len:varint stored (see `blocks`)
//! end_hash:[32]
//! ```
//!
//! `prev_hash` is the chain hash before the first record and `end_hash` the one after the
//! last, as in version 1; the forms are exactly the bytes the chain hashes, so a reader checks
//! a frame with one hash of its middle. A version 2 frame never holds records of two blocks.

use crate::error::Damage;

/// Magic bytes at the start of every frame.
pub const MAGIC: [u8; 2] = *b"RL";
/// The frame format of runs linked by the per-record chain (every run recorded before the
/// blocked chain).
pub const VERSION: u8 = 1;
/// The frame format of runs linked by the blocked chain.
pub const VERSION_BLOCKED: u8 = 2;
/// Bytes before the first record.
pub const HEADER_LEN: usize = 2 + 1 + 4 + 32;
/// Bytes of a record's tag.
pub const TAG_LEN: usize = 8;
/// Bytes of a version 2 record's CRC-32.
pub const CRC_LEN: usize = 4;
/// At most this many records per frame.
pub const MAX_RECORDS: usize = 256;
/// A frame stops growing past this many bytes. sled splits leaves above 16 entries and writes
/// pages above ~128 KiB as blob files it never fsyncs; 17 frames of 6 KiB stay below that.
pub const MAX_FRAME_BYTES: usize = 6 * 1024;
/// Bodies larger than this go to the blob area, keeping frames small. Part of the blocked
/// chain's definition (a spilled record is hashed as its blob hash): it never changes.
pub const INLINE_LIMIT: usize = 2 * 1024;

/// A chain hash.
pub type ChainHash = [u8; 32];

/// The hash before a run's first record, bound to the run id so records cannot be moved
/// between runs without breaking the chain.
pub fn genesis(run: &str) -> ChainHash {
    let mut h = blake3::Hasher::new();
    h.update(b"runlog-chain-v1\0");
    h.update(run.as_bytes());
    *h.finalize().as_bytes()
}

/// `blake3(prev ‖ body)`.
pub fn link(prev: &ChainHash, body: &[u8]) -> ChainHash {
    let mut h = blake3::Hasher::new();
    h.update(prev);
    h.update(body);
    *h.finalize().as_bytes()
}

/// A body as it sits in a frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stored<'a> {
    /// The bytes themselves.
    Inline(&'a [u8]),
    /// Spilled: the blob hash of the bytes.
    Spilled(&'a [u8; 32]),
}

/// What both frame builders share: the header, the count, and when a frame is full.
#[derive(Debug)]
struct Framing {
    buf: Vec<u8>,
    count: u32,
}

impl Framing {
    fn new(version: u8, prev: &ChainHash) -> Self {
        let mut buf = Vec::with_capacity(MAX_FRAME_BYTES + 64);
        buf.extend_from_slice(&MAGIC);
        buf.push(version);
        buf.extend_from_slice(&0u32.to_be_bytes());
        buf.extend_from_slice(prev);
        Self { buf, count: 0 }
    }

    /// Whether a record of `overhead` bytes beside its `stored_len` still fits.
    fn fits(&self, overhead: usize, stored_len: usize) -> bool {
        self.count == 0
            || (self.count as usize) < MAX_RECORDS
                && self.buf.len() + overhead + stored_len + 32 <= MAX_FRAME_BYTES
    }

    /// The frame's bytes, its count filled in, ending in `end`.
    fn finish(mut self, end: &ChainHash) -> Vec<u8> {
        let count = self.count.to_be_bytes();
        if let Some(slot) = self.buf.get_mut(3..7) {
            slot.copy_from_slice(&count);
        }
        self.buf.extend_from_slice(end);
        self.buf
    }
}

/// Builds a frame from records whose chain starts at `prev`.
#[derive(Debug)]
pub struct FrameBuilder {
    framing: Framing,
    hash: ChainHash,
}

impl FrameBuilder {
    /// A frame whose first record follows `prev`.
    pub fn new(prev: ChainHash) -> Self {
        Self {
            framing: Framing::new(VERSION, &prev),
            hash: prev,
        }
    }

    /// Records so far.
    pub fn len(&self) -> usize {
        self.framing.count as usize
    }

    /// No records yet.
    pub fn is_empty(&self) -> bool {
        self.framing.count == 0
    }

    /// Whether a record stored as `stored_len` bytes still fits.
    pub fn fits(&self, stored_len: usize) -> bool {
        self.framing.fits(5 + TAG_LEN, stored_len)
    }

    /// Adds a record; `body` is the real body (for the chain), `stored` how it is kept.
    pub fn push(&mut self, body: &[u8], stored: Stored<'_>) {
        self.hash = link(&self.hash, body);
        let (len_field, bytes): (u64, &[u8]) = match stored {
            Stored::Inline(b) => ((b.len() as u64) << 1, b),
            Stored::Spilled(h) => (((body.len() as u64) << 1) | 1, h.as_slice()),
        };
        let buf = &mut self.framing.buf;
        write_varint(buf, len_field);
        buf.extend_from_slice(&self.hash[..TAG_LEN]);
        buf.extend_from_slice(bytes);
        self.framing.count += 1;
    }

    /// The chain hash after the last record pushed.
    pub fn hash(&self) -> ChainHash {
        self.hash
    }

    /// The finished frame bytes.
    pub fn finish(self) -> Vec<u8> {
        self.framing.finish(&self.hash)
    }
}

/// Builds a version 2 frame: records of one block of the blocked chain, as their forms.
#[derive(Debug)]
pub struct BlockedFrameBuilder {
    framing: Framing,
}

impl BlockedFrameBuilder {
    /// A frame whose first record follows the chain hash `prev`.
    pub fn new(prev: ChainHash) -> Self {
        Self {
            framing: Framing::new(VERSION_BLOCKED, &prev),
        }
    }

    /// Records so far.
    pub fn len(&self) -> usize {
        self.framing.count as usize
    }

    /// No records yet.
    pub fn is_empty(&self) -> bool {
        self.framing.count == 0
    }

    /// Whether a record stored as `stored_len` bytes still fits (the caller keeps a frame
    /// inside one block).
    pub fn fits(&self, stored_len: usize) -> bool {
        self.framing.fits(CRC_LEN + 5, stored_len)
    }

    /// Adds a record: `blob` is its body's hash when it is spilled.
    pub fn push(&mut self, body: &[u8], blob: Option<&[u8; 32]>) {
        put_form(&mut self.framing.buf, body, blob);
        self.framing.count += 1;
    }

    /// The forms of the records so far: what the chain hashes.
    pub fn forms(&self) -> &[u8] {
        self.framing.buf.get(HEADER_LEN..).unwrap_or_default()
    }

    /// The finished frame bytes, ending in `end`, the chain hash after the last record.
    pub fn finish(self, end: &ChainHash) -> Vec<u8> {
        self.framing.finish(end)
    }
}

/// Whether a body is kept in the blob area. It depends on the body's length alone, and is part
/// of the chain's definition: a spilled record is hashed as its blob hash.
pub fn spills(body: &[u8]) -> bool {
    body.len() > INLINE_LIMIT
}

/// Appends the form of a record (see [`crate::blocks`]). `blob` is the body's blake3 when it
/// [`spills`].
pub fn put_form(out: &mut Vec<u8>, body: &[u8], blob: Option<&[u8; 32]>) {
    let start = out.len();
    out.extend_from_slice(&[0; 4]);
    match blob {
        Some(h) => {
            write_varint(out, ((body.len() as u64) << 1) | 1);
            out.extend_from_slice(h);
        }
        None => {
            write_varint(out, (body.len() as u64) << 1);
            out.extend_from_slice(body);
        }
    }
    let crc = crc32fast::hash(out.get(start + 4..).unwrap_or_default());
    if let Some(slot) = out.get_mut(start..start + 4) {
        slot.copy_from_slice(&crc.to_be_bytes());
    }
}

fn write_varint(buf: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        buf.push((v as u8) | 0x80);
        v >>= 7;
    }
    buf.push(v as u8);
}

fn read_varint(buf: &[u8], pos: &mut usize) -> Option<u64> {
    let mut v: u64 = 0;
    for shift in (0..64).step_by(7) {
        let b = *buf.get(*pos)?;
        *pos += 1;
        v |= u64::from(b & 0x7f) << shift;
        if b & 0x80 == 0 {
            return Some(v);
        }
    }
    None
}

/// The length of the frame that starts at `bytes[0]`, read from its framing alone (how a
/// salvage finds frames in a file it cannot otherwise parse); `None` if no frame fits there.
pub fn measure(bytes: &[u8]) -> Option<usize> {
    let head = header(bytes.get(..HEADER_LEN + 32)?, 1).ok()?;
    let mut pos = HEADER_LEN;
    for _ in 0..head.count {
        if head.version == VERSION_BLOCKED {
            pos = pos.checked_add(CRC_LEN)?;
        }
        let len_field = read_varint(bytes, &mut pos)?;
        let stored = if len_field & 1 == 1 {
            32
        } else {
            usize::try_from(len_field >> 1).ok()?
        };
        if head.version == VERSION {
            pos = pos.checked_add(TAG_LEN)?;
        }
        pos = pos.checked_add(stored)?;
        if pos > bytes.len() {
            return None;
        }
    }
    let end = pos.checked_add(32)?;
    (end <= bytes.len()).then_some(end)
}

/// A parsed frame header.
#[derive(Debug, Clone, Copy)]
pub struct Header {
    /// The frame format: [`VERSION`] or [`VERSION_BLOCKED`].
    pub version: u8,
    /// Records in the frame.
    pub count: u32,
    /// Chain hash before the first record.
    pub prev: ChainHash,
}

/// One record of a frame, before its body is checked.
#[derive(Debug, Clone, Copy)]
pub struct RawRecord<'a> {
    /// The stored body.
    pub stored: Stored<'a>,
    /// Length of the real body.
    pub body_len: u64,
    /// The tag: the first bytes of the record's chain hash (version 1), or the CRC-32 of the
    /// rest of its form (version 2).
    pub tag: &'a [u8],
    /// The record's bytes in the frame, tag included: its form, in version 2.
    pub form: &'a [u8],
}

/// Parses the header of a frame whose first record is `first_seq`.
pub fn header(frame: &[u8], first_seq: u64) -> Result<Header, Damage> {
    let bad = |reason: &str| Damage::corrupt(first_seq, format!("frame header: {reason}"));
    if frame.len() < HEADER_LEN + 32 {
        return Err(Damage::torn(first_seq, "frame shorter than its header"));
    }
    if frame.get(..2) != Some(&MAGIC[..]) {
        return Err(bad("bad magic bytes"));
    }
    let version = match frame.get(2) {
        Some(&v) if v == VERSION || v == VERSION_BLOCKED => v,
        Some(v) => return Err(bad(&format!("unknown frame version {v}"))),
        None => return Err(bad("missing version")),
    };
    let count = frame
        .get(3..7)
        .and_then(|b| <[u8; 4]>::try_from(b).ok())
        .map(u32::from_be_bytes)
        .ok_or_else(|| bad("missing count"))?;
    if count == 0 || count as usize > MAX_RECORDS {
        return Err(bad(&format!("record count {count} out of range")));
    }
    let prev = frame
        .get(7..HEADER_LEN)
        .and_then(|b| <[u8; 32]>::try_from(b).ok())
        .ok_or_else(|| bad("missing previous hash"))?;
    Ok(Header {
        version,
        count,
        prev,
    })
}

/// Walks the records of a frame, calling `f(seq, record)` for each; checks the framing only
/// (tags are checked by the caller, who can fetch spilled bodies). `is_end_hash(bytes)` says
/// whether 32 bytes are the chain hash after the records seen so far: it tells a frame whose
/// record count was damaged from one cut short. Returns the stored end hash.
pub fn walk<'a>(
    frame: &'a [u8],
    first_seq: u64,
    mut f: impl FnMut(u64, RawRecord<'a>) -> Result<(), Damage>,
    is_end_hash: impl Fn(&[u8]) -> bool,
) -> Result<(Header, ChainHash), Damage> {
    let head = header(frame, first_seq)?;
    let body_end = frame.len() - 32;
    let mut pos = HEADER_LEN;
    for i in 0..u64::from(head.count) {
        let seq = first_seq + i;
        if i > 0 && pos == body_end && frame.get(pos..).is_some_and(&is_end_hash) {
            // Complete records followed by their end hash: the count is what is wrong.
            return Err(Damage::corrupt(
                first_seq,
                format!("frame header claims {} records, holds {i}", head.count),
            ));
        }
        let truncated = || Damage::torn(seq, "record cut short");
        let start = pos;
        let crc = if head.version == VERSION_BLOCKED {
            pos += CRC_LEN;
            frame.get(start..pos).ok_or_else(truncated)?
        } else {
            &[]
        };
        let len_field = read_varint(frame, &mut pos).ok_or_else(truncated)?;
        let spilled = len_field & 1 == 1;
        let body_len = len_field >> 1;
        let tag = if head.version == VERSION_BLOCKED {
            crc
        } else {
            let tag = frame.get(pos..pos + TAG_LEN).ok_or_else(truncated)?;
            pos += TAG_LEN;
            tag
        };
        let stored_len = if spilled {
            32
        } else {
            usize::try_from(body_len).map_err(|_| truncated())?
        };
        let end = pos.checked_add(stored_len).ok_or_else(truncated)?;
        if end > body_end {
            return Err(truncated());
        }
        let bytes = frame.get(pos..end).ok_or_else(truncated)?;
        pos = end;
        let stored = if spilled {
            Stored::Spilled(<&[u8; 32]>::try_from(bytes).map_err(|_| truncated())?)
        } else {
            Stored::Inline(bytes)
        };
        f(
            seq,
            RawRecord {
                stored,
                body_len,
                tag,
                form: frame.get(start..end).ok_or_else(truncated)?,
            },
        )?;
    }
    if pos != body_end {
        return Err(Damage::corrupt(
            first_seq + u64::from(head.count) - 1,
            format!(
                "{} unexpected bytes after the last record",
                body_end.saturating_sub(pos)
            ),
        ));
    }
    let end_hash = frame
        .get(body_end..)
        .and_then(|b| <[u8; 32]>::try_from(b).ok())
        .ok_or_else(|| Damage::torn(first_seq, "missing end hash"))?;
    Ok((head, end_hash))
}
