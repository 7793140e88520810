//! `cargo bench -p runlog-store --bench shared`: the shared store (PostgreSQL) beside the sled
//! store, the same `EventLog` calls on each, in one run on this machine: durable appends with 1,
//! 8 and 64 producers (with its goal: 8 producers at least 5× one), bulk appends, and a full
//! replay (read, chain check, decode) of RUNLOG_BENCH_EVENTS events (default 1,000,000).
//! Needs `RUNLOG_TEST_POSTGRES` (an admin URL, as for the tests); prints figures, asserts
//! nothing about time.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod measure;

use measure::rate;
use runlog_core::codec::{decode_event, encode_event};
use runlog_core::synthetic::synthetic_run;
use runlog_store::postgres::scratch::{scratch, ENV};
use runlog_store::{EventLog, Log, Options, PgLog};
use std::time::Instant;

/// A replay's read: every record checked and decoded, without each one's own chain hash.
fn replay(log: &dyn EventLog, run: &str) -> f64 {
    let t = Instant::now();
    let mut n = 0;
    log.scan_bodies(run, 1, u64::MAX, &mut |_, body| {
        decode_event(body).unwrap();
        n += 1;
        Ok(true)
    })
    .unwrap();
    rate(n, t)
}

/// A read handing on every record's own chain hash too (an export's).
fn read_hashed(log: &dyn EventLog, run: &str) -> f64 {
    let t = Instant::now();
    let mut n = 0;
    log.scan(run, 1, u64::MAX, &mut |r| {
        decode_event(r.body).unwrap();
        std::hint::black_box(r.hash);
        n += 1;
        Ok(true)
    })
    .unwrap();
    rate(n, t)
}

fn measure(log: &dyn EventLog, bodies: &[Vec<u8>]) -> [f64; 7] {
    [
        measure::producers(log, bodies, 1, 1_000),
        measure::producers(log, bodies, 8, 250),
        measure::producers(log, bodies, 64, 100),
        measure::bulk(log, "bulk", bodies, 10_000),
        replay(log, "bulk"),
        replay(log, "bulk"),
        read_hashed(log, "bulk"),
    ]
}

fn main() {
    if std::env::var_os(ENV).is_none() {
        println!(
            "SKIPPED: set {ENV} to an admin URL of a PostgreSQL server to compare it with sled"
        );
        return;
    }
    let n: usize = std::env::var("RUNLOG_BENCH_EVENTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1_000_000);
    eprintln!("generating {n} synthetic events ...");
    let events = synthetic_run("bench", n, n / 10).unwrap();
    let bodies: Vec<Vec<u8>> = events[..n.min(events.len())]
        .iter()
        .map(|e| encode_event(e).unwrap())
        .collect();
    let dir = tempfile::tempdir().unwrap();
    eprintln!("sled ...");
    let sled = measure(
        &Log::open(&dir.path().join("store"), Options::default()).unwrap(),
        &bodies,
    );
    eprintln!("PostgreSQL ...");
    let db = scratch().unwrap();
    let pg = measure(&PgLog::connect(&db.url).unwrap(), &bodies);
    println!("the same EventLog calls on sled and on PostgreSQL ({n} events for bulk and replay)");
    println!(
        "{:<44} {:>14} {:>14} {:>8}",
        "events/s", "sled", "PostgreSQL", "pg/sled"
    );
    let names = [
        "durable append, 1 producer, 1 event each",
        "durable append, 8 producers, 1 event each",
        "durable append, 64 producers, 1 event each",
        "bulk append, 10,000 events each",
        "full replay: read, chain check, decode",
        "the same replay again",
        "the same with every record's chain hash",
    ];
    for (i, name) in names.iter().enumerate() {
        println!(
            "{name:<44} {:>14.0} {:>14.0} {:>7.2}×",
            sled[i],
            pg[i],
            pg[i] / sled[i]
        );
    }
    println!(
        "goal 8 producers ≥ 5× one on PostgreSQL: {:.1}× (64 producers: {:.1}×)",
        pg[1] / pg[0],
        pg[2] / pg[0]
    );
}
