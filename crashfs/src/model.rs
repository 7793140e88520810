//! The filesystem's state apart from FUSE: files and directories as they are now, and as a
//! power cut would leave them. A file's data and a directory's entries become durable only when
//! they are synced (`fsync`/`fdatasync` on the file, `fsync` on the directory), as POSIX
//! promises and no more: a created or renamed name needs its directory synced too.

use std::collections::{BTreeMap, HashMap};
use std::ffi::OsString;

/// The root directory's inode.
pub const ROOT: u64 = 1;

/// What a disk may do to writes that were not synced when the power went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Loss {
    /// Every unsynced write is lost (LazyFS's default).
    DropAll,
    /// The file written last keeps its unsynced writes in order up to a point, the last one
    /// torn at a 512-byte boundary.
    TornTail,
    /// Each unsynced write, of every file, independently reached the disk or not: a disk that
    /// reorders its cache, and the case `sync_file_range` cannot order.
    Reordered,
}

/// One unsynced change to a file's data.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Change {
    Write { offset: u64, bytes: Vec<u8> },
    Truncate(u64),
}

impl Change {
    fn apply(&self, data: &mut Vec<u8>) {
        match self {
            Change::Write { offset, bytes } => {
                let start = usize::try_from(*offset).unwrap_or(usize::MAX);
                let end = start.saturating_add(bytes.len());
                if data.len() < end {
                    data.resize(end, 0);
                }
                if let Some(dst) = data.get_mut(start..end) {
                    dst.copy_from_slice(bytes);
                }
            }
            Change::Truncate(len) => data.resize(usize::try_from(*len).unwrap_or(0), 0),
        }
    }
}

/// A file or a directory.
#[derive(Debug, Clone, Default)]
pub struct Node {
    /// A directory (else a regular file).
    pub dir: bool,
    /// Permission bits.
    pub mode: u16,
    /// The file's data now.
    pub data: Vec<u8>,
    durable: Vec<u8>,
    pending: Vec<Change>,
    /// Some unsynced write lands on bytes that were synced.
    overwriting: bool,
    /// The directory's entries now.
    pub entries: BTreeMap<OsString, u64>,
    durable_entries: BTreeMap<OsString, u64>,
}

/// Inodes, some reachable now, some only from what is durable.
#[derive(Debug, Clone)]
pub struct Tree {
    nodes: HashMap<u64, Node>,
    next: u64,
    /// The inode whose data was changed last (for [`Loss::TornTail`]).
    last_written: Option<u64>,
}

impl Default for Tree {
    fn default() -> Self {
        let root = Node {
            dir: true,
            mode: 0o755,
            ..Node::default()
        };
        Self {
            nodes: HashMap::from([(ROOT, root)]),
            next: ROOT + 1,
            last_written: None,
        }
    }
}

/// A POSIX error number for a failed operation.
pub type Errno = i32;

impl Tree {
    /// The node, if it exists.
    pub fn node(&self, ino: u64) -> Option<&Node> {
        self.nodes.get(&ino)
    }

    fn dir_mut(&mut self, ino: u64) -> Result<&mut Node, Errno> {
        match self.nodes.get_mut(&ino) {
            Some(n) if n.dir => Ok(n),
            Some(_) => Err(libc::ENOTDIR),
            None => Err(libc::ENOENT),
        }
    }

    fn file_mut(&mut self, ino: u64) -> Result<&mut Node, Errno> {
        match self.nodes.get_mut(&ino) {
            Some(n) if !n.dir => Ok(n),
            Some(_) => Err(libc::EISDIR),
            None => Err(libc::ENOENT),
        }
    }

    /// The inode `name` names in directory `parent`.
    pub fn lookup(&self, parent: u64, name: &OsString) -> Result<u64, Errno> {
        let dir = self.nodes.get(&parent).ok_or(libc::ENOENT)?;
        dir.entries.get(name).copied().ok_or(libc::ENOENT)
    }

    /// Makes a file or directory `name` in `parent`.
    pub fn make(
        &mut self,
        parent: u64,
        name: OsString,
        dir: bool,
        mode: u16,
    ) -> Result<u64, Errno> {
        let ino = self.next;
        let p = self.dir_mut(parent)?;
        if p.entries.contains_key(&name) {
            return Err(libc::EEXIST);
        }
        p.entries.insert(name, ino);
        self.next += 1;
        self.nodes.insert(
            ino,
            Node {
                dir,
                mode,
                ..Node::default()
            },
        );
        Ok(ino)
    }

    /// Removes the name `name` from `parent` (the node stays while a durable name may need it).
    pub fn remove(&mut self, parent: u64, name: &OsString, dir: bool) -> Result<(), Errno> {
        let ino = self.lookup(parent, name)?;
        let node = self.nodes.get(&ino).ok_or(libc::ENOENT)?;
        match (dir, node.dir) {
            (true, false) => return Err(libc::ENOTDIR),
            (false, true) => return Err(libc::EISDIR),
            (true, true) if !node.entries.is_empty() => return Err(libc::ENOTEMPTY),
            _ => {}
        }
        self.dir_mut(parent)?.entries.remove(name);
        Ok(())
    }

    /// `rename(2)`: replaces a file at the destination.
    pub fn rename(
        &mut self,
        parent: u64,
        name: &OsString,
        to_parent: u64,
        to_name: OsString,
    ) -> Result<(), Errno> {
        let ino = self.lookup(parent, name)?;
        if let Ok(existing) = self.lookup(to_parent, &to_name) {
            let replaced = self.nodes.get(&existing).ok_or(libc::ENOENT)?;
            if replaced.dir && !replaced.entries.is_empty() {
                return Err(libc::ENOTEMPTY);
            }
        }
        self.dir_mut(to_parent)?;
        self.dir_mut(parent)?.entries.remove(name);
        self.dir_mut(to_parent)?.entries.insert(to_name, ino);
        Ok(())
    }

    /// Writes `bytes` at `offset`, noting when it lands on bytes already synced (what a log
    /// that reuses its segments does, and what a power cut can then leave half done).
    pub fn write(&mut self, ino: u64, offset: u64, bytes: &[u8]) -> Result<(), Errno> {
        let change = Change::Write {
            offset,
            bytes: bytes.to_vec(),
        };
        let f = self.file_mut(ino)?;
        f.overwriting |= offset < f.durable.len() as u64;
        change.apply(&mut f.data);
        f.pending.push(change);
        self.last_written = Some(ino);
        Ok(())
    }

    /// Sets the file's length.
    pub fn truncate(&mut self, ino: u64, len: u64) -> Result<(), Errno> {
        let change = Change::Truncate(len);
        let f = self.file_mut(ino)?;
        change.apply(&mut f.data);
        f.pending.push(change);
        self.last_written = Some(ino);
        Ok(())
    }

    /// `fsync` of a file (its data) or a directory (its entries).
    pub fn sync(&mut self, ino: u64) -> Result<(), Errno> {
        let n = self.nodes.get_mut(&ino).ok_or(libc::ENOENT)?;
        if n.dir {
            n.durable_entries = n.entries.clone();
        } else {
            n.durable = n.data.clone();
            n.pending.clear();
            n.overwriting = false;
        }
        Ok(())
    }

    /// What a power cut now leaves: durable data and names, plus the unsynced writes `loss`
    /// lets through (chosen with `rng`). Only what durable names reach survives.
    pub fn after_power_loss(&self, loss: Loss, rng: &mut Rng) -> Tree {
        let mut nodes: HashMap<u64, Node> = HashMap::new();
        let mut todo = vec![ROOT];
        while let Some(ino) = todo.pop() {
            let Some(n) = self.nodes.get(&ino) else {
                continue;
            };
            if nodes.contains_key(&ino) {
                continue;
            }
            let mut data = n.durable.clone();
            match loss {
                Loss::DropAll => {}
                Loss::TornTail if self.last_written == Some(ino) && !n.pending.is_empty() => {
                    let keep = rng.below(n.pending.len() as u64 + 1) as usize;
                    for (i, change) in n.pending.iter().take(keep).enumerate() {
                        match change {
                            Change::Write { offset, bytes } if i + 1 == keep => {
                                let sectors = bytes.len().div_ceil(512) as u64;
                                let cut = (rng.below(sectors + 1) as usize * 512).min(bytes.len());
                                Change::Write {
                                    offset: *offset,
                                    bytes: bytes.get(..cut).unwrap_or(&[]).to_vec(),
                                }
                                .apply(&mut data);
                            }
                            other => other.apply(&mut data),
                        }
                    }
                }
                Loss::TornTail => {}
                Loss::Reordered => {
                    for change in &n.pending {
                        if rng.below(2) == 0 {
                            change.apply(&mut data);
                        }
                    }
                }
            }
            todo.extend(n.durable_entries.values().copied());
            nodes.insert(
                ino,
                Node {
                    dir: n.dir,
                    mode: n.mode,
                    data: data.clone(),
                    durable: data,
                    pending: Vec::new(),
                    overwriting: false,
                    entries: n.durable_entries.clone(),
                    durable_entries: n.durable_entries.clone(),
                },
            );
        }
        Tree {
            nodes,
            next: self.next,
            last_written: None,
        }
    }

    /// Paths (from the root, as now named) of the files with unsynced writes over synced bytes.
    pub fn overwriting(&self) -> Vec<String> {
        let mut found = Vec::new();
        let mut todo = vec![(ROOT, String::new())];
        while let Some((ino, path)) = todo.pop() {
            let Some(n) = self.nodes.get(&ino) else {
                continue;
            };
            if n.overwriting {
                found.push(path.clone());
            }
            for (name, child) in &n.entries {
                todo.push((*child, format!("{path}/{}", name.to_string_lossy())));
            }
        }
        found
    }
}

/// splitmix64: a seeded generator, so a failing cycle can be replayed from its seed.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator from a seed.
    pub fn new(seed: u64) -> Self {
        Self(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (0 when `n` is 0).
    pub fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            0
        } else {
            self.next_u64() % n
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name(s: &str) -> OsString {
        OsString::from(s)
    }

    #[test]
    fn unsynced_data_and_names_are_lost_synced_ones_kept() {
        let mut t = Tree::default();
        let a = t.make(ROOT, name("a"), false, 0o644).unwrap();
        t.write(a, 0, b"hello").unwrap();
        t.sync(a).unwrap();
        let after = t.after_power_loss(Loss::DropAll, &mut Rng::new(1));
        assert!(after.lookup(ROOT, &name("a")).is_err(), "name not synced");
        t.sync(ROOT).unwrap();
        t.write(a, 5, b" world").unwrap();
        let after = t.after_power_loss(Loss::DropAll, &mut Rng::new(1));
        let a2 = after.lookup(ROOT, &name("a")).unwrap();
        assert_eq!(after.node(a2).unwrap().data, b"hello");
    }

    #[test]
    fn a_torn_tail_keeps_a_sector_aligned_prefix_in_order() {
        let mut t = Tree::default();
        let a = t.make(ROOT, name("a"), false, 0o644).unwrap();
        t.sync(ROOT).unwrap();
        t.write(a, 0, &[1u8; 2000]).unwrap();
        let mut seen = std::collections::BTreeSet::new();
        for seed in 0..64 {
            let after = t.after_power_loss(Loss::TornTail, &mut Rng::new(seed));
            let len = after.node(a).unwrap().data.len();
            assert!(len % 512 == 0 || len == 2000, "{len}");
            seen.insert(len);
        }
        assert!(seen.len() > 2, "{seen:?}");
    }

    #[test]
    fn renames_and_removals_wait_for_the_directory_sync() {
        let mut t = Tree::default();
        let a = t.make(ROOT, name("tmp"), false, 0o644).unwrap();
        t.sync(ROOT).unwrap();
        t.rename(ROOT, &name("tmp"), ROOT, name("final")).unwrap();
        let after = t.after_power_loss(Loss::DropAll, &mut Rng::new(0));
        assert_eq!(after.lookup(ROOT, &name("tmp")), Ok(a));
        assert!(after.lookup(ROOT, &name("final")).is_err());
        t.sync(ROOT).unwrap();
        t.remove(ROOT, &name("final"), false).unwrap();
        let after = t.after_power_loss(Loss::DropAll, &mut Rng::new(0));
        assert_eq!(after.lookup(ROOT, &name("final")), Ok(a));
    }
}
