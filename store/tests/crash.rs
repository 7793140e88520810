//! kill -9 crash loop: a child process appends durably and prints every acknowledged seq; the
//! parent kills it at a random moment, reopens the store, and checks that every acknowledged
//! record is present and intact and that the chain verifies. 100 iterations by default;
//! `RUNLOG_CRASH_ITERATIONS=N` for more.

use runlog_store::*;
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const CHILD_ENV: &str = "RUNLOG_CRASH_CHILD_STORE";
const RUNS: [&str; 2] = ["crash-a", "crash-b"];

/// Deterministic body of a seq; every 37th is large enough to spill into the blob area.
fn body_for(run: &str, seq: u64) -> Vec<u8> {
    let pad = if seq % 37 == 0 {
        5_000
    } else {
        (seq % 50) as usize
    };
    format!("{run}:{seq}:{}", "x".repeat(pad)).into_bytes()
}

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

fn append_forever(log: &Log, run: &str, seed: u64) -> ! {
    let mut rng = Rng(seed | 1);
    let mut head = log.head(run).unwrap().map_or(0, |h| h.seq);
    loop {
        let n = 1 + rng.next() % 6;
        let bodies = (head + 1..=head + n).map(|s| body_for(run, s)).collect();
        head = log.append(run, Some(head), bodies).unwrap().seq;
        let mut out = std::io::stdout().lock();
        writeln!(out, "ACK {run} {head}").unwrap();
        out.flush().unwrap();
    }
}

#[test]
#[ignore = "the child of kill_9_never_loses_an_acknowledged_append; it runs only when spawned by it"]
fn crash_child() {
    let Some(store) = std::env::var_os(CHILD_ENV) else {
        return;
    };
    let log = Log::open(Path::new(&store), Options::default()).unwrap();
    let seed = u64::from(std::process::id());
    std::thread::scope(|s| {
        s.spawn(|| append_forever(&log, RUNS[1], seed.rotate_left(17)));
        append_forever(&log, RUNS[0], seed)
    });
}

fn check_store(store: &Path, acked: &BTreeMap<String, u64>) -> u64 {
    let log = Log::open(store, Options::default()).unwrap();
    let mut records = 0;
    for run in RUNS {
        let want = acked.get(run).copied().unwrap_or(0);
        let report = log.verify(run).unwrap();
        assert!(report.is_ok(), "{run}: {:?}", report.damage);
        let head = log.head(run).unwrap().map_or(0, |h| h.seq);
        assert!(
            head >= want,
            "{run}: acknowledged seq {want} lost, head is {head}"
        );
        for r in log.read(run, 1, head, Direction::Forward).unwrap() {
            assert_eq!(r.body, body_for(run, r.seq), "{run} seq {} damaged", r.seq);
        }
        records += head;
    }
    records
}

#[test]
fn kill_9_never_loses_an_acknowledged_append() {
    let iterations: u32 = std::env::var("RUNLOG_CRASH_ITERATIONS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100);
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let exe = std::env::current_exe().unwrap();
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut acked: BTreeMap<String, u64> = BTreeMap::new();
    let started = Instant::now();
    for i in 0..iterations {
        let mut child = Command::new(&exe)
            .args([
                "crash_child",
                "--exact",
                "--ignored",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(CHILD_ENV, &store)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = crossbeam_channel::unbounded::<(String, u64)>();
        let reader = std::thread::spawn(move || {
            for line in BufReader::new(stdout)
                .lines()
                .map_while(std::result::Result::ok)
            {
                if let Some(rest) = line.strip_prefix("ACK ") {
                    if let Some((run, seq)) = rest.split_once(' ') {
                        let _ = tx.send((run.to_owned(), seq.parse().unwrap()));
                    }
                }
            }
        });
        // Kill at a random moment after the child has acknowledged at least one append.
        let first = rx
            .recv_timeout(Duration::from_secs(30))
            .unwrap_or_else(|_| panic!("iteration {i}: child never acknowledged"));
        std::thread::sleep(Duration::from_micros(rng.next() % 40_000));
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
        reader.join().unwrap();
        for (run, seq) in std::iter::once(first).chain(rx.try_iter()) {
            let e = acked.entry(run).or_default();
            *e = (*e).max(seq);
        }
        check_store(&store, &acked);
    }
    let total = check_store(&store, &acked);
    eprintln!(
        "crash loop: {iterations} kill -9 iterations, {total} records, acknowledged heads {acked:?}, {:.1}s",
        started.elapsed().as_secs_f64()
    );
    assert!(acked.values().all(|&s| s > 0));
}
