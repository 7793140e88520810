//! Reading ahead: a fold's events are read on another thread while the caller's thread folds
//! them. The reading thread scans the store (which checks every record's checksum and chain);
//! each batch of records is then decoded by whichever of the two threads is free: the reader
//! decodes it while the folder is busy (batches already waiting for it, or `meanwhile` still
//! running, as a `state_at` decoding its snapshot), and hands it over undecoded otherwise, for
//! the folder to decode when it gets to it. So both cores stay busy and a full replay takes
//! about half the sum of reading, decoding and folding. A third thread for the decoding, as
//! before, left a fifth of the two cores idle (0.55 s of processor time over 0.35 s).

use crate::error::{ReplayError, Result};
use crate::events;
use crossbeam_channel::{Receiver, Sender};
use runlog_core::Event;
use runlog_store::EventLog;
use std::sync::atomic::{AtomicBool, Ordering};

/// Records per batch handed from the reader to the folder.
const BATCH: usize = 1_024;

/// Batches waiting for the folder.
const QUEUED: usize = 4;

/// Once this many batches wait for the folder, the reader decodes the next one itself. At one,
/// the reader took too much of the decoding and became the slower side: the slower full replay
/// / SQLite was at least as high at two in each of ten interleaved rounds (median 1.60× against
/// 1.44×).
const DECODE_HERE_WAITING: usize = 2;

/// Decoded events with their seqs.
type Batch = Vec<(u64, Event)>;

/// Checked records not yet decoded: each record's seq and where its body ends in `bodies` (it
/// starts where the one before it ends).
#[derive(Default)]
struct RawBatch {
    records: Vec<(u64, usize)>,
    bodies: Vec<u8>,
}

impl RawBatch {
    fn push(&mut self, seq: u64, body: &[u8]) {
        self.bodies.extend_from_slice(body);
        self.records.push((seq, self.bodies.len()));
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

    fn each(&self, mut f: impl FnMut(u64, &[u8]) -> bool) {
        let mut start = 0;
        for (seq, end) in &self.records {
            let body = self.bodies.get(start..*end).unwrap_or_default();
            start = *end;
            if !f(*seq, body) {
                return;
            }
        }
    }
}

/// What the reading thread hands the folding one: events it decoded itself, or records for
/// the folder to decode.
enum Ahead {
    Decoded(Batch),
    Raw(RawBatch),
}

/// Reads events `from..=to` of `run` on another thread while this one runs `meanwhile`, then
/// hands each event (seq, event) with `meanwhile`'s result to `visit`, which says
/// whether to go on. Batches go back to the thread that filled them: decoded events are dropped
/// by the thread that decoded them (memory is given back fastest by the thread that took it:
/// freeing another thread's blocks was a fifth of a full replay's time) and the reader reuses
/// its buffers.
pub(crate) fn read_ahead<T>(
    log: &dyn EventLog,
    run: &str,
    (from, to): (u64, u64),
    meanwhile: impl FnOnce() -> T,
    mut visit: impl FnMut(&mut T, u64, &Event) -> bool,
) -> Result<T> {
    let (tx, rx) = crossbeam_channel::bounded::<Ahead>(QUEUED);
    let (back, folded) = crossbeam_channel::unbounded::<Batch>();
    let (raw_back, raw_free) = crossbeam_channel::unbounded::<RawBatch>();
    let folding = AtomicBool::new(false);
    std::thread::scope(|scope| {
        let folding = &folding;
        let reader = scope.spawn(move || {
            let read = read(log, run, (from, to), |full| {
                // The folder is busy (with `meanwhile`, or with batches still waiting), so
                // this one is decoded here; otherwise the folder decodes it when it gets to it.
                if !folding.load(Ordering::Relaxed) || tx.len() >= DECODE_HERE_WAITING {
                    let mut batch = match folded.try_recv() {
                        Ok(mut done) => {
                            done.clear();
                            done
                        }
                        Err(_) => Vec::with_capacity(BATCH),
                    };
                    let undecodable = decode_into(run, &full, &mut batch);
                    let fold_goes_on = tx.send(Ahead::Decoded(batch)).is_ok();
                    return undecodable.map_or(Ok(fold_goes_on.then_some(full)), Err);
                }
                Ok(tx
                    .send(Ahead::Raw(full))
                    .ok()
                    .map(|()| raw_free.try_recv().unwrap_or_default()))
            });
            release(tx, &folded);
            read
        });
        let mut made = meanwhile();
        folding.store(true, Ordering::Relaxed);
        let mut own: Batch = Vec::new();
        let mut undecodable = None;
        for ahead in rx.iter() {
            let go_on = match ahead {
                Ahead::Decoded(batch) => {
                    let go_on = visit_all(&mut made, &batch, &mut visit);
                    let _ = back.send(batch);
                    go_on
                }
                Ahead::Raw(raw) => {
                    own.clear();
                    undecodable = decode_into(run, &raw, &mut own);
                    let _ = raw_back.send(raw);
                    visit_all(&mut made, &own, &mut visit) && undecodable.is_none()
                }
            };
            if !go_on {
                break;
            }
        }
        drop(rx);
        drop(back);
        // In order: a record that does not decode here comes before any damage the reader
        // met after it.
        let read = reader.join().unwrap_or_else(|_| {
            Err(ReplayError::ReaderStopped {
                run: run.to_owned(),
            })
        });
        undecodable.map_or(read, Err).map(|()| made)
    })
}

/// Hands each event of `batch` to `visit`; false once it says to stop.
fn visit_all<T>(
    made: &mut T,
    batch: &Batch,
    visit: &mut impl FnMut(&mut T, u64, &Event) -> bool,
) -> bool {
    batch.iter().all(|(seq, event)| visit(made, *seq, event))
}

/// Scans and checks the records (the store does, a block of the chain at a time), copies them
/// into batches and hands each
/// full one to `emit`, which gives back an empty one to go on with, or `None` to stop.
fn read(
    log: &dyn EventLog,
    run: &str,
    (from, to): (u64, u64),
    mut emit: impl FnMut(RawBatch) -> Result<Option<RawBatch>>,
) -> Result<()> {
    let mut batch = RawBatch::default();
    let mut failure = None;
    log.scan_bodies(run, from, to, &mut |seq, body| {
        batch.push(seq, body);
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

/// Decodes a batch into `batch`, up to its first record that does not decode (the events
/// before it are still folded), whose error it returns.
fn decode_into(run: &str, raw: &RawBatch, batch: &mut Batch) -> Option<ReplayError> {
    let mut failed = None;
    raw.each(|seq, body| match events::decode(run, seq, body) {
        Ok(event) => {
            batch.push((seq, event));
            true
        }
        Err(e) => {
            failed = Some(e);
            false
        }
    });
    failed
}

/// Ends the folder's input and waits for it to give back its last batches, to drop them here.
fn release(to_fold: Sender<Ahead>, folded: &Receiver<Batch>) {
    drop(to_fold);
    for done in folded.iter() {
        drop(done);
    }
}
