//! The process the power-loss test runs against a store on crashfs. It opens the store (as
//! runlog does after a crash), reports what it finds, then appends until the disk fails:
//!
//! ```text
//! crash-writer STORE CHECKPOINT_BYTES SEED [--check-only] [--from-archive]
//! ```
//!
//! `--from-archive` first throws sled's database away and rebuilds it with `repair` from the
//! store's archive: what it then reports is what the archive alone kept.
//!
//! Lines on stdout: `note TEXT` (what recovery set aside), `head RUN SEQ`, `damaged RUN WHAT`,
//! `wrong RUN SEQ` (a body that is not what was appended), `ready`; in one cycle of three,
//! `forgetting RUN` and `forgot RUN` around a forget of one run (never its thread's newest, so
//! no name comes back); then `ack RUN SEQ` after each acknowledged append and `error TEXT` when
//! appends stop. `open-failed TEXT` (exit 3)
//! when the store cannot be opened. Bodies are a function of (run, seq), so a reader can tell
//! a right event from a wrong one without remembering them.

use runlog_crashfs::Rng;
use runlog_store::{Durability, EventLog, Log, Options};
use std::io::Write;
use std::path::PathBuf;
use std::sync::Mutex;

/// Appending threads, each with runs of its own (so the writer commits groups of appends).
const THREADS: u64 = 2;

/// How many of each run's last records have their bodies compared on open.
const TAIL_CHECKED: u64 = 64;

fn say(out: &Mutex<std::io::Stdout>, line: &str) {
    let mut out = out.lock().unwrap_or_else(|p| p.into_inner());
    let _ = writeln!(out, "{line}");
    let _ = out.flush();
}

/// The body of event `seq` of `run`, from blake3 of both: mostly 100 to 1,000 bytes, one in
/// twenty 2 to 3.5 KB (past what a frame keeps inline, so through the blob path).
fn body(run: &str, seq: u64) -> Vec<u8> {
    let mut h = blake3::Hasher::new();
    h.update(run.as_bytes());
    h.update(&seq.to_le_bytes());
    let hash = h.finalize();
    let bytes = hash.as_bytes();
    let b = usize::from(bytes.first().copied().unwrap_or(0));
    let len = if b < 13 { 2100 + b * 100 } else { 100 + b * 4 };
    bytes.iter().copied().cycle().take(len).collect()
}

/// Reports every run: its head, damage, and any body that is not the one appended.
fn report(log: &Log, out: &Mutex<std::io::Stdout>) -> Result<(), runlog_store::StoreError> {
    for note in log.recovery_notes() {
        say(out, &format!("note {}", note.replace('\n', " ")));
    }
    for meta in log.runs()? {
        let run = meta.run;
        let verified = log.verify(&run)?;
        if let Some(damage) = &verified.damage {
            say(out, &format!("damaged {run} {damage}"));
        }
        let head = meta.head.map_or(0, |h| h.seq);
        say(out, &format!("head {run} {head}"));
        // Bodies of the recent tail (where cuts land); older records are covered by `verify`,
        // whose chain hashes every body.
        log.scan(
            &run,
            head.saturating_sub(TAIL_CHECKED) + 1,
            head,
            &mut |r| {
                if r.body != body(&run, r.seq).as_slice() {
                    say(out, &format!("wrong {run} {}", r.seq));
                }
                Ok(true)
            },
        )?;
    }
    say(out, "ready");
    Ok(())
}

fn append_forever(log: &Log, thread: u64, seed: u64, out: &Mutex<std::io::Stdout>) {
    let mut rng = Rng::new(seed ^ thread.wrapping_mul(0xA076_1D64_78BD_642F));
    let prefix = format!("t{thread}-r");
    let mut runs: Vec<(String, u64)> = log
        .runs()
        .unwrap_or_default()
        .into_iter()
        .filter(|m| m.run.starts_with(&prefix))
        .map(|m| (m.run, m.head.map_or(0, |h| h.seq)))
        .collect();
    // A run whose creation was lost in a cut may leave a gap: new names go past the highest.
    let mut next_name = runs
        .iter()
        .filter_map(|(r, _)| r.strip_prefix(&prefix)?.parse::<u64>().ok())
        .max()
        .map_or(0, |n| n + 1);
    loop {
        if runs.is_empty() || rng.below(40) == 0 {
            runs.push((format!("{prefix}{next_name}"), 0));
            next_name += 1;
        }
        let i = rng.below(runs.len() as u64) as usize;
        let Some((run, head)) = runs.get_mut(i) else {
            continue;
        };
        let n = 1 + rng.below(3);
        let bodies = (*head + 1..=*head + n).map(|s| body(run, s)).collect();
        let expected = (*head > 0).then_some(*head);
        match log.append(run, expected, bodies) {
            Ok(h) => {
                *head = h.seq;
                say(out, &format!("ack {run} {}", h.seq));
            }
            Err(e) => {
                say(out, &format!("error {}", e.to_string().replace('\n', " ")));
                return;
            }
        }
    }
}

/// In one cycle of three, forgets one run (not the newest of its thread: names never come
/// back), with the store closed as a forget needs it; the store is opened again after.
fn forget_one(
    log: Log,
    store: &std::path::Path,
    checkpoint_bytes: u64,
    seed: u64,
    out: &Mutex<std::io::Stdout>,
) -> Result<Log, runlog_store::StoreError> {
    let mut rng = Rng::new(seed ^ 0x5EED_F0E7);
    let mut runs: Vec<String> = log.runs()?.into_iter().map(|m| m.run).collect();
    let newest: Vec<String> = (0..THREADS)
        .filter_map(|t| {
            let prefix = format!("t{t}-r");
            runs.iter()
                .filter_map(|r| r.strip_prefix(&prefix)?.parse::<u64>().ok())
                .max()
                .map(|n| format!("{prefix}{n}"))
        })
        .collect();
    runs.retain(|r| !newest.contains(r));
    let chosen = runs.get(rng.below(runs.len().max(1) as u64) as usize);
    let Some(run) = chosen.filter(|_| rng.below(3) == 0).cloned() else {
        return Ok(log);
    };
    log.close()?;
    say(out, &format!("forgetting {run}"));
    runlog_store::forget(store, std::slice::from_ref(&run), &[])?;
    say(out, &format!("forgot {run}"));
    open(store, checkpoint_bytes)
}

fn open(store: &std::path::Path, checkpoint_bytes: u64) -> Result<Log, runlog_store::StoreError> {
    Log::open(
        store,
        Options {
            durability: Durability::Durable,
            create: true,
            checkpoint_bytes,
            ..Options::default()
        },
    )
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some(store), Some(Ok(checkpoint_bytes)), Some(Ok(seed))) = (
        args.first().map(PathBuf::from),
        args.get(1).map(|a| a.parse::<u64>()),
        args.get(2).map(|a| a.parse::<u64>()),
    ) else {
        eprintln!(
            "usage: crash-writer STORE CHECKPOINT_BYTES SEED [--check-only] [--from-archive]"
        );
        std::process::exit(2);
    };
    let check_only = args.iter().any(|a| a == "--check-only");
    let out = Mutex::new(std::io::stdout());
    if args.iter().any(|a| a == "--from-archive") {
        let rebuilt = std::fs::remove_dir_all(store.join("db"))
            .map_err(|e| e.to_string())
            .and_then(|()| runlog_store::repair(&store).map_err(|e| e.to_string()));
        if let Err(e) = rebuilt {
            say(
                &out,
                &format!("open-failed repair: {}", e.replace('\n', " ")),
            );
            std::process::exit(3);
        }
    }
    let opened = open(&store, checkpoint_bytes);
    let log = match opened {
        Ok(log) => log,
        Err(e) => {
            say(
                &out,
                &format!("open-failed {}", e.to_string().replace('\n', " ")),
            );
            std::process::exit(3);
        }
    };
    if let Err(e) = report(&log, &out) {
        say(
            &out,
            &format!("open-failed {}", e.to_string().replace('\n', " ")),
        );
        std::process::exit(3);
    }
    if check_only {
        return;
    }
    let log = match forget_one(log, &store, checkpoint_bytes, seed, &out) {
        Ok(log) => log,
        Err(e) => {
            say(&out, &format!("error {}", e.to_string().replace('\n', " ")));
            return;
        }
    };
    std::thread::scope(|s| {
        for t in 0..THREADS {
            let (log, out) = (&log, &out);
            s.spawn(move || append_forever(log, t, seed, out));
        }
    });
}
