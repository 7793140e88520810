//! `cargo bench -p runlog-store --bench retention`: a store of many runs, half of them
//! forgotten. Prints the store's bytes per event (sled plus archive, then the archive alone)
//! beside SQLite's for the same events, the disk use before and after forgetting half the
//! runs, and how long the forget took, each beside its goal.
//!
//! RUNLOG_BENCH_EVENTS (default 1,000,000) events in RUNLOG_BENCH_RUNS (default 10,000) runs,
//! each run appended in one commit; the work directory is `target/bench-retention` (override
//! with RUNLOG_BENCH_DIR).

use runlog_core::codec::encode_event;
use runlog_core::synthetic::synthetic_run;
use runlog_store::{EventLog, Log, Options};
use std::path::{Path, PathBuf};
use std::time::Instant;

fn env(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn fresh(root: &Path, name: &str) -> PathBuf {
    let p = root.join(name);
    let _ = std::fs::remove_dir_all(&p);
    let _ = std::fs::remove_file(&p);
    p
}

/// Bytes of the files whose names start with `prefix` directly in `dir`.
fn files_bytes(dir: &Path, prefix: &str) -> u64 {
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with(prefix))
        .map(|e| e.metadata().map_or(0, |m| m.len()))
        .sum()
}

/// sled and the archive: what the store needs to hold its events (snapshots and blobs aside).
fn store_bytes(dir: &Path) -> u64 {
    runlog_store::layout::dir_size(&dir.join("db")) + files_bytes(dir, "archive-")
}

fn sqlite_bytes(root: &Path, runs: &[(String, Vec<Vec<u8>>)]) -> u64 {
    let path = fresh(root, "events.sqlite");
    let _ = std::fs::remove_file(root.join("events.sqlite-wal"));
    let mut db = rusqlite::Connection::open(&path).unwrap();
    db.execute_batch(
        "PRAGMA journal_mode=WAL;
         CREATE TABLE events (run INTEGER NOT NULL, seq INTEGER NOT NULL, body BLOB NOT NULL, PRIMARY KEY (run, seq)) WITHOUT ROWID;",
    )
    .unwrap();
    let tx = db.transaction().unwrap();
    for (r, (_, bodies)) in runs.iter().enumerate() {
        for (i, b) in bodies.iter().enumerate() {
            tx.execute(
                "INSERT INTO events VALUES (?1, ?2, ?3)",
                rusqlite::params![r as i64, i as i64 + 1, b],
            )
            .unwrap();
        }
    }
    tx.commit().unwrap();
    db.execute_batch("PRAGMA wal_checkpoint(TRUNCATE);")
        .unwrap();
    drop(db);
    std::fs::metadata(&path).unwrap().len()
}

fn main() {
    let n = env("RUNLOG_BENCH_EVENTS", 1_000_000);
    let run_count = env("RUNLOG_BENCH_RUNS", 10_000).max(2);
    let root = std::env::var_os("RUNLOG_BENCH_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/bench-retention"));
    std::fs::create_dir_all(&root).unwrap();
    let per_run = (n / run_count).max(1);
    eprintln!("generating {run_count} runs of {per_run} synthetic events ...");
    // Each run its own events (its id in them), as a store of many runs holds.
    let runs: Vec<(String, Vec<Vec<u8>>)> = (0..run_count)
        .map(|r| {
            let run = format!("run-{r:05}");
            let bodies = synthetic_run(&run, per_run, (per_run / 10).max(1))
                .unwrap()
                .iter()
                .take(per_run)
                .map(|e| encode_event(e).unwrap())
                .collect();
            (run, bodies)
        })
        .collect();
    let events: u64 = runs.iter().map(|(_, b)| b.len() as u64).sum();
    let body_bytes: u64 = runs
        .iter()
        .flat_map(|(_, b)| b)
        .map(|b| b.len() as u64)
        .sum();

    let dir = fresh(&root, "store");
    let t = Instant::now();
    {
        let log = Log::open(&dir, Options::default()).unwrap();
        for (run, bodies) in &runs {
            log.append(run, Some(0), bodies.clone()).unwrap();
        }
        log.close().unwrap();
    }
    let filled = t.elapsed();
    let before = store_bytes(&dir);
    let archive_before = files_bytes(&dir, "archive-");
    let sqlite = sqlite_bytes(&root, &runs);
    let half: Vec<String> = runs.iter().step_by(2).map(|(r, _)| r.clone()).collect();
    let kept_events = events - half.len() as u64 * per_run as u64;
    let t = Instant::now();
    runlog_store::forget(&dir, &half, &[]).unwrap();
    let forgetting = t.elapsed();
    let after = store_bytes(&dir);
    let archive_after = files_bytes(&dir, "archive-");
    // What stays is whole.
    {
        let log = Log::open(&dir, Options::default()).unwrap();
        let left = log.runs().unwrap();
        assert_eq!(left.len(), run_count - half.len());
        assert!(log.verify(&left[0].run).unwrap().is_ok());
    }
    let per = |bytes: u64, events: u64| bytes as f64 / events as f64;
    println!();
    println!(
        "runlog-store retention benchmark: {events} events in {run_count} runs, body {:.1} B (bincode)",
        per(body_bytes, events)
    );
    println!("work dir: {}", root.display());
    println!("filled in {:.1} s", filled.as_secs_f64());
    println!();
    println!("bytes on disk per event (sled + archive; snapshots and blobs aside):");
    println!(
        "  SQLite (WAL, checkpointed)   {:>8.1} B",
        per(sqlite, events)
    );
    println!(
        "  runlog                       {:>8.1} B, of which the archive {:.1} B",
        per(before, events),
        per(archive_before, events)
    );
    println!(
        "  runlog after forgetting half {:>8.1} B per kept event, of which the archive {:.1} B",
        per(after, kept_events),
        per(archive_after, kept_events)
    );
    println!();
    println!(
        "forget {} of {run_count} runs: {:.1} s; the store went from {:.1} MB to {:.1} MB",
        half.len(),
        forgetting.as_secs_f64(),
        before as f64 / 1e6,
        after as f64 / 1e6
    );
    println!();
    println!("targets:");
    let check = |name: &str, figure: f64, goal: f64| {
        println!(
            "  {name:<48} {figure:>7.2}  (target ≤ {goal}) {}",
            if figure <= goal { "met" } else { "NOT MET" }
        );
    };
    check("archive bytes per event", per(archive_before, events), 25.0);
    check(
        "store bytes per event / SQLite's",
        per(before, events) / per(sqlite, events),
        1.0,
    );
    check(
        "disk use after forgetting half / before",
        after as f64 / before as f64,
        0.55,
    );
    check("seconds to forget half", forgetting.as_secs_f64(), 60.0);
}
