//! `GET /v1/runs/{run}/stream`: a run's events as Server-Sent Events, the history from `from`
//! (or after `Last-Event-ID`) and then each event as it is appended. Each event's id is its
//! seq, so a client that reconnects with `Last-Event-ID` misses nothing and sees nothing twice.
//! A client more than [`MAX_LAG`] events behind is disconnected, never waited for.

use crate::render::event::EventLine;
use axum::response::sse::{Event as Sse, KeepAlive};
use axum::response::Sse as SseResponse;
use futures_util::stream::{self, Stream};
use runlog_core::codec::decode_event;
use runlog_store::{EventLog, Store};
use std::collections::HashMap;
use std::convert::Infallible;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::mpsc;

/// Events a stream may fall behind the run before it is closed.
const MAX_LAG: usize = 10_000;

fn sse(seq: u64, body: &[u8]) -> Option<Sse> {
    let e = decode_event(body).ok()?;
    let data = serde_json::to_string(&EventLine::of(seq, &e)).ok()?;
    Some(
        Sse::default()
            .id(seq.to_string())
            .event(e.kind.name())
            .data(data),
    )
}

/// Event streams one client may hold open at once: a TCP client by its address, every client
/// of the Unix socket (the store's owner) together.
pub const MAX_STREAMS_PER_CLIENT: usize = 32;

/// The streams open, per client.
#[derive(Debug, Default)]
pub struct Streams {
    open: Mutex<HashMap<Option<IpAddr>, usize>>,
}

/// A client's place for one stream, given back when the stream ends.
#[derive(Debug)]
pub struct Slot {
    streams: Arc<Streams>,
    client: Option<IpAddr>,
}

impl Streams {
    fn counts(&self) -> std::sync::MutexGuard<'_, HashMap<Option<IpAddr>, usize>> {
        self.open.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A place for one more stream of `client` (`None`: the Unix socket), unless it holds
    /// [`MAX_STREAMS_PER_CLIENT`] already.
    pub fn take(self: &Arc<Self>, client: Option<IpAddr>) -> Option<Slot> {
        let mut counts = self.counts();
        let open = counts.entry(client).or_insert(0);
        if *open >= MAX_STREAMS_PER_CLIENT {
            return None;
        }
        *open += 1;
        Some(Slot {
            streams: self.clone(),
            client,
        })
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut counts = self.streams.counts();
        if let Some(open) = counts.get_mut(&self.client) {
            *open = open.saturating_sub(1);
            if *open == 0 {
                counts.remove(&self.client);
            }
        }
    }
}

/// The stream of `run` from seq `from`, holding `slot` while it lasts.
pub fn events(
    store: Arc<Store>,
    run: String,
    from: u64,
    slot: Slot,
) -> SseResponse<impl Stream<Item = Result<Sse, Infallible>>> {
    let (tx, rx) = mpsc::channel::<Sse>(MAX_LAG);
    // The store's calls block: a thread reads the history, then follows the subscription
    // (taken first, so nothing appended in between is missed).
    let _ = std::thread::Builder::new()
        .name("runlog-api-stream".into())
        .spawn(move || {
            let appended = store.subscribe(Some(&run));
            let mut last = from.saturating_sub(1);
            let history = store.read(
                &run,
                from.max(1),
                u64::MAX,
                runlog_store::Direction::Forward,
            );
            for r in history.unwrap_or_default() {
                last = r.seq;
                let Some(e) = sse(r.seq, &r.body) else { return };
                // The history waits for the client: only this thread is held up.
                if tx.blocking_send(e).is_err() {
                    return;
                }
            }
            loop {
                match appended.recv_timeout(Duration::from_millis(500)) {
                    Ok(r) if r.seq > last => {
                        last = r.seq;
                        let Some(e) = sse(r.seq, &r.body) else { return };
                        // Full: the client stopped reading; closed: it went away.
                        if tx.try_send(e).is_err() {
                            return;
                        }
                    }
                    Ok(_) => {}
                    Err(crossbeam_channel::RecvTimeoutError::Timeout) if tx.is_closed() => return,
                    Err(crossbeam_channel::RecvTimeoutError::Timeout) => {}
                    Err(crossbeam_channel::RecvTimeoutError::Disconnected) => return,
                }
            }
        });
    let events = stream::unfold((rx, slot), |(mut rx, slot)| async move {
        rx.recv().await.map(|e| (Ok(e), (rx, slot)))
    });
    SseResponse::new(events).keep_alive(KeepAlive::default())
}
