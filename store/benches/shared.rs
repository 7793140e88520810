//! `cargo bench -p runlog-store --bench shared`: the shared store (PostgreSQL) beside the sled
//! store, the same `EventLog` calls on each, in one run on this machine: durable appends with 1,
//! 8 and 64 producers (with its goal: 8 producers at least 5× one), bulk appends, and a full
//! replay (read, chain check, decode) of RUNLOG_BENCH_EVENTS events (default 1,000,000). Beside
//! them, the server's own floor (a single-row `INSERT` committed on its own, in a loop from 1 and
//! from 8 connections, as `pgbench -n -M prepared` runs one) with runlog's appends over it, and
//! what an append asks of the server (round trips, statements), counted by a relay.
//! Needs `RUNLOG_TEST_POSTGRES` (an admin URL, as for the tests); prints figures, asserts
//! nothing about time.

mod measure;

use measure::rate;
use runlog_core::codec::{decode_event, encode_event};
use runlog_core::synthetic::synthetic_run;
use runlog_store::postgres::scratch::{connect, scratch, ENV};
use runlog_store::postgres::wire::{Relay, Wire};
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

/// The server's floor: rows of `body` inserted one at a time, each committed on its own (one
/// round trip of a prepared statement), from `clients` connections at once.
fn floor(url: &str, body: &[u8], clients: usize, each: usize) -> f64 {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let mut connected = vec![];
        for _ in 0..clients {
            connected.push(connect(url).await.unwrap());
        }
        connected[0]
            .batch_execute(
                "DROP TABLE IF EXISTS floor; CREATE TABLE floor (id bigint PRIMARY KEY, body bytea)",
            )
            .await
            .unwrap();
        let t = Instant::now();
        let mut tasks = vec![];
        for (c, client) in connected.into_iter().enumerate() {
            let body = body.to_vec();
            tasks.push(tokio::spawn(async move {
                let insert = client
                    .prepare("INSERT INTO floor (id, body) VALUES ($1, $2)")
                    .await
                    .unwrap();
                for i in 0..each {
                    let id = (c * each + i) as i64;
                    client.execute(&insert, &[&id, &body]).await.unwrap();
                }
            }));
        }
        for task in tasks {
            task.await.unwrap();
        }
        rate(clients * each, t)
    })
}

/// What one durable append of one event asks of the server, from `producers` at once.
/// (A database of its own: its runs start from nothing.)
fn wire(bodies: &[Vec<u8>], producers: usize, each: usize) -> (f64, f64) {
    let db = scratch().unwrap();
    let relay = Relay::start(&db.url).unwrap();
    let log = PgLog::connect(&relay.url).unwrap();
    relay.reset();
    measure::producers(&log, bodies, producers, each);
    let Wire {
        round_trips,
        statements,
        ..
    } = relay.counts();
    let n = (producers * each) as f64;
    (round_trips as f64 / n, statements as f64 / n)
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
    let floors = [
        floor(&db.url, &bodies[0], 1, 2_000),
        floor(&db.url, &bodies[0], 8, 500),
    ];
    let wires = [wire(&bodies, 1, 500), wire(&bodies, 8, 100)];
    println!("PostgreSQL's own floor: a single-row INSERT committed on its own, in a loop");
    println!(
        "{:<14} {:>12} {:>14} {:>12} {:>22}",
        "connections", "floor/s", "runlog/s", "runlog/floor", "round trips, statements"
    );
    for (i, clients) in [1, 8].into_iter().enumerate() {
        let ratio = pg[i] / floors[i];
        println!(
            "{clients:<14} {:>12.0} {:>14.0} {:>11.2}× {:>13.2}, {:.2} an append  goal ≥ 0.8×: {}",
            floors[i],
            pg[i],
            ratio,
            wires[i].0,
            wires[i].1,
            if ratio >= 0.8 { "met" } else { "NOT MET" }
        );
    }
}
