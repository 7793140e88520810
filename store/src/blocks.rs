//! The blocked chain (chain version 2): a run's records hashed 64 at a time.
//!
//! The records of a run fall into blocks fixed by seq: 1–64, 65–128, and so on. The chain
//! hash at seq k is blake3 over the hash at the end of the block before k's (the run's
//! genesis for the first block), then the form of each record of k's block up to k:
//!
//! ```text
//! form = crc:u32be  len:varint  stored
//! ```
//!
//! where `len`'s low bit says the body is spilled (kept in the blob area, when it is longer
//! than [`frame::INLINE_LIMIT`]) and `stored` is the body, or its blake3 when spilled; `crc`
//! is the CRC-32 of `len` and `stored`, which names a damaged record when a block's hash does
//! not match. The hashes depend on the bodies alone, never on how appends were batched into
//! frames, so every store and every export computes the same function.
//!
//! Why blocks: hashed one record at a time, a chain costs a blake3 finalization (and at least
//! two compressions) per record, a fifth of a replay's processor time. A reader of a block's
//! records, stored contiguously in their forms, checks them with one `update` (blake3 then
//! hashes 1 KiB chunks side by side) and one finalization per frame. A record's own hash
//! inside a block is computed only where one is asked for.

use crate::frame::{self, ChainHash};

/// How a run's records are hash-chained. Chosen when a run is created and kept for its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Chain {
    /// One hash a record, `blake3(prev ‖ body)`: runs recorded before the blocked chain.
    PerRecord,
    /// Records hashed 64 at a time (this module): what a new run takes.
    Blocked,
}

impl Chain {
    /// The number an export or the wire names it by.
    pub fn number(self) -> u32 {
        match self {
            Chain::PerRecord => 1,
            Chain::Blocked => 2,
        }
    }

    /// The chain a number names.
    pub fn from_number(n: u32) -> Option<Self> {
        match n {
            1 => Some(Chain::PerRecord),
            2 => Some(Chain::Blocked),
            _ => None,
        }
    }

    /// The hash before a run's first record.
    pub fn genesis(self, run: &str) -> [u8; 32] {
        match self {
            Chain::PerRecord => frame::genesis(run),
            Chain::Blocked => genesis(run),
        }
    }
}

/// Records in a block.
pub const BLOCK: u64 = 64;

/// The hash before a run's first record, bound to the run id (and distinct from the
/// per-record chain's, so the two can never be confused).
pub fn genesis(run: &str) -> ChainHash {
    let mut h = blake3::Hasher::new();
    h.update(b"runlog-chain-v2\0");
    h.update(run.as_bytes());
    *h.finalize().as_bytes()
}

/// The first seq of the block holding `seq` (≥ 1).
pub fn block_first(seq: u64) -> u64 {
    seq - (seq.max(1) - 1) % BLOCK
}

/// A record's form, owned: what a store that keeps bodies apart (PostgreSQL, an export)
/// hashes for each of them.
pub fn form(body: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(body.len().min(frame::INLINE_LIMIT) + 16);
    let blob = frame::spills(body).then(|| *blake3::hash(body).as_bytes());
    frame::put_form(&mut out, body, blob.as_ref());
    out
}

/// The chain at some seq: its hash there, and the hasher over its block so far.
#[derive(Clone, Debug)]
pub struct Blocks {
    seq: u64,
    hash: ChainHash,
    hasher: blake3::Hasher,
}

impl Blocks {
    /// A run's chain before its first record.
    pub fn genesis(run: &str) -> Self {
        Self::at_block_end(0, genesis(run))
    }

    /// The chain after `seq`, the last record of a block (or 0), whose hash is `hash`.
    pub fn at_block_end(seq: u64, hash: ChainHash) -> Self {
        debug_assert_eq!(seq % BLOCK, 0);
        let mut hasher = blake3::Hasher::new();
        hasher.update(&hash);
        Self { seq, hash, hasher }
    }

    /// The last seq taken in.
    pub fn seq(&self) -> u64 {
        self.seq
    }

    /// The chain hash after [`Blocks::seq`].
    pub fn hash(&self) -> ChainHash {
        self.hash
    }

    /// Records that still fit in the current block.
    pub fn room(&self) -> u64 {
        BLOCK - self.seq % BLOCK
    }

    /// Takes in `count` records whose forms are `forms`, all in the current block (at most
    /// [`Blocks::room`]); returns the hash after the last.
    pub fn absorb(&mut self, forms: &[u8], count: u64) -> ChainHash {
        debug_assert!(count <= self.room());
        self.hasher.update(forms);
        self.seq += count;
        self.hash = *self.hasher.finalize().as_bytes();
        if self.seq % BLOCK == 0 {
            self.hasher.reset();
            self.hasher.update(&self.hash);
        }
        self.hash
    }

    /// Takes in one record's form; returns its hash.
    pub fn push_form(&mut self, form: &[u8]) -> ChainHash {
        self.absorb(form, 1)
    }

    /// Takes in one record's body; returns its hash.
    pub fn push(&mut self, body: &[u8]) -> ChainHash {
        self.push_form(&form(body))
    }
}

/// A run's chain taken one record at a time, either kind: what a store that keeps each
/// record's own hash (PostgreSQL) or an export's reader computes.
#[derive(Clone, Debug)]
pub enum Linker {
    /// [`Chain::PerRecord`]: the hash after the last record.
    PerRecord(ChainHash),
    /// [`Chain::Blocked`] (boxed: its hasher is two kilobytes).
    Blocked(Box<Blocks>),
}

impl Linker {
    /// The chain of `run` before its first record.
    pub fn genesis(chain: Chain, run: &str) -> Self {
        match chain {
            Chain::PerRecord => Linker::PerRecord(frame::genesis(run)),
            Chain::Blocked => Linker::Blocked(Box::new(Blocks::genesis(run))),
        }
    }

    /// Takes in the next record's body; returns its chain hash.
    pub fn push(&mut self, body: &[u8]) -> ChainHash {
        match self {
            Linker::PerRecord(hash) => {
                *hash = frame::link(hash, body);
                *hash
            }
            Linker::Blocked(blocks) => blocks.push(body),
        }
    }

    /// The hash after the last record taken in.
    pub fn hash(&self) -> ChainHash {
        match self {
            Linker::PerRecord(hash) => *hash,
            Linker::Blocked(blocks) => blocks.hash(),
        }
    }

    /// Which chain this is.
    pub fn chain(&self) -> Chain {
        match self {
            Linker::PerRecord(_) => Chain::PerRecord,
            Linker::Blocked(_) => Chain::Blocked,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_first_is_the_seq_after_a_multiple_of_the_block() {
        assert_eq!(block_first(1), 1);
        assert_eq!(block_first(64), 1);
        assert_eq!(block_first(65), 65);
        assert_eq!(block_first(130), 129);
    }

    #[test]
    fn a_hash_depends_on_the_bodies_not_on_how_they_were_taken_in() {
        let bodies: Vec<Vec<u8>> = (0..200u32)
            .map(|i| {
                let len = if i % 50 == 7 {
                    5000
                } else {
                    (i * 7 % 300) as usize
                };
                vec![i as u8; len]
            })
            .collect();
        let mut one = Blocks::genesis("r");
        let each: Vec<ChainHash> = bodies.iter().map(|b| one.push(b)).collect();
        // The same bodies taken in as runs of forms that never cross a block end.
        let mut many = Blocks::genesis("r");
        let mut i = 0;
        for width in [3usize, 61, 1, 64, 17, 50, 4].iter().cycle() {
            if i == bodies.len() {
                break;
            }
            let n = (*width).min(many.room() as usize).min(bodies.len() - i);
            let forms: Vec<u8> = bodies[i..i + n].iter().flat_map(|b| form(b)).collect();
            let h = many.absorb(&forms, n as u64);
            i += n;
            assert_eq!(h, each[i - 1], "after seq {i}");
        }
        assert_eq!(many.hash(), one.hash());
        assert_ne!(each[63], each[64]);
    }

    #[test]
    fn a_block_starts_from_the_hash_that_ended_the_one_before() {
        let mut a = Blocks::genesis("r");
        for i in 0..64u8 {
            a.push(&[i]);
        }
        let mut b = Blocks::at_block_end(64, a.hash());
        assert_eq!(a.push(b"next"), b.push(b"next"));
        assert_ne!(
            Blocks::genesis("r").push(b"x"),
            Blocks::genesis("s").push(b"x")
        );
    }

    #[test]
    fn a_form_names_its_length_and_spill_and_checks_itself() {
        let f = form(b"abc");
        assert_eq!(&f[4..], &[6, b'a', b'b', b'c']);
        assert_eq!(f[..4], crc32fast::hash(&f[4..]).to_be_bytes());
        let big = vec![9u8; frame::INLINE_LIMIT + 1];
        let f = form(&big);
        assert_eq!(f.len(), 4 + 2 + 32);
        assert_eq!(&f[6..], blake3::hash(&big).as_bytes());
    }
}
