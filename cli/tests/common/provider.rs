//! A scripted model provider for the gateway's tests (no network here): an axum app served
//! on a runtime of its own, and the calls a run recorded as `runlog --json log` prints them.

use super::{runlog, text};
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// Serves `app` on a loopback port, on a thread and runtime of its own; its base URL.
pub fn serve(app: axum::Router) -> String {
    serve_counted(app).0
}

/// [`serve`], counting the connections it accepts.
pub fn serve_counted(app: axum::Router) -> (String, Arc<AtomicUsize>) {
    use axum::serve::ListenerExt;
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let accepted = Arc::new(AtomicUsize::new(0));
    let counted = accepted.clone();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            let listener = tokio::net::TcpListener::from_std(listener)
                .unwrap()
                .tap_io(move |_| {
                    counted.fetch_add(1, Ordering::SeqCst);
                });
            axum::serve(listener, app).await.unwrap();
        });
    });
    (url, accepted)
}

/// The events of `run` (`filter`: `log`'s options), as `runlog --json log` prints them.
pub fn logged(store: &Path, run: &str, filter: &[&str]) -> Vec<serde_json::Value> {
    let log = runlog(store)
        .args(["--json", "log", run])
        .args(filter)
        .output()
        .unwrap();
    assert!(log.status.success(), "{}", text(&log));
    String::from_utf8_lossy(&log.stdout)
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["event"].clone())
        .collect()
}

/// A server-sent event stream of `events`, each named by its `type` as the providers do.
pub fn sse(events: &[serde_json::Value]) -> String {
    events
        .iter()
        .map(|e| {
            format!(
                "event: {}\ndata: {e}\n\n",
                e["type"].as_str().unwrap_or("message")
            )
        })
        .collect()
}
