//! Reading ahead: a second thread scans, checks and decodes a run's events while this one folds
//! them, so a fold takes about the longer of the two rather than their sum.

use crate::error::{ReplayError, Result};
use crate::events;
use runlog_core::Event;
use runlog_store::EventLog;

/// Events per batch handed from the reader thread to the folder.
const BATCH: usize = 1_024;

/// Decoded events with their seqs and chain hashes.
type Batch = Vec<(u64, [u8; 32], Event)>;

/// Reads events `from..=to` of `run` on a second thread while this one runs `meanwhile`, then
/// hands each event (seq, chain hash, event) with `meanwhile`'s result to `visit`, which says
/// whether to go on. Folded batches go back to the reader, which drops their events: memory is
/// given back fastest by the thread that took it (freeing another thread's blocks was a fifth
/// of a full replay's time).
pub(crate) fn read_ahead<T>(
    log: &dyn EventLog,
    run: &str,
    (from, to): (u64, u64),
    meanwhile: impl FnOnce() -> T,
    mut visit: impl FnMut(&mut T, u64, &[u8; 32], &Event) -> bool,
) -> Result<T> {
    let (tx, rx) = crossbeam_channel::bounded::<Batch>(4);
    let (back, folded) = crossbeam_channel::unbounded::<Batch>();
    std::thread::scope(|scope| {
        let reader = scope.spawn(move || {
            let mut batch = Vec::with_capacity(BATCH);
            let read = events::for_each(log, run, from, to, &mut |seq, hash, event| {
                batch.push((seq, *hash, event));
                if batch.len() == BATCH {
                    let empty = match folded.try_recv() {
                        Ok(mut done) => {
                            done.clear();
                            done
                        }
                        Err(_) => Vec::with_capacity(BATCH),
                    };
                    let full = std::mem::replace(&mut batch, empty);
                    // The folder hung up (it stopped): stop reading.
                    return Ok(tx.send(full).is_ok());
                }
                Ok(true)
            });
            if read.is_ok() && !batch.is_empty() {
                let _ = tx.send(batch);
            }
            drop(tx);
            // Until the folder is done with the last batches.
            for done in folded.iter() {
                drop(done);
            }
            read
        });
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
        let read = reader.join().unwrap_or_else(|_| {
            Err(ReplayError::ReaderStopped {
                run: run.to_owned(),
            })
        });
        read.map(|()| made)
    })
}
