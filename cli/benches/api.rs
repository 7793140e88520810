//! The live store and the API under load, through the real binary (`runlog serve`): prints
//! figures, asserts nothing about time. `cargo bench -p runlog-cli --bench api [-- board|readers|runs]`.
//!
//! 1. A run's board through the API while the run is live, on a 50,000-event run: p50, p99.
//! 2. 100 runs of 20 no-op tasks submitted at once to one server, against the same runs one
//!    after another: total time, events appended per second.
//! 3. 20 clients reading a live run 500 times each: requests per second, and how much longer
//!    the run takes than with nobody reading, in interleaved rounds (`RUNLOG_BENCH_ROUNDS`, 5),
//!    with the goal line (the median at most 1.15×), at the server's default pacing of reads
//!    (`RUNLOG_BENCH_READS_PER_SECOND=N` for another rate, 0 for none).

use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn runlog(store: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_runlog"));
    c.arg("--store").arg(store).env("NO_COLOR", "1");
    c
}

/// A keep-alive HTTP/1.1 connection to the API socket.
struct Conn(BufReader<UnixStream>);

impl Conn {
    fn open(store: &Path) -> Self {
        Self(BufReader::new(
            UnixStream::connect(store.join("api.sock")).unwrap(),
        ))
    }

    fn call(&mut self, method: &str, path: &str, body: &str) -> (u16, String) {
        let head = format!(
            "{method} {path} HTTP/1.1\r\nHost: runlog\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        );
        self.0.get_mut().write_all(head.as_bytes()).unwrap();
        let mut status = String::new();
        self.0.read_line(&mut status).unwrap();
        let code = status.split_whitespace().nth(1).unwrap().parse().unwrap();
        let mut length = 0;
        loop {
            let mut line = String::new();
            self.0.read_line(&mut line).unwrap();
            if line == "\r\n" {
                break;
            }
            if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                length = v.trim().parse().unwrap();
            }
        }
        let mut body = vec![0u8; length];
        self.0.read_exact(&mut body).unwrap();
        (code, String::from_utf8(body).unwrap())
    }
}

fn serve(store: &Path) -> Child {
    let mut serve = runlog(store);
    serve.arg("serve");
    // The server's own pacing of reads by default; another rate to compare with (0: none).
    if let Ok(rate) = std::env::var("RUNLOG_BENCH_READS_PER_SECOND") {
        serve.args(["--reads-per-second", &rate]);
    }
    let child = serve.stderr(Stdio::null()).spawn().unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    while UnixStream::connect(store.join("api.sock")).is_err() {
        assert!(Instant::now() < deadline, "runlog serve did not start");
        std::thread::sleep(Duration::from_millis(20));
    }
    child
}

fn stop(mut server: Child) {
    terminate(&server);
    server.wait().unwrap();
}

fn terminate(child: &Child) {
    Command::new("kill")
        .arg("-TERM")
        .arg(child.id().to_string())
        .status()
        .unwrap();
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

fn status_of(conn: &mut Conn, run: &str) -> String {
    let (_, body) = conn.call("GET", &format!("/v1/runs/{run}"), "");
    let v: serde_json::Value = serde_json::from_str(&body).unwrap();
    v["status"].as_str().unwrap_or_default().to_owned()
}

/// Workflow file of `tasks` no-op tasks, each after the previous when `chain`.
fn noop_workflow(dir: &Path, name: &str, tasks: usize, chain: bool) -> PathBuf {
    let mut toml = format!("name = \"{name}\"\n[settings]\njobs = 4\n");
    for i in 0..tasks {
        toml.push_str(&format!(
            "[[task]]\nid = \"t{i}\"\nrun = \"true\"\nrequires_testing = false\n"
        ));
        if chain && i > 0 {
            toml.push_str(&format!("after = [\"t{}\"]\n", i - 1));
        }
    }
    let path = dir.join(format!("{name}.toml"));
    std::fs::write(&path, toml).unwrap();
    path
}

fn start(conn: &mut Conn, wf: &Path, run: &str) {
    let body = serde_json::json!({"workflow": wf, "run": run}).to_string();
    let (code, answer) = conn.call("POST", "/v1/runs", &body);
    assert_eq!(code, 201, "{answer}");
}

fn wait_finished(conn: &mut Conn, runs: &[String]) {
    for run in runs {
        while status_of(conn, run) != "finished" {
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

fn events_of(conn: &mut Conn, runs: &[String]) -> u64 {
    runs.iter()
        .map(|r| {
            let (_, body) = conn.call("GET", &format!("/v1/runs/{r}"), "");
            let v: serde_json::Value = serde_json::from_str(&body).unwrap();
            v["seq"].as_u64().unwrap()
        })
        .sum()
}

fn board_latency(dir: &Path) {
    let store = dir.join("big");
    let events = runlog_core::synthetic::synthetic_run("big", 50_000, 200).unwrap();
    {
        let log = runlog_store::Log::open(&store, runlog_store::Options::default()).unwrap();
        runlog_replay::control::append(&log, "big", 0, &events).unwrap();
    }
    let server = serve(&store);
    let mut conn = Conn::open(&store);
    // A person appends while we read: the run is live, its head moves.
    let mut times = Vec::new();
    for i in 0..300 {
        if i % 10 == 0 {
            let note = serde_json::json!({"command": "post-message", "task": null, "from": "bench", "text": format!("note {i}")});
            conn.call("POST", "/v1/runs/big/commands", &note.to_string());
        }
        let t = Instant::now();
        let (code, _) = conn.call("GET", "/v1/runs/big", "");
        times.push(t.elapsed());
        assert_eq!(code, 200);
    }
    times.sort();
    println!(
        "1. board of a live {}-event run through the API, 300 reads (a note appended every 10): p50 {:.2} ms, p99 {:.2} ms",
        events.len(),
        percentile(&times, 0.5).as_secs_f64() * 1e3,
        percentile(&times, 0.99).as_secs_f64() * 1e3
    );
    stop(server);
}

fn concurrent_runs(dir: &Path) {
    let wf = noop_workflow(dir, "noop20", 20, false);
    let mut figures = Vec::new();
    for (label, at_once) in [("one after another", false), ("all at once", true)] {
        let store = dir.join(format!("many-{at_once}"));
        let server = serve(&store);
        let mut conn = Conn::open(&store);
        let runs: Vec<String> = (0..100).map(|i| format!("r{i}")).collect();
        let t = Instant::now();
        for run in &runs {
            start(&mut conn, &wf, run);
            if !at_once {
                wait_finished(&mut conn, std::slice::from_ref(run));
            }
        }
        wait_finished(&mut conn, &runs);
        let took = t.elapsed();
        let events = events_of(&mut conn, &runs);
        figures.push((label, took, events));
        stop(server);
    }
    for (label, took, events) in figures {
        println!(
            "2. 100 runs of 20 no-op tasks, {label}: {:.1} s, {events} events, {:.0} events/s",
            took.as_secs_f64(),
            events as f64 / took.as_secs_f64()
        );
    }
}

/// When the run's first event of `kind` happened (ms since the epoch).
fn event_at(conn: &mut Conn, run: &str, kind: &str) -> u64 {
    let (_, body) = conn.call("GET", &format!("/v1/runs/{run}/events?kind={kind}"), "");
    let v: serde_json::Value = serde_json::from_str(&body).unwrap();
    v["events"][0]["at"].as_u64().unwrap()
}

/// One run of the 150-task chain on a fresh server with `readers` clients reading its board
/// 500 times each: the run's own time (from its events: the readers may go on after it ended)
/// and, with readers, their reads a second while the run executed (the server paces them
/// then) and over all their reads.
fn run_with_readers(dir: &Path, wf: &Path, round: usize, readers: usize) -> (Duration, f64, f64) {
    let store = dir.join(format!("read-{round}-{readers}"));
    let server = serve(&store);
    let mut conn = Conn::open(&store);
    start(&mut conn, wf, "live");
    let clients: Vec<_> = (0..readers)
        .map(|_| {
            let store = store.clone();
            std::thread::spawn(move || {
                let mut c = Conn::open(&store);
                (0..500)
                    .map(|_| {
                        assert_eq!(c.call("GET", "/v1/runs/live", "").0, 200);
                        epoch_ms()
                    })
                    .collect::<Vec<u64>>()
            })
        })
        .collect();
    let reads_started = Instant::now();
    let done: Vec<u64> = clients
        .into_iter()
        .flat_map(|c| c.join().unwrap())
        .collect();
    let reading = reads_started.elapsed();
    wait_finished(&mut conn, &["live".to_owned()]);
    let (started, finished) = (
        event_at(&mut conn, "live", "run-started"),
        event_at(&mut conn, "live", "run-finished"),
    );
    let run_took = Duration::from_millis(finished - started);
    let during = done
        .iter()
        .filter(|at| (started..=finished).contains(*at))
        .count();
    stop(server);
    (
        run_took,
        during as f64 / run_took.as_secs_f64().max(1e-3),
        (readers * 500) as f64 / reading.as_secs_f64(),
    )
}

fn epoch_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

fn readers_against_a_live_run(dir: &Path) {
    let wf = noop_workflow(dir, "chain", 150, true);
    // A run takes a quarter of a second here and this VM's speed moves from one to the next:
    // rounds of the run alone and with readers, interleaved, and their median.
    let rounds: usize = std::env::var("RUNLOG_BENCH_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(5)
        .max(1);
    let mut ratios = Vec::new();
    for round in 0..rounds {
        let (alone, ..) = run_with_readers(dir, &wf, round, 0);
        let (read, paced, rate) = run_with_readers(dir, &wf, round, 20);
        let ratio = read.as_secs_f64() / alone.as_secs_f64();
        println!(
            "3. round {}: the run alone {:.2} s, with 20 clients x 500 board reads {:.2} s ({ratio:.2}x); {paced:.0} reads/s while it ran, {rate:.0} over all",
            round + 1,
            alone.as_secs_f64(),
            read.as_secs_f64(),
        );
        ratios.push(ratio);
    }
    ratios.sort_by(f64::total_cmp);
    let median = ratios[ratios.len() / 2];
    println!(
        "3. goal: a hosted run with 20 readers at most 1.15x its time alone: median {median:.2}x of {rounds} rounds ({:.2}x to {:.2}x): {}",
        ratios[0],
        ratios[ratios.len() - 1],
        if median <= 1.15 { "met" } else { "NOT MET" }
    );
}

fn main() {
    // `cargo bench --bench api -- readers` runs only the parts whose name contains the word.
    let only: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let dir = tempfile::tempdir().unwrap();
    type Part = fn(&Path);
    let parts: [(&str, Part); 3] = [
        ("board", board_latency),
        ("readers", readers_against_a_live_run),
        ("runs", concurrent_runs),
    ];
    for (name, part) in parts {
        if only.is_empty() || only.iter().any(|o| name.contains(o.as_str())) {
            part(dir.path());
        }
    }
}
