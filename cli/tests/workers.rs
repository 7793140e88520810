//! Workers on the shared store (issue 12), as real processes against a real PostgreSQL: many
//! workers share one DAG and do each task once; a worker killed with kill -9 has its attempt
//! taken on by another once its lease expires; a worker frozen past its lease records nothing
//! when it wakes; workers racing for one task leave one claim. Skipped, saying so, without a
//! server (see `runlog_store::postgres::scratch`).

mod common;

use common::git::git;
use common::{finish_within, runlog, text, wait_for, workflow};
use runlog_core::{Event, EventKind};
use runlog_replay::Replay;
use runlog_store::postgres::scratch::scratch;
use runlog_store::{EventLog, PgLog};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// `runlog` on the shared store as seen from host `host` (a local directory of its own).
fn on_host(url: &str, dir: &Path, host: &str) -> Command {
    let mut c = runlog(Path::new(url));
    c.env("RUNLOG_LOCAL_DIR", dir.join(host));
    c
}

fn worker(url: &str, dir: &Path, name: &str, lease_ms: u64) -> Child {
    on_host(url, dir, name)
        .args(["worker", "--until-idle", "--jobs", "4", "--name", name])
        .args(["--lease-ms", &lease_ms.to_string()])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

fn submit(url: &str, dir: &Path, wf: &Path, run: &str) {
    let out = on_host(url, dir, "submitter")
        .args([
            "run",
            wf.to_str().unwrap(),
            "--run-id",
            run,
            "--submit-only",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), run);
}

fn events(url: &str, run: &str) -> Vec<(u64, Event)> {
    let log = PgLog::connect(url).unwrap();
    let head = log.head(run).unwrap().unwrap().seq;
    Replay::new(&log).events(run, 1, head).unwrap()
}

#[test]
fn three_workers_do_every_task_of_a_500_task_dag_exactly_once() {
    let Some(db) = scratch() else { return };
    let dir = tempfile::tempdir().unwrap();
    // Each process the workers start leaves a line: a start that lost its race must start none.
    let executions = dir.path().join("executions");
    let run = format!("echo $RUNLOG_TASK >> {}", executions.display());
    let wf = workflow(dir.path(), "dag", &common::dag(500, 4, &run, 16));
    submit(&db.url, dir.path(), &wf, "dag");
    let workers: Vec<Child> = (1..=3)
        .map(|i| worker(&db.url, dir.path(), &format!("w{i}"), 5_000))
        .collect();
    let mut said = String::new();
    for (i, w) in workers.into_iter().enumerate() {
        let out = finish_within(w, Duration::from_secs(300), &format!("worker w{}", i + 1));
        assert_eq!(out.status.code(), Some(0), "{}", text(&out));
        said += &format!("worker w{}: {}\n", i + 1, text(&out));
    }
    let mut started: BTreeMap<String, u32> = BTreeMap::new();
    let mut claims: BTreeMap<String, (u32, String)> = BTreeMap::new();
    let mut done = BTreeSet::new();
    let mut finished = false;
    for (_, e) in events(&db.url, "dag") {
        match e.kind {
            EventKind::TaskStarted { task, .. } => *started.entry(task.0).or_default() += 1,
            EventKind::WorkerClaimed {
                task,
                attempt,
                worker,
                ..
            } => {
                let earlier = claims.insert(task.0.clone(), (attempt, worker));
                assert!(earlier.is_none(), "{task} was claimed twice");
            }
            EventKind::StageCompleted { task, .. } => {
                assert!(done.insert(task.0.clone()), "{task} completed twice");
            }
            EventKind::RunFinished {
                outcome: runlog_core::RunOutcome::Succeeded,
            } => finished = true,
            _ => {}
        }
    }
    assert!(finished, "the run did not finish as succeeded:\n{said}");
    assert_eq!(done.len(), 500);
    assert_eq!(started.len(), 500);
    assert!(started.values().all(|n| *n == 1), "a task started twice");
    let mut executed: BTreeMap<String, u32> = BTreeMap::new();
    for task in std::fs::read_to_string(&executions).unwrap().lines() {
        *executed.entry(task.to_owned()).or_default() += 1;
    }
    assert_eq!(executed.len(), 500);
    let twice: Vec<_> = executed.iter().filter(|(_, n)| **n > 1).collect();
    assert!(twice.is_empty(), "processes started twice: {twice:?}");
    assert_eq!(claims.len(), 500, "every start records its worker");
    let mut by_worker: BTreeMap<&str, usize> = BTreeMap::new();
    for (_, w) in claims.values() {
        *by_worker.entry(w.as_str()).or_default() += 1;
    }
    eprintln!("tasks per worker: {by_worker:?}");
    assert!(
        by_worker.len() >= 2,
        "one worker did everything: {by_worker:?}"
    );
}

/// The first attempt of `a` hangs; a later one finishes at once.
const HANGS_ONCE: &str = "name = \"hang\"\n[[task]]\nid = \"a\"\nrequires_testing = false\n\
    run = \"if [ -e started-once ]; then exit 0; fi; touch started-once; sleep 60\"\n\
    [[task]]\nid = \"b\"\nafter = [\"a\"]\nrun = \"true\"\nrequires_testing = false\n";

#[test]
fn a_killed_workers_attempt_is_taken_on_by_another_after_its_lease() {
    let Some(db) = scratch() else { return };
    let dir = tempfile::tempdir().unwrap();
    let wf = workflow(dir.path(), "hang", HANGS_ONCE);
    submit(&db.url, dir.path(), &wf, "hang");
    let mut first = worker(&db.url, dir.path(), "first", 1_500);
    wait_for(|| dir.path().join("started-once").exists());
    first.kill().unwrap(); // SIGKILL: no lease given up, no abandonment recorded by it
    first.wait().unwrap();
    let second = worker(&db.url, dir.path(), "second", 1_500);
    let out = finish_within(second, Duration::from_secs(120), "the second worker");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let all = events(&db.url, "hang");
    let abandoned = all.iter().find_map(|(seq, e)| match &e.kind {
        EventKind::AttemptAbandoned {
            task,
            attempt: 1,
            worker,
            reason,
        } if task.as_str() == "a" && worker == "first" => Some((*seq, reason.clone())),
        _ => None,
    });
    let (at, reason) = abandoned.expect("the killed worker's attempt was abandoned");
    assert!(reason.contains("lease expired"), "{reason}");
    let retaken = all.iter().any(|(seq, e)| {
        *seq > at
            && matches!(&e.kind, EventKind::WorkerClaimed { task, attempt: 2, worker, fresh_worktree: true, previous: Some(p) }
                if task.as_str() == "a" && worker == "second" && p == "first")
    });
    assert!(retaken, "the second worker took a on in a fresh worktree");
    assert!(all.iter().any(|(_, e)| matches!(
        e.kind,
        EventKind::RunFinished {
            outcome: runlog_core::RunOutcome::Succeeded
        }
    )));
    let shown = on_host(&db.url, dir.path(), "reader")
        .args(["log", "hang", "--task", "a"])
        .output()
        .unwrap();
    assert!(
        text(&shown).contains("taken on by worker second from worker first in a fresh worktree"),
        "{}",
        text(&shown)
    );
}

/// A worker frozen (SIGSTOP) past its lease wakes to find its attempt taken on: whatever it
/// tries to record is refused, it stops, and the log holds only the other worker's outcome.
#[test]
fn a_worker_frozen_past_its_lease_records_nothing_when_it_wakes() {
    use nix::sys::signal::{kill, Signal};
    let Some(db) = scratch() else { return };
    let dir = tempfile::tempdir().unwrap();
    let wf = workflow(
        dir.path(),
        "slow",
        "name = \"slow\"\n[[task]]\nid = \"a\"\nrequires_testing = false\n\
         run = \"touch started-$RUNLOG_ATTEMPT; sleep 2\"\n",
    );
    submit(&db.url, dir.path(), &wf, "slow");
    let frozen = worker(&db.url, dir.path(), "frozen", 1_000);
    wait_for(|| dir.path().join("started-1").exists());
    let pid = nix::unistd::Pid::from_raw(frozen.id() as i32);
    kill(pid, Signal::SIGSTOP).unwrap();
    let other = worker(&db.url, dir.path(), "other", 1_000);
    let out = finish_within(other, Duration::from_secs(120), "the other worker");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let before = events(&db.url, "slow").len();
    kill(pid, Signal::SIGCONT).unwrap();
    let woke = finish_within(frozen, Duration::from_secs(60), "the frozen worker");
    assert_eq!(woke.status.code(), Some(1), "{}", text(&woke));
    assert!(text(&woke).contains("lease"), "{}", text(&woke));
    let after = events(&db.url, "slow");
    assert_eq!(
        after.len(),
        before,
        "the frozen worker recorded after its lease expired"
    );
    let submitted = after
        .iter()
        .filter(|(_, e)| matches!(e.kind, EventKind::TaskSubmitted { .. }))
        .count();
    assert_eq!(submitted, 1);
}

#[test]
fn workers_racing_for_one_task_leave_one_claim() {
    let Some(db) = scratch() else { return };
    let dir = tempfile::tempdir().unwrap();
    let wf = workflow(
        dir.path(),
        "one",
        "name = \"one\"\n[[task]]\nid = \"a\"\nrun = \"sleep 0.5\"\nrequires_testing = false\n",
    );
    submit(&db.url, dir.path(), &wf, "one");
    let racers: Vec<Child> = (0..4)
        .map(|i| worker(&db.url, dir.path(), &format!("r{i}"), 5_000))
        .collect();
    for r in racers {
        let out = finish_within(r, Duration::from_secs(120), "a racing worker");
        assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    }
    let all = events(&db.url, "one");
    let count = |f: &dyn Fn(&EventKind) -> bool| all.iter().filter(|(_, e)| f(&e.kind)).count();
    assert_eq!(count(&|k| matches!(k, EventKind::TaskStarted { .. })), 1);
    assert_eq!(count(&|k| matches!(k, EventKind::WorkerClaimed { .. })), 1);
    assert_eq!(count(&|k| matches!(k, EventKind::RunFinished { .. })), 1);
}

#[test]
fn a_worker_on_a_store_directory_is_refused_with_a_hint() {
    let dir = tempfile::tempdir().unwrap();
    let out = runlog(&dir.path().join("store"))
        .args(["worker"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("postgres://"), "{}", text(&out));
}

#[test]
fn log_follow_on_another_host_follows_a_run_a_worker_executes() {
    let Some(db) = scratch() else { return };
    let dir = tempfile::tempdir().unwrap();
    let wf = workflow(
        dir.path(),
        "gated",
        "name = \"gated\"\n[[task]]\nid = \"a\"\nrequires_testing = false\n\
         run = \"while [ ! -e go ]; do sleep 0.05; done\"\n\
         [[task]]\nid = \"b\"\nafter = [\"a\"]\nrun = \"true\"\nrequires_testing = false\n",
    );
    submit(&db.url, dir.path(), &wf, "gated");
    let w = worker(&db.url, dir.path(), "w", 5_000);
    let follower = on_host(&db.url, dir.path(), "reader")
        .args(["--json", "log", "gated", "--follow"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_for(|| {
        events(&db.url, "gated")
            .iter()
            .any(|(_, e)| matches!(e.kind, EventKind::TaskStarted { .. }))
    });
    std::fs::write(dir.path().join("go"), "").unwrap();
    let out = finish_within(w, Duration::from_secs(60), "the worker");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let followed = finish_within(follower, Duration::from_secs(30), "log --follow");
    assert_eq!(followed.status.code(), Some(0), "{}", text(&followed));
    let lines = common::followed_from_the_start(&followed);
    assert_eq!(lines.len(), events(&db.url, "gated").len());
    assert!(String::from_utf8_lossy(&followed.stdout).contains("run-finished"));
}

/// `runlog export RUN | runlog import -` between a store directory and PostgreSQL, both ways:
/// the same head hash, a chain that verifies, and the same board.
#[test]
fn export_and_import_round_trip_between_sled_and_postgres() {
    let Some(db) = scratch() else { return };
    let dir = tempfile::tempdir().unwrap();
    let sled = dir.path().join("sled");
    let back = dir.path().join("back");
    let shared = Path::new(&db.url);
    let fixture = common::repo().join("fixtures/runs/seed-002-supervisor.jsonl");
    let imported = runlog(&sled)
        .args(["--json", "import", fixture.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(imported.status.code(), Some(0), "{}", text(&imported));
    let run: serde_json::Value = serde_json::from_slice(&imported.stdout).unwrap();
    let (run, head) = (
        run["run"].as_str().unwrap().to_owned(),
        run["head_hash"].as_str().unwrap().to_owned(),
    );
    let pipe = |from: &Path, to: &Path| {
        let export = runlog(from).args(["export", &run]).output().unwrap();
        assert_eq!(export.status.code(), Some(0), "{}", text(&export));
        let mut import = runlog(to)
            .args(["--json", "import", "-"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        std::io::Write::write_all(import.stdin.as_mut().unwrap(), &export.stdout).unwrap();
        drop(import.stdin.take());
        let out = import.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", text(&out));
        let said: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(said["head_hash"].as_str().unwrap(), head);
        assert_eq!(said["same_head_hash"], true);
        export.stdout
    };
    let from_sled = pipe(&sled, shared);
    let from_postgres = pipe(shared, &back);
    assert_eq!(
        from_sled, from_postgres,
        "the export is the same from either store"
    );
    for store in [shared, back.as_path()] {
        let verify = runlog(store).args(["verify", &run]).output().unwrap();
        assert_eq!(verify.status.code(), Some(0), "{}", text(&verify));
    }
    let board = |store: &Path| {
        runlog(store)
            .args(["--json", "status", &run])
            .output()
            .unwrap()
            .stdout
    };
    assert_eq!(board(shared), board(&sled));
}

/// A shared repository: each worker fetches a task's branch before an attempt and pushes it
/// after, so a task taken on by a worker on another host goes on from the commit the first
/// one pushed, in a fresh worktree of that host's own clone.
#[test]
fn a_worker_on_another_clone_continues_a_task_from_the_commit_the_first_pushed() {
    let Some(db) = scratch() else { return };
    let dir = tempfile::tempdir().unwrap();
    let shared = dir.path().join("shared.git");
    std::fs::create_dir_all(&shared).unwrap();
    git(&shared, &["init", "-q", "--bare", "-b", "main"]);
    // The workflow, in a checkout of the shared repository (at the same path on every host).
    let seed = dir.path().join("app");
    git(
        dir.path(),
        &[
            "clone",
            "-q",
            shared.to_str().unwrap(),
            seed.to_str().unwrap(),
        ],
    );
    let agent = "if [ -f progress.txt ]; then echo done >> progress.txt; exit 0; fi; \
                 echo started > progress.txt; exit 1";
    std::fs::write(
        seed.join("wf.toml"),
        format!(
            "name = \"carry\"\n[settings]\nrepo = \"{}\"\n\
             [[task]]\nid = \"a\"\nrun = '{agent}'\nrequires_testing = false\n\
             retry = {{ delay_ms = 4000 }}\n",
            shared.display()
        ),
    )
    .unwrap();
    git(&seed, &["add", "-A"]);
    git(
        &seed,
        &[
            "-c",
            "user.name=s",
            "-c",
            "user.email=s@e.invalid",
            "commit",
            "-q",
            "-m",
            "wf",
        ],
    );
    git(&seed, &["push", "-q", "origin", "main"]);
    submit(&db.url, dir.path(), &seed.join("wf.toml"), "carry");
    let mut first = worker(&db.url, dir.path(), "first", 1_500);
    // Its first attempt failed, and its commit is in the shared repository.
    wait_for(|| {
        Command::new("git")
            .args([
                "-C",
                shared.to_str().unwrap(),
                "rev-parse",
                "--verify",
                "--quiet",
            ])
            .arg("refs/heads/runlog-task/carry/a")
            .output()
            .is_ok_and(|o| o.status.success())
    });
    first.kill().unwrap();
    first.wait().unwrap();
    let second = worker(&db.url, dir.path(), "second", 1_500);
    let out = finish_within(second, Duration::from_secs(120), "the second worker");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let all = events(&db.url, "carry");
    let retaken = all.iter().any(|(_, e)| {
        matches!(&e.kind, EventKind::WorkerClaimed { task, attempt: 2, worker, fresh_worktree: true, .. }
            if task.as_str() == "a" && worker == "second")
    });
    assert!(retaken, "the second worker took a on in a fresh worktree");
    assert!(all.iter().any(|(_, e)| matches!(
        e.kind,
        EventKind::RunFinished {
            outcome: runlog_core::RunOutcome::Succeeded
        }
    )));
    assert_eq!(
        git(&shared, &["show", "runlog/carry:progress.txt"]),
        "started\ndone",
        "the second attempt went on from the first's commit"
    );
    // Each host worked in a clone of its own.
    assert!(dir.path().join("first/repos").is_dir() && dir.path().join("second/repos").is_dir());
}
