//! Live views of a run being executed: its runner serves followers over a Unix socket of the
//! run's own in the store directory (`live-HASH.sock`), so `runlog log --follow RUN` finds the
//! run's runner whichever process owns the store, and knows when the run has none.
//!
//! Protocol: the client sends one JSON line `{"follow": RUN, "from": SEQ}`; the server answers
//! with one JSON line per event (`{"seq", "at", "event"}`), first the history from `from`, then
//! every event as it is appended, until the run's runner exits.
//!
//! A follower never holds up the run: a write that cannot go out within [`WRITE_TIMEOUT`] (a
//! reader that stopped reading, `runlog log --follow RUN | less`) or a follower more than
//! [`MAX_LAG`] events behind is disconnected, and the client says where to continue from.

use crate::error::{CliError, Result};
use runlog_core::codec::decode_event;
use runlog_replay::events;
use runlog_store::EventLog;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// How long one line may take to reach a follower before it is dropped.
const WRITE_TIMEOUT: Duration = Duration::from_secs(5);

/// How long a new connection may take to send its request.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(5);

/// Events a follower may fall behind the run before it is dropped (bounds what is queued for it).
const MAX_LAG: usize = 10_000;

/// The socket a run's runner serves followers on (run ids may hold any character; a hash of
/// one always makes a short, valid file name).
pub fn socket_path(store: &Path, run: &str) -> PathBuf {
    let hash = blake3::hash(run.as_bytes()).to_hex();
    store.join(format!("live-{}.sock", hash.get(..16).unwrap_or_default()))
}

#[derive(serde::Deserialize)]
struct Request {
    follow: String,
    #[serde(default)]
    from: u64,
}

/// Serves followers until `stop` is set. Failing to serve is never fatal to the run.
pub fn serve(log: &dyn EventLog, store: &Path, run: &str, stop: &AtomicBool) {
    let path = socket_path(store, run);
    let _ = std::fs::remove_file(&path);
    let Ok(listener) = UnixListener::bind(&path) else {
        return;
    };
    if listener.set_nonblocking(true).is_err() {
        return;
    }
    std::thread::scope(|scope| {
        while !stop.load(Ordering::Acquire) {
            match listener.accept() {
                Ok((stream, _)) => {
                    scope.spawn(|| follow(log, stream, stop));
                }
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                    std::thread::sleep(Duration::from_millis(50))
                }
                Err(_) => break,
            }
        }
    });
    let _ = std::fs::remove_file(&path);
}

fn line(seq: u64, e: &runlog_core::Event) -> String {
    serde_json::json!({"seq": seq, "at": e.at, "event": e.kind}).to_string()
}

fn follow(log: &dyn EventLog, stream: UnixStream, stop: &AtomicBool) {
    if follow_until_dropped(log, stream, stop) == Err(Dropped) {
        eprintln!(
            "note: a `runlog log --follow` reader fell behind (stopped reading?) and was disconnected; the run goes on"
        );
    }
}

/// A follower too slow to keep.
#[derive(Debug, PartialEq, Eq)]
struct Dropped;

fn follow_until_dropped(
    log: &dyn EventLog,
    stream: UnixStream,
    stop: &AtomicBool,
) -> std::result::Result<(), Dropped> {
    let configured = stream.set_nonblocking(false).is_ok()
        && stream.set_read_timeout(Some(REQUEST_TIMEOUT)).is_ok()
        && stream.set_write_timeout(Some(WRITE_TIMEOUT)).is_ok();
    if !configured {
        return Ok(());
    }
    let mut request = String::new();
    let Ok(mut writer) = stream.try_clone() else {
        return Ok(());
    };
    if BufReader::new(&stream).read_line(&mut request).is_err() {
        return Ok(());
    }
    let Ok(req) = serde_json::from_str::<Request>(&request) else {
        let _ = writeln!(
            writer,
            "{}",
            serde_json::json!({"error": "expected {\"follow\": RUN, \"from\": SEQ}"})
        );
        return Ok(());
    };
    // Subscribe before reading the history, so nothing appended in between is missed.
    let live = log.subscribe(Some(&req.follow));
    let mut last = req.from.saturating_sub(1);
    let mut written = true;
    let history = events::for_each(
        log,
        &req.follow,
        req.from.max(1),
        u64::MAX,
        &mut |seq, _, e| {
            last = seq;
            written = writeln!(writer, "{}", line(seq, &e)).is_ok() && live.len() <= MAX_LAG;
            Ok(written)
        },
    );
    if !written {
        return Err(Dropped);
    }
    if history.is_err() {
        return Ok(());
    }
    loop {
        // Records are published before the runner returns, so once `stop` is set whatever is
        // left is already queued: drain it, then close.
        let stopping = stop.load(Ordering::Acquire);
        let next = if stopping {
            live.try_recv().ok()
        } else {
            live.recv_timeout(Duration::from_millis(100)).ok()
        };
        let Some(record) = next else {
            if stopping {
                return Ok(());
            }
            continue;
        };
        if record.seq <= last {
            continue;
        }
        let Ok(e) = decode_event(&record.body) else {
            return Ok(());
        };
        last = record.seq;
        if writeln!(writer, "{}", line(record.seq, &e)).is_err() || live.len() > MAX_LAG {
            return Err(Dropped);
        }
    }
}

/// Follows a run served by its runner; calls `f` for each event line until the runner exits.
/// `false` when no runner is executing the run. A stream that ends before the run did (this
/// reader was dropped for falling behind, or the runner died) is an error that says where to
/// continue from.
pub fn connect(
    store: &Path,
    run: &str,
    from: u64,
    f: &mut dyn FnMut(u64, runlog_core::Event),
) -> Result<bool> {
    let Ok(mut stream) = UnixStream::connect(socket_path(store, run)) else {
        return Ok(false);
    };
    writeln!(
        stream,
        "{}",
        serde_json::json!({"follow": run, "from": from})
    )
    .map_err(|e| CliError::failed(format!("cannot talk to the runner: {e}")))?;
    let (mut last, mut ended) = (from.saturating_sub(1), false);
    for text in BufReader::new(stream).lines() {
        let Ok(text) = text else { break };
        let v: serde_json::Value = serde_json::from_str(&text)
            .map_err(|e| CliError::failed(format!("bad line from the runner: {e}")))?;
        if let Some(err) = v.get("error") {
            return Err(CliError::input(format!("the runner refused: {err}")));
        }
        let seq = v
            .get("seq")
            .and_then(serde_json::Value::as_u64)
            .unwrap_or(0);
        let at = v.get("at").cloned().unwrap_or_default();
        let kind = v.get("event").cloned().unwrap_or_default();
        let event: runlog_core::Event =
            serde_json::from_value(serde_json::json!({"at": at, "kind": kind}))
                .map_err(|e| CliError::failed(format!("bad event from the runner: {e}")))?;
        ended = matches!(
            event.kind,
            runlog_core::EventKind::RunFinished { .. }
                | runlog_core::EventKind::RunInterrupted { .. }
        );
        last = seq;
        f(seq, event);
    }
    if ended {
        return Ok(true);
    }
    Err(CliError::failed(format!(
        "the runner closed the stream after seq {last}, before run {run} ended: this reader fell behind and was disconnected, or the runner stopped"
    ))
    .with_hint(format!(
        "continue with `runlog log {run} --from {} --follow`",
        last + 1
    )))
}
