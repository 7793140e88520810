//! The writer thread: group commit. Producers send appends over a channel; the writer drains
//! everything waiting, validates each against the run's head (or the head a group not yet
//! synced left), builds one frame set per batch and inserts it atomically. In durable mode the
//! group goes to a syncer thread as soon as the WAL has it, and the writer gives it to sled
//! while it is synced (sled's part of a write, tens of microseconds for a group, was on the
//! path before every sync). The syncer syncs once for every group written since its last sync
//! began, while the writer goes on writing the next, waits until sled has each group (an
//! acknowledged append is readable), and acknowledges every producer and publishes the records
//! to subscribers, in the order they were written. A failed sync poisons the store: no write is
//! acknowledged after it. A lone producer commits on its own thread (no hand-offs).

use crate::backend::{Backend, RunSlot};
use crate::blocks::{Blocks, Chain};
use crate::chain::{head_from_backend, RunHead};
use crate::error::{Result, StoreError};
use crate::frame::{self, BlockedFrameBuilder, ChainHash, FrameBuilder, Stored};
use crate::types::{Durability, Head, Record};
use crossbeam_channel::{Receiver, RecvTimeoutError, Sender};
use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard, RwLock};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// Requests at most per group commit, so one commit's latency stays bounded.
const MAX_BATCH: usize = 4096;
/// How long a sync waits for the rest of a group (a sync costs ~200 µs here).
const GATHER_WAIT: Duration = Duration::from_micros(100);

/// Size classes of [`Shared::sync_groups`]: powers of two from 1 to 128 and more.
pub(crate) const SYNC_GROUP_CLASSES: usize = 8;

/// A message to the writer.
#[derive(Debug)]
pub(crate) enum Msg {
    Append {
        run: String,
        expected: Option<u64>,
        /// How the run is chained, if this append creates it.
        chain: Chain,
        bodies: Vec<Vec<u8>>,
        reply: oneshot::Sender<Result<Head>>,
    },
    Sync {
        reply: oneshot::Sender<Result<()>>,
    },
}

#[derive(Debug)]
struct Subscriber {
    run: Option<String>,
    tx: Sender<Record>,
}

/// State shared by the log handle and its writer.
#[derive(Debug)]
pub(crate) struct Shared {
    pub backend: Box<dyn Backend>,
    heads: Mutex<HashMap<String, RunHead>>,
    /// Heads of groups written and not yet synced: the next group is staged on them.
    unsynced: Mutex<HashMap<String, RunHead>>,
    /// Appends acknowledged by each sync, by size class (see [`SYNC_GROUP_CLASSES`]).
    sync_groups: Mutex<[u64; SYNC_GROUP_CLASSES]>,
    poisoned: Mutex<Option<String>>,
    subscribers: Mutex<Vec<Subscriber>>,
    /// Held shared by a write from its look at the subscribers until its frames are readable,
    /// and alone by a new subscriber: an append is then either kept for the subscriber or
    /// readable by the time `subscribe` returns, so a reader that subscribes and then reads
    /// the log misses nothing.
    subscribing: RwLock<()>,
    next_num: Mutex<u64>,
    /// Held for each commit, by the writer or by a producer committing inline.
    commit_lock: Mutex<()>,
    /// Buffered mode: commits not yet synced.
    dirty: std::sync::atomic::AtomicBool,
    /// Appends between their call and their acknowledgement.
    pub(crate) in_flight: std::sync::atomic::AtomicUsize,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // Every critical section leaves its data consistent before anything can panic.
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Shared {
    pub(crate) fn new(backend: Box<dyn Backend>, next_num: u64) -> Self {
        Self {
            backend,
            heads: Mutex::new(HashMap::new()),
            unsynced: Mutex::new(HashMap::new()),
            sync_groups: Mutex::new([0; SYNC_GROUP_CLASSES]),
            poisoned: Mutex::new(None),
            subscribers: Mutex::new(Vec::new()),
            subscribing: RwLock::new(()),
            next_num: Mutex::new(next_num),
            commit_lock: Mutex::new(()),
            dirty: std::sync::atomic::AtomicBool::new(false),
            in_flight: std::sync::atomic::AtomicUsize::new(0),
        }
    }

    /// Commits `msg` on the caller's thread when it is the only append in flight and no commit
    /// is running: a lone producer then pays no thread hand-offs, while concurrent producers
    /// all go to the writer and share its syncs. Gives the message back otherwise.
    pub(crate) fn try_commit_inline(
        &self,
        msg: Msg,
        queued: bool,
        durability: Durability,
    ) -> Option<Msg> {
        if queued || self.in_flight.load(std::sync::atomic::Ordering::Acquire) > 1 {
            return Some(msg);
        }
        let guard = match self.commit_lock.try_lock() {
            Ok(g) => g,
            Err(std::sync::TryLockError::Poisoned(p)) => p.into_inner(),
            Err(std::sync::TryLockError::WouldBlock) => return Some(msg),
        };
        if queued {
            return Some(msg);
        }
        self.commit_locked(vec![msg], durability);
        drop(guard);
        None
    }

    fn commit_locked(&self, batch: Vec<Msg>, durability: Durability) {
        if commit(self, batch, durability) {
            self.dirty.store(true, std::sync::atomic::Ordering::Release);
        }
    }

    /// Syncs what the groups wrote (and whatever was written before the sync began); on
    /// failure poisons the store. Counts the group's appends for [`Shared::sync_groups`].
    fn sync_group(&self, groups: &[Written]) -> Result<()> {
        if let Some(cause) = self.poison_cause() {
            return Err(StoreError::Poisoned { cause });
        }
        if !groups.iter().any(Written::needs_sync) {
            return Ok(());
        }
        let started = std::time::Instant::now();
        self.backend
            .sync()
            .inspect_err(|e| self.poison(e.to_string()))?;
        let appends = appends(groups);
        tracing::trace!(
            groups = groups.len(),
            appends,
            us = started.elapsed().as_micros() as u64,
            "group commit synced"
        );
        if appends > 0 {
            let class = (usize::BITS - appends.leading_zeros()) as usize - 1;
            if let Some(n) = lock(&self.sync_groups).get_mut(class.min(SYNC_GROUP_CLASSES - 1)) {
                *n += 1;
            }
        }
        Ok(())
    }

    /// How many syncs acknowledged 1, 2–3, 4–7, … appends (the last class: that many or more).
    pub(crate) fn sync_groups(&self) -> [u64; SYNC_GROUP_CLASSES] {
        *lock(&self.sync_groups)
    }

    fn take_dirty(&self) -> bool {
        self.dirty.swap(false, std::sync::atomic::Ordering::AcqRel)
    }

    pub(crate) fn poison_cause(&self) -> Option<String> {
        lock(&self.poisoned).clone()
    }

    fn poison(&self, cause: String) {
        tracing::error!(%cause, "a sync failed: the store takes no more writes until reopened");
        lock(&self.poisoned).get_or_insert(cause);
    }

    /// The run's head, from the cache or (once) from its last frame.
    pub(crate) fn load_head(&self, run: &str) -> Result<Option<RunHead>> {
        if let Some(h) = lock(&self.heads).get(run) {
            return Ok(Some(h.clone()));
        }
        let loaded = head_from_backend(&*self.backend, run)?;
        if let Some(h) = &loaded {
            lock(&self.heads)
                .entry(run.to_owned())
                .or_insert_with(|| h.clone());
        }
        Ok(loaded)
    }

    pub(crate) fn subscribe(&self, run: Option<&str>) -> Receiver<Record> {
        let (tx, rx) = crossbeam_channel::unbounded();
        let _no_write_between = self.subscribing.write().unwrap_or_else(|p| p.into_inner());
        lock(&self.subscribers).push(Subscriber {
            run: run.map(str::to_owned),
            tx,
        });
        rx
    }

    fn has_subscribers(&self) -> bool {
        !lock(&self.subscribers).is_empty()
    }

    fn publish(&self, records: Vec<Record>) {
        let mut subs = lock(&self.subscribers);
        subs.retain(|s| {
            for r in &records {
                if s.run.as_deref().is_none_or(|run| run == r.run) && s.tx.send(r.clone()).is_err()
                {
                    return false;
                }
            }
            true
        });
    }
}

/// The writer loop; returns when every log handle is gone.
pub(crate) fn run(shared: &Shared, rx: &Receiver<Msg>, durability: Durability) {
    match durability {
        Durability::Durable => run_pipelined(shared, rx),
        Durability::Buffered { interval } => run_buffered(shared, rx, interval),
    }
}

/// Everything waiting, up to [`MAX_BATCH`] requests.
fn gather(first: Msg, rx: &Receiver<Msg>) -> Vec<Msg> {
    let mut batch = vec![first];
    batch.extend(rx.try_iter().take(MAX_BATCH - 1));
    batch
}

/// Durable mode: this thread writes each batch and hands it to a syncer thread, so that the
/// next batch is written while the last one's fdatasync runs; one sync acknowledges every group
/// written before it began. Without a syncer thread, each batch is synced here.
fn run_pipelined(shared: &Shared, rx: &Receiver<Msg>) {
    std::thread::scope(|scope| {
        let (to_sync, waiting) = crossbeam_channel::unbounded::<Written>();
        let syncer = std::thread::Builder::new()
            .name("runlog-syncer".into())
            .spawn_scoped(scope, move || sync_loop(shared, &waiting))
            .ok()
            .map(|_| to_sync);
        while let Ok(first) = rx.recv() {
            let batch = gather(first, rx);
            let _guard = lock(&shared.commit_lock);
            let Some(to_sync) = &syncer else {
                shared.commit_locked(batch, Durability::Durable);
                continue;
            };
            // The group goes to the syncer as soon as the WAL has it: its sync runs while
            // sled takes the group here.
            let mut unsent = None;
            let mut applied = None;
            let inserted = write(shared, batch, &mut |mut written| {
                let (tell, told) = crossbeam_channel::bounded(1);
                written.applied = Some(told);
                applied = Some(tell);
                if let Err(gone) = to_sync.send(written) {
                    unsent = Some(gone.into_inner());
                }
            });
            if let Some(tell) = applied {
                let _ = tell.send(inserted);
            }
            if let Some(written) = unsent {
                let synced = shared.sync_group(std::slice::from_ref(&written));
                settle(shared, vec![written], synced);
            }
        }
        // Dropping the sender ends the syncer once it has answered every group.
    });
}

/// The syncer thread: one sync for all the groups written since the last one began.
fn sync_loop(shared: &Shared, waiting: &Receiver<Written>) {
    let mut recent = [1usize; 8];
    while let Ok(first) = waiting.recv() {
        let mut groups = vec![first];
        groups.extend(waiting.try_iter());
        // Producers acknowledged together come back a few microseconds apart; when recent
        // syncs covered more appends, wait briefly for them rather than split them over two
        // syncs (which would then alternate, each covering half of them).
        let expected = recent.iter().copied().max().unwrap_or(1);
        let deadline = Instant::now() + GATHER_WAIT;
        while appends(&groups) < expected {
            match waiting.recv_deadline(deadline) {
                Ok(g) => groups.push(g),
                Err(_) => break,
            }
        }
        recent.rotate_left(1);
        if let Some(last) = recent.last_mut() {
            *last = appends(&groups);
        }
        let synced = shared.sync_group(&groups);
        settle(shared, groups, synced);
    }
}

fn appends(groups: &[Written]) -> usize {
    groups.iter().map(|g| g.staged.len()).sum()
}

/// Buffered mode: commits without a sync, synced every `interval` and when the log closes.
fn run_buffered(shared: &Shared, rx: &Receiver<Msg>, interval: Duration) {
    loop {
        match rx.recv_timeout(interval) {
            Ok(first) => {
                let batch = gather(first, rx);
                let _guard = lock(&shared.commit_lock);
                shared.commit_locked(batch, Durability::Buffered { interval });
            }
            Err(RecvTimeoutError::Timeout) => {
                let _guard = lock(&shared.commit_lock);
                if shared.take_dirty() && !sync_or_poison(shared) {
                    shared
                        .dirty
                        .store(true, std::sync::atomic::Ordering::Release);
                }
            }
            Err(RecvTimeoutError::Disconnected) => {
                let _guard = lock(&shared.commit_lock);
                if shared.take_dirty() && shared.poison_cause().is_none() {
                    sync_or_poison(shared);
                }
                return;
            }
        }
    }
}

/// Syncs; on failure poisons the store. True when the sync succeeded.
fn sync_or_poison(shared: &Shared) -> bool {
    match shared.backend.sync() {
        Ok(()) => true,
        Err(e) => {
            shared.poison(e.to_string());
            false
        }
    }
}

struct Staged {
    reply: oneshot::Sender<Result<Head>>,
    head: Head,
    records: Option<Vec<Record>>,
}

/// A group written to the WAL, waiting for the sync that makes it durable and for sled to
/// have it (readable): a group handed to the syncer hears that through `applied` as the sync
/// runs; one committed on a single thread has it before its sync (`None`).
struct Written {
    staged: Vec<Staged>,
    syncs: Vec<oneshot::Sender<Result<()>>>,
    heads: HashMap<String, RunHead>,
    applied: Option<Receiver<Result<()>>>,
}

impl Written {
    fn needs_sync(&self) -> bool {
        !self.staged.is_empty() || !self.syncs.is_empty()
    }

    /// Waits until sled has the group: an acknowledged append is readable.
    fn wait_applied(&self) -> Result<()> {
        let Some(applied) = &self.applied else {
            return Ok(());
        };
        applied.recv().unwrap_or_else(|_| {
            Err(StoreError::Poisoned {
                cause: "the writer stopped before the group was readable".into(),
            })
        })
    }
}

/// Commits one batch on this thread; returns true if it left unsynced data behind (buffered
/// mode).
fn commit(shared: &Shared, batch: Vec<Msg>, durability: Durability) -> bool {
    let mut logged = None;
    let inserted = write(shared, batch, &mut |written| logged = Some(written));
    let Some(written) = logged else {
        return false;
    };
    if let Err(e) = inserted {
        settle(shared, vec![written], Err(e));
        return false;
    }
    let must_sync = durability == Durability::Durable || !written.syncs.is_empty();
    let wrote = !written.staged.is_empty();
    if must_sync && written.needs_sync() {
        let synced = shared.sync_group(std::slice::from_ref(&written));
        settle(shared, vec![written], synced);
        false
    } else {
        settle(shared, vec![written], Ok(()));
        wrote && !must_sync
    }
}

/// Fails every request of a batch that cannot be written.
fn refuse(batch: Vec<Msg>, cause: &str) {
    for msg in batch {
        let err = StoreError::Poisoned {
            cause: cause.to_owned(),
        };
        match msg {
            Msg::Append { reply, .. } => {
                let _ = reply.send(Err(err));
            }
            Msg::Sync { reply } => {
                let _ = reply.send(Err(err));
            }
        }
    }
}

/// Validates and writes one batch (not yet durable), handing the group to `logged` once the
/// WAL has it and before sled does; returns whether sled then took it (the group is not
/// readable, nor to be acknowledged, before). Nothing is handed over when nothing of the batch
/// was written: every request is then answered here.
fn write(shared: &Shared, batch: Vec<Msg>, logged: &mut dyn FnMut(Written)) -> Result<()> {
    if let Some(cause) = shared.poison_cause() {
        refuse(batch, &cause);
        return Ok(());
    }
    let subscribing = shared.subscribing.read().unwrap_or_else(|p| p.into_inner());
    let keep_records = shared.has_subscribers();
    let mut heads: HashMap<String, RunHead> = HashMap::new();
    let mut frames = Vec::new();
    let mut staged = Vec::new();
    let mut syncs = Vec::new();
    for msg in batch {
        match msg {
            Msg::Sync { reply } => syncs.push(reply),
            Msg::Append {
                run,
                expected,
                chain,
                bodies,
                reply,
            } => match stage(
                shared,
                &mut heads,
                &run,
                (expected, chain),
                &bodies,
                &mut frames,
                keep_records,
            ) {
                Ok((head, hashes)) => {
                    let records = keep_records.then(|| records_of(&run, head.seq, hashes, bodies));
                    staged.push(Staged {
                        reply,
                        head,
                        records,
                    });
                }
                Err(e) => {
                    let _ = reply.send(Err(e));
                }
            },
        }
    }
    let mut group = Some(Written {
        staged,
        syncs,
        heads,
        applied: None,
    });
    let mut hand_over = || {
        if let Some(written) = group.take() {
            lock(&shared.unsynced)
                .extend(written.heads.iter().map(|(k, h)| (k.clone(), h.clone())));
            logged(written);
        }
    };
    let inserted = if frames.is_empty() {
        Ok(())
    } else {
        shared.backend.insert_frames(frames, &mut hand_over)
    };
    if inserted.is_ok() {
        // Nothing to insert, or a backend that did not say when its log had the frames: the
        // group is handed over all the same, to be synced before it is acknowledged.
        hand_over();
    }
    drop(subscribing);
    let outcome = inserted.map_err(|e| {
        // An insert that failed: nothing of it is known to be readable or durable.
        let cause = e.to_string();
        shared.poison(cause.clone());
        StoreError::Poisoned { cause }
    });
    match group {
        // Failed before the WAL had it: answered here.
        Some(written) => {
            settle(shared, vec![written], outcome);
            Ok(())
        }
        None => outcome,
    }
}

/// Answers the groups of one sync, in the order they were written: acknowledged and published
/// when it succeeded, failed otherwise.
fn settle(shared: &Shared, groups: Vec<Written>, synced: Result<()>) {
    match synced {
        Ok(()) => {
            for group in groups {
                if let Err(e) = group.wait_applied() {
                    fail(shared, vec![group], &e.to_string());
                    continue;
                }
                // Durable heads before the unsynced ones go, so that a batch being staged
                // meanwhile finds each run's head in one or the other; both before the replies,
                // so that a producer acknowledged finds its own append's head.
                lock(&shared.heads).extend(group.heads.iter().map(|(k, h)| (k.clone(), h.clone())));
                {
                    let mut unsynced = lock(&shared.unsynced);
                    for (run, head) in &group.heads {
                        if unsynced.get(run).is_some_and(|h| h.seq == head.seq) {
                            unsynced.remove(run);
                        }
                    }
                }
                let mut published = Vec::new();
                for s in group.staged {
                    let _ = s.reply.send(Ok(s.head));
                    published.extend(s.records.into_iter().flatten());
                }
                if !published.is_empty() {
                    shared.publish(published);
                }
                for reply in group.syncs {
                    let _ = reply.send(Ok(()));
                }
            }
        }
        Err(e) => fail(shared, groups, &e.to_string()),
    }
}

/// Answers every request of the groups with the store's poisoning.
fn fail(shared: &Shared, groups: Vec<Written>, cause: &str) {
    lock(&shared.unsynced).clear();
    let poisoned = || StoreError::Poisoned {
        cause: cause.to_owned(),
    };
    for group in groups {
        for s in group.staged {
            let _ = s.reply.send(Err(poisoned()));
        }
        for reply in group.syncs {
            let _ = reply.send(Err(poisoned()));
        }
    }
}

/// Validates one append against the run's head (its expected seq, and the chain it takes if it
/// creates the run) and adds its frames to the batch.
fn stage(
    shared: &Shared,
    heads: &mut HashMap<String, RunHead>,
    run: &str,
    (expected, chain): (Option<u64>, Chain),
    bodies: &[Vec<u8>],
    frames: &mut Vec<(u64, u64, Vec<u8>)>,
    keep_hashes: bool,
) -> Result<(Head, Vec<ChainHash>)> {
    // This batch's own appends, then groups written and not yet synced, then what is durable.
    let unsynced = || lock(&shared.unsynced).get(run).cloned();
    let current = match heads.get(run).cloned().or_else(unsynced) {
        Some(h) => Some(h),
        None => shared.load_head(run)?,
    };
    let actual = current.as_ref().map_or(0, |h| h.seq);
    if let Some(expected) = expected {
        if expected != actual {
            return Err(StoreError::Conflict {
                run: run.to_owned(),
                expected,
                actual,
            });
        }
    }
    // Blobs first: a body that cannot be stored fails the append before anything of it
    // (the run's creation, a finished frame) reaches the batch. An append is all or nothing.
    let mut spilled = Vec::with_capacity(bodies.len());
    for body in bodies {
        spilled.push(if frame::spills(body) {
            let hash = *blake3::hash(body).as_bytes();
            shared.backend.put_blob(&hash, body)?;
            Some(hash)
        } else {
            None
        });
    }
    let mut head = match current {
        // A run created and never written to takes the chain its first records ask for.
        Some(h) if h.seq == 0 => RunHead {
            hash: chain.genesis(run),
            blocks: (chain == Chain::Blocked).then(|| Blocks::genesis(run)),
            ..h
        },
        Some(h) => h,
        None => {
            let num = {
                let mut next = lock(&shared.next_num);
                let n = *next;
                *next += 1;
                n
            };
            let created_ms = SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.as_millis() as u64);
            // A failed write here may have left part of an entry in the WAL: nothing after it
            // may be acknowledged, so the store is poisoned as for a failed sync.
            shared
                .backend
                .create_run(run, RunSlot { num, created_ms })
                .inspect_err(|e| shared.poison(e.to_string()))?;
            RunHead {
                num,
                seq: 0,
                hash: chain.genesis(run),
                blocks: (chain == Chain::Blocked).then(|| Blocks::genesis(run)),
            }
        }
    };
    // Each record's chain hash, for subscribers (computed here once, by the frame builder).
    let mut hashes = Vec::with_capacity(if keep_hashes { bodies.len() } else { 0 });
    let mut mine = Vec::new();
    let first = head.seq + 1;
    match head.blocks.as_mut() {
        Some(chain) => {
            blocked_frames(
                chain,
                bodies,
                &spilled,
                keep_hashes.then_some(&mut hashes),
                &mut |seq, bytes| mine.push((head.num, seq, bytes)),
            );
            head.seq = chain.seq();
            head.hash = chain.hash();
        }
        None => {
            let (seq, hash) = per_record_frames(
                head.hash,
                first,
                bodies,
                &spilled,
                keep_hashes.then_some(&mut hashes),
                &mut |seq, bytes| mine.push((head.num, seq, bytes)),
            );
            head.seq = seq;
            head.hash = hash;
        }
    }
    frames.extend(mine);
    let out = Head {
        seq: head.seq,
        hash: head.hash,
    };
    heads.insert(run.to_owned(), head);
    Ok((out, hashes))
}

/// Frames of the per-record chain (a run recorded before the blocked chain) holding `bodies`
/// after the record at `first - 1`, whose hash is `prev`; returns the last seq and hash.
fn per_record_frames(
    prev: ChainHash,
    first: u64,
    bodies: &[Vec<u8>],
    spilled: &[Option<ChainHash>],
    mut hashes: Option<&mut Vec<ChainHash>>,
    out: &mut dyn FnMut(u64, Vec<u8>),
) -> (u64, ChainHash) {
    let mut builder = FrameBuilder::new(prev);
    let mut first = first;
    for (body, spilled) in bodies.iter().zip(spilled) {
        let stored_len = if spilled.is_some() { 32 } else { body.len() };
        if !builder.fits(stored_len) {
            let prev = builder.hash();
            let n = builder.len() as u64;
            out(
                first,
                std::mem::replace(&mut builder, FrameBuilder::new(prev)).finish(),
            );
            first += n;
        }
        match spilled {
            Some(h) => builder.push(body, Stored::Spilled(h)),
            None => builder.push(body, Stored::Inline(body)),
        }
        if let Some(hashes) = hashes.as_mut() {
            hashes.push(builder.hash());
        }
    }
    let last = (first + builder.len() as u64 - 1, builder.hash());
    out(first, builder.finish());
    last
}

/// Frames of the blocked chain holding `bodies` after `chain`, which they move on: a frame
/// ends at each block's end, or when full.
fn blocked_frames(
    chain: &mut Blocks,
    bodies: &[Vec<u8>],
    spilled: &[Option<ChainHash>],
    mut hashes: Option<&mut Vec<ChainHash>>,
    out: &mut dyn FnMut(u64, Vec<u8>),
) {
    let before = hashes.is_some().then(|| chain.clone());
    let mut builder = BlockedFrameBuilder::new(chain.hash());
    // The builder's records taken into the chain: the frame's first seq and its end hash.
    let take_in = |builder: &BlockedFrameBuilder, chain: &mut Blocks| {
        let first = chain.seq() + 1;
        (first, chain.absorb(builder.forms(), builder.len() as u64))
    };
    for (body, spilled) in bodies.iter().zip(spilled) {
        let stored_len = if spilled.is_some() { 32 } else { body.len() };
        if builder.len() as u64 == chain.room() || !builder.fits(stored_len) {
            let (first, end) = take_in(&builder, chain);
            let full = std::mem::replace(&mut builder, BlockedFrameBuilder::new(end));
            out(first, full.finish(&end));
        }
        builder.push(body, spilled.as_ref());
    }
    let (first, end) = take_in(&builder, chain);
    out(first, builder.finish(&end));
    if let (Some(hashes), Some(mut each)) = (hashes.as_mut(), before) {
        // Each record's own hash, for subscribers, from the chain before this append.
        let mut form = Vec::new();
        for (body, spilled) in bodies.iter().zip(spilled) {
            form.clear();
            frame::put_form(&mut form, body, spilled.as_ref());
            hashes.push(each.push_form(&form));
        }
    }
}

/// The records of an append ending at `last_seq`, with the chain hashes `stage` kept.
fn records_of(
    run: &str,
    last_seq: u64,
    hashes: Vec<ChainHash>,
    bodies: Vec<Vec<u8>>,
) -> Vec<Record> {
    let first = last_seq + 1 - bodies.len() as u64;
    bodies
        .into_iter()
        .zip(hashes)
        .enumerate()
        .map(|(i, (body, hash))| Record {
            run: run.to_owned(),
            seq: first + i as u64,
            hash,
            body,
        })
        .collect()
}
