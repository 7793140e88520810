//! `cargo bench -p runlog-store`: the store against its baselines, all in one run on one disk.
//!
//! Every figure is labelled with what an acknowledgement guarantees. The work directory is
//! `target/bench-store` (override with RUNLOG_BENCH_DIR); events come from
//! `runlog_core::synthetic`, encoded exactly as runlog stores them. RUNLOG_BENCH_EVENTS sets the
//! bulk size (default 1,000,000).

mod measure;

use measure::rate;
use runlog_core::codec::encode_event;
use runlog_core::synthetic::synthetic_run;
use runlog_store::{EventLog, Log, Options};
use std::fs::{self, File, OpenOptions};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

struct Row {
    name: String,
    rate: f64,
    guarantee: &'static str,
}

fn fresh(root: &Path, name: &str) -> PathBuf {
    let p = root.join(name);
    let _ = fs::remove_dir_all(&p);
    let _ = fs::remove_file(&p);
    p
}

/// A new, empty file under `root`.
fn empty_file(root: &Path, name: &str) -> File {
    OpenOptions::new()
        .create(true)
        .write(true)
        .truncate(true)
        .open(fresh(root, name))
        .unwrap()
}

/// Where the floor's appends go: the end of a growing file, or zeros written (and synced)
/// ahead, where a sync has no new size to write, as in runlog's WAL.
#[derive(Clone, Copy, PartialEq)]
enum Floor {
    Growing,
    WrittenAhead,
}

fn fsync_floor(root: &Path, records: &[Vec<u8>], batch: usize, syncs: usize, how: Floor) -> f64 {
    use std::os::unix::fs::FileExt;
    let f = empty_file(root, &format!("floor-{batch}.bin"));
    let total: usize = records.iter().take(syncs * batch).map(Vec::len).sum();
    if how == Floor::WrittenAhead {
        f.write_all_at(&vec![0u8; total], 0).unwrap();
        f.sync_all().unwrap();
    }
    let t = Instant::now();
    let mut buf = Vec::new();
    let mut at = 0u64;
    for s in 0..syncs {
        buf.clear();
        for r in records.iter().skip(s * batch).take(batch) {
            buf.extend_from_slice(r);
        }
        f.write_all_at(&buf, at).unwrap();
        at += buf.len() as u64;
        f.sync_data().unwrap();
    }
    rate(syncs * batch, t)
}

/// Syncs per second when `threads` threads each write 64 bytes of their own into zeros written
/// ahead in one file and sync it, one at a time: whether this disk overlaps syncs of one file.
fn syncs_from_threads(root: &Path, threads: usize, each: usize) -> f64 {
    use std::os::unix::fs::FileExt;
    let f = empty_file(root, &format!("syncs-{threads}.bin"));
    f.write_all_at(&vec![0u8; threads * each * 64], 0).unwrap();
    f.sync_all().unwrap();
    let t = Instant::now();
    std::thread::scope(|s| {
        for i in 0..threads {
            let f = &f;
            s.spawn(move || {
                for k in 0..each {
                    f.write_all_at(&[1u8; 64], ((k * threads + i) * 64) as u64)
                        .unwrap();
                    f.sync_data().unwrap();
                }
            });
        }
    });
    rate(threads * each, t)
}

fn json_per_event(root: &Path, lines: &[String], n: usize) -> f64 {
    let path = fresh(root, "events-synced.jsonl");
    let mut f = OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .unwrap();
    let t = Instant::now();
    for l in lines.iter().take(n) {
        f.write_all(l.as_bytes()).unwrap();
        f.write_all(b"\n").unwrap();
        f.sync_data().unwrap();
    }
    rate(n, t)
}

fn json_bulk(root: &Path, lines: &[String]) -> (f64, u64) {
    let path = fresh(root, "events.jsonl");
    let t = Instant::now();
    let mut w = BufWriter::new(File::create(&path).unwrap());
    for l in lines {
        w.write_all(l.as_bytes()).unwrap();
        w.write_all(b"\n").unwrap();
    }
    let f = w.into_inner().unwrap();
    f.sync_data().unwrap();
    (rate(lines.len(), t), fs::metadata(&path).unwrap().len())
}

fn sqlite(root: &Path, bodies: &[Vec<u8>], per_txn: usize) -> (f64, f64, u64) {
    let path = fresh(root, "events.sqlite");
    let _ = fs::remove_file(root.join("events.sqlite-wal"));
    let mut db = rusqlite::Connection::open(&path).unwrap();
    db.execute_batch(
        "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;
         CREATE TABLE events (run INTEGER NOT NULL, seq INTEGER NOT NULL, body BLOB NOT NULL, PRIMARY KEY (run, seq)) WITHOUT ROWID;",
    )
    .unwrap();
    let t = Instant::now();
    for (i, b) in bodies.iter().take(per_txn).enumerate() {
        db.execute(
            "INSERT INTO events VALUES (1, ?1, ?2)",
            rusqlite::params![i as i64 + 1, b],
        )
        .unwrap();
    }
    let per = rate(per_txn, t);
    let t = Instant::now();
    let tx = db.transaction().unwrap();
    {
        let mut stmt = tx.prepare("INSERT INTO events VALUES (2, ?1, ?2)").unwrap();
        for (i, b) in bodies.iter().enumerate() {
            stmt.execute(rusqlite::params![i as i64 + 1, b]).unwrap();
        }
    }
    tx.commit().unwrap();
    let bulk = rate(bodies.len(), t);
    db.execute_batch("PRAGMA wal_checkpoint(TRUNCATE);")
        .unwrap();
    drop(db);
    (per, bulk, fs::metadata(&path).unwrap().len())
}

fn raw_sled(root: &Path, bodies: &[Vec<u8>]) -> (f64, u64) {
    let path = fresh(root, "raw-sled");
    let db = sled::Config::new()
        .path(&path)
        .flush_every_ms(None)
        .open()
        .unwrap();
    let t = Instant::now();
    for (c, chunk) in bodies.chunks(256).enumerate() {
        let mut batch = sled::Batch::default();
        for (i, b) in chunk.iter().enumerate() {
            let seq = (c * 256 + i) as u64 + 1;
            let mut k = [0u8; 16];
            k[..8].copy_from_slice(&1u64.to_be_bytes());
            k[8..].copy_from_slice(&seq.to_be_bytes());
            batch.insert(&k[..], b.as_slice());
        }
        db.apply_batch(batch).unwrap();
    }
    db.flush().unwrap();
    File::open(path.join("db")).unwrap().sync_data().unwrap();
    let r = rate(bodies.len(), t);
    drop(db);
    (r, runlog_store::layout::dir_size(&path))
}

/// Seconds a round takes of answering `n` waiting threads and hearing from all of them again,
/// the way the store's producers wait: each hands in a oneshot sender over one channel and
/// parks on its receiver until it is answered. No I/O: what any group commit pays for its
/// producers' wake-ups on this machine.
fn wake_round(n: usize, rounds: usize) -> f64 {
    let (hand_in, handed) = crossbeam_channel::unbounded::<oneshot::Sender<()>>();
    std::thread::scope(|s| {
        for _ in 0..n {
            let hand_in = hand_in.clone();
            s.spawn(move || {
                for _ in 0..=rounds {
                    let (answer, answered) = oneshot::channel();
                    hand_in.send(answer).unwrap();
                    answered.recv().unwrap();
                }
            });
        }
        let mut waiting: Vec<_> = (0..n).map(|_| handed.recv().unwrap()).collect();
        let t = Instant::now();
        for _ in 0..rounds {
            for w in waiting.drain(..) {
                w.send(()).unwrap();
            }
            waiting.extend((0..n).map(|_| handed.recv().unwrap()));
        }
        let took = t.elapsed().as_secs_f64() / rounds as f64;
        for w in waiting {
            w.send(()).unwrap();
        }
        took
    })
}

/// The most `n` producers can reach over one on a disk whose syncs of one file do not overlap
/// (the bench prints whether they do, from one thread and from two): each append then waits
/// for a whole sync, and a sync covers only the producers woken and heard from before it
/// began. A group of `k` appends takes a sync (`1 / floor`) and a round of `k` wake-ups
/// (`wake`), and the largest group, all `n`, gives the most appends per second.
fn ceiling(n: usize, floor: f64, wake: f64, single: f64) -> f64 {
    n as f64 / (1.0 / floor + wake) / single
}

/// Rate, and how many syncs acknowledged how many appends (see `Log::sync_groups`).
fn runlog_producers(
    root: &Path,
    name: &str,
    bodies: &[Vec<u8>],
    producers: usize,
    per_producer: usize,
) -> (f64, Vec<(usize, u64)>) {
    let log = Log::open(&fresh(root, name), Options::default()).unwrap();
    let rate = measure::producers(&log, bodies, producers, per_producer);
    (rate, log.sync_groups())
}

/// One line of a sync-group histogram: `1: 1990  2-3: 5  …`, empty classes left out.
fn histogram(groups: &[(usize, u64)]) -> String {
    let mut classes = groups.iter().peekable();
    let mut out = Vec::new();
    while let Some((low, n)) = classes.next() {
        let label = match classes.peek() {
            _ if *low == 1 => "1".to_string(),
            Some((next, _)) => format!("{low}-{}", next - 1),
            None => format!("{low}+"),
        };
        if *n > 0 {
            out.push(format!("{label}: {n}"));
        }
    }
    out.join("  ")
}

/// Rate, bytes of the whole store, bytes of its archive (the sealed WAL segments).
fn runlog_bulk(root: &Path, bodies: &[Vec<u8>], chunk: usize) -> (f64, u64, u64) {
    let path = fresh(root, "runlog-bulk");
    let log = Log::open(&path, Options::default()).unwrap();
    let r = measure::bulk(&log, "bulk", bodies, chunk);
    log.close().unwrap();
    (
        r,
        runlog_store::layout::dir_size(&path),
        runlog_store::archive::segments(&path)
            .unwrap()
            .iter()
            .map(|(_, p)| fs::metadata(p).map_or(0, |m| m.len()))
            .sum(),
    )
}

fn main() {
    let n: usize = std::env::var("RUNLOG_BENCH_EVENTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1_000_000);
    let root = std::env::var_os("RUNLOG_BENCH_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/bench-store"));
    fs::create_dir_all(&root).unwrap();
    eprintln!("generating {n} synthetic events ...");
    let events = synthetic_run("bench", n, n / 10).unwrap();
    let events = &events[..n.min(events.len())];
    let bodies: Vec<Vec<u8>> = events.iter().map(|e| encode_event(e).unwrap()).collect();
    let lines: Vec<String> = events
        .iter()
        .map(|e| serde_json::to_string(e).unwrap())
        .collect();
    let avg_body = bodies.iter().map(Vec::len).sum::<usize>() as f64 / n as f64;
    let avg_json = lines.iter().map(|l| l.len() + 1).sum::<usize>() as f64 / n as f64;
    let mut rows = Vec::new();
    let mut add = |name: &str, rate: f64, guarantee: &'static str| {
        eprintln!("  {name}: {rate:.0} events/s");
        rows.push(Row {
            name: name.into(),
            rate,
            guarantee,
        });
    };

    const DURABLE: &str = "survives power loss (fdatasync before ack)";
    const PROCESS: &str = "survives a process crash only (no sync before ack)";
    let growing = fsync_floor(&root, &bodies, 1, 2_000, Floor::Growing);
    add("raw file write+fdatasync, batch 1", growing, DURABLE);
    let floor1 = fsync_floor(&root, &bodies, 1, 2_000, Floor::WrittenAhead);
    add("the same into zeros written ahead (floor)", floor1, DURABLE);
    add(
        "raw file write+fdatasync, batch 16",
        fsync_floor(&root, &bodies, 16, 1_000, Floor::Growing),
        DURABLE,
    );
    add(
        "raw file write+fdatasync, batch 256",
        fsync_floor(&root, &bodies, 256, 1_000, Floor::Growing),
        DURABLE,
    );
    add(
        "JSON lines, fdatasync per event",
        json_per_event(&root, &lines, 2_000),
        DURABLE,
    );
    let (json_bulk_rate, json_bytes) = json_bulk(&root, &lines);
    add(
        "JSON lines, bulk, one fdatasync",
        json_bulk_rate,
        "durable only once the whole bulk is synced",
    );
    let (sq_per, sq_bulk, sq_bytes) = sqlite(&root, &bodies, 2_000);
    add(
        "SQLite WAL synchronous=FULL, txn per event",
        sq_per,
        DURABLE,
    );
    add(
        "SQLite WAL synchronous=FULL, one txn",
        sq_bulk,
        "durable once the transaction commits",
    );
    let (sled_rate, sled_bytes) = raw_sled(&root, &bodies);
    add(
        "raw sled, key per event, one flush+fdatasync",
        sled_rate,
        "durable only after the final sync",
    );
    let mut groups = Vec::new();
    let mut producers = |add: &mut dyn FnMut(&str, f64, &'static str), n: usize, each: usize| {
        let (rate, sizes) = runlog_producers(&root, &format!("runlog-{n}"), &bodies, n, each);
        let name = if n == 1 {
            "runlog durable, 1 producer, 1 event/append".to_string()
        } else {
            format!("runlog durable, {n} producers (group commit)")
        };
        add(&name, rate, DURABLE);
        groups.push((n, sizes));
        rate
    };
    let single = producers(&mut add, 1, 2_000);
    let eight = producers(&mut add, 8, 1_000);
    producers(&mut add, 32, 400);
    let sixty_four = producers(&mut add, 64, 250);
    let (bulk, runlog_bytes, archive_bytes) = runlog_bulk(&root, &bodies, 10_000);
    add("runlog bulk, 10k events/append, durable", bulk, DURABLE);
    let buffered = {
        let opts = Options {
            durability: runlog_store::Durability::Buffered {
                interval: std::time::Duration::from_millis(100),
            },
            create: true,
            ..Options::default()
        };
        let log = Log::open(&fresh(&root, "runlog-buffered"), opts).unwrap();
        let t = Instant::now();
        for (i, body) in bodies.iter().take(20_000).enumerate() {
            log.append("b", Some(i as u64), vec![body.clone()]).unwrap();
        }
        rate(20_000, t)
    };
    add(
        "runlog buffered, 1 producer, 1 event/append",
        buffered,
        PROCESS,
    );
    let sizes = Sizes {
        events: n,
        json: json_bytes,
        sqlite: sq_bytes,
        sled: sled_bytes,
        runlog: runlog_bytes,
        archive: archive_bytes,
    };
    let rates = Rates {
        floor1,
        single,
        eight,
        sixty_four,
        bulk,
        sq_bulk,
        wake8: wake_round(8, 2_000),
        wake64: wake_round(64, 300),
    };
    report(&root, (avg_body, avg_json), &rows, &groups, &sizes, &rates);
    check_targets(&rates, &sizes);
}

/// Bytes on disk after `events` events, by store.
struct Sizes {
    events: usize,
    json: u64,
    sqlite: u64,
    sled: u64,
    runlog: u64,
    archive: u64,
}

/// The rates the targets compare, in events/s.
struct Rates {
    floor1: f64,
    single: f64,
    eight: f64,
    sixty_four: f64,
    bulk: f64,
    sq_bulk: f64,
    /// Seconds a round of 8 (64) threads' wake-ups takes.
    wake8: f64,
    wake64: f64,
}

/// The table of rates, the group commits' sizes, this machine's syncs and the bytes per event.
fn report(
    root: &Path,
    (avg_body, avg_json): (f64, f64),
    rows: &[Row],
    groups: &[(usize, Vec<(usize, u64)>)],
    sizes: &Sizes,
    rates: &Rates,
) {
    let n = sizes.events;
    println!();
    println!("runlog-store benchmark: {n} synthetic events, body {avg_body:.1} B (bincode), JSON line {avg_json:.1} B");
    println!("work dir: {}", root.display());
    println!();
    println!(
        "| {:<48} | {:>14} | {:<48} |",
        "benchmark", "events/s", "an acknowledgement guarantees"
    );
    println!("|{:-<50}|{:-<16}|{:-<50}|", "", "", "");
    for r in rows {
        println!(
            "| {:<48} | {:>14.0} | {:<48} |",
            r.name, r.rate, r.guarantee
        );
    }
    println!();
    println!("appends acknowledged per sync (group size: syncs):");
    for (n, sizes) in groups {
        println!("  {n:>2} producers  {}", histogram(sizes));
    }
    let (wake8, wake64) = (rates.wake8, rates.wake64);
    println!();
    println!(
        "this machine's syncs of one file (a write and an fdatasync at a time, from each thread):"
    );
    println!(
        "  1 thread   {:>8.0} syncs/s",
        syncs_from_threads(root, 1, 2_000)
    );
    println!(
        "  2 threads  {:>8.0} syncs/s",
        syncs_from_threads(root, 2, 1_000)
    );
    println!();
    println!(
        "this machine's wake-ups (threads answered and heard from again as producers wait, no I/O):"
    );
    println!("  8 threads  {:>7.1} µs a round", wake8 * 1e6);
    println!("  64 threads {:>7.1} µs a round", wake64 * 1e6);
    println!();
    println!("bytes on disk per event ({n} events):");
    let per = |b: u64| b as f64 / n as f64;
    let (json_bytes, sq_bytes, sled_bytes) = (sizes.json, sizes.sqlite, sizes.sled);
    let (runlog_bytes, archive_bytes) = (sizes.runlog, sizes.archive);
    println!("  JSON lines            {:>8.1} B", per(json_bytes));
    println!(
        "  SQLite (WAL, checkpointed, both tables) {:>8.1} B",
        per(sq_bytes) / 2.0 * 2.0
    );
    println!("  raw sled, key/event   {:>8.1} B", per(sled_bytes));
    println!(
        "  runlog (whole store)  {:>8.1} B, of which the archive (sealed WAL, what `repair` rebuilds sled from) {:.1} B",
        per(runlog_bytes),
        per(archive_bytes)
    );
}

/// Each target: the ratio measured, the goal, met or not.
fn check_targets(r: &Rates, sizes: &Sizes) {
    let per = |b: u64| b as f64 / sizes.events as f64;
    let Rates {
        floor1,
        single,
        eight,
        sixty_four,
        bulk,
        sq_bulk,
        wake8,
        wake64,
    } = *r;
    let (runlog_bytes, json_bytes) = (sizes.runlog, sizes.json);
    let print_ceiling = |n: usize, most: f64| {
        println!(
            "  {:<58} {most:>7.2}  (a sync, then a round of {n} wake-ups, per {n} appends)",
            "  the most this machine allows"
        );
    };
    println!();
    println!("targets:");
    let check = |name: &str, ratio: f64, goal: f64, higher_is_better: bool| {
        let ok = if higher_is_better {
            ratio >= goal
        } else {
            ratio <= goal
        };
        println!(
            "  {name:<58} {ratio:>7.2}  (target {} {goal}) {}",
            if higher_is_better { "≥" } else { "≤" },
            if ok { "met" } else { "NOT MET" }
        );
    };
    check(
        "durable single producer / raw fdatasync floor (into zeros)",
        single / floor1,
        0.8,
        true,
    );
    check(
        "durable 8 producers / durable single producer",
        eight / single,
        6.0,
        true,
    );
    let most8 = ceiling(8, floor1, wake8, single);
    print_ceiling(8, most8);
    check(
        "    of what this machine allows",
        eight / single / most8,
        0.85,
        true,
    );
    check(
        "durable 64 producers / durable single producer",
        sixty_four / single,
        30.0,
        true,
    );
    let most64 = ceiling(64, floor1, wake64, single);
    print_ceiling(64, most64);
    check(
        "    of what this machine allows",
        sixty_four / single / most64,
        0.85,
        true,
    );
    check(
        "bulk append / SQLite one transaction",
        bulk / sq_bulk,
        1.2,
        true,
    );
    check(
        "bytes per event / JSON lines",
        per(runlog_bytes) / per(json_bytes),
        1.2,
        false,
    );
}
