//! The store directory: a format marker, who owns it, sled's files and the blob area.
//!
//! ```text
//! DIR/RUNLOG_STORE   "runlog-store format N"  (what makes a directory a runlog store)
//! DIR/owner          pid and command of the process that opened it last
//! DIR/db/            the sled database
//! DIR/blobs/ab/cd…   content-addressed blobs (blake3), each fsynced before use
//! DIR/blobs/ab/cd….z a blob kept packed (see `packed`)
//! DIR/cache/…        the snapshot cache: one checksummed file per entry, never trusted
//! ```

use crate::error::{Result, StoreError};
use std::fs;
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// The store format this build reads and writes: 2 since the blocked chain, whose frames a
/// build of format 1 would take for damage. This build reads format 1 too, and marks such a
/// store 2 when it opens it, so that an older build refuses it rather than misread it.
pub const FORMAT: u32 = 2;
const MARKER: &str = "RUNLOG_STORE";

pub(crate) fn io<'a>(
    what: &'static str,
    path: &'a Path,
) -> impl FnOnce(std::io::Error) -> StoreError + 'a {
    move |source| StoreError::Io {
        what,
        path: path.to_path_buf(),
        cause: source,
    }
}

/// The marker being written by a process creating the store (renamed into place when whole).
const CREATING: &str = "RUNLOG_STORE.creating-";

/// How long to wait for another process that is creating the same store.
const CREATION_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

/// Checks (or creates) the directory and its marker. Returns the sled path. Many processes may
/// create the same store at once (twenty `runlog run` in a new directory): the marker appears
/// whole by a rename, and a directory holding only markers being written is waited for.
pub fn prepare(dir: &Path, create: bool) -> Result<PathBuf> {
    let deadline = std::time::Instant::now() + CREATION_WAIT;
    loop {
        match prepare_once(dir, create) {
            // Another process is writing the marker, or wrote it between our two looks.
            Err(StoreError::NotAStore { .. })
                if (being_created(dir) || dir.join(MARKER).exists())
                    && std::time::Instant::now() < deadline =>
            {
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            other => return other,
        }
    }
}

/// Whether the directory holds nothing but markers other processes are writing.
fn being_created(dir: &Path) -> bool {
    fs::read_dir(dir).is_ok_and(|entries| {
        let names: Vec<String> = entries
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        !names.is_empty() && names.iter().all(|n| n.starts_with(CREATING))
    })
}

fn prepare_once(dir: &Path, create: bool) -> Result<PathBuf> {
    if dir.exists() && !dir.is_dir() {
        return Err(StoreError::NotAStore {
            path: dir.to_path_buf(),
            why: "it is a file, not a directory".into(),
        });
    }
    let marker = dir.join(MARKER);
    match fs::read_to_string(&marker) {
        Ok(text) => {
            let found = check_marker(dir, &text)?;
            check_private(dir)?;
            if found < FORMAT {
                let tmp = dir.join(temp_name());
                write_synced(&tmp, format!("runlog-store format {FORMAT}\n").as_bytes())?;
                fs::rename(&tmp, &marker).map_err(io("cannot update", &marker))?;
                sync_dir(dir)?;
            }
            keep_out_of_git(dir);
        }
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
            // Every directory this creates, and the one it is created in, gets its new entry
            // synced: a store whose name can vanish after a power cut holds nothing durable.
            let mut fresh: Vec<&Path> = dir.ancestors().take_while(|d| !d.exists()).collect();
            fs::create_dir_all(dir).map_err(io("cannot create store directory", dir))?;
            // Private whatever the umask: the log, its blobs and its sockets are reached
            // through this directory only.
            fs::set_permissions(dir, fs::Permissions::from_mode(0o700))
                .map_err(io("cannot make private", dir))?;
            // One name per opener, threads of one process included.
            static OPENERS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
            let n = OPENERS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let creating = dir.join(format!("{CREATING}{}-{n}", std::process::id()));
            write_synced(
                &creating,
                format!("runlog-store format {FORMAT}\n").as_bytes(),
            )?;
            fs::rename(&creating, &marker).map_err(io("cannot create", &marker))?;
            sync_dir(dir)?;
            keep_out_of_git(dir);
            fresh.retain(|d| !d.as_os_str().is_empty());
            for created in fresh {
                let parent = created.parent().unwrap_or(Path::new("."));
                let parent = if parent.as_os_str().is_empty() {
                    Path::new(".")
                } else {
                    parent
                };
                sync_dir(parent)?;
            }
        }
        Err(e) => return Err(io("cannot read", &marker)(e)),
    }
    Ok(dir.join("db"))
}

/// Refuses a store directory that users other than its owner can write.
fn check_private(dir: &Path) -> Result<()> {
    let mode = fs::metadata(dir)
        .map_err(io("cannot read", dir))?
        .permissions()
        .mode()
        & 0o7777;
    if mode & 0o022 != 0 {
        return Err(StoreError::Exposed {
            path: dir.to_path_buf(),
            mode,
        });
    }
    Ok(())
}

/// The format a store's marker names, refused when newer than this build's.
fn check_marker(dir: &Path, text: &str) -> Result<u32> {
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
    Ok(found)
}

/// The name of the file that keeps a directory of runlog's out of any git repository it sits in.
pub const GITIGNORE: &str = ".gitignore";

/// Keeps `dir` (a store, or this host's files of a shared store: worktrees, sockets) out of the
/// git repository it may sit in, as pytest's and Python's caches keep themselves out: a
/// `.gitignore` of `*` inside it, so `git status` never shows runlog's files, `git add -A`
/// never stages them and a run never counts them as the user's uncommitted change. Written
/// once, when missing; best effort, since nothing of the store depends on it.
pub fn keep_out_of_git(dir: &Path) {
    let path = dir.join(GITIGNORE);
    if !path.exists() {
        let _ = fs::write(
            &path,
            "# runlog's own files (its store, task worktrees): nothing here belongs in a repository\n*\n",
        );
    }
}

/// What this process is called in the owner note, once set (`runlog export`).
static OWNER: std::sync::OnceLock<String> = std::sync::OnceLock::new();

/// Names this process in the owner note (the binary's command, set once as it starts). Its
/// arguments are never written there: they may hold secrets (a header, a key's path).
pub fn name_owner(name: String) {
    let _ = OWNER.set(name);
}

/// Records who has the store open, for the "locked by" message of the next process.
pub fn write_owner(dir: &Path) {
    let name = OWNER.get().cloned().unwrap_or_else(|| {
        // Unnamed (a library's caller): the program's file name alone.
        std::env::args()
            .next()
            .map(|p| {
                Path::new(&p)
                    .file_name()
                    .map_or(p.clone(), |f| f.to_string_lossy().into_owned())
            })
            .unwrap_or_default()
    });
    let text = format!("pid {}: {name}\n", std::process::id());
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

/// Distinguishes temp files of concurrent writers in one process.
static TEMP_COUNTER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// A temp-file name no other writer (thread or process) uses at the same time.
pub fn temp_name() -> String {
    let n = TEMP_COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    format!(".tmp-{}-{n}", std::process::id())
}

pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The 32 bytes written as 64 hex digits.
pub(crate) fn unhex32(text: &str) -> Option<[u8; 32]> {
    unhex(text)?.try_into().ok()
}

/// The snapshot cache of a store: one file per entry, outside sled. sled writes pages over
/// ~128 KiB as files it never fsyncs, and after a power cut an empty one makes it drop the rest
/// of its log; snapshots are the values that grow that large, so none goes into sled. A cache
/// needs no fsync: each file carries its key and a checksum, and a torn one reads as absent.
///
/// A key's bytes up to its first NUL (a snapshot's: `snap/RUN\0`) name a directory of its
/// own, and the rest names the file in it, so listing one run's snapshots reads that run's
/// directory alone: in one directory for all, 2,000 other runs' 10,000 snapshots made one
/// query in a fresh process take 11–12 ms instead of 4.
#[derive(Debug)]
pub struct CacheDir {
    root: PathBuf,
}

/// Bytes of a cache file's check: a CRC-32 of the rest. It only tells a torn or rotten file
/// from a whole one (a snapshot names the chain hash it was taken at, which the log checks);
/// blake3 took 0.1 ms of the largest snapshot's 1.3 ms read, a CRC-32 takes 0.016.
const CHECK_LEN: usize = 4;

/// Names up to this many bytes are written in hex; longer ones by their hash.
const HEX_NAME_MAX: usize = 100;
/// How a name written as its hash begins (never a hex digit).
const HASHED_NAME: &str = "h-";
/// Left in the cache once the entries of builds that kept every entry in one directory are
/// gone (their files no longer pass the check: the value came after its key then).
const GROUPED: &str = ".grouped";

/// A key's group (up to and including its first NUL; empty without one) and the rest.
fn split_key(key: &[u8]) -> (&[u8], &[u8]) {
    match key.iter().position(|&b| b == 0) {
        Some(nul) => key.split_at(nul + 1),
        None => (&[], key),
    }
}

/// The file or directory name of `part` of a key.
fn name_of(part: &[u8]) -> String {
    if part.len() <= HEX_NAME_MAX {
        hex(part)
    } else {
        format!("{HASHED_NAME}{}", hex(blake3::hash(part).as_bytes()))
    }
}

impl CacheDir {
    /// The cache under `dir`.
    pub fn new(dir: &Path) -> Self {
        Self {
            root: dir.join("cache"),
        }
    }

    fn dir_of(&self, group: &[u8]) -> PathBuf {
        if group.is_empty() {
            self.root.clone()
        } else {
            self.root.join(name_of(group))
        }
    }

    fn path(&self, key: &[u8]) -> PathBuf {
        let (group, rest) = split_key(key);
        self.dir_of(group).join(name_of(rest))
    }

    /// Removes the entries that builds before the cache's directories wrote, once: no build
    /// reads them, and nothing else would remove them.
    pub fn remove_older_entries(&self) -> Result<()> {
        if !self.root.is_dir() || self.root.join(GROUPED).exists() {
            return Ok(());
        }
        let entries = fs::read_dir(&self.root).map_err(io("cannot list", &self.root))?;
        for entry in entries.flatten() {
            if !entry.file_type().is_ok_and(|t| t.is_file()) {
                continue;
            }
            let name = entry.file_name();
            let old = name.to_str().is_some_and(|n| match unhex(n) {
                Some(key) => key.contains(&0),
                None => n.starts_with(HASHED_NAME) && Self::read(&entry.path()).is_none(),
            });
            if old {
                let path = entry.path();
                fs::remove_file(&path).map_err(io("cannot remove", &path))?;
            }
        }
        let marker = self.root.join(GROUPED);
        fs::write(&marker, b"").map_err(io("cannot write", &marker))
    }

    /// Stores an entry (replacing one with the same key).
    pub fn put(&self, key: &[u8], value: &[u8]) -> Result<()> {
        let path = self.path(key);
        let dir = path.parent().unwrap_or(&self.root);
        fs::create_dir_all(dir).map_err(io("cannot create", dir))?;
        // The file is the value, then the key, the key's length and the check of all that: a
        // read keeps the file's bytes as the value, cut to its length, where a value behind a
        // header was copied out (a few hundred KiB of fresh memory for a large snapshot, what
        // a command's first query pays in page faults).
        let klen = (key.len() as u32).to_be_bytes();
        let mut check = crc32fast::Hasher::new();
        check.update(value);
        check.update(key);
        check.update(&klen);
        let mut tail = Vec::with_capacity(key.len() + klen.len() + CHECK_LEN);
        tail.extend_from_slice(key);
        tail.extend_from_slice(&klen);
        tail.extend_from_slice(&check.finalize().to_be_bytes());
        let tmp = dir.join(temp_name());
        let written = fs::File::create(&tmp)
            .and_then(|mut f| f.write_all(value).and_then(|()| f.write_all(&tail)))
            .and_then(|()| fs::rename(&tmp, &path));
        if let Err(e) = written {
            let _ = fs::remove_file(&tmp);
            return Err(io("cannot write cache entry", dir)(e));
        }
        Ok(())
    }

    /// The key and value in a cache file, if it is whole.
    fn read(path: &Path) -> Option<(Vec<u8>, Vec<u8>)> {
        let mut bytes = fs::read(path).ok()?;
        let checked = bytes.len().checked_sub(CHECK_LEN)?;
        let (body, check) = bytes.split_at(checked);
        if check != crc32fast::hash(body).to_be_bytes() {
            return None;
        }
        let key_end = checked.checked_sub(4)?;
        let klen = u32::from_be_bytes(body.get(key_end..)?.try_into().ok()?) as usize;
        let value_len = key_end.checked_sub(klen)?;
        let key = body.get(value_len..key_end)?.to_vec();
        bytes.truncate(value_len);
        Some((key, bytes))
    }

    /// An entry's value; `None` when absent or torn.
    pub fn get(&self, key: &[u8]) -> Option<Vec<u8>> {
        Self::read(&self.path(key)).and_then(|(k, v)| (k == key).then_some(v))
    }

    /// Removes an entry (absent already is fine), and its group's directory with its last.
    pub fn remove(&self, key: &[u8]) -> Result<()> {
        let path = self.path(key);
        match fs::remove_file(&path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                return Err(io("cannot remove cache entry", &path)(e));
            }
            _ => {}
        }
        if !split_key(key).0.is_empty() {
            if let Some(dir) = path.parent() {
                // Fails while other entries are left, as it should.
                let _ = fs::remove_dir(dir);
            }
        }
        Ok(())
    }

    /// Keys with a prefix, sorted. A prefix that is a whole group (it ends at its first NUL)
    /// lists that group's directory alone.
    pub fn keys(&self, prefix: &[u8]) -> Vec<Vec<u8>> {
        let (group, rest) = split_key(prefix);
        let mut keys = if !group.is_empty() && rest.is_empty() {
            self.keys_in(&self.dir_of(group), Some(group))
        } else {
            self.all_keys()
        };
        keys.retain(|k| k.starts_with(prefix));
        keys.sort();
        keys
    }

    /// The keys of the files in `dir`, whose group is `group` when known (otherwise each is
    /// read from its file).
    fn keys_in(&self, dir: &Path, group: Option<&[u8]>) -> Vec<Vec<u8>> {
        let Ok(entries) = fs::read_dir(dir) else {
            return Vec::new();
        };
        entries
            .flatten()
            .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
            .filter_map(|e| Self::key_of(&e, group))
            .collect()
    }

    /// The key of the cache file `entry`, from its name and its directory's `group` when both
    /// say it, otherwise from the file.
    fn key_of(entry: &fs::DirEntry, group: Option<&[u8]>) -> Option<Vec<u8>> {
        let name = entry.file_name();
        let name = name.to_str()?;
        if name.starts_with('.') {
            return None;
        }
        match (group, unhex(name)) {
            (Some(group), Some(rest)) => Some([group, &rest].concat()),
            _ => Self::read(&entry.path()).map(|(k, _)| k),
        }
    }

    /// Every key: the files outside a group, and each group's, from one read of the root.
    fn all_keys(&self) -> Vec<Vec<u8>> {
        let mut keys = Vec::new();
        for entry in fs::read_dir(&self.root).into_iter().flatten().flatten() {
            match entry.file_type() {
                Ok(t) if t.is_dir() => {
                    let name = entry.file_name();
                    let group = name.to_str().and_then(unhex);
                    keys.extend(self.keys_in(&entry.path(), group.as_deref()));
                }
                Ok(t) if t.is_file() => keys.extend(Self::key_of(&entry, Some(&[]))),
                _ => {}
            }
        }
        keys
    }
}

fn unhex(name: &str) -> Option<Vec<u8>> {
    if name.len() % 2 != 0 {
        return None;
    }
    (0..name.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(name.get(i..i + 2)?, 16).ok())
        .collect()
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

/// `YYYY-MM-DD HH:MM:SS UTC` of milliseconds since the epoch (for messages about the disk).
pub fn utc(ms: u64) -> String {
    let secs = ms / 1000;
    let (days, rest) = (secs / 86_400, secs % 86_400);
    // Days since 1970-01-01 to a civil date (Howard Hinnant's algorithm).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02}:{:02} UTC",
        rest / 3600,
        (rest / 60) % 60,
        rest % 60
    )
}

#[cfg(test)]
mod utc_tests {
    #[test]
    fn dates_are_civil() {
        assert_eq!(super::utc(0), "1970-01-01 00:00:00 UTC");
        assert_eq!(super::utc(1_795_398_000_000), "2026-11-23 01:40:00 UTC");
        assert_eq!(super::utc(951_782_400_000), "2000-02-29 00:00:00 UTC");
    }
}

#[cfg(test)]
mod cache_tests {
    #![allow(clippy::unwrap_used, clippy::indexing_slicing)]
    use super::CacheDir;

    fn entry() -> (tempfile::TempDir, CacheDir, std::path::PathBuf, Vec<u8>) {
        let dir = tempfile::tempdir().unwrap();
        let cache = CacheDir::new(dir.path());
        cache.put(b"snap/r\0k", &[9u8; 300]).unwrap();
        let path = cache.path(b"snap/r\0k");
        let bytes = std::fs::read(&path).unwrap();
        (dir, cache, path, bytes)
    }

    #[test]
    fn an_entry_cut_anywhere_or_changed_anywhere_reads_as_absent() {
        let (_dir, cache, path, bytes) = entry();
        assert_eq!(cache.get(b"snap/r\0k"), Some(vec![9u8; 300]));
        for cut in 0..bytes.len() {
            std::fs::write(&path, &bytes[..cut]).unwrap();
            assert_eq!(cache.get(b"snap/r\0k"), None, "cut at {cut}");
        }
        for at in 0..bytes.len() {
            let mut changed = bytes.clone();
            changed[at] ^= 0x40;
            std::fs::write(&path, &changed).unwrap();
            assert_eq!(cache.get(b"snap/r\0k"), None, "byte {at} changed");
        }
    }

    #[test]
    fn a_key_length_past_the_file_reads_as_absent() {
        let (_dir, cache, path, mut bytes) = entry();
        bytes[8..12].copy_from_slice(&u32::MAX.to_be_bytes());
        std::fs::write(&path, &bytes).unwrap();
        assert_eq!(cache.get(b"snap/r\0k"), None);
    }
}
