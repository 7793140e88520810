//! A model call's bodies kept as blobs. Secrets are replaced on the engine's thread (the hash
//! names the words kept); the blob is packed, written and synced on a blocking thread, so
//! that a request is stored while its model answers and the syncs of calls made at once
//! overlap (the file system joins them in one journal commit) instead of queueing behind each
//! other on the engine's thread.

use crate::error::RunnerError;
use runlog_core::model_call::Body;
use runlog_core::redact::{Counts, Redactor};
use runlog_core::Hash;
use runlog_store::{EventLog, StoreError};
use std::sync::mpsc;
use std::sync::Arc;

/// A body on its way to the store: what it will be kept as, and word once it is durable.
pub(super) struct Storing {
    body: Option<Body>,
    done: Option<mpsc::Receiver<Result<(), StoreError>>>,
}

impl Storing {
    /// The blob it will be kept as (none for an empty body).
    pub(super) fn blob(&self) -> Option<Hash> {
        self.body.as_ref().map(|b| b.blob)
    }

    /// Waits until the body is durable; what it is kept as (none for an empty body).
    pub(super) fn wait(self) -> Result<Option<Body>, RunnerError> {
        if let Some(done) = self.done {
            // A storing thread that ends without a word panicked: nothing says it was stored.
            done.recv()
                .unwrap_or(Err(StoreError::Closed))
                .map_err(RunnerError::Output)?;
        }
        Ok(self.body)
    }
}

/// `bytes` with `redactor`'s secrets replaced (counted in `counts`), set to be stored against
/// `like` (an earlier body it likely repeats most of, given up to the storing thread); with
/// the words it is kept as, for the next body to be stored against.
pub(super) fn store(
    log: &Arc<dyn EventLog>,
    redactor: &Redactor,
    bytes: &[u8],
    like: Option<(Hash, Vec<u8>)>,
    counts: &mut Counts,
) -> (Storing, Vec<u8>) {
    if bytes.is_empty() {
        let storing = Storing {
            body: None,
            done: None,
        };
        return (storing, Vec::new());
    }
    let mut text = String::from_utf8_lossy(bytes).into_owned();
    redactor.redact_in_place(&mut text, counts);
    let text = text.into_bytes();
    let body = Body {
        blob: Hash(*blake3::hash(&text).as_bytes()),
        bytes: text.len() as u64,
    };
    let (tell, done) = mpsc::sync_channel(1);
    let (log, kept) = (log.clone(), text.clone());
    let put = move || {
        let like = like.as_ref().map(|(Hash(h), b)| (h, b.as_slice()));
        let _ = tell.send(log.put_blob_like(&kept, like).map(|_| ()));
    };
    // On the runtime's pool of blocking threads (reused from call to call); outside a runtime,
    // here and now.
    match tokio::runtime::Handle::try_current() {
        Ok(runtime) => drop(runtime.spawn_blocking(put)),
        Err(_) => put(),
    }
    let storing = Storing {
        body: Some(body),
        done: Some(done),
    };
    (storing, text)
}
