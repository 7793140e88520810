//! A blob kept packed: compressed with zstd, and, when it is like an earlier blob, compressed
//! against that one's bytes (the earlier blob is zstd's dictionary), so that what the two share
//! is stored once.
//!
//! Why: a coding agent sends its whole conversation again on every turn, so the requests of
//! one command are each the one before plus a little. Kept whole, a 40-turn conversation's
//! requests are mostly copies; packed against the one before, each costs about what was new
//! in it. A blob's name stays the blake3 hash of its bytes: whoever reads it gets those bytes,
//! checked against the name, and does not know how they were kept.
//!
//! A packed file: [`MAGIC`], the kind (whole or based), the chain's depth, the length unpacked
//! (u64 little-endian), the base's hash when based, then one zstd frame.

use std::io::{Error, ErrorKind};

/// How a packed blob file begins.
pub const MAGIC: [u8; 4] = *b"rlp1";
/// A based blob is decoded through its bases; past this many, the next is packed whole, so
/// that reading one never decodes more than this many frames.
pub const MAX_DEPTH: u8 = 32;
/// zstd's level, as for the archive's segments.
const LEVEL: i32 = 3;
/// A packed blob that says it unpacks to more than this is damage, never an allocation.
const MAX_UNPACKED: u64 = 1 << 30;

const WHOLE: u8 = 0;
const BASED: u8 = 1;
/// Bytes before the frame of a whole blob.
const WHOLE_HEADER: usize = 4 + 1 + 1 + 8;
/// The most bytes a header takes (a based blob's, with its base's hash).
pub const MAX_HEADER: usize = WHOLE_HEADER + 32;

/// What a packed file's header says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    /// The blob it was packed against, if any.
    pub base: Option<[u8; 32]>,
    /// How many bases reading it goes through.
    pub depth: u8,
    /// Its length unpacked.
    pub len: u64,
}

impl Header {
    /// The header at the start of a packed file, and where its frame begins.
    pub fn read(file: &[u8]) -> Result<(Self, usize), Error> {
        let damaged = |why: &str| Error::new(ErrorKind::InvalidData, why.to_owned());
        let fixed = file
            .get(..WHOLE_HEADER)
            .ok_or_else(|| damaged("a packed blob shorter than its header"))?;
        let (magic, rest) = fixed.split_at(4);
        if magic != MAGIC {
            return Err(damaged("not a packed blob"));
        }
        let (&kind, rest) = rest.split_first().ok_or_else(|| damaged("no kind"))?;
        let (&depth, rest) = rest.split_first().ok_or_else(|| damaged("no depth"))?;
        let len = u64::from_le_bytes(rest.try_into().map_err(|_| damaged("no length"))?);
        if len > MAX_UNPACKED {
            return Err(damaged("a packed blob longer than 1 GiB"));
        }
        match kind {
            WHOLE => Ok((
                Self {
                    base: None,
                    depth: 0,
                    len,
                },
                WHOLE_HEADER,
            )),
            BASED => {
                let base = file
                    .get(WHOLE_HEADER..MAX_HEADER)
                    .and_then(|b| <[u8; 32]>::try_from(b).ok())
                    .ok_or_else(|| damaged("a based blob without its base"))?;
                Ok((
                    Self {
                        base: Some(base),
                        depth,
                        len,
                    },
                    MAX_HEADER,
                ))
            }
            _ => Err(damaged("an unknown kind of packed blob")),
        }
    }
}

/// An earlier blob a new one is likely to share most of its bytes with.
#[derive(Debug, Clone, Copy)]
pub struct Like<'a> {
    /// Its name.
    pub hash: &'a [u8; 32],
    /// Its bytes.
    pub bytes: &'a [u8],
    /// Its depth (0 if it is kept whole or raw).
    pub depth: u8,
}

/// `bytes` packed, against `like` when given and not too deep; `None` when packing would not
/// save anything (the blob is then kept raw).
pub fn pack(bytes: &[u8], like: Option<Like<'_>>) -> Result<Option<Vec<u8>>, Error> {
    let like = like.filter(|l| l.depth < MAX_DEPTH && !l.bytes.is_empty());
    let mut compressor = match like {
        Some(l) => zstd::bulk::Compressor::with_dictionary(LEVEL, l.bytes)?,
        None => zstd::bulk::Compressor::new(LEVEL)?,
    };
    // The frame's own checksum is left out: the bytes unpacked are checked against the name.
    compressor.include_contentsize(false)?;
    compressor.include_checksum(false)?;
    compressor.include_dictid(false)?;
    let frame = compressor.compress(bytes)?;
    let mut out = Vec::with_capacity(MAX_HEADER + frame.len());
    out.extend_from_slice(&MAGIC);
    match like {
        Some(l) => {
            out.push(BASED);
            out.push(l.depth + 1);
        }
        None => out.extend_from_slice(&[WHOLE, 0]),
    }
    out.extend_from_slice(&(bytes.len() as u64).to_le_bytes());
    if let Some(l) = like {
        out.extend_from_slice(l.hash);
    }
    out.extend_from_slice(&frame);
    Ok((out.len() < bytes.len()).then_some(out))
}

/// A packed file's bytes, given its base's bytes when it has one.
pub fn unpack(file: &[u8], base: Option<&[u8]>) -> Result<Vec<u8>, Error> {
    let (header, at) = Header::read(file)?;
    let frame = file.get(at..).unwrap_or_default();
    let capacity = usize::try_from(header.len).map_err(Error::other)?;
    let mut decompressor = match (header.base, base) {
        (Some(_), Some(b)) => zstd::bulk::Decompressor::with_dictionary(b)?,
        (None, _) => zstd::bulk::Decompressor::new()?,
        (Some(_), None) => return Err(Error::other("a based blob read without its base")),
    };
    let out = decompressor.decompress(frame, capacity)?;
    if out.len() as u64 != header.len {
        return Err(Error::new(
            ErrorKind::InvalidData,
            "a packed blob unpacked to a length other than its header's",
        ));
    }
    Ok(out)
}
