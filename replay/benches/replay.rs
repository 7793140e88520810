//! `cargo bench -p runlog-replay`: replaying a synthetic 1,000,000-event run (2,000 tasks,
//! long retry loops) into every projection, from runlog's store (recorded with the snapshots
//! its writer writes, and again without them) and, side by side, from SQLite and from JSON
//! lines; verify; `state_at` at random seqs, in one process and each in a fresh one; the
//! largest snapshot's encode and decode; peak memory; the chain's hashes alone, and what two
//! other chains would cost instead (a hash a record keyed by the one before, and blocks of
//! records hashed at once).
//!
//! Each measurement runs in a child process of this binary, so its peak resident memory
//! (VmHWM) is its own. RUNLOG_BENCH_EVENTS and RUNLOG_BENCH_DIR override size and location;
//! RUNLOG_BENCH_ROUNDS sets the rounds of the replays beside SQLite's (3).

use runlog_core::codec::{decode_event, encode_event};
use runlog_core::projections::Projections;
use runlog_core::synthetic::synthetic_run;
use runlog_core::Event;
use runlog_replay::Replay;
use runlog_store::{EventLog, Log, Options};
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

const RUN: &str = "bench";

/// The allocator the `runlog` binary uses, so that the figures are the binary's.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn peak_rss_mb() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(0.0, |kb| kb / 1024.0)
}

fn observe_all(p: &mut Projections, e: &Event) {
    p.observe(e, &mut |_| None);
}

/// Rounds of the replays and SQLite's (`RUNLOG_BENCH_ROUNDS`, 3 by default).
fn replay_rounds() -> usize {
    std::env::var("RUNLOG_BENCH_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|&n| n > 0)
        .unwrap_or(3)
}

/// Queries of `state_at` the bench times in one process.
const STATE_AT_QUERIES: usize = 300;

/// Queries of `state_at` the bench times each in a fresh process.
const FRESH_QUERIES: usize = 20;

/// The seqs the `state_at` queries ask for: the same pseudo-random ones in every run.
fn random_seqs(head: u64) -> impl Iterator<Item = u64> {
    let mut x: u64 = 0x2545_f491_4f6c_dd1d;
    std::iter::repeat_with(move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        1 + x % head
    })
}

/// Processor time this process has used so far, on all its threads, user and system.
fn processor_seconds() -> f64 {
    use nix::sys::resource::{getrusage, UsageWho};
    getrusage(UsageWho::RUSAGE_SELF).map_or(f64::NAN, |u| {
        let (user, system) = (u.user_time(), u.system_time());
        (user.tv_sec() + system.tv_sec()) as f64 + (user.tv_usec() + system.tv_usec()) as f64 / 1e6
    })
}

/// Runs one measurement and prints `key=value` lines for the parent.
fn child(mode: &str, dir: &Path) {
    let t = Instant::now();
    match mode {
        "replay-runlog" | "replay-runlog-again" | "replay-runlog-no-snapshots" => {
            let log = Log::open(&dir.join("store"), Options::default()).unwrap();
            let every = if mode.ends_with("no-snapshots") {
                0
            } else {
                runlog_replay::DEFAULT_SNAPSHOT_EVERY
            };
            let p = Replay::new(&log)
                .snapshot_every(every)
                .project(RUN, None, None)
                .unwrap();
            let n = p.summary.events;
            println!("rate={}", n as f64 / t.elapsed().as_secs_f64());
            println!("tasks={}", p.state.tasks.len());
        }
        "open" => {
            let log = Log::open(&dir.join("store"), Options::default()).unwrap();
            println!("open_ms={}", t.elapsed().as_secs_f64() * 1e3);
            println!("head={}", log.head(RUN).unwrap().unwrap().seq);
        }
        "verify" => {
            let log = Log::open(&dir.join("store"), Options::default()).unwrap();
            let report = log.verify(RUN).unwrap();
            assert!(report.is_ok());
            println!(
                "rate={}",
                report.verified as f64 / t.elapsed().as_secs_f64()
            );
        }
        "state-at-fresh" => {
            // One query in a process that has read nothing yet, as `runlog status --at` is:
            // the query numbered RUNLOG_BENCH_QUERY of the warm ones below.
            let k: usize = std::env::var("RUNLOG_BENCH_QUERY")
                .unwrap()
                .parse()
                .unwrap();
            let log = Log::open(&dir.join("store"), Options::default()).unwrap();
            let replay = Replay::new(&log);
            let head = replay.head_seq(RUN).unwrap();
            let seq = random_seqs(head).nth(k).unwrap();
            let t = Instant::now();
            let s = replay.state_at(RUN, seq).unwrap();
            println!("ms={}", t.elapsed().as_secs_f64() * 1e3);
            assert_eq!(s.seq, seq);
        }
        "state-at" => {
            let log = Log::open(&dir.join("store"), Options::default()).unwrap();
            let replay = Replay::new(&log);
            let head = replay.head_seq(RUN).unwrap();
            let mut times = Vec::new();
            for seq in random_seqs(head).take(STATE_AT_QUERIES) {
                let t = Instant::now();
                let s = replay.state_at(RUN, seq).unwrap();
                times.push(t.elapsed().as_secs_f64() * 1e3);
                assert_eq!(s.seq, seq);
            }
            times.sort_by(f64::total_cmp);
            println!("median_ms={}", times[times.len() / 2]);
            println!("p99_ms={}", times[times.len() * 99 / 100]);
        }
        "snapshot-codec" => {
            // The head's state, the largest, encoded and decoded as a snapshot would be: the
            // decode is most of a `state_at` on a large run.
            let log = Log::open(&dir.join("store"), Options::default()).unwrap();
            let state = Replay::new(&log).head_state(RUN).unwrap();
            let bytes = runlog_core::codec::encode_state(&state).unwrap();
            let (mut encode, mut decode, mut copy) = (Vec::new(), Vec::new(), Vec::new());
            for _ in 0..100 {
                // What a writer pays to start again from the head after losing a race.
                let t = Instant::now();
                drop(std::hint::black_box(state.clone()));
                copy.push(t.elapsed().as_secs_f64() * 1e3);
                let t = Instant::now();
                std::hint::black_box(runlog_core::codec::encode_state(&state).unwrap());
                encode.push(t.elapsed().as_secs_f64() * 1e3);
                let t = Instant::now();
                let back = runlog_core::codec::decode_state(&bytes).unwrap();
                decode.push(t.elapsed().as_secs_f64() * 1e3);
                assert_eq!(back.tasks.len(), state.tasks.len());
            }
            encode.sort_by(f64::total_cmp);
            decode.sort_by(f64::total_cmp);
            copy.sort_by(f64::total_cmp);
            println!("tasks={}", state.tasks.len());
            println!("bytes={}", bytes.len());
            println!("encode_ms={}", encode[encode.len() / 2]);
            println!("decode_ms={}", decode[decode.len() / 2]);
            println!("copy_ms={}", copy[copy.len() / 2]);
        }
        "chain-alone" => {
            // The chain's hashes alone, over the run's records held in memory: what every read
            // of the log pays for its audit, whatever the store reads from.
            let log = Log::open(&dir.join("store"), Options::default()).unwrap();
            let head = log.head(RUN).unwrap().unwrap();
            let mut bodies = Vec::with_capacity(head.seq as usize);
            log.scan_bodies(RUN, 1, head.seq, &mut |_, body| {
                bodies.push(body.to_vec());
                Ok(true)
            })
            .unwrap();
            // The blocked chain, as a reader checks it: a block's records as their forms,
            // taken in at once (a reader takes in a frame's at once).
            let forms: Vec<Vec<u8>> = bodies
                .chunks(runlog_store::blocks::BLOCK as usize)
                .map(|block| {
                    block
                        .iter()
                        .flat_map(|b| runlog_store::blocks::form(b))
                        .collect()
                })
                .collect();
            let t = Instant::now();
            let mut blocks = runlog_store::blocks::Blocks::genesis(RUN);
            for (block, forms) in bodies
                .chunks(runlog_store::blocks::BLOCK as usize)
                .zip(&forms)
            {
                blocks.absorb(forms, block.len() as u64);
            }
            println!("chain_s={}", t.elapsed().as_secs_f64());
            assert_eq!(
                blocks.hash(),
                head.hash,
                "the chain recomputed ends at the run's head"
            );
            // The chain of runs recorded before the blocked one: a hash a record.
            let t = Instant::now();
            let mut hash = runlog_store::frame::genesis(RUN);
            for body in &bodies {
                hash = runlog_store::frame::link(&hash, body);
            }
            println!("chain_per_record_s={}", t.elapsed().as_secs_f64());
            std::hint::black_box(hash);
        }
        "replay-sqlite" => {
            let db = rusqlite::Connection::open(dir.join("events.sqlite")).unwrap();
            let mut stmt = db
                .prepare("SELECT body FROM events WHERE run = 1 ORDER BY seq")
                .unwrap();
            let mut rows = stmt.query([]).unwrap();
            let mut p = Projections::default();
            let mut n = 0u64;
            while let Some(row) = rows.next().unwrap() {
                let body: Vec<u8> = row.get(0).unwrap();
                observe_all(&mut p, &decode_event(&body).unwrap());
                n += 1;
            }
            println!("rate={}", n as f64 / t.elapsed().as_secs_f64());
        }
        "replay-jsonl" => {
            let f = BufReader::new(std::fs::File::open(dir.join("events.jsonl")).unwrap());
            let mut p = Projections::default();
            let mut n = 0u64;
            for line in f.lines() {
                let e: Event = serde_json::from_str(&line.unwrap()).unwrap();
                observe_all(&mut p, &e);
                n += 1;
            }
            println!("rate={}", n as f64 / t.elapsed().as_secs_f64());
        }
        other => panic!("unknown mode {other}"),
    }
    println!("peak_rss_mb={}", peak_rss_mb());
    println!("seconds={}", t.elapsed().as_secs_f64());
    println!("cpu_s={}", processor_seconds());
}

/// The run's snapshots in the store, counted outside the measured child (the store is closed
/// again before the child opens it).
fn snapshot_files(dir: &Path) -> usize {
    let log = Log::open(&dir.join("store"), Options::default()).unwrap();
    runlog_replay::snapshot::list(&log, RUN).len()
}

/// A replay measured with the number of snapshots it wrote.
fn measure_writes(dir: &Path, mode: &str) -> (std::collections::BTreeMap<String, f64>, usize) {
    let before = snapshot_files(dir);
    let measured = measure(dir, mode);
    (measured, snapshot_files(dir).saturating_sub(before))
}

fn measure(dir: &Path, mode: &str) -> std::collections::BTreeMap<String, f64> {
    measure_with(dir, mode, &[])
}

fn measure_with(
    dir: &Path,
    mode: &str,
    env: &[(&str, String)],
) -> std::collections::BTreeMap<String, f64> {
    let out = Command::new(std::env::current_exe().unwrap())
        .args(["--child", mode])
        .arg(dir)
        .envs(env.iter().map(|(k, v)| (k, v)))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{mode} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_once('='))
        .filter_map(|(k, v)| v.parse().ok().map(|v| (k.to_owned(), v)))
        .collect()
}

fn prepare(dir: &Path, n: usize) {
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir).unwrap();
    eprintln!("generating {n} events ...");
    let events = synthetic_run(RUN, n, 2_000).unwrap();
    let bodies: Vec<Vec<u8>> = events.iter().map(|e| encode_event(e).unwrap()).collect();
    eprintln!("writing the runlog store ...");
    {
        // As a run's writer records it: each append folded, and the snapshots due on it
        // written (what the engine's session does).
        let log = Log::open(&dir.join("store"), Options::default()).unwrap();
        let replay = Replay::new(&log);
        let mut schedule = replay.snapshot_schedule(RUN, 0);
        let mut state = runlog_core::RunState::default();
        let mut head = 0;
        for (bodies, events) in bodies.chunks(10_000).zip(events.chunks(10_000)) {
            let appended = log.append(RUN, Some(head), bodies.to_vec()).unwrap();
            head = appended.seq;
            for event in events {
                replay.apply(RUN, &mut state, event).unwrap();
                let hash = (state.seq == head).then_some(&appended.hash);
                replay.recorded(RUN, &state, true, hash, &mut schedule);
            }
        }
    }
    eprintln!("writing SQLite ...");
    {
        let mut db = rusqlite::Connection::open(dir.join("events.sqlite")).unwrap();
        db.execute_batch("PRAGMA journal_mode=WAL; CREATE TABLE events (run INTEGER, seq INTEGER, body BLOB, PRIMARY KEY (run, seq)) WITHOUT ROWID;").unwrap();
        let tx = db.transaction().unwrap();
        {
            let mut stmt = tx.prepare("INSERT INTO events VALUES (1, ?1, ?2)").unwrap();
            for (i, b) in bodies.iter().enumerate() {
                stmt.execute(rusqlite::params![i as i64 + 1, b]).unwrap();
            }
        }
        tx.commit().unwrap();
    }
    eprintln!("writing JSON lines ...");
    let mut w = BufWriter::new(std::fs::File::create(dir.join("events.jsonl")).unwrap());
    for e in &events {
        serde_json::to_writer(&mut w, e).unwrap();
        w.write_all(b"\n").unwrap();
    }
    w.flush().unwrap();
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == "--child") {
        child(&args[i + 1], Path::new(&args[i + 2]));
        return;
    }
    let n: usize = std::env::var("RUNLOG_BENCH_EVENTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1_000_000);
    let dir = std::env::var_os("RUNLOG_BENCH_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/bench-replay"));
    // RUNLOG_BENCH_REUSE=1 measures the stores an earlier run prepared (with the same size).
    if std::env::var_os("RUNLOG_BENCH_REUSE").is_none() || !dir.join("events.jsonl").exists() {
        prepare(&dir, n);
    }
    eprintln!("measuring ...");
    let f = figure;
    // The run as its writer recorded it, snapshots included: its first replay, again, and
    // SQLite's beside them, in rounds. This VM's speed moves by a third within a minute, so
    // each ratio is taken within its round and the median round is reported. Only the first
    // round's first replay is the run's first; it writes no snapshots, so later rounds repeat
    // the same work.
    let mut rounds: Vec<_> = (0..replay_rounds())
        .map(|_| {
            let (first, wrote) = measure_writes(&dir, "replay-runlog");
            let again = measure(&dir, "replay-runlog-again");
            let sqlite = measure(&dir, "replay-sqlite");
            let ratio = f(&first, "rate").min(f(&again, "rate")) / f(&sqlite, "rate");
            (ratio, first, again, sqlite, wrote)
        })
        .collect();
    let first_wrote = rounds.first().map_or(0, |r| r.4);
    let ratios: Vec<String> = rounds.iter().map(|r| format!("{:.2}", r.0)).collect();
    rounds.sort_by(|a, b| a.0.total_cmp(&b.0));
    let (ratio, first, again, sqlite, _) = rounds.swap_remove(rounds.len() / 2);
    let verify = measure(&dir, "verify");
    let state_at = measure(&dir, "state-at");
    let fresh: Vec<_> = (0..FRESH_QUERIES)
        .map(|k| {
            measure_with(
                &dir,
                "state-at-fresh",
                &[("RUNLOG_BENCH_QUERY", k.to_string())],
            )
        })
        .collect();
    let codec = measure(&dir, "snapshot-codec");
    let chain = measure(&dir, "chain-alone");
    let jsonl = measure(&dir, "replay-jsonl");
    // A store without the snapshots (recorded before its writer wrote them, or its cache
    // cleared): the replay writes them, the same ones.
    let _ = std::fs::remove_dir_all(dir.join("store/cache"));
    let (unsnapshotted, unsnapshotted_wrote) = measure_writes(&dir, "replay-runlog");
    println!();
    println!("runlog-replay benchmark: {n} synthetic events, {} tasks, all projections (state, audit, summary, supervisor stack)", f(&first, "tasks"));
    println!();
    println!(
        "| {:<58} | {:>14} | {:>14} |",
        "measurement", "result", "peak RSS (MB)"
    );
    println!("|{:-<60}|{:-<16}|{:-<16}|", "", "", "");
    let row = |name: &str, value: String, m: &std::collections::BTreeMap<String, f64>| {
        println!(
            "| {name:<58} | {value:>14} | {:>14.1} |",
            f(m, "peak_rss_mb")
        );
    };
    row(
        "runlog full replay, first, with its snapshots, events/s",
        format!("{:.0}", f(&first, "rate")),
        &first,
    );
    row(
        "runlog full replay, again, events/s",
        format!("{:.0}", f(&again, "rate")),
        &again,
    );
    row(
        "runlog full replay, no snapshots (writes them), events/s",
        format!("{:.0}", f(&unsnapshotted, "rate")),
        &unsnapshotted,
    );
    row(
        "runlog verify (checksums + chain), events/s",
        format!("{:.0}", f(&verify, "rate")),
        &verify,
    );
    row(
        &format!("runlog state_at, {STATE_AT_QUERIES} random seqs, median ms"),
        format!("{:.2}", f(&state_at, "median_ms")),
        &state_at,
    );
    row(
        &format!("runlog state_at, {STATE_AT_QUERIES} random seqs, p99 ms"),
        format!("{:.2}", f(&state_at, "p99_ms")),
        &state_at,
    );
    let mut fresh_ms: Vec<f64> = fresh.iter().map(|m| f(m, "ms")).collect();
    fresh_ms.sort_by(f64::total_cmp);
    let fresh_peak = fresh
        .iter()
        .max_by(|a, b| f(a, "peak_rss_mb").total_cmp(&f(b, "peak_rss_mb")))
        .unwrap();
    row(
        &format!("runlog state_at, 1 query a fresh process ({FRESH_QUERIES}), median ms"),
        format!("{:.2}", fresh_ms[fresh_ms.len() / 2]),
        fresh_peak,
    );
    row(
        "runlog state_at, 1 query a fresh process, slowest ms",
        format!("{:.2}", fresh_ms[fresh_ms.len() - 1]),
        fresh_peak,
    );
    row(
        &format!(
            "snapshot of the head, {:.0} tasks, {:.0} B: encode ms",
            f(&codec, "tasks"),
            f(&codec, "bytes")
        ),
        format!("{:.2}", f(&codec, "encode_ms")),
        &codec,
    );
    row(
        "snapshot of the head: decode ms (both medians of 100)",
        format!("{:.2}", f(&codec, "decode_ms")),
        &codec,
    );
    row(
        "the head's state copied and dropped: ms (median of 100)",
        format!("{:.3}", f(&codec, "copy_ms")),
        &codec,
    );
    row(
        "SQLite (WAL) full replay, events/s",
        format!("{:.0}", f(&sqlite, "rate")),
        &sqlite,
    );
    row(
        "the chain alone, by blocks of 64 records, in memory, ms",
        format!("{:.0}", f(&chain, "chain_s") * 1e3),
        &chain,
    );
    row(
        "the per-record chain of older runs, the same records, ms",
        format!("{:.0}", f(&chain, "chain_per_record_s") * 1e3),
        &chain,
    );
    row(
        "JSON lines full replay, events/s",
        format!("{:.0}", f(&jsonl, "rate")),
        &jsonl,
    );
    println!();
    println!(
        "snapshots written: {first_wrote} by the first replay of the run as recorded, {unsnapshotted_wrote} by the replay without them"
    );
    targets(
        &Replays {
            first,
            again,
            sqlite,
            unsnapshotted,
        },
        (ratio, &ratios),
        &chain,
        &verify,
        &state_at,
    );
}

/// One figure a measuring child printed (NaN when it printed none).
fn figure(m: &Figures, k: &str) -> f64 {
    m.get(k).copied().unwrap_or(f64::NAN)
}

/// What a measuring child printed, by name.
type Figures = std::collections::BTreeMap<String, f64>;

/// The replays the targets compare.
struct Replays {
    first: Figures,
    again: Figures,
    sqlite: Figures,
    unsnapshotted: Figures,
}

/// Each target: the figure measured, the goal, met or not, with what bounds it here.
fn targets(
    replays: &Replays,
    (ratio, ratios): (f64, &[String]),
    chain: &Figures,
    verify: &Figures,
    state_at: &Figures,
) {
    let f = figure;
    let Replays {
        first,
        again,
        sqlite,
        unsnapshotted,
    } = replays;
    println!();
    println!("targets:");
    let best = f(first, "rate").min(f(again, "rate"));
    let check = |name: &str, v: f64, goal: f64, more: bool| {
        let ok = if more { v >= goal } else { v <= goal };
        println!(
            "  {name:<52} {v:>12.2} (target {} {goal}) {}",
            if more { "≥" } else { "≤" },
            if ok { "met" } else { "NOT MET" }
        );
    };
    check(
        "full replay events/s (slower of the two runs)",
        best,
        2_000_000.0,
        true,
    );
    check(
        "full replay / SQLite baseline (slower of the two runs)",
        ratio,
        1.5,
        true,
    );
    println!(
        "  {:<52} {:>12} (the median round is the one above and in the table)",
        "  each round",
        ratios.join(", ")
    );
    println!(
        "  {:<52} {:>12.2} (writing the snapshots the run's writer writes)",
        "  without snapshots yet / SQLite",
        f(unsnapshotted, "rate") / f(sqlite, "rate")
    );
    // A replay cannot take less than its processor time over the machine's cores; with a
    // cheaper chain, its processor time would lose the difference between the two chains.
    let cores = std::thread::available_parallelism().map_or(1, usize::from) as f64;
    let sqlite_s = f(sqlite, "seconds");
    let again_cpu = f(again, "cpu_s");
    println!(
        "  {:<52} {:>12.2} (processor time / wall time of the replay again, of {cores})",
        "  cores kept busy",
        again_cpu / f(again, "seconds")
    );
    println!(
        "  {:<52} {:>12.2} (SQLite's time / (the replay again's processor time / {cores}))",
        "  the most its processor time allows",
        sqlite_s * cores / again_cpu
    );
    println!(
        "  {:<52} {:>12.2} (the same with the per-record chain of older runs)",
        "  the most it would allow on the per-record chain",
        sqlite_s * cores / (again_cpu - f(chain, "chain_s") + f(chain, "chain_per_record_s"))
    );
    check("verify events/s", f(verify, "rate"), 1_000_000.0, true);
    check("state_at p99 ms", f(state_at, "p99_ms"), 3.0, false);
    check(
        "peak RSS during the replay, MB",
        f(first, "peak_rss_mb")
            .max(f(again, "peak_rss_mb"))
            .max(f(unsnapshotted, "peak_rss_mb")),
        128.0,
        false,
    );
}
