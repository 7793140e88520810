//! `runlog judges` over a large history, through the real binary: 1,000 runs of 100 evaluated
//! tasks each (100,000 verdicts, some approved or rejected by a person). Prints the time of the
//! first report (every run folded, its verdicts kept in the store's cache) and of the next ones
//! (read from the cache), with the goal (under 1 s). Asserts nothing about time.
//! `cargo bench -p runlog-cli --bench judges` (`RUNLOG_BENCH_RUNS=N` for another count,
//! `RUNLOG_BENCH_STORE=DIR` to keep the store).

use runlog_core::review::{ReviewMode, ReviewPolicy};
use runlog_core::script::{self, Script};
use runlog_core::{CommandKind, Hash, RunId, Settings, TaskSpec};
use std::process::Command;
use std::time::Instant;

const TASKS: usize = 100;

/// One run: TASKS tasks, each started, submitted and scored (scores spread over [0.3, 1]);
/// a tenth of the verdicts (the review queue's seeded sample) decided by a person.
fn one_run(n: usize) -> Vec<runlog_core::Event> {
    let specs: Vec<TaskSpec> = (0..TASKS)
        .map(|i| {
            let mut s = script::task(&format!("t{i:03}"));
            s.eval = Some("./judge.sh".into());
            s
        })
        .collect();
    // Every verdict waits for a person; one in ten gets a decision, the rest are decided by
    // the gate's own outcome, as the review queue leaves them to a person.
    let mut b = Script::default().and(CommandKind::StartRun {
        run: RunId::from("run-1"),
        workflow: "bench".into(),
        workflow_hash: Hash::of(b"bench"),
        settings: Settings::default(),
        tasks: specs,
        cost: Default::default(),
        review: ReviewPolicy {
            mode: ReviewMode::None,
            sample: 0.1,
        },
    });
    for i in 0..TASKS {
        let t = format!("t{i:03}");
        let s = 0.3 + ((n * 31 + i * 17) % 71) as f64 / 100.0;
        b = b
            .and(script::start(&t))
            .and(script::submit(&t))
            .and(script::score(&t, s));
        if b.state
            .task(&runlog_core::TaskId::from(t.as_str()))
            .is_some_and(|t| t.held.is_some())
        {
            b = b.and(if (n + i) % 3 == 0 {
                script::reject(&t, false)
            } else {
                script::approve(&t)
            });
        }
    }
    b.finish().unwrap()
}

fn main() {
    let runs: usize = std::env::var("RUNLOG_BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1_000);
    let dir = tempfile::tempdir().unwrap();
    // RUNLOG_BENCH_STORE=DIR keeps the store there, to profile the command on it afterwards.
    let store = std::env::var_os("RUNLOG_BENCH_STORE")
        .map_or_else(|| dir.path().join("store"), std::path::PathBuf::from);
    let t = Instant::now();
    let mut events = 0;
    {
        let log = runlog_store::Log::open(&store, runlog_store::Options::default()).unwrap();
        for n in 0..runs {
            let run = one_run(n);
            events += run.len();
            runlog_replay::control::append(&log, &format!("run-{n:04}"), 0, &run).unwrap();
        }
    }
    println!(
        "store: {runs} runs, {} verdicts, {events} events, written in {:.1} s",
        runs * TASKS,
        t.elapsed().as_secs_f64()
    );
    let judges = || {
        let t = Instant::now();
        let out = Command::new(env!("CARGO_BIN_EXE_runlog"))
            .arg("--store")
            .arg(&store)
            .args(["--json", "judges", "--threshold", "0.8"])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(report["verdicts"].as_u64(), Some((runs * TASKS) as u64));
        t.elapsed().as_secs_f64()
    };
    println!(
        "first report (every run folded, its verdicts kept): {:.2} s",
        judges()
    );
    let mut next: Vec<f64> = (0..5).map(|_| judges()).collect();
    next.sort_by(f64::total_cmp);
    println!(
        "next reports (verdicts read from the cache), 5 runs of the binary: median {:.2} s, best {:.2} s; goal under 1 s: {}",
        next[2],
        next[0],
        if next[2] < 1.0 { "met" } else { "not met" }
    );
}
