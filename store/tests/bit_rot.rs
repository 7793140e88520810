//! Bit rot in sled's own file: one flipped byte at every offset of a small store's `db/db`.
//!
//! For each offset the store is opened as a user would: it may refuse to open (sled cannot read
//! its file), or open and report damage, or open unharmed, but it never reports a run ok with
//! fewer events (or another head) than it had, and never forgets a run. Then `repair` rebuilds
//! sled from the archive and every run is back at its head hash.
//!
//! Two stores: one written in a single open (sled then loses the runs' tails, reported as
//! damage) and one opened by several processes (sled then cannot open at all). Optimised, every
//! offset sled has written (its file's non-zero extent, plus a page) is flipped, and one in 97
//! of the zeros after it; unoptimised, a sample; `RUNLOG_FLIP_ALL=1` flips every byte of the
//! file (about 25 minutes on 2 cores). The store lives in `/dev/shm` when there is one: each
//! offset costs an open, and up to two more with a repair.

use runlog_store::{repair, EventLog, Head, Log, Options};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

const RUNS: [&str; 3] = ["q1", "q2", "q3"];

fn scratch() -> tempfile::TempDir {
    let shm = Path::new("/dev/shm");
    if shm.is_dir() {
        if let Ok(dir) = tempfile::tempdir_in(shm) {
            return dir;
        }
    }
    tempfile::tempdir().unwrap()
}

/// Three finished runs, appended in several commits. `processes`: each run by a process of
/// its own and then two commands that only read (as `runlog` leaves a store it has used), or
/// all in one open.
fn build(store: &Path, processes: bool) -> BTreeMap<String, Head> {
    let mut heads = BTreeMap::new();
    let mut log = Some(Log::open(store, Options::default()).unwrap());
    for run in RUNS {
        let open = log.get_or_insert_with(|| Log::open(store, Options::default()).unwrap());
        for round in 0..4u64 {
            let bodies = (0..5)
                .map(|i| {
                    format!("{run} event {} {}", round * 5 + i + 1, "x".repeat(40)).into_bytes()
                })
                .collect();
            open.append(run, Some(round * 5), bodies).unwrap();
        }
        heads.insert(run.to_string(), open.head(run).unwrap().unwrap());
        if processes {
            log.take().unwrap().close().unwrap();
        }
    }
    if let Some(log) = log {
        log.close().unwrap();
    }
    for _ in 0..if processes { 2 } else { 0 } {
        let log = Log::open(store, Options::default()).unwrap();
        assert_eq!(log.runs().unwrap().len(), RUNS.len());
        log.close().unwrap();
    }
    heads
}

/// Every file of a store, by path relative to it.
fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                let rel = p.strip_prefix(dir).unwrap().to_path_buf();
                out.push((rel, std::fs::read(&p).unwrap()));
            }
        }
    }
    out
}

/// The pristine store again, as new files (new inodes: no lock of an earlier open applies).
fn restore(dir: &Path, files: &[(PathBuf, Vec<u8>)], flip: Option<usize>) {
    let _ = std::fs::remove_dir_all(dir);
    for (rel, bytes) in files {
        let p = dir.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        let mut bytes = bytes.clone();
        if rel == Path::new("db/db") {
            if let Some(at) = flip {
                bytes[at] ^= 0xff;
            }
        }
        std::fs::write(&p, bytes).unwrap();
    }
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700)).unwrap();
}

#[derive(Default, Debug)]
struct Tally {
    unopenable: u64,
    damage_reported: u64,
    unharmed: u64,
    repaired: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Seen {
    Unopenable,
    Damaged,
    Unharmed,
}

/// Opens the store after a flip: what it reports must be true of the original runs.
fn open_and_check(dir: &Path, heads: &BTreeMap<String, Head>, at: usize) -> Result<Seen, String> {
    let log = match Log::open(dir, Options::default()) {
        Ok(log) => log,
        Err(_) => return Ok(Seen::Unopenable),
    };
    let listed: Vec<String> = log
        .runs()
        .map_err(|e| e.to_string())?
        .into_iter()
        .map(|m| m.run)
        .collect();
    for run in heads.keys() {
        if !listed.contains(run) {
            return Err(format!(
                "offset {at}: run {run} is no longer listed: {listed:?}"
            ));
        }
    }
    let mut damaged = false;
    for (run, head) in heads {
        let report = match log.verify(run) {
            Ok(r) => r,
            Err(_) => {
                damaged = true;
                continue;
            }
        };
        if report.is_ok() {
            if report.verified != head.seq || report.head != Some(*head) {
                return Err(format!(
                    "offset {at}: run {run} reported ok with {} events and head {:?}; it had {} and {:?}",
                    report.verified, report.head, head.seq, head
                ));
            }
        } else {
            damaged = true;
        }
    }
    Ok(if damaged {
        Seen::Damaged
    } else {
        Seen::Unharmed
    })
}

fn repair_and_check(dir: &Path, heads: &BTreeMap<String, Head>, at: usize) -> Result<(), String> {
    let repaired = repair(dir).map_err(|e| format!("offset {at}: repair failed: {e}"))?;
    if !repaired.is_whole() {
        return Err(format!("offset {at}: repair left damage: {repaired:?}"));
    }
    let log = Log::open(dir, Options::default()).map_err(|e| format!("offset {at}: {e}"))?;
    for (run, head) in heads {
        let report = log.verify(run).map_err(|e| e.to_string())?;
        if !report.is_ok() || report.head != Some(*head) {
            return Err(format!(
                "offset {at}: after repair {run} is {report:?}, not {head:?}"
            ));
        }
    }
    Ok(())
}

/// Which offsets to flip in a file whose first `written` bytes sled wrote (zeros after).
fn offsets(len: usize, written: usize) -> Vec<usize> {
    let every = std::env::var("RUNLOG_FLIP_ALL").as_deref() == Ok("1");
    let dense_end = (written + 4096).min(len);
    // Unoptimised (the workspace's debug test run), a sample; `.ci/run` runs it optimised.
    let (near, far) = if cfg!(debug_assertions) {
        (11, 997)
    } else {
        (1, 97)
    };
    (0..len)
        .filter(|&at| every || (at < dense_end && at % near == 0) || at % far == 0)
        .collect()
}

#[test]
fn a_flipped_byte_in_sleds_file_of_a_store_written_once_is_reported_and_repaired() {
    flip_every_offset(false);
}

#[test]
fn a_flipped_byte_in_sleds_file_of_a_store_opened_many_times_is_reported_and_repaired() {
    flip_every_offset(true);
}

fn flip_every_offset(processes: bool) {
    let root = scratch();
    let pristine_dir = root.path().join("pristine");
    let heads = build(&pristine_dir, processes);
    let files = snapshot(&pristine_dir);
    let db = &files
        .iter()
        .find(|(p, _)| p == Path::new("db/db"))
        .unwrap()
        .1;
    let written = db.iter().rposition(|b| *b != 0).map_or(0, |p| p + 1);
    let offsets = offsets(db.len(), written);
    eprintln!(
        "flipping {} of {} bytes of db/db ({} written by sled)",
        offsets.len(),
        db.len(),
        written
    );
    let started = std::time::Instant::now();
    let workers = 2;
    let tallies: Vec<Result<Tally, String>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..workers)
            .map(|w| {
                let (files, heads, offsets) = (&files, &heads, &offsets);
                let dir = root.path().join(format!("worker-{w}"));
                s.spawn(move || -> Result<Tally, String> {
                    let mut tally = Tally::default();
                    for &at in offsets.iter().skip(w).step_by(workers) {
                        restore(&dir, files, Some(at));
                        let seen = open_and_check(&dir, heads, at)?;
                        match seen {
                            Seen::Unopenable => tally.unopenable += 1,
                            Seen::Damaged => tally.damage_reported += 1,
                            Seen::Unharmed => tally.unharmed += 1,
                        }
                        // A repair after every damage, and after one in 31 of the rest.
                        if seen != Seen::Unharmed || at % 31 == 0 {
                            repair_and_check(&dir, heads, at)?;
                            tally.repaired += 1;
                        }
                    }
                    Ok(tally)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let mut total = Tally::default();
    for t in tallies {
        let t = t.unwrap_or_else(|e| panic!("{e}"));
        total.unopenable += t.unopenable;
        total.damage_reported += t.damage_reported;
        total.unharmed += t.unharmed;
        total.repaired += t.repaired;
    }
    eprintln!("{total:?} in {:.1} s", started.elapsed().as_secs_f64());
    assert_eq!(
        total.unopenable + total.damage_reported + total.unharmed,
        offsets.len() as u64
    );
}
