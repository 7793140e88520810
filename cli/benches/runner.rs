//! The runner's own cost (issue 14): no-op DAGs of N tasks run through the real runner with
//! real processes (`runlog run --jobs 8`), beside the floor of running the same N processes
//! with `xargs -P 8 sh -c true` in the same run. Each comparison is made in rounds
//! (`RUNLOG_BENCH_ROUNDS`, 3), the two runs' order alternating; prints the medians, the ratio's
//! range and the cost per task; asserts nothing about time.
//!
//! `cargo bench -p runlog-cli --bench runner` (1,000, 10,000 and 50,000 tasks, about ten
//! minutes); `RUNLOG_BENCH_TASKS=1000,10000` for other sizes. Ends with its goals: at most
//! 1.3× the floor from 10,000 tasks on, and a cost per task flat within ±10 %. Then a second
//! shape: a random DAG of 10,000 tasks, each after two drawn from all those before it
//! (`RUNLOG_BENCH_RANDOM_TASKS` for another size, 0 to leave it out), with the same goal.
//!
//! With `RUNLOG_TEST_POSTGRES` (an admin URL, as for the tests), also the shared store: a DAG
//! of 4,000 tasks of 50 ms each (`sleep 0.05`; `RUNLOG_BENCH_WORKER_TASKS` for another size)
//! submitted, then executed by 1, 4 and 8 `runlog worker` processes (jobs 4 each), in tasks per
//! second, with its goals: 4 workers at least 3.5× one, 8 at least 5×. Then claims a second on
//! a DAG of 10,000 tasks that do nothing (`RUNLOG_BENCH_NOOP_WORKER_TASKS`), with the round
//! trips and statements each claim costs the workers, counted by a relay on a tenth of it.
//! `RUNLOG_BENCH_TASKS=0 RUNLOG_BENCH_RANDOM_TASKS=0` leaves the single-machine part out.

#[path = "../tests/common/mod.rs"]
mod common;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const JOBS: u32 = 8;

/// `runlog run` of a workflow, `name` naming its file and store.
fn runner(dir: &Path, name: &str, workflow: &str) -> Duration {
    let wf = dir.join(format!("{name}.toml"));
    std::fs::write(&wf, workflow).unwrap();
    let store = dir.join(format!("store-{name}"));
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

/// Rounds of each comparison (`RUNLOG_BENCH_ROUNDS`, 3 by default): this VM's speed moves by a
/// third within minutes, so one pair of runs seconds apart can land on either side of a goal.
fn rounds() -> usize {
    std::env::var("RUNLOG_BENCH_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3)
        .max(1)
}

/// One comparison measured in rounds, the order of the two runs alternating between rounds.
struct Rounds {
    /// Seconds of runlog and of xargs, medians over the rounds.
    ours: f64,
    floor: f64,
    /// runlog / xargs of each round, in order.
    ratios: Vec<f64>,
}

impl Rounds {
    fn measure(dir: &Path, name: &str, workflow: &str, n: usize) -> Self {
        let (mut ours, mut floors, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
        for round in 0..rounds() {
            let name = format!("{name}-{round}");
            let (o, f) = if round % 2 == 0 {
                let f = floor(n);
                (runner(dir, &name, workflow), f)
            } else {
                let o = runner(dir, &name, workflow);
                (o, floor(n))
            };
            ours.push(o.as_secs_f64());
            floors.push(f.as_secs_f64());
            ratios.push(o.as_secs_f64() / f.as_secs_f64());
        }
        Self {
            ours: median(ours),
            floor: median(floors),
            ratios,
        }
    }

    fn ratio(&self) -> f64 {
        median(self.ratios.clone())
    }

    /// `1.21× (median; 1.16–1.30× over 3 rounds)`.
    fn said(&self) -> String {
        let (low, high) = self
            .ratios
            .iter()
            .fold((f64::MAX, 0.0_f64), |(l, h), r| (l.min(*r), h.max(*r)));
        format!(
            "{:.2}× (median; {low:.2}–{high:.2}× over {} rounds)",
            self.ratio(),
            self.ratios.len()
        )
    }
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs.get(xs.len() / 2).copied().unwrap_or(f64::NAN)
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

/// What each task of the workers' DAG does: 50 ms of waiting, as a short agent call would.
const WORKER_TASK: &str = "sleep 0.05";
/// How far back a task of the workers' DAG may wait: wide enough that the 32 slots of eight
/// workers can be kept busy, so the workers, not the plan, set the pace.
const WORKER_WINDOW: usize = 1_024;
/// Jobs of each worker.
const WORKER_JOBS: &str = "4";

/// What one execution of a submitted DAG by `workers` worker processes took, and asked of
/// the server when `relay` stood between them.
struct Executed {
    seconds: f64,
    /// Round trips and statements a task, counted by the relay.
    wire: Option<(f64, f64)>,
}

/// `workers` worker processes executing a submitted DAG of `n` tasks of `task`, through a
/// counting relay when `counted`.
fn workers(dir: &Path, n: usize, task: &str, workers: usize, counted: bool) -> Executed {
    let db = runlog_store::postgres::scratch::scratch().unwrap();
    let relay = counted.then(|| runlog_store::postgres::wire::Relay::start(&db.url).unwrap());
    let url = relay.as_ref().map_or(db.url.clone(), |r| r.url.clone());
    let wf = dir.join(format!("workers-{n}.toml"));
    std::fs::write(&wf, common::dag(n, 4, task, WORKER_WINDOW)).unwrap();
    let store = Path::new(&url);
    let out = common::runlog(store)
        .args([
            "run",
            wf.to_str().unwrap(),
            "--submit-only",
            "--run-id",
            "noop",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", common::text(&out));
    if let Some(r) = &relay {
        r.reset();
    }
    let started = Instant::now();
    let all: Vec<std::process::Child> = (0..workers)
        .map(|i| {
            common::runlog(store)
                .env("RUNLOG_LOCAL_DIR", dir.join(format!("host-{workers}-{i}")))
                .args(["worker", "--until-idle", "--jobs", WORKER_JOBS])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    for mut w in all {
        assert!(w.wait().unwrap().success());
    }
    let seconds = started.elapsed().as_secs_f64();
    let wire = relay.as_ref().map(|r| {
        let c = r.counts();
        (
            c.round_trips as f64 / n as f64,
            c.statements as f64 / n as f64,
        )
    });
    let runs = common::runlog(store).args(["runs"]).output().unwrap();
    assert!(
        common::text(&runs).contains("succeeded"),
        "{}",
        common::text(&runs)
    );
    Executed { seconds, wire }
}

/// The shared store's figures: workers on one run, scaling on tasks that wait, and claims a
/// second (with the round trips each costs) on tasks that do nothing.
fn shared_store(dir: &Path) {
    let count = |var: &str, default: usize| -> usize {
        std::env::var(var)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(default)
    };
    let n = count("RUNLOG_BENCH_WORKER_TASKS", 4_000);
    println!();
    println!(
        "shared store (PostgreSQL): a {n}-task DAG of `{WORKER_TASK}`, runlog worker --jobs {WORKER_JOBS} each"
    );
    println!(
        "{:>8} {:>10} {:>10} {:>8}",
        "workers", "seconds", "tasks/s", "× one"
    );
    let mut one = None;
    let mut ratios = vec![];
    for w in [1, 4, 8] {
        let t = workers(dir, n, WORKER_TASK, w, false).seconds;
        let first = *one.get_or_insert(t);
        println!(
            "{w:>8} {t:>10.2} {:>10.0} {:>7.2}×",
            n as f64 / t,
            first / t
        );
        ratios.push((w, first / t));
    }
    for ((w, ratio), goal) in ratios.iter().skip(1).zip([3.5, 5.0]) {
        let said = if *ratio >= goal { "met" } else { "NOT MET" };
        println!("goal {w} workers ≥ {goal}× one: {ratio:.2}× {said}");
    }
    let n = count("RUNLOG_BENCH_NOOP_WORKER_TASKS", 10_000);
    println!();
    println!(
        "claims: a {n}-task DAG of `true`, each task claimed and ended by a worker (--jobs {WORKER_JOBS} each)"
    );
    println!(
        "{:>8} {:>10} {:>10} {:>24}",
        "workers", "seconds", "claims/s", "round trips, statements"
    );
    // Counted on a tenth of the DAG through the relay, which adds a hop to every round trip.
    let counted_n = (n / 10).max(100);
    for w in [1, 4, 8] {
        let t = workers(dir, n, "true", w, false).seconds;
        let wire = workers(dir, counted_n, "true", w, true)
            .wire
            .unwrap_or_default();
        println!(
            "{w:>8} {t:>10.2} {:>10.0} {:>14.1}, {:.1} a claim",
            n as f64 / t,
            wire.0,
            wire.1
        );
    }
}

/// Issue 14's goals against `(tasks, rounds, µs per task)` rows.
fn goals(measured: &[(usize, Rounds, f64)]) {
    let large: Vec<String> = measured
        .iter()
        .filter(|(n, ..)| *n >= 10_000)
        .map(|(n, rounds, _)| format!("{n}: {}", rounds.said()))
        .collect();
    if !large.is_empty() {
        println!("goal ≤ 1.30× from 10,000 tasks on: {}", large.join(", "));
    }
    let costs = measured.iter().map(|(.., per)| *per);
    let (low, high) = costs.fold((f64::MAX, 0.0_f64), |(l, h), c| (l.min(c), h.max(c)));
    if measured.len() > 1 {
        println!(
            "goal cost per task flat within ±10 %: {low:.0} to {high:.0} µs, ±{:.1} %",
            (high - low) / (high + low) * 100.0
        );
    }
}

/// The second shape of the runner's goal: each task after two drawn from all the tasks before it
/// (so far more can run at once than in the windowed DAG), `RUNLOG_BENCH_RANDOM_TASKS` of them
/// (10,000; 0 leaves it out).
fn random_shape(dir: &Path) {
    let n: usize = std::env::var("RUNLOG_BENCH_RANDOM_TASKS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10_000);
    if n == 0 {
        return;
    }
    let workflow = common::dag(n, JOBS, "true", common::ALL_BEFORE);
    let measured = Rounds::measure(dir, &format!("random-{n}"), &workflow, n);
    println!();
    println!(
        "random DAG (two dependencies each, among all earlier tasks), {n} tasks: runlog {:.2} s, xargs {:.2} s (medians)",
        measured.ours, measured.floor
    );
    println!("goal ≤ 1.30× on this shape too: {}", measured.said());
}

fn main() {
    // `cargo bench` passes `--bench`; nothing else is taken.
    let sizes: Vec<usize> = std::env::var("RUNLOG_BENCH_TASKS")
        .unwrap_or_else(|_| "1000,10000,50000".into())
        .split(',')
        .map(|s| {
            s.trim()
                .parse()
                .expect("RUNLOG_BENCH_TASKS: numbers, comma-separated")
        })
        .filter(|&n: &usize| n > 0)
        .collect();
    let dir = tempfile::tempdir().unwrap();
    if !sizes.is_empty() {
        single_machine(dir.path(), sizes);
    }
    random_shape(dir.path());
    if std::env::var_os(runlog_store::postgres::scratch::ENV).is_none() {
        println!(
            "(no PostgreSQL: set {} to measure workers on the shared store)",
            runlog_store::postgres::scratch::ENV
        );
        return;
    }
    shared_store(dir.path());
}

/// The no-op DAGs of `sizes` tasks beside `xargs`, with their goals.
fn single_machine(dir: &Path, sizes: Vec<usize>) {
    println!(
        "no-op DAG, jobs {JOBS}: runlog run vs xargs -P {JOBS} sh -c true (medians of {} rounds)",
        rounds()
    );
    println!(
        "{:>8} {:>10} {:>10} {:>7} {:>12} {:>12}",
        "tasks", "runlog s", "xargs s", "ratio", "runlog µs/t", "xargs µs/t"
    );
    let mut measured = Vec::new();
    for n in sizes {
        let rounds = Rounds::measure(dir, &format!("noop-{n}"), &common::noop_dag(n, JOBS), n);
        let per = |seconds: f64| seconds * 1e6 / n as f64;
        println!(
            "{n:>8} {:>10.2} {:>10.2} {:>6.2}× {:>12.0} {:>12.0}",
            rounds.ours,
            rounds.floor,
            rounds.ratio(),
            per(rounds.ours),
            per(rounds.floor)
        );
        let cost = per(rounds.ours);
        measured.push((n, rounds, cost));
    }
    goals(&measured);
}
