//! Read-only commands over a run's history.

use crate::error::Result;
use runlog_replay::Replay;
use std::path::Path;

/// `runlog log RUN`: the event history, one line per event.
pub fn log(store_dir: &Path, run: &str, from: u64, to: Option<u64>, json: bool) -> Result<()> {
    let log = crate::store::open(store_dir, false)?;
    let replay = Replay::new(&log);
    let head = replay.head_seq(run)?;
    let to = to.unwrap_or(head).min(head);
    for (seq, e) in replay.events(run, from.max(1), to)? {
        if json {
            let line = serde_json::json!({"seq": seq, "at": e.at, "event": e.kind});
            println!("{line}");
        } else {
            let body = serde_json::to_string(&e.kind).unwrap_or_default();
            println!("{seq:>6}  {:<22} {}", e.kind.name(), body);
        }
    }
    Ok(())
}
