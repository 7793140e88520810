//! The runner's own cost (issue 14): no-op DAGs of N tasks run through the real runner with
//! real processes (`runlog run --jobs 8`), beside the floor of running the same N processes
//! with `xargs -P 8 sh -c true` in the same run. Prints the ratio and the cost per task;
//! asserts nothing about time.
//!
//! `cargo bench -p runlog-cli --bench runner` (1,000 and 10,000 tasks);
//! `RUNLOG_BENCH_TASKS=1000,10000,50000` for other sizes.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use std::fmt::Write as _;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const JOBS: u32 = 8;

/// A DAG of `n` no-op tasks: each waits for up to two earlier ones (a fixed, seeded shape), so
/// readiness changes as the run goes, as in a real plan.
fn dag(n: usize) -> String {
    let mut toml = format!("name = \"noop\"\n[settings]\njobs = {JOBS}\n");
    let mut seed: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    for i in 0..n {
        let _ = write!(
            toml,
            "[[task]]\nid = \"t{i}\"\nrun = \"true\"\nrequires_testing = false\n"
        );
        if i >= 16 {
            let a = i - 1 - (next() as usize % 16);
            let b = i - 1 - (next() as usize % 16);
            let after = if a == b {
                format!("\"t{a}\"")
            } else {
                format!("\"t{a}\", \"t{b}\"")
            };
            let _ = writeln!(toml, "after = [{after}]");
        }
    }
    toml
}

fn runner(dir: &Path, n: usize) -> Duration {
    let wf = dir.join(format!("noop-{n}.toml"));
    std::fs::write(&wf, dag(n)).unwrap();
    let store = dir.join(format!("store-{n}"));
    let started = Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_runlog"))
        .arg("--store")
        .arg(&store)
        .args(["run", wf.to_str().unwrap(), "--quiet", "--run-id", "noop"])
        .stdout(Stdio::null())
        .output()
        .unwrap();
    let took = started.elapsed();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    took
}

/// The floor: the same number of `sh -c true` processes, `JOBS` at a time.
fn floor(n: usize) -> Duration {
    let started = Instant::now();
    let mut xargs = Command::new("xargs")
        .args(["-P", &JOBS.to_string(), "-n", "1", "sh", "-c", "true"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let input: String = (0..n).map(|i| format!("{i}\n")).collect();
    std::io::Write::write_all(xargs.stdin.as_mut().unwrap(), input.as_bytes()).unwrap();
    drop(xargs.stdin.take());
    assert!(xargs.wait().unwrap().success());
    started.elapsed()
}

fn main() {
    // `cargo bench` passes `--bench`; nothing else is taken.
    let sizes: Vec<usize> = std::env::var("RUNLOG_BENCH_TASKS")
        .unwrap_or_else(|_| "1000,10000".into())
        .split(',')
        .map(|s| {
            s.trim()
                .parse()
                .expect("RUNLOG_BENCH_TASKS: numbers, comma-separated")
        })
        .collect();
    let dir = tempfile::tempdir().unwrap();
    println!("no-op DAG, jobs {JOBS}: runlog run vs xargs -P {JOBS} sh -c true");
    println!(
        "{:>8} {:>10} {:>10} {:>7} {:>12} {:>12}",
        "tasks", "runlog s", "xargs s", "ratio", "runlog µs/t", "xargs µs/t"
    );
    for n in sizes {
        let base = floor(n);
        let ours = runner(dir.path(), n);
        let per = |d: Duration| d.as_secs_f64() * 1e6 / n as f64;
        println!(
            "{n:>8} {:>10.2} {:>10.2} {:>6.2}× {:>12.0} {:>12.0}",
            ours.as_secs_f64(),
            base.as_secs_f64(),
            ours.as_secs_f64() / base.as_secs_f64(),
            per(ours),
            per(base)
        );
    }
}
