//! What exporting a run as an OpenTelemetry trace costs, through the real binary:
//! - the export rate from history: a run of about 50,000 events (a no-op DAG) exported with
//!   `--format otlp-json -o FILE` and with `--otlp URL` to a receiver on loopback that accepts
//!   everything (so the figure is runlog's, not a receiver's);
//! - the live export's cost: a 1,000-task no-op DAG run with and without `--otlp` to that
//!   receiver, the best of three each.
//!
//! `cargo bench -p runlog-cli --bench otel`; `RUNLOG_BENCH_EXPORT_TASKS` (default 10,000 tasks,
//! about 50,000 events) and `RUNLOG_BENCH_LIVE_TASKS` (1,000) for other sizes. Prints its figures
//! beside the goal (live ≤ 5 % slower); asserts nothing about time.

#[path = "../tests/common/mod.rs"]
mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// An OTLP/HTTP receiver that accepts every request; counts the bytes it was sent.
fn sink() -> (String, Arc<AtomicU64>) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let bytes = Arc::new(AtomicU64::new(0));
    let counted = bytes.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let counted = counted.clone();
            std::thread::spawn(move || {
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut length = 0usize;
                let mut line = String::new();
                while reader.read_line(&mut line).unwrap_or(0) > 2 {
                    if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                        length = v.trim().parse().unwrap_or(0);
                    }
                    line.clear();
                }
                let mut body = vec![0; length];
                let _ = reader.read_exact(&mut body);
                counted.fetch_add(length as u64, Ordering::Relaxed);
                let mut stream = stream;
                let _ = stream.write_all(
                    b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\nconnection: close\r\n\r\n",
                );
            });
        }
    });
    (url, bytes)
}

fn runlog(store: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_runlog"));
    c.arg("--store")
        .arg(store)
        .env_remove("OTEL_EXPORTER_OTLP_ENDPOINT")
        .env_remove("RUNLOG_OTLP_ENDPOINT");
    c
}

fn run_dag(dir: &Path, n: usize, run: &str, otlp: Option<&str>) -> Duration {
    let wf = dir.join(format!("noop-{n}.toml"));
    std::fs::write(&wf, common::noop_dag(n, 8)).unwrap();
    let store = dir.join(format!("store-{run}"));
    let mut c = runlog(&store);
    c.args(["run", wf.to_str().unwrap(), "--quiet", "--run-id", run]);
    if let Some(url) = otlp {
        c.args(["--otlp", url]);
    }
    let started = Instant::now();
    let out = c.stdout(Stdio::null()).output().unwrap();
    let took = started.elapsed();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    took
}

fn env_or(key: &str, default: usize) -> usize {
    std::env::var(key)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn main() {
    let dir = tempfile::tempdir().unwrap();
    let (url, received) = sink();

    let n = env_or("RUNLOG_BENCH_EXPORT_TASKS", 10_000);
    run_dag(dir.path(), n, "big", None);
    let store = dir.path().join("store-big");
    let events = runlog(&store).args(["--json", "runs"]).output().unwrap();
    let events: serde_json::Value =
        serde_json::from_slice(events.stdout.split(|b| *b == b'\n').next().unwrap()).unwrap();
    let events = events[0]["events"].as_u64().unwrap_or(0);
    let file = dir.path().join("trace.json");
    let started = Instant::now();
    let out = runlog(&store)
        .args([
            "export",
            "big",
            "--format",
            "otlp-json",
            "-o",
            file.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    let to_file = started.elapsed();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let started = Instant::now();
    let out = runlog(&store)
        .args(["export", "big", "--otlp", &url])
        .output()
        .unwrap();
    let to_receiver = started.elapsed();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let spans = String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse::<u64>().ok())
        .unwrap_or(0);
    println!("export from history: {n} tasks, {events} events, {spans} spans");
    println!(
        "  otlp-json to a file: {:.2} s ({:.0} events/s, {} MB)",
        to_file.as_secs_f64(),
        events as f64 / to_file.as_secs_f64(),
        std::fs::metadata(&file).unwrap().len() / 1_000_000
    );
    println!(
        "  OTLP/HTTP protobuf to a receiver on loopback: {:.2} s ({:.0} events/s, {:.0} spans/s, {} KB sent)",
        to_receiver.as_secs_f64(),
        events as f64 / to_receiver.as_secs_f64(),
        spans as f64 / to_receiver.as_secs_f64(),
        received.load(Ordering::Relaxed) / 1_000
    );

    let n = env_or("RUNLOG_BENCH_LIVE_TASKS", 1_000);
    let mut without = Vec::new();
    let mut with = Vec::new();
    for round in 0..3 {
        without.push(run_dag(dir.path(), n, &format!("plain-{round}"), None));
        with.push(run_dag(
            dir.path(),
            n,
            &format!("traced-{round}"),
            Some(&url),
        ));
    }
    let best = |v: &[Duration]| v.iter().min().copied().unwrap_or_default().as_secs_f64();
    let (a, b) = (best(&without), best(&with));
    println!("live export, a {n}-task no-op DAG (--jobs 8), best of 3:");
    println!(
        "  without --otlp {a:.2} s, with --otlp {b:.2} s: {:+.1} % (goal: at most +5 %)",
        (b / a - 1.0) * 100.0
    );
}
