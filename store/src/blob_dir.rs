//! The blob area of a directory store: one file per blob, named by its blake3 hash
//! (`blobs/ab/cdef…`), written to a temp file, fdatasynced, renamed and its directory fsynced
//! before it is used. A blob put as like another is kept packed (`blobs/ab/cdef….z`, see
//! [`crate::packed`]); whoever reads it gets its bytes either way.

use crate::error::{Result, StoreError};
use crate::layout::{hex, io, sync_dir, temp_name, unhex32, write_synced};
use crate::packed::{self, Header, Like};
use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

/// The name a packed blob's file has after its hash.
const PACKED: &str = ".z";

/// The blob area of a store.
#[derive(Debug)]
pub struct BlobDir {
    root: PathBuf,
    /// Fan-out directories whose entry in `root` (and `root`'s in the store) this process has
    /// made durable: a blob acknowledged in a directory another thread just created must not
    /// depend on that thread's directory sync.
    durable: std::sync::Mutex<std::collections::HashSet<PathBuf>>,
}

impl BlobDir {
    /// The blob area under `dir`.
    pub fn new(dir: &Path) -> Self {
        Self {
            root: dir.join("blobs"),
            durable: std::sync::Mutex::new(std::collections::HashSet::new()),
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

    /// The file that keeps a blob, raw or packed, if there is one.
    pub fn file(&self, hash: &[u8; 32]) -> Option<PathBuf> {
        [self.path(hash), self.packed_path(hash)]
            .into_iter()
            .find(|p| p.exists())
    }

    /// Stores bytes under their hash, as they are.
    pub fn put(&self, hash: &[u8; 32], bytes: &[u8]) -> Result<()> {
        self.put_like(hash, bytes, None, false)
    }

    /// Stores bytes under their hash packed (compressed; against `like`'s bytes when given, an
    /// earlier blob they are likely to share most of theirs with), or as they are when packing
    /// saves nothing.
    pub fn put_packed(
        &self,
        hash: &[u8; 32],
        bytes: &[u8],
        like: Option<(&[u8; 32], &[u8])>,
    ) -> Result<()> {
        self.put_like(hash, bytes, like, true)
    }

    fn put_like(
        &self,
        hash: &[u8; 32],
        bytes: &[u8],
        like: Option<(&[u8; 32], &[u8])>,
        pack: bool,
    ) -> Result<()> {
        if let Some(path) = self.file(hash) {
            // Maybe just renamed into place by another writer that has not synced yet.
            let parent = path.parent().unwrap_or(&self.root).to_path_buf();
            sync_dir(&parent)?;
            return self.make_durable(&parent);
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
        match packed {
            Some(file) => self.place(&self.packed_path(hash), &file),
            None => self.place(&self.path(hash), bytes),
        }
    }

    /// Writes a file of the blob area: temp file, fdatasync, rename, fsync of the directory.
    fn place(&self, path: &Path, bytes: &[u8]) -> Result<()> {
        let parent = path.parent().unwrap_or(&self.root).to_path_buf();
        fs::create_dir_all(&parent).map_err(io("cannot create blob directory", &parent))?;
        let tmp = parent.join(temp_name());
        write_synced(&tmp, bytes)?;
        if let Err(e) = fs::rename(&tmp, path) {
            let _ = fs::remove_file(&tmp);
            return Err(io("cannot move blob into place", path)(e));
        }
        sync_dir(&parent)?;
        self.make_durable(&parent)
    }

    /// How many bases reading the blob goes through (0 when it is kept whole), if it is here.
    fn depth(&self, hash: &[u8; 32]) -> Result<Option<u8>> {
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
        if let Some(raw) = read(&self.path(hash))? {
            return Ok(Some(raw));
        }
        // The packed files from this blob down to one kept whole, or to a raw base.
        let mut chain = Vec::new();
        let mut at = *hash;
        let root = loop {
            let path = self.packed_path(&at);
            let Some(file) = read(&path)? else {
                if chain.is_empty() {
                    return Ok(None);
                }
                match read(&self.path(&at))? {
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
