//! What the store remembers of every run outside sled: its slot, head seq and head hash.
//!
//! sled's recovery treats a bad checksum as the end of its log and drops everything after it,
//! so a flipped byte can make a whole run vanish, or end early, without a word; the chain alone
//! cannot notice a run that is gone or cut short. This manifest (`DIR/heads`) is kept up to
//! date in memory from every write-ahead-log entry and written at each checkpoint, after sled
//! is synced and before the WAL is sealed into the archive: the file plus the WAL always cover
//! every acknowledged commit. sled holding less of a run than remembered is damage.
//!
//! ```text
//! "RLHEADS1" written_ms:u64be count:u32be
//! count × ( num:u64be created_ms:u64be seq:u64be hash:[32] name_len:u16be name )
//! check:[32] = blake3(everything before it)
//! ```

use crate::error::{Damage, Result};
use crate::frame::{self, ChainHash};
use crate::layout::{io, sync_dir, temp_name, write_synced};
use crate::wal::Entry;
use std::collections::{BTreeMap, HashMap};
use std::path::Path;

const MAGIC: &[u8; 8] = b"RLHEADS1";

/// A run's internal number and creation time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunSlot {
    /// Fixed-width key prefix of the run's frames.
    pub num: u64,
    /// Milliseconds since the epoch when the run was created.
    pub created_ms: u64,
}

/// The manifest's file name in a store directory.
pub const FILE: &str = "heads";

/// One run as the manifest remembers it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Remembered {
    /// Run id.
    pub run: String,
    /// Its slot (number and creation time).
    pub slot: RunSlot,
    /// The last seq committed (0: created, nothing appended yet).
    pub seq: u64,
    /// The chain hash after it.
    pub hash: ChainHash,
}

/// Every run's remembered head.
#[derive(Debug, Clone, Default)]
pub struct Heads {
    by_num: BTreeMap<u64, Remembered>,
    by_run: HashMap<String, u64>,
    /// When the file this was loaded from was written (ms since the epoch; 0 if never).
    written_ms: u64,
    /// Changed since it was loaded or saved.
    dirty: bool,
}

impl Heads {
    /// Takes in one write-ahead-log entry (a created run, or frames moving heads forward).
    pub fn note(&mut self, entry: &Entry) {
        match entry {
            Entry::Run {
                name,
                num,
                created_ms,
            } => {
                let slot = RunSlot {
                    num: *num,
                    created_ms: *created_ms,
                };
                self.by_run.insert(name.clone(), *num);
                self.by_num.entry(*num).or_insert_with(|| Remembered {
                    run: name.clone(),
                    slot,
                    seq: 0,
                    hash: frame::genesis(name),
                });
                self.dirty = true;
            }
            Entry::Frames(frames) => {
                for (num, first, bytes) in frames {
                    self.frame(*num, *first, bytes);
                }
            }
            Entry::Blob { .. } => {}
        }
    }

    /// Takes in one frame of run number `num` starting at `first`.
    pub fn frame(&mut self, num: u64, first: u64, bytes: &[u8]) {
        let Some((last, hash)) = frame_end(first, bytes) else {
            return;
        };
        if let Some(r) = self.by_num.get_mut(&num).filter(|r| last > r.seq) {
            r.seq = last;
            r.hash = hash;
            self.dirty = true;
        }
    }

    /// The run's remembered head.
    pub fn get(&self, run: &str) -> Option<&Remembered> {
        self.by_run.get(run).and_then(|n| self.by_num.get(n))
    }

    /// Every remembered run, by run number.
    pub fn all(&self) -> impl Iterator<Item = &Remembered> {
        self.by_num.values()
    }

    /// When the manifest these heads were read from was written (0: never written).
    pub fn written_ms(&self) -> u64 {
        self.written_ms
    }

    /// Reads `DIR/heads`: whether there is none, or it does not check out.
    pub fn load(dir: &Path) -> Result<Manifest> {
        let path = dir.join(FILE);
        let bytes = match std::fs::read(&path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Manifest::Missing),
            Err(e) => return Err(io("cannot read the heads manifest", &path)(e)),
        };
        Ok(match decode(&bytes) {
            Ok(heads) => Manifest::Read(heads),
            Err(damage) => Manifest::Damaged(damage),
        })
    }

    /// The remembered heads, if the manifest was read.
    pub fn seqs(manifest: Manifest) -> std::collections::HashMap<String, u64> {
        match manifest {
            Manifest::Read(heads) => heads.all().map(|r| (r.run.clone(), r.seq)).collect(),
            Manifest::Missing | Manifest::Damaged(_) => std::collections::HashMap::new(),
        }
    }

    /// Writes `DIR/heads` even if nothing changed: the first manifest of a store's archive.
    pub fn create(&mut self, dir: &Path) -> Result<()> {
        self.dirty = true;
        self.save(dir)
    }

    /// Writes `DIR/heads` atomically (a synced temp file renamed over it) if anything changed.
    pub fn save(&mut self, dir: &Path) -> Result<()> {
        if !self.dirty {
            return Ok(());
        }
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64);
        let tmp = dir.join(temp_name());
        write_synced(&tmp, &self.encode(now))?;
        let path = dir.join(FILE);
        std::fs::rename(&tmp, &path).map_err(io("cannot replace the heads manifest", &path))?;
        sync_dir(dir)?;
        self.written_ms = now;
        self.dirty = false;
        Ok(())
    }

    fn encode(&self, written_ms: u64) -> Vec<u8> {
        let mut out = Vec::with_capacity(24 + self.by_num.len() * 96);
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&written_ms.to_be_bytes());
        out.extend_from_slice(&(self.by_num.len() as u32).to_be_bytes());
        for r in self.by_num.values() {
            out.extend_from_slice(&r.slot.num.to_be_bytes());
            out.extend_from_slice(&r.slot.created_ms.to_be_bytes());
            out.extend_from_slice(&r.seq.to_be_bytes());
            out.extend_from_slice(&r.hash);
            let name = r.run.as_bytes();
            out.extend_from_slice(&(name.len() as u16).to_be_bytes());
            out.extend_from_slice(name);
        }
        let check = blake3::hash(&out);
        out.extend_from_slice(check.as_bytes());
        out
    }
}

/// What `DIR/heads` holds.
#[derive(Debug)]
pub enum Manifest {
    /// There is none.
    Missing,
    /// It checks out.
    Read(Heads),
    /// It does not.
    Damaged(ManifestDamage),
}

/// Why the heads manifest does not check out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ManifestDamage(&'static str);

impl From<&'static str> for ManifestDamage {
    fn from(why: &'static str) -> Self {
        Self(why)
    }
}

fn decode(bytes: &[u8]) -> std::result::Result<Heads, ManifestDamage> {
    let body_len = bytes
        .len()
        .checked_sub(32)
        .ok_or("shorter than its checksum")?;
    let (body, check) = bytes.split_at(body_len);
    if blake3::hash(body).as_bytes() != check {
        return Err("its checksum does not match its contents".into());
    }
    if body.get(..8) != Some(&MAGIC[..]) {
        return Err("it does not start with the manifest's magic bytes".into());
    }
    let mut r = Reader { bytes: body, at: 8 };
    let written_ms = r.u64()?;
    let count = r.u32()?;
    let mut heads = Heads {
        written_ms,
        ..Heads::default()
    };
    for _ in 0..count {
        let num = r.u64()?;
        let created_ms = r.u64()?;
        let seq = r.u64()?;
        let hash: ChainHash = r.take(32)?.try_into().map_err(|_| "short hash")?;
        let len = usize::from(r.u16()?);
        let run = String::from_utf8(r.take(len)?.to_vec()).map_err(|_| "a run id is not UTF-8")?;
        heads.by_run.insert(run.clone(), num);
        heads.by_num.insert(
            num,
            Remembered {
                run,
                slot: RunSlot { num, created_ms },
                seq,
                hash,
            },
        );
    }
    if r.at != body.len() {
        return Err("it has bytes after its last run".into());
    }
    Ok(heads)
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> std::result::Result<&'a [u8], ManifestDamage> {
        let out = self
            .bytes
            .get(self.at..self.at + n)
            .ok_or("it ends in the middle of a run")?;
        self.at += n;
        Ok(out)
    }
    fn u64(&mut self) -> std::result::Result<u64, ManifestDamage> {
        Ok(u64::from_be_bytes(
            self.take(8)?.try_into().map_err(|_| "short")?,
        ))
    }
    fn u32(&mut self) -> std::result::Result<u32, ManifestDamage> {
        Ok(u32::from_be_bytes(
            self.take(4)?.try_into().map_err(|_| "short")?,
        ))
    }
    fn u16(&mut self) -> std::result::Result<u16, ManifestDamage> {
        Ok(u16::from_be_bytes(
            self.take(2)?.try_into().map_err(|_| "short")?,
        ))
    }
}

/// The last seq of a frame starting at `first` and the chain hash after it.
pub fn frame_end(first: u64, bytes: &[u8]) -> Option<(u64, ChainHash)> {
    let header = frame::header(bytes, first).ok()?;
    let hash = bytes.get(bytes.len().checked_sub(32)?..)?.try_into().ok()?;
    Some((first + u64::from(header.count) - 1, hash))
}

/// What is wrong with a run whose stored end (`found`: last seq and hash, `None` if sled holds
/// nothing of it) falls short of what the store remembers, as damage at the first missing seq.
pub fn shortfall(
    remembered: &Remembered,
    found: Option<(u64, ChainHash)>,
    written_ms: u64,
) -> Option<Damage> {
    let (seq, hash) = found.unwrap_or((0, frame::genesis(&remembered.run)));
    let since = if written_ms == 0 {
        "since this process opened the store".to_owned()
    } else {
        format!("at the checkpoint of {}", crate::layout::utc(written_ms))
    };
    let repair = "`runlog repair` rebuilds it from the store's archive";
    if seq < remembered.seq {
        let held = if found.is_none() {
            "sled holds none of its events".to_owned()
        } else {
            format!("sled holds seqs 1..={seq}")
        };
        return Some(Damage::corrupt(
            seq + 1,
            format!(
                "{held}, but the store remembered head seq {} {since}: seqs {}..={} are missing; {repair}",
                remembered.seq,
                seq + 1,
                remembered.seq
            ),
        ));
    }
    (seq == remembered.seq && hash != remembered.hash).then(|| {
        Damage::corrupt(
            seq,
            format!(
                "the head hash at seq {seq} is not the one the store remembered {since}; {repair}"
            ),
        )
    })
}
