//! The blob area of a directory store: one file per blob, named by its blake3 hash
//! (`blobs/ab/cdef…`), written to a temp file, fdatasynced, renamed and its directory fsynced
//! before it is used. A blob put as like another is kept packed (`blobs/ab/cdef….z`, see
//! [`crate::packed`]); whoever reads it gets its bytes either way.
//!
//! A store with a write-ahead log keeps a small blob's file there first ([`BlobDir::prepare`],
//! [`BlobDir::logged`]): the WAL's sync that acknowledges the append naming the blob makes it
//! durable, and it is read from memory until a checkpoint places the files of every blob the
//! WAL holds ([`BlobDir::place_logged`]) before sealing it. Placing a file cost two syncs
//! (the file's and its directory's), on the path of every model call's answer.

use crate::error::{Result, StoreError};
use crate::layout::{hex, io, sync_dir, temp_name, unhex32, write_synced};
use crate::packed::{self, Header, Like};
use crate::wal::Entry;
use std::collections::{BTreeSet, HashMap};
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

/// The name a packed blob's file has after its hash.
const PACKED: &str = ".z";

/// The blob area of a store.
#[derive(Debug)]
pub struct BlobDir {
    root: PathBuf,
    /// Fan-out directories whose entry in `root` (and `root`'s in the store) this process has
    /// made durable: a blob acknowledged in a directory another thread just created must not
    /// depend on that thread's directory sync.
    durable: Mutex<std::collections::HashSet<PathBuf>>,
    /// Blobs whose file only the write-ahead log holds so far, by hash: read from here.
    logged: Mutex<HashMap<[u8; 32], Logged>>,
}

/// A blob's file as the write-ahead log holds it.
#[derive(Debug, Clone)]
struct Logged {
    packed: bool,
    file: Arc<[u8]>,
}

/// A blob's file, to be kept in the blob area.
#[derive(Debug)]
pub struct Prepared {
    /// Whether it is packed (see [`crate::packed`]) or the bytes themselves.
    pub packed: bool,
    /// The file's bytes.
    pub file: Vec<u8>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // Every critical section leaves its data consistent before anything can panic.
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl BlobDir {
    /// The blob area under `dir`.
    pub fn new(dir: &Path) -> Self {
        Self {
            root: dir.join("blobs"),
            durable: Mutex::new(std::collections::HashSet::new()),
            logged: Mutex::new(HashMap::new()),
        }
    }

    fn path(&self, hash: &[u8; 32]) -> PathBuf {
        let h = hex(hash);
        let (a, b) = h.split_at(2);
        self.root.join(a).join(b)
    }

    fn packed_path(&self, hash: &[u8; 32]) -> PathBuf {
        let mut path = self.path(hash).into_os_string();
        path.push(PACKED);
        PathBuf::from(path)
    }

    fn path_as(&self, hash: &[u8; 32], packed: bool) -> PathBuf {
        match packed {
            true => self.packed_path(hash),
            false => self.path(hash),
        }
    }

    /// The file of a blob kept raw (`packed` false) or packed, from the WAL's copy or the disk.
    fn read_as(&self, hash: &[u8; 32], packed: bool) -> Result<Option<Vec<u8>>> {
        if let Some(l) = lock(&self.logged).get(hash) {
            return Ok((l.packed == packed).then(|| l.file.to_vec()));
        }
        read(&self.path_as(hash, packed))
    }

    /// The file that keeps a blob, raw or packed, if there is one.
    pub fn file(&self, hash: &[u8; 32]) -> Option<PathBuf> {
        [self.path(hash), self.packed_path(hash)]
            .into_iter()
            .find(|p| p.exists())
    }

    /// The file keeping `bytes` takes (packed when `pack`, against `like` where this area
    /// holds it), or none when the blob is here already (durable, or in the WAL ahead of
    /// whatever names it next).
    pub fn prepare(
        &self,
        hash: &[u8; 32],
        bytes: &[u8],
        like: Option<(&[u8; 32], &[u8])>,
        pack: bool,
    ) -> Result<Option<Prepared>> {
        if lock(&self.logged).contains_key(hash) {
            return Ok(None);
        }
        if let Some(path) = self.file(hash) {
            // Maybe just renamed into place by another writer that has not synced yet.
            let parent = path.parent().unwrap_or(&self.root).to_path_buf();
            sync_dir(&parent)?;
            self.make_durable(&parent)?;
            return Ok(None);
        }
        let packed = match pack {
            false => None,
            true => {
                // A base this store does not hold (forgotten meanwhile) is no base.
                let like = match like {
                    Some((h, b)) => self.depth(h)?.map(|depth| Like {
                        hash: h,
                        bytes: b,
                        depth,
                    }),
                    None => None,
                };
                packed::pack(bytes, like).map_err(io("cannot pack blob", &self.root))?
            }
        };
        Ok(Some(match packed {
            Some(file) => Prepared { packed: true, file },
            None => Prepared {
                packed: false,
                file: bytes.to_vec(),
            },
        }))
    }

    /// Places a prepared blob's file now, durably.
    pub fn place_prepared(&self, hash: &[u8; 32], prepared: &Prepared) -> Result<()> {
        self.place(&self.path_as(hash, prepared.packed), &prepared.file)
    }

    /// Takes in a blob whose entry the write-ahead log now holds (called under the WAL's lock,
    /// so a checkpoint sealing the WAL places it first); read from memory until placed.
    pub fn logged(&self, entry: Entry) {
        if let Entry::Blob { hash, packed, file } = entry {
            lock(&self.logged).insert(
                hash,
                Logged {
                    packed,
                    file: file.into(),
                },
            );
        }
    }

    /// Places the file of every blob the write-ahead log holds, durably (each file synced,
    /// then each directory once), and reads them from disk from then on.
    pub fn place_logged(&self) -> Result<()> {
        let pending: Vec<([u8; 32], Logged)> = lock(&self.logged)
            .iter()
            .map(|(h, l)| (*h, l.clone()))
            .collect();
        let mut dirs = BTreeSet::new();
        for (hash, l) in &pending {
            dirs.insert(self.write_file(&self.path_as(hash, l.packed), &l.file)?);
        }
        for dir in dirs {
            sync_dir(&dir)?;
            self.make_durable(&dir)?;
        }
        let mut logged = lock(&self.logged);
        for (hash, _) in &pending {
            logged.remove(hash);
        }
        Ok(())
    }

    /// Writes a file of the blob area: temp file, fdatasync, rename, fsync of the directory.
    fn place(&self, path: &Path, bytes: &[u8]) -> Result<()> {
        let parent = self.write_file(path, bytes)?;
        sync_dir(&parent)?;
        self.make_durable(&parent)
    }

    /// Writes a file of the blob area, synced, under its name; its directory is to be synced.
    fn write_file(&self, path: &Path, bytes: &[u8]) -> Result<PathBuf> {
        let parent = path.parent().unwrap_or(&self.root).to_path_buf();
        fs::create_dir_all(&parent).map_err(io("cannot create blob directory", &parent))?;
        let tmp = parent.join(temp_name());
        write_synced(&tmp, bytes)?;
        if let Err(e) = fs::rename(&tmp, path) {
            let _ = fs::remove_file(&tmp);
            return Err(io("cannot move blob into place", path)(e));
        }
        Ok(parent)
    }

    /// How many bases reading the blob goes through (0 when it is kept whole), if it is here.
    fn depth(&self, hash: &[u8; 32]) -> Result<Option<u8>> {
        if let Some(l) = lock(&self.logged).get(hash) {
            return Ok(match l.packed {
                false => Some(0),
                true => Header::read(&l.file).ok().map(|(h, _)| h.depth),
            });
        }
        if self.path(hash).exists() {
            return Ok(Some(0));
        }
        Ok(header(&self.packed_path(hash))?.map(|h| h.depth))
    }

    /// Makes `parent`'s entry in the blob area, and the blob area's in the store, durable once
    /// per process (whoever created them).
    fn make_durable(&self, parent: &Path) -> Result<()> {
        let known = |d: &Path| {
            self.durable
                .lock()
                .map(|set| set.contains(d))
                .unwrap_or(false)
        };
        if known(parent) {
            return Ok(());
        }
        sync_dir(&self.root)?;
        if !known(&self.root) {
            if let Some(store) = self.root.parent() {
                sync_dir(store)?;
            }
        }
        if let Ok(mut set) = self.durable.lock() {
            set.insert(self.root.clone());
            set.insert(parent.to_path_buf());
        }
        Ok(())
    }

    /// Deletes a blob, and its directory's entry durably; whether it was there.
    pub fn remove(&self, hash: &[u8; 32]) -> Result<bool> {
        let mut removed = false;
        for path in [self.path(hash), self.packed_path(hash)] {
            match fs::remove_file(&path) {
                Ok(()) => {
                    sync_dir(path.parent().unwrap_or(&self.root))?;
                    removed = true;
                }
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(io("cannot remove blob", &path)(e)),
            }
        }
        Ok(removed)
    }

    /// Deletes blobs; how many were there. A blob that stays but was packed against one of
    /// them is packed whole first, so that it reads as before.
    pub fn remove_all(&self, hashes: &BTreeSet<[u8; 32]>) -> Result<u64> {
        for (hash, path) in self.packed_files()? {
            if hashes.contains(&hash) {
                continue;
            }
            let based_on_gone = header(&path)?
                .and_then(|h| h.base)
                .is_some_and(|base| hashes.contains(&base));
            if !based_on_gone {
                continue;
            }
            let Some(bytes) = self.get(&hash)? else {
                continue;
            };
            let whole = packed::pack(&bytes, None).map_err(io("cannot pack blob", &path))?;
            // The same name, so that a kill -9 here leaves it readable either way.
            match whole {
                Some(whole) => self.place(&path, &whole)?,
                None => {
                    self.place(&self.path(&hash), &bytes)?;
                    fs::remove_file(&path).map_err(io("cannot remove blob", &path))?;
                }
            }
        }
        let mut removed = 0;
        for hash in hashes {
            removed += u64::from(self.remove(hash)?);
        }
        Ok(removed)
    }

    /// Every packed blob's hash and file.
    fn packed_files(&self) -> Result<Vec<([u8; 32], PathBuf)>> {
        let mut found = Vec::new();
        let Ok(fans) = fs::read_dir(&self.root) else {
            return Ok(found);
        };
        for fan in fans.flatten() {
            let Ok(files) = fs::read_dir(fan.path()) else {
                continue;
            };
            let prefix = fan.file_name().to_string_lossy().into_owned();
            for file in files.flatten() {
                let name = file.file_name().to_string_lossy().into_owned();
                let Some(rest) = name.strip_suffix(PACKED) else {
                    continue;
                };
                if let Some(hash) = unhex32(&format!("{prefix}{rest}")) {
                    found.push((hash, file.path()));
                }
            }
        }
        Ok(found)
    }

    /// Reads a blob: its bytes, checked against its name when it was kept packed.
    pub fn get(&self, hash: &[u8; 32]) -> Result<Option<Vec<u8>>> {
        if let Some(raw) = self.read_as(hash, false)? {
            return Ok(Some(raw));
        }
        // The packed files from this blob down to one kept whole, or to a raw base.
        let mut chain = Vec::new();
        let mut at = *hash;
        let root = loop {
            let path = self.packed_path(&at);
            let Some(file) = self.read_as(&at, true)? else {
                if chain.is_empty() {
                    return Ok(None);
                }
                match self.read_as(&at, false)? {
                    Some(raw) => break Some(raw),
                    None => return Err(damaged(&path, "the blob it was packed against is gone")),
                }
            };
            let (header, _) = Header::read(&file).map_err(io("cannot read blob", &path))?;
            chain.push((at, path, file));
            if chain.len() > usize::from(packed::MAX_DEPTH) + 1 {
                return Err(damaged(&self.packed_path(hash), "its bases go round"));
            }
            match header.base {
                Some(base) => at = base,
                None => break None,
            }
        };
        let mut bytes = root;
        for (name, path, file) in chain.iter().rev() {
            let out =
                packed::unpack(file, bytes.as_deref()).map_err(io("cannot unpack blob", path))?;
            if blake3::hash(&out).as_bytes() != name {
                return Err(damaged(path, "its bytes do not match its name"));
            }
            bytes = Some(out);
        }
        Ok(bytes)
    }
}

fn read(path: &Path) -> Result<Option<Vec<u8>>> {
    match fs::read(path) {
        Ok(b) => Ok(Some(b)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(io("cannot read blob", path)(e)),
    }
}

/// A packed file's header, read alone (none when the file is not there or not packed).
fn header(path: &Path) -> Result<Option<Header>> {
    use std::io::Read;
    let mut head = Vec::with_capacity(packed::MAX_HEADER);
    match fs::File::open(path) {
        Ok(f) => f
            .take(packed::MAX_HEADER as u64)
            .read_to_end(&mut head)
            .map_err(io("cannot read blob", path))?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io("cannot read blob", path)(e)),
    };
    Ok(Header::read(&head).ok().map(|(h, _)| h))
}

fn damaged(path: &Path, why: &str) -> StoreError {
    io("cannot read blob", path)(std::io::Error::new(
        std::io::ErrorKind::InvalidData,
        why.to_owned(),
    ))
}
