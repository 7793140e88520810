//! The store directory: a format marker, who owns it, sled's files and the blob area.
//!
//! ```text
//! DIR/RUNLOG_STORE   "runlog-store format N"  (what makes a directory a runlog store)
//! DIR/owner          pid and command of the process that opened it last
//! DIR/db/            the sled database
//! DIR/blobs/ab/cd…   content-addressed blobs (blake3), each fsynced before use
//! ```

use crate::error::{Result, StoreError};
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

/// The store format this build reads and writes.
pub const FORMAT: u32 = 1;
const MARKER: &str = "RUNLOG_STORE";

pub(crate) fn io<'a>(
    what: &'static str,
    path: &'a Path,
) -> impl FnOnce(std::io::Error) -> StoreError + 'a {
    move |source| StoreError::Io {
        what,
        path: path.to_path_buf(),
        source,
    }
}

/// Checks (or creates) the directory and its marker. Returns the sled path.
pub fn prepare(dir: &Path, create: bool) -> Result<PathBuf> {
    let marker = dir.join(MARKER);
    match fs::read_to_string(&marker) {
        Ok(text) => check_marker(dir, &text)?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let empty = match fs::read_dir(dir) {
                Ok(mut entries) => entries.next().is_none(),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => true,
                Err(e) => return Err(io("cannot read directory", dir)(e)),
            };
            if !empty {
                return Err(StoreError::NotAStore {
                    path: dir.to_path_buf(),
                    why: format!("it has files but no {MARKER} marker"),
                });
            }
            if !create {
                return Err(StoreError::NotAStore {
                    path: dir.to_path_buf(),
                    why: "it does not exist".into(),
                });
            }
            fs::create_dir_all(dir).map_err(io("cannot create store directory", dir))?;
            write_synced(
                &marker,
                format!("runlog-store format {FORMAT}\n").as_bytes(),
            )?;
            sync_dir(dir)?;
        }
        Err(e) => return Err(io("cannot read", &marker)(e)),
    }
    Ok(dir.join("db"))
}

fn check_marker(dir: &Path, text: &str) -> Result<()> {
    let found = text
        .trim()
        .strip_prefix("runlog-store format ")
        .and_then(|v| v.parse::<u32>().ok())
        .ok_or_else(|| StoreError::NotAStore {
            path: dir.to_path_buf(),
            why: format!("{MARKER} is unreadable"),
        })?;
    if found > FORMAT {
        return Err(StoreError::NewerFormat {
            path: dir.to_path_buf(),
            found,
            supported: FORMAT,
        });
    }
    Ok(())
}

/// Records who has the store open, for the "locked by" message of the next process.
pub fn write_owner(dir: &Path) {
    let args: Vec<String> = std::env::args().collect();
    let text = format!("pid {}: {}\n", std::process::id(), args.join(" "));
    // Best effort: the owner note only improves an error message.
    let _ = fs::write(dir.join("owner"), text);
}

/// Who last opened the store, if recorded.
pub fn read_owner(dir: &Path) -> Option<String> {
    fs::read_to_string(dir.join("owner"))
        .ok()
        .map(|s| s.trim().to_owned())
        .filter(|s| !s.is_empty())
}

/// Writes a file and fdatasyncs it.
pub fn write_synced(path: &Path, bytes: &[u8]) -> Result<()> {
    let mut f = fs::File::create(path).map_err(io("cannot create", path))?;
    f.write_all(bytes).map_err(io("cannot write", path))?;
    f.sync_data().map_err(io("cannot sync", path))
}

/// fsyncs a directory so that new entries in it survive a crash.
pub fn sync_dir(dir: &Path) -> Result<()> {
    fs::File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(io("cannot sync directory", dir))
}

/// The blob area of a store.
#[derive(Debug)]
pub struct BlobDir {
    root: PathBuf,
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

impl BlobDir {
    /// The blob area under `dir`.
    pub fn new(dir: &Path) -> Self {
        Self {
            root: dir.join("blobs"),
        }
    }

    fn path(&self, hash: &[u8; 32]) -> PathBuf {
        let h = hex(hash);
        let (a, b) = h.split_at(2);
        self.root.join(a).join(b)
    }

    /// Stores bytes under their hash: temp file, fdatasync, rename, fsync of the directory.
    pub fn put(&self, hash: &[u8; 32], bytes: &[u8]) -> Result<()> {
        let path = self.path(hash);
        if path.exists() {
            return Ok(());
        }
        let parent = path.parent().unwrap_or(&self.root).to_path_buf();
        let fresh_parent = !parent.exists();
        fs::create_dir_all(&parent).map_err(io("cannot create blob directory", &parent))?;
        let tmp = parent.join(format!(".tmp-{}", std::process::id()));
        write_synced(&tmp, bytes)?;
        fs::rename(&tmp, &path).map_err(io("cannot move blob into place", &path))?;
        sync_dir(&parent)?;
        if fresh_parent {
            sync_dir(&self.root)?;
        }
        Ok(())
    }

    /// Reads a blob.
    pub fn get(&self, hash: &[u8; 32]) -> Result<Option<Vec<u8>>> {
        let path = self.path(hash);
        match fs::read(&path) {
            Ok(b) => Ok(Some(b)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(io("cannot read blob", &path)(e)),
        }
    }
}

/// Total bytes of the files under `dir`.
pub fn dir_size(dir: &Path) -> u64 {
    let mut total = 0;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = fs::read_dir(&d) else {
            continue;
        };
        for entry in entries.flatten() {
            match entry.metadata() {
                Ok(m) if m.is_dir() => stack.push(entry.path()),
                Ok(m) => total += m.len(),
                Err(_) => {}
            }
        }
    }
    total
}
