//! Appends N records durably one at a time and prints the rate: a profile target for the
//! single-producer durable path (`strace -c -f`, `perf`).
//!
//! cargo run --release -p runlog-store --example append_many -- /tmp/store 2000

use runlog_store::{EventLog, Log, Options};
use std::path::PathBuf;
use std::time::Instant;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let dir = args
        .next()
        .map(PathBuf::from)
        .ok_or("usage: append_many STORE_DIR [N]")?;
    let n: u64 = args.next().map(|s| s.parse()).transpose()?.unwrap_or(2_000);
    let log = Log::open(&dir, Options::default())?;
    let start = log.head("many")?.map_or(0, |h| h.seq);
    let t = Instant::now();
    for i in 0..n {
        log.append(
            "many",
            Some(start + i),
            vec![format!("record {i} with some payload bytes").into_bytes()],
        )?;
    }
    let secs = t.elapsed().as_secs_f64();
    println!(
        "{n} durable appends in {secs:.3}s: {:.0}/s, {:.0} µs each",
        n as f64 / secs,
        secs * 1e6 / n as f64
    );
    Ok(())
}
