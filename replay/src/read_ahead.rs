//! Reading ahead: a fold's events are read on other threads while the caller's thread folds
//! them. A long fold runs in three stages: one thread scans the store (which checks every
//! record's checksum and chain), a second decodes the records, the caller folds. On two cores
//! the decoding takes whatever the other two leave idle, so a full replay takes about half
//! their sum rather than the longer of "read and decode" and "fold" (reading and decoding were
//! the longer by half). A short one (a `state_at` after its snapshot) reads and decodes on
//! one thread: a third thread costs it more than it gives.

use crate::error::{ReplayError, Result};
use crate::events;
use crossbeam_channel::{Receiver, Sender};
use runlog_core::Event;
use runlog_store::EventLog;

/// Records per batch handed from one stage to the next.
const BATCH: usize = 1_024;

/// Batches waiting between two stages.
const QUEUED: usize = 4;

/// Folds of at least this many events decode on a thread of their own.
const DECODE_APART_FROM: u64 = 64 * BATCH as u64;

/// Decoded events with their seqs and chain hashes.
type Batch = Vec<(u64, [u8; 32], Event)>;

/// Checked records not yet decoded: each record's seq, chain hash and where its body ends in
/// `bodies` (it starts where the one before it ends).
#[derive(Default)]
struct RawBatch {
    records: Vec<(u64, [u8; 32], usize)>,
    bodies: Vec<u8>,
}

impl RawBatch {
    fn push(&mut self, seq: u64, hash: &[u8; 32], body: &[u8]) {
        self.bodies.extend_from_slice(body);
        self.records.push((seq, *hash, self.bodies.len()));
    }

    fn len(&self) -> usize {
        self.records.len()
    }

    fn is_empty(&self) -> bool {
        self.records.is_empty()
    }

    fn clear(&mut self) {
        self.records.clear();
        self.bodies.clear();
    }

    fn each(&self, mut f: impl FnMut(u64, &[u8; 32], &[u8]) -> bool) {
        let mut start = 0;
        for (seq, hash, end) in &self.records {
            let body = self.bodies.get(start..*end).unwrap_or_default();
            start = *end;
            if !f(*seq, hash, body) {
                return;
            }
        }
    }
}

/// Reads events `from..=to` of `run` on other threads while this one runs `meanwhile`, then
/// hands each event (seq, chain hash, event) with `meanwhile`'s result to `visit`, which says
/// whether to go on. Batches go back to the stage that filled them: decoded events are dropped
/// by the thread that decoded them (memory is given back fastest by the thread that took it:
/// freeing another thread's blocks was a fifth of a full replay's time) and the reader reuses
/// its buffers.
pub(crate) fn read_ahead<T>(
    log: &dyn EventLog,
    run: &str,
    (from, to): (u64, u64),
    meanwhile: impl FnOnce() -> T,
    mut visit: impl FnMut(&mut T, u64, &[u8; 32], &Event) -> bool,
) -> Result<T> {
    let (tx, rx) = crossbeam_channel::bounded::<Batch>(QUEUED);
    let (back, folded) = crossbeam_channel::unbounded::<Batch>();
    std::thread::scope(|scope| {
        let reading = if to.saturating_sub(from) >= DECODE_APART_FROM {
            let (raw_tx, raw_rx) = crossbeam_channel::bounded::<RawBatch>(QUEUED);
            let (raw_back, raw_free) = crossbeam_channel::unbounded::<RawBatch>();
            let decoder = scope.spawn(move || {
                for raw in raw_rx.iter() {
                    let go_on = decode_and_send(run, &raw, &tx, &folded);
                    let _ = raw_back.send(raw);
                    if !go_on? {
                        return Ok(());
                    }
                }
                release(tx, &folded);
                Ok(())
            });
            let reader = scope.spawn(move || {
                read(log, run, (from, to), |full| {
                    Ok(raw_tx
                        .send(full)
                        .ok()
                        .map(|()| raw_free.try_recv().unwrap_or_default()))
                })
            });
            vec![decoder, reader]
        } else {
            vec![scope.spawn(move || {
                let read = read(log, run, (from, to), |full| {
                    Ok(decode_and_send(run, &full, &tx, &folded)?.then_some(full))
                });
                release(tx, &folded);
                read
            })]
        };
        let mut made = meanwhile();
        'batches: for batch in rx.iter() {
            for (seq, hash, event) in &batch {
                if !visit(&mut made, *seq, hash, event) {
                    break 'batches;
                }
            }
            let _ = back.send(batch);
        }
        drop(rx);
        drop(back);
        // In order of the stages: a record that does not decode comes before any damage the
        // reader met after it.
        let mut outcome = Ok(());
        for stage in reading {
            let ended = stage.join().unwrap_or_else(|_| {
                Err(ReplayError::ReaderStopped {
                    run: run.to_owned(),
                })
            });
            outcome = outcome.and(ended);
        }
        outcome.map(|()| made)
    })
}

/// Scans and checks the records (the store does), copies them into batches and hands each
/// full one to `emit`, which gives back an empty one to go on with, or `None` to stop.
fn read(
    log: &dyn EventLog,
    run: &str,
    (from, to): (u64, u64),
    mut emit: impl FnMut(RawBatch) -> Result<Option<RawBatch>>,
) -> Result<()> {
    let mut batch = RawBatch::default();
    let mut failure = None;
    log.scan(run, from, to, &mut |r| {
        batch.push(r.seq, r.hash, r.body);
        if batch.len() < BATCH {
            return Ok(true);
        }
        match emit(std::mem::take(&mut batch)) {
            Ok(Some(mut empty)) => {
                empty.clear();
                batch = empty;
                Ok(true)
            }
            // The fold stopped: stop reading.
            Ok(None) => Ok(false),
            Err(e) => {
                failure = Some(e);
                Ok(false)
            }
        }
    })?;
    if let Some(e) = failure {
        return Err(e);
    }
    if !batch.is_empty() {
        emit(batch)?;
    }
    Ok(())
}

/// Decodes a batch (up to its first record that does not decode: the events before it are
/// still folded) into a batch the folder gave back, or a new one, and sends it to the folder.
/// True when the fold goes on.
fn decode_and_send(
    run: &str,
    raw: &RawBatch,
    to_fold: &Sender<Batch>,
    folded: &Receiver<Batch>,
) -> Result<bool> {
    let mut batch = match folded.try_recv() {
        Ok(mut done) => {
            done.clear();
            done
        }
        Err(_) => Vec::with_capacity(BATCH),
    };
    let mut failed = None;
    raw.each(|seq, hash, body| match events::decode(run, seq, body) {
        Ok(event) => {
            batch.push((seq, *hash, event));
            true
        }
        Err(e) => {
            failed = Some(e);
            false
        }
    });
    let fold_goes_on = to_fold.send(batch).is_ok();
    failed.map_or(Ok(fold_goes_on), Err)
}

/// Ends the folder's input and waits for it to give back its last batches, to drop them here.
fn release(to_fold: Sender<Batch>, folded: &Receiver<Batch>) {
    drop(to_fold);
    for done in folded.iter() {
        drop(done);
    }
}
