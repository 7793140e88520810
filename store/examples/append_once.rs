//! Appends one record durably and prints the new head: the smallest program to inspect a
//! durable append with `strace -f -e trace=fsync,fdatasync,sync_file_range`.
//!
//! cargo run -p runlog-store --example append_once -- /tmp/store

use runlog_store::{EventLog, Log, Options};
use std::path::PathBuf;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = std::env::args()
        .nth(1)
        .map(PathBuf::from)
        .ok_or("usage: append_once STORE_DIR")?;
    let log = Log::open(&dir, Options::default())?;
    eprintln!("--- append starts");
    let head = log.append("strace", None, vec![b"one durable record".to_vec()])?;
    eprintln!("--- append acknowledged: seq {}", head.seq);
    Ok(())
}
