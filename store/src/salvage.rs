//! `salvage`: when sled cannot open its database and there is no archive to rebuild it from,
//! every frame still in sled's file that verifies is copied into a new store.
//!
//! Frames are self-checking: each record's tag is its chain hash (in a frame of the blocked
//! chain, a CRC-32 of the record, and the block's hash is checked as the chain is put together),
//! and a frame ends with the hash after its last record. So the file is read as bytes: wherever
//! a frame's framing fits, its records are checked against their tags; frames are linked by
//! hash (a frame's previous hash is the end hash of the one before it) and a chain is named by
//! its first frame, whose previous hash is the genesis hash of its run id. Run ids come from the
//! heads manifest, from names the caller gives, and from every name-like string in the file
//! itself (sled keeps run ids as keys). The new store holds each run up to the first frame that
//! is gone, on the chain it had, with the same chain hashes as the original.
//!
//! sled's own recovery zeroes its log from the first bad byte when it opens the file, so a
//! salvage finds most in a file no runlog has opened since the damage (or in a copy of it).

use crate::blob_dir::BlobDir;
use crate::blocks::{Blocks, Chain};
use crate::chain::{blocked_bodies, ChainWalker};
use crate::error::{Result, StoreError};
use crate::frame::{self, ChainHash};
use crate::heads::Heads;
use crate::layout::io;
use crate::log::{EventLog, Log, Options};
use crate::types::Head;
use std::collections::{HashMap, HashSet};
use std::path::Path;

/// A run copied into the new store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SalvagedRun {
    /// Run id.
    pub run: String,
    /// Its head in the new store (the same seq and chain hash as in the original).
    pub head: Head,
    /// The head seq the original store remembered, when its manifest was readable.
    pub remembered: Option<u64>,
}

/// What a salvage found and copied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Salvaged {
    /// Distinct frames that verified.
    pub frames: usize,
    /// Runs copied, by id.
    pub runs: Vec<SalvagedRun>,
    /// Chains whose run id was not found (their first frame's previous hash, in hex, and
    /// their events): `--run ID` names them.
    pub unnamed: Vec<(String, u64)>,
}

/// Both chains, since a store may hold runs of each.
const CHAINS: [Chain; 2] = [Chain::PerRecord, Chain::Blocked];

struct Found {
    chain: Chain,
    prev: ChainHash,
    end: ChainHash,
    bodies: Vec<Vec<u8>>,
    /// A blocked frame's records as the chain hashes them (checked when the chain is put
    /// together, since a frame inside a block cannot be checked alone).
    forms: Vec<u8>,
}

/// Copies every run that can be verified from the sled file of the store in `from` (or from
/// `file`, a copy of it) into a new store at `into`; `names` are run ids to look for besides
/// those found. Blobs and the heads manifest are read from `from`.
pub fn salvage(
    from: &Path,
    file: Option<&Path>,
    into: &Path,
    names: &[String],
) -> Result<Salvaged> {
    if into.exists() && std::fs::read_dir(into).map_or(true, |mut d| d.next().is_some()) {
        return Err(StoreError::Invalid(format!(
            "{} must be a new or empty directory: a salvage never writes into a store that holds runs",
            into.display()
        )));
    }
    let file = file.map_or_else(|| from.join("db/db"), Path::to_path_buf);
    let bytes = std::fs::read(&file).map_err(io("cannot read sled's file", &file))?;
    let blobs = BlobDir::new(from);
    let found = frames(&bytes, &blobs);
    let frames_found = found.len();
    let mut by_prev: HashMap<ChainHash, Found> = HashMap::new();
    let ends: HashSet<ChainHash> = found.iter().map(|f| f.end).collect();
    for f in found {
        by_prev.entry(f.prev).or_insert(f);
    }
    let remembered: HashMap<String, u64> = Heads::seqs(Heads::load(from)?);
    let starts: HashSet<ChainHash> = by_prev
        .keys()
        .filter(|prev| !ends.contains(*prev))
        .copied()
        .collect();
    let mut candidates: HashSet<String> = remembered.keys().cloned().collect();
    candidates.extend(names.iter().cloned());
    let mut named: Vec<(String, ChainHash)> = candidates
        .into_iter()
        .flat_map(|n| CHAINS.map(|chain| (n.clone(), chain.genesis(&n))))
        .filter(|(_, g)| starts.contains(g))
        .collect();
    named.extend(name_like(&bytes, &starts));
    named.sort();
    named.dedup();
    let log = Log::open(into, Options::default())?;
    let mut runs = Vec::new();
    for (run, genesis) in &named {
        let mut at = *genesis;
        let mut seq = 0u64;
        let mut head = None;
        let mut blocks = Blocks::genesis(run);
        while let Some(f) = by_prev.get(&at) {
            let count = f.bodies.len() as u64;
            if f.chain == Chain::Blocked
                && (count > blocks.room() || blocks.absorb(&f.forms, count) != f.end)
            {
                break;
            }
            let h = match head {
                None => log.create(run, f.chain, f.bodies.clone())?,
                Some(_) => log.append(run, Some(seq), f.bodies.clone())?,
            };
            seq = h.seq;
            at = f.end;
            head = Some(h);
        }
        if let Some(head) = head {
            runs.push(SalvagedRun {
                run: run.clone(),
                head,
                remembered: remembered.get(run).copied(),
            });
        }
    }
    log.close()?;
    let geneses: HashSet<ChainHash> = named.iter().map(|(_, g)| *g).collect();
    let unnamed = starts
        .iter()
        .filter(|s| !geneses.contains(*s))
        .map(|s| {
            let mut events = 0;
            let mut at = *s;
            while let Some(f) = by_prev.get(&at) {
                events += f.bodies.len() as u64;
                at = f.end;
            }
            (s.iter().map(|b| format!("{b:02x}")).collect(), events)
        })
        .collect();
    Ok(Salvaged {
        frames: frames_found,
        runs,
        unnamed,
    })
}

/// Every distinct frame in `bytes` whose records all check against their tags.
fn frames(bytes: &[u8], blobs: &BlobDir) -> Vec<Found> {
    let mut out = Vec::new();
    let mut seen = HashSet::new();
    let get = |h: &[u8; 32]| blobs.get(h);
    let mut at = 0;
    while let Some(off) = find(bytes.get(at..).unwrap_or(&[]), &frame::MAGIC) {
        let start = at + off;
        at = start + 1;
        let rest = bytes.get(start..).unwrap_or(&[]);
        let Some(len) = frame::measure(rest) else {
            continue;
        };
        let Some(candidate) = rest.get(..len) else {
            continue;
        };
        let Ok(header) = frame::header(candidate, 1) else {
            continue;
        };
        let found = if header.version == frame::VERSION {
            let mut walker = ChainWalker::detached(1);
            let mut bodies = Vec::new();
            let walked = walker.frame_with(&get, 1, candidate, true, &mut |r| {
                bodies.push(r.body.to_vec());
                Ok(true)
            });
            let (Ok(_), Some(end)) = (walked, walker.hash()) else {
                continue;
            };
            Found {
                chain: Chain::PerRecord,
                prev: header.prev,
                end,
                bodies,
                forms: Vec::new(),
            }
        } else {
            let Some(bodies) = blocked_bodies(&get, candidate) else {
                continue;
            };
            let Some(end) = candidate
                .get(len - 32..)
                .and_then(|b| <[u8; 32]>::try_from(b).ok())
            else {
                continue;
            };
            Found {
                chain: Chain::Blocked,
                prev: header.prev,
                end,
                bodies,
                forms: candidate
                    .get(frame::HEADER_LEN..len - 32)
                    .unwrap_or_default()
                    .to_vec(),
            }
        };
        if seen.insert((found.prev, found.end)) {
            out.push(found);
        }
    }
    out
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// Every substring (up to the longest run id) of every stretch of run-id characters in
/// `bytes` that is the run id of one of the chains starting at `starts`.
fn name_like(bytes: &[u8], starts: &HashSet<ChainHash>) -> Vec<(String, ChainHash)> {
    const LONGEST: usize = 128;
    let is_name = |b: &u8| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-');
    let mut out = Vec::new();
    if starts.is_empty() {
        return out;
    }
    let tokens: HashSet<&[u8]> = bytes
        .split(|b| !is_name(b))
        .filter(|t| !t.is_empty())
        .collect();
    for token in tokens {
        for i in 0..token.len() {
            for j in i + 1..=token.len().min(i + LONGEST) {
                let Some(name) = token.get(i..j).and_then(|s| std::str::from_utf8(s).ok()) else {
                    continue;
                };
                for genesis in CHAINS.map(|chain| chain.genesis(name)) {
                    if starts.contains(&genesis) {
                        out.push((name.to_owned(), genesis));
                    }
                }
            }
        }
    }
    out
}
