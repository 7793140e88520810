//! The FUSE side: serves a [`Tree`] at a mount point, counts the operations that change it,
//! and at a chosen one loses power: from then on every change fails with EIO and what survives
//! is fixed, ready to be mounted again.

use crate::model::{Errno, Loss, Rng, Tree};
use fuser::{
    FileAttr, FileHandle, FileType, Filesystem, FopenFlags, Generation, INodeNo, LockOwner,
    OpenFlags, RenameFlags, ReplyAttr, ReplyCreate, ReplyData, ReplyDirectory, ReplyEmpty,
    ReplyEntry, ReplyOpen, ReplyStatfs, ReplyWrite, Request, TimeOrNow, WriteFlags,
};
use std::ffi::{OsStr, OsString};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// How long the kernel may keep names and attributes. Every change goes through the kernel,
/// so its caches stay true for the life of a mount; a power cut is followed by a new mount.
const TTL: Duration = Duration::from_secs(3600);

/// When and how the power goes.
#[derive(Debug, Clone, Copy)]
pub struct Cut {
    /// The change (counted from the mount) that never happens: the power goes before it.
    pub at_change: u64,
    /// What the disk does with unsynced writes.
    pub loss: Loss,
    /// Seeds the choices `loss` makes.
    pub seed: u64,
}

/// What a mount did, for the harness.
#[derive(Debug, Default)]
pub struct State {
    /// The files now.
    pub tree: Tree,
    /// Changes served since the mount.
    pub changes: u64,
    /// The planned power cut.
    pub cut: Option<Cut>,
    /// What survived, once the power went.
    pub survived: Option<Tree>,
    /// The files that, when the power went, had unsynced writes over bytes already synced.
    pub cut_mid_overwrite: Vec<String>,
}

impl State {
    /// Counts a change; at the planned cut, loses power. Err(EIO) once the power is gone.
    fn change(&mut self) -> Result<(), Errno> {
        if self.survived.is_some() {
            return Err(libc::EIO);
        }
        self.changes += 1;
        if let Some(cut) = self.cut.filter(|c| c.at_change <= self.changes) {
            self.power_off(cut.loss, cut.seed);
            return Err(libc::EIO);
        }
        Ok(())
    }

    /// Loses power now (if it has not gone already).
    pub fn power_off(&mut self, loss: Loss, seed: u64) {
        if self.survived.is_none() {
            self.cut_mid_overwrite = self.tree.overwriting();
            self.survived = Some(self.tree.after_power_loss(loss, &mut Rng::new(seed)));
        }
    }
}

/// The filesystem handed to fuser.
#[derive(Debug, Clone)]
pub struct CrashFs {
    state: Arc<Mutex<State>>,
}

impl CrashFs {
    /// Serves `tree`, losing power as `cut` says.
    pub fn new(tree: Tree, cut: Option<Cut>) -> Self {
        Self {
            state: Arc::new(Mutex::new(State {
                tree,
                cut,
                ..State::default()
            })),
        }
    }

    /// The shared state (the harness reads it and can cut the power itself).
    pub fn state(&self) -> Arc<Mutex<State>> {
        Arc::clone(&self.state)
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn attr(tree: &Tree, ino: u64) -> Result<FileAttr, Errno> {
        let n = tree.node(ino).ok_or(libc::ENOENT)?;
        let size = n.data.len() as u64;
        Ok(FileAttr {
            ino: INodeNo(ino),
            size,
            blocks: size.div_ceil(512),
            atime: UNIX_EPOCH,
            mtime: UNIX_EPOCH,
            ctime: UNIX_EPOCH,
            crtime: UNIX_EPOCH,
            kind: if n.dir {
                FileType::Directory
            } else {
                FileType::RegularFile
            },
            perm: n.mode,
            nlink: if n.dir { 2 } else { 1 },
            uid: 0,
            gid: 0,
            rdev: 0,
            blksize: 4096,
            flags: 0,
        })
    }

    /// Makes a node and answers with its attributes.
    fn make(&self, parent: INodeNo, name: &OsStr, dir: bool, mode: u32) -> Result<FileAttr, Errno> {
        let mut s = self.lock();
        s.change()?;
        let perm = u16::try_from(mode & 0o7777).unwrap_or(0o644);
        let ino = s.tree.make(parent.0, name.to_owned(), dir, perm)?;
        Self::attr(&s.tree, ino)
    }

    /// Runs a change under the lock, counting it first.
    fn changing(&self, f: impl FnOnce(&mut Tree) -> Result<(), Errno>) -> Result<(), Errno> {
        let mut s = self.lock();
        s.change()?;
        f(&mut s.tree)
    }
}

fn errno(e: Errno) -> fuser::Errno {
    fuser::Errno::from_i32(e)
}

fn attr(reply: ReplyAttr, r: Result<FileAttr, Errno>) {
    match r {
        Ok(attr) => reply.attr(&TTL, &attr),
        Err(e) => reply.error(errno(e)),
    }
}

fn entry(reply: ReplyEntry, r: Result<FileAttr, Errno>) {
    match r {
        Ok(attr) => reply.entry(&TTL, &attr, Generation(0)),
        Err(e) => reply.error(errno(e)),
    }
}

fn empty(reply: ReplyEmpty, r: Result<(), Errno>) {
    match r {
        Ok(()) => reply.ok(),
        Err(e) => reply.error(errno(e)),
    }
}

impl Filesystem for CrashFs {
    fn lookup(&self, _req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEntry) {
        let s = self.lock();
        let found = s.tree.lookup(parent.0, &name.to_owned());
        entry(reply, found.and_then(|ino| Self::attr(&s.tree, ino)));
    }

    fn getattr(&self, _req: &Request, ino: INodeNo, _fh: Option<FileHandle>, reply: ReplyAttr) {
        attr(reply, Self::attr(&self.lock().tree, ino.0));
    }

    fn setattr(
        &self,
        _req: &Request,
        ino: INodeNo,
        _mode: Option<u32>,
        _uid: Option<u32>,
        _gid: Option<u32>,
        size: Option<u64>,
        _atime: Option<TimeOrNow>,
        _mtime: Option<TimeOrNow>,
        _ctime: Option<SystemTime>,
        _fh: Option<FileHandle>,
        _crtime: Option<SystemTime>,
        _chgtime: Option<SystemTime>,
        _bkuptime: Option<SystemTime>,
        _flags: Option<fuser::BsdFileFlags>,
        reply: ReplyAttr,
    ) {
        let mut s = self.lock();
        let done = match size {
            Some(len) => s.change().and_then(|()| s.tree.truncate(ino.0, len)),
            None => Ok(()),
        };
        attr(reply, done.and_then(|()| Self::attr(&s.tree, ino.0)));
    }

    fn mkdir(
        &self,
        _req: &Request,
        parent: INodeNo,
        name: &OsStr,
        mode: u32,
        _umask: u32,
        reply: ReplyEntry,
    ) {
        entry(reply, self.make(parent, name, true, mode));
    }

    fn create(
        &self,
        _req: &Request,
        parent: INodeNo,
        name: &OsStr,
        mode: u32,
        _umask: u32,
        _flags: i32,
        reply: ReplyCreate,
    ) {
        match self.make(parent, name, false, mode) {
            Ok(attr) => reply.created(
                &TTL,
                &attr,
                Generation(0),
                FileHandle(0),
                FopenFlags::empty(),
            ),
            Err(e) => reply.error(errno(e)),
        }
    }

    fn unlink(&self, _req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEmpty) {
        empty(
            reply,
            self.changing(|t| t.remove(parent.0, &name.to_owned(), false)),
        );
    }

    fn rmdir(&self, _req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEmpty) {
        empty(
            reply,
            self.changing(|t| t.remove(parent.0, &name.to_owned(), true)),
        );
    }

    fn rename(
        &self,
        _req: &Request,
        parent: INodeNo,
        name: &OsStr,
        newparent: INodeNo,
        newname: &OsStr,
        flags: RenameFlags,
        reply: ReplyEmpty,
    ) {
        if !flags.is_empty() {
            return reply.error(fuser::Errno::EINVAL);
        }
        empty(
            reply,
            self.changing(|t| {
                t.rename(parent.0, &name.to_owned(), newparent.0, newname.to_owned())
            }),
        );
    }

    fn open(&self, _req: &Request, ino: INodeNo, _flags: OpenFlags, reply: ReplyOpen) {
        match self.lock().tree.node(ino.0) {
            // The page cache stays valid across opens: only writes through it change a file.
            Some(_) => reply.opened(FileHandle(0), FopenFlags::FOPEN_KEEP_CACHE),
            None => reply.error(fuser::Errno::ENOENT),
        }
    }

    fn read(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        size: u32,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        reply: ReplyData,
    ) {
        let s = self.lock();
        let Some(n) = s.tree.node(ino.0) else {
            return reply.error(fuser::Errno::ENOENT);
        };
        let start = usize::try_from(offset)
            .unwrap_or(usize::MAX)
            .min(n.data.len());
        let end = start.saturating_add(size as usize).min(n.data.len());
        reply.data(n.data.get(start..end).unwrap_or(&[]));
    }

    fn write(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        data: &[u8],
        _write_flags: WriteFlags,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        reply: ReplyWrite,
    ) {
        match self.changing(|t| t.write(ino.0, offset, data)) {
            Ok(()) => reply.written(u32::try_from(data.len()).unwrap_or(u32::MAX)),
            Err(e) => reply.error(errno(e)),
        }
    }

    fn flush(
        &self,
        _req: &Request,
        _ino: INodeNo,
        _fh: FileHandle,
        _lock_owner: LockOwner,
        reply: ReplyEmpty,
    ) {
        reply.ok();
    }

    fn fsync(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        _datasync: bool,
        reply: ReplyEmpty,
    ) {
        empty(reply, self.changing(|t| t.sync(ino.0)));
    }

    fn opendir(&self, _req: &Request, ino: INodeNo, _flags: OpenFlags, reply: ReplyOpen) {
        match self.lock().tree.node(ino.0) {
            Some(n) if n.dir => reply.opened(FileHandle(0), FopenFlags::empty()),
            Some(_) => reply.error(fuser::Errno::ENOTDIR),
            None => reply.error(fuser::Errno::ENOENT),
        }
    }

    fn readdir(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        mut reply: ReplyDirectory,
    ) {
        let s = self.lock();
        let Some(dir) = s.tree.node(ino.0) else {
            return reply.error(fuser::Errno::ENOENT);
        };
        let mut all: Vec<(u64, FileType, OsString)> = vec![
            (ino.0, FileType::Directory, ".".into()),
            (ino.0, FileType::Directory, "..".into()),
        ];
        for (name, child) in &dir.entries {
            let kind = match s.tree.node(*child) {
                Some(n) if n.dir => FileType::Directory,
                _ => FileType::RegularFile,
            };
            all.push((*child, kind, name.clone()));
        }
        let skip = usize::try_from(offset).unwrap_or(usize::MAX);
        for (i, (child, kind, name)) in all.into_iter().enumerate().skip(skip) {
            if reply.add(INodeNo(child), i as u64 + 1, kind, name) {
                break;
            }
        }
        reply.ok();
    }

    fn fsyncdir(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        _datasync: bool,
        reply: ReplyEmpty,
    ) {
        self.fsync(_req, ino, _fh, _datasync, reply);
    }

    fn statfs(&self, _req: &Request, _ino: INodeNo, reply: ReplyStatfs) {
        let blocks = 1 << 24;
        reply.statfs(blocks, blocks, blocks, 1 << 20, 1 << 20, 4096, 255, 4096);
    }
}
