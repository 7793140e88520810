//! `GET /v1/runs/{run}/stream`: a run's events as Server-Sent Events, the history from `from`
//! (or after `Last-Event-ID`) and then each event as it is appended. Each event's id is its
//! seq, so a client that reconnects with `Last-Event-ID` misses nothing and sees nothing twice.
//! A client more than `follow::MAX_LAG` events behind is disconnected, never waited for.

use crate::follow::{Ends, Followed, Follower};
use crate::render::event::Worded;
use axum::response::sse::{Event as Sse, KeepAlive};
use axum::response::Sse as SseResponse;
use futures_util::stream::{self, Stream};
use runlog_core::Event;
use runlog_store::Store;
use std::collections::HashMap;
use std::convert::Infallible;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::mpsc;

fn sse(seq: u64, e: &Event) -> Sse {
    let data = serde_json::to_string(&Worded::of(seq, e)).unwrap_or_default();
    Sse::default()
        .id(seq.to_string())
        .event(e.kind.name())
        .data(data)
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
    let (tx, rx) = mpsc::channel::<Sse>(1_024);
    // The store's calls block: a thread follows the run and waits for the client; a client
    // that falls too far behind the run is closed by the follower's lag bound.
    let _ = std::thread::Builder::new()
        .name("runlog-api-stream".into())
        .spawn(move || {
            let mut follower = Follower::new(store, &run, from, Ends::Never);
            loop {
                match follower.next(Duration::from_millis(500)) {
                    Ok(Some(Followed::Event(seq, e))) => {
                        // Closed: the client went away.
                        if tx.blocking_send(sse(seq, &e)).is_err() {
                            return;
                        }
                    }
                    Ok(Some(Followed::Idle)) if tx.is_closed() => return,
                    Ok(Some(Followed::Idle)) => {}
                    Ok(None) | Err(_) => return,
                }
            }
        });
    let events = stream::unfold((rx, slot), |(mut rx, slot)| async move {
        rx.recv().await.map(|e| (Ok(e), (rx, slot)))
    });
    SseResponse::new(events).keep_alive(KeepAlive::default())
}
