//! The runner end to end, through the real `runlog` binary and real processes: every fixture
//! workflow to its final board (insta), kill -9 and resume, Ctrl-C, bad workflow files, an
//! evaluator printing garbage.
//!
//! `RUNLOG_RECORD_FIXTURES=1 cargo test -p runlog-cli --test e2e` rewrites fixtures/runs/.

mod common;

use common::{events, open, pytest_found, repo, runlog, runner_marker, text, wait_for};
use runlog_core::projections::Board;
use runlog_core::{EventKind, TaskStatus};
use runlog_replay::Replay;
use runlog_store::EventLog;
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

fn fixed(c: &mut Command) -> &mut Command {
    c.env("RUNLOG_TEST_CLOCK", "1700000000000")
}

#[derive(Serialize)]
struct Final {
    exit: Option<i32>,
    board: Board,
    summary: runlog_core::projections::RunSummary,
}

/// Runs `fixtures/workflows/NAME.toml` as run NAME to its final board (insta), recording it
/// (and `also`, runs it made) with `RUNLOG_RECORD_FIXTURES`; the store's directory, to look
/// further.
fn run_fixture(name: &str, expected_exit: i32) -> tempfile::TempDir {
    record_fixture(name, expected_exit, &[])
}

fn record_fixture(name: &str, expected_exit: i32, also: &[&str]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let out = fixed(&mut runlog(&store))
        .args([
            "run",
            &format!("fixtures/workflows/{name}.toml"),
            "--jobs",
            "1",
            "--quiet",
            "--run-id",
            name,
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(expected_exit), "{}", text(&out));
    let log = open(&store);
    assert!(log.verify(name).unwrap().is_ok());
    let p = Replay::new(&log).project(name, None, None).unwrap();
    let board = Board::of(&p.state);
    insta::assert_yaml_snapshot!(
        name,
        Final {
            exit: out.status.code(),
            board,
            summary: p.summary
        }
    );
    if std::env::var_os("RUNLOG_RECORD_FIXTURES").is_some() {
        for run in std::iter::once(name).chain(also.iter().copied()) {
            let path = repo().join("fixtures/runs").join(format!("{run}.jsonl"));
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            let mut file = std::fs::File::create(&path).unwrap();
            runlog_replay::export::export(&log, run, &mut file).unwrap();
        }
    }
    dir
}

#[test]
fn quickstart_finishes_with_every_task_done() {
    run_fixture("quickstart", 0);
}

#[test]
fn seed_000_replans_after_a_destructive_split() {
    run_fixture("seed-000-reevaluation", 0);
}

#[test]
fn seed_001_passes_rescues_and_caps_to_failed() {
    run_fixture("seed-001-eval-gate", 1);
}

#[test]
fn seed_002_retries_with_backoff_and_opens_a_circuit() {
    run_fixture("seed-002-supervisor", 1);
}

#[test]
fn a_planning_agent_adds_its_phases_tasks_at_run_time() {
    run_fixture("planner-adds-tasks", 0);
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let wf = repo().join("fixtures/workflows/planner-adds-tasks.toml");
    let out = fixed(&mut runlog(&store))
        .args(["run", wf.to_str().unwrap(), "--run-id", "p", "--quiet"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let log = open(&store);
    let all = events(&log, "p");
    // The first answer refused, with the reason, and the planner retried with it as feedback.
    let refused = all.iter().find_map(|(_, e)| match &e.kind {
        EventKind::StageFailed {
            error, error_type, ..
        } if *error_type == runlog_core::ErrorType::PlanRefused => Some(error.clone()),
        _ => None,
    });
    let refused = refused.expect("the first answer is refused");
    assert!(refused.contains("buffer-api"), "{refused}");
    // The second: one plan revision, authored by the planning agent, in its group.
    let revised: Vec<u64> = all
        .iter()
        .filter(|(_, e)| matches!(e.kind, EventKind::PlanRevised { .. }))
        .map(|(seq, _)| *seq)
        .collect();
    assert_eq!(revised.len(), 1);
    let author = all.iter().find(|(seq, _)| *seq + 1 == revised[0]).unwrap();
    assert!(
        matches!(&author.1.kind, EventKind::Attributed { principal, via } if principal == "agent-plan-phase-1" && via == "agent-output"),
        "{:?}",
        author.1.kind
    );
    let state = Replay::new(&log).head_state("p").unwrap();
    for t in ["buffer-impl", "buffer-docs"] {
        let task = state.task(&runlog_core::TaskId::from(t)).unwrap();
        assert_eq!(
            task.spec.parent,
            Some(runlog_core::TaskId::from("phase-1")),
            "{t}"
        );
        assert_eq!(task.status, TaskStatus::Done, "{t}");
    }
    // phase-2's task started only after the added tasks were done.
    let started = |task: &str| {
        all.iter()
            .find(|(_, e)| matches!(&e.kind, EventKind::TaskStarted { task: t, .. } if t.as_str() == task))
            .map(|(seq, _)| *seq)
            .unwrap()
    };
    let docs_done = all
        .iter()
        .filter(|(_, e)| e.kind.task().is_some_and(|t| t.as_str() == "buffer-docs"))
        .map(|(seq, _)| *seq)
        .max()
        .unwrap();
    assert!(started("commands") > docs_done);
}

/// Whether `pytest` runs; without it the test says it was skipped, and with
/// `RUNLOG_REQUIRE_PYTEST=1` (as `bash .ci/run` sets, after installing it) it fails instead.

#[test]
fn tests_are_found_by_the_seeds_conventions_and_the_choice_is_recorded() {
    if !pytest_found() {
        return;
    }
    run_fixture("pytest-convention", 0);
    // run_fixture's store is gone; run it again to read what was recorded.
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let out = runlog(&store)
        .args([
            "run",
            "fixtures/workflows/pytest-convention.toml",
            "--run-id",
            "p",
            "--quiet",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let found: Vec<(String, String, String)> = events(&open(&store), "p")
        .into_iter()
        .filter_map(|(_, e)| match e.kind {
            EventKind::TestsDiscovered {
                task,
                convention,
                test,
            } => Some((task.0, convention, test)),
            _ => None,
        })
        .collect();
    let expected = [
        (
            "slugify",
            "pytest tests/test_{id}.py",
            "pytest tests/test_slugify.py -v",
        ),
        ("wordcount", "make test-{id}", "make test-wordcount"),
        (
            "titlecase",
            "test_file",
            "pytest checks/titlecase_check.py -v",
        ),
    ]
    .map(|(a, b, c)| (a.to_owned(), b.to_owned(), c.to_owned()));
    assert_eq!(found, expected);
    drop(open(&store));
    // slugify's first attempt failed pytest, and the failure went back to its agent.
    let show = runlog(&store)
        .args(["show", "p", "slugify"])
        .output()
        .unwrap();
    let shown = text(&show);
    assert!(
        shown.contains("test: pytest tests/test_slugify.py -v (found by the convention pytest tests/test_{id}.py)"),
        "{shown}"
    );
    assert!(shown.contains("tests-failed"), "{shown}");
    assert!(
        shown.contains(
            "read the test failure: tests/test_slugify.py::test_lowercases_and_joins_words FAILED"
        ),
        "{shown}"
    );
}

#[test]
fn a_task_that_must_be_tested_and_matches_no_convention_is_refused_before_the_run() {
    let (out, dir) = bad_workflow(
        "name = \"x\"\n[[task]]\nid = \"parse\"\nrun = \"true\"\n[[task]]\nid = \"b\"\nrun = \"true\"\nrequires_testing = false\n[settings]\nrequires_testing = true\n",
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let said = text(&out);
    assert!(
        said.contains("line 3: task \"parse\" requires testing, but has no `test` command and no test found by the conventions"),
        "{said}"
    );
    for convention in [
        "tests/test_parse.py",
        "`test-parse:`",
        "parse_test.py",
        "test_parse.py",
        "requires_testing = false",
    ] {
        assert!(said.contains(convention), "{convention} in: {said}");
    }
    assert!(!dir.path().join("store").exists(), "nothing ran");
    // Once a convention's file is there, the same workflow runs that test.
    std::fs::write(dir.path().join("parse_test.py"), "").unwrap();
    let out = runlog(&dir.path().join("store"))
        .args([
            "run",
            dir.path().join("bad.toml").to_str().unwrap(),
            "--run-id",
            "r",
            "--quiet",
        ])
        .env("PATH", "/usr/bin:/bin")
        .output()
        .unwrap();
    let log = open(&dir.path().join("store"));
    let discovered = events(&log, "r").into_iter().any(|(_, e)| {
        matches!(e.kind, EventKind::TestsDiscovered { ref test, .. } if test == "pytest parse_test.py -v")
    });
    assert!(discovered, "{}", text(&out));
    // A test_file that is not there is named.
    let (out, _dir) = bad_workflow(
        "name = \"x\"\n[[task]]\nid = \"parse\"\nrun = \"true\"\ntest_file = \"checks/parse.py\"\n",
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        text(&out).contains(
            "task \"parse\", field test_file: test_file \"checks/parse.py\" does not exist"
        ),
        "{}",
        text(&out)
    );
}

#[test]
fn a_sub_project_runs_as_a_child_run_linked_both_ways_and_its_success_submits_the_task() {
    let dir = record_fixture("sub-project", 0, &["sub-project.buffer"]);
    let store = dir.path().join("store");
    let log = open(&store);
    // Linked both ways.
    let parent = events(&log, "sub-project");
    assert!(parent.iter().any(|(_, e)| matches!(&e.kind,
        EventKind::ChildRunStarted { task, child_run } if task.as_str() == "buffer" && child_run.as_str() == "sub-project.buffer")));
    assert!(parent.iter().any(|(_, e)| matches!(
        &e.kind,
        EventKind::ChildRunEnded {
            succeeded: true,
            ..
        }
    )));
    let child = events(&log, "sub-project.buffer");
    assert!(child.iter().any(|(_, e)| matches!(&e.kind,
        EventKind::ParentLinked { parent_run, task } if parent_run.as_str() == "sub-project" && task.as_str() == "buffer")));
    // The child did its own verification loop: gap-buffer failed its tests once.
    let state = Replay::new(&log).head_state("sub-project.buffer").unwrap();
    assert_eq!(state.task(&"gap-buffer".into()).unwrap().test_failures, 1);
    drop(log);
    let runs = text(&runlog(&store).arg("runs").output().unwrap());
    assert!(
        runs.lines().any(|l| l.starts_with("sub-project.buffer")
            && l.ends_with("sub-project of sub-project/buffer")),
        "{runs}"
    );
    let tree = text(
        &runlog(&store)
            .args(["status", "sub-project", "--tree"])
            .output()
            .unwrap(),
    );
    let rows: Vec<String> = tree
        .lines()
        .skip(2)
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect();
    assert_eq!(
        rows,
        [
            "design done 1 0 untested",
            "buffer done 1 0 child run sub-project.buffer",
            "└ gap-buffer done 2 0",
            "└ cursor done 1 0 untested",
            "commands done 1 0 untested",
        ],
        "{tree}"
    );
    let show = text(
        &runlog(&store)
            .args(["show", "sub-project", "buffer"])
            .output()
            .unwrap(),
    );
    assert!(
        show.contains(
            "sub-project: phases/buffer.toml, child run sub-project.buffer (finished, succeeded"
        ),
        "{show}"
    );
}

#[test]
fn a_failed_child_leaves_its_task_waiting_until_it_is_fixed_and_the_parent_resumed() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("phases")).unwrap();
    let wf = common::workflow(
        dir.path(),
        "parent",
        "name = \"parent\"\n[[task]]\nid = \"work\"\nworkflow = \"phases/child.toml\"\nrequires_testing = false\n\
         [[task]]\nid = \"after\"\nafter = [\"work\"]\nrun = \"true\"\nrequires_testing = false\n",
    );
    common::workflow(
        &dir.path().join("phases"),
        "child",
        "name = \"child\"\n[[task]]\nid = \"flaky\"\nrun = \"test -f ../fixed || { echo 'not fixed yet' >&2; exit 1; }\"\n\
         requires_testing = false\nretry = { max = 0 }\n",
    );
    let store = dir.path().join("store");
    let out = common::run(&store, &wf, "p", &[]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(
        text(&out).contains("task work waits for its sub-project run p.work: failed: flaky (stage failed 1 times (max 0 retries); last error: exited with code 1: not fixed yet)"),
        "{}",
        text(&out)
    );
    let status = text(&runlog(&store).args(["status", "p"]).output().unwrap());
    assert!(
        status.contains("waits for child run p.work: failed: flaky"),
        "{status}"
    );
    // Resuming changes nothing while the child still fails: it is taken on again and waits again.
    let again = runlog(&store)
        .args(["resume", "p", "--quiet"])
        .output()
        .unwrap();
    assert_eq!(again.status.code(), Some(1), "{}", text(&again));
    // Fixed in the child, then the parent resumed: the child is resumed, the task done.
    std::fs::write(dir.path().join("fixed"), "").unwrap();
    let reopen = runlog(&store)
        .args(["reopen", "p.work", "flaky"])
        .output()
        .unwrap();
    assert_eq!(reopen.status.code(), Some(0), "{}", text(&reopen));
    let done = runlog(&store)
        .args(["resume", "p", "--quiet"])
        .output()
        .unwrap();
    assert_eq!(done.status.code(), Some(0), "{}", text(&done));
    assert!(
        text(&done).contains("resumes its child run p.work"),
        "{}",
        text(&done)
    );
    let outcomes = outcomes(&store);
    assert_eq!(
        outcomes,
        [
            ("p".to_owned(), "succeeded".to_owned()),
            ("p.work".to_owned(), "succeeded".to_owned())
        ],
        "one child run, taken on again, never a second one"
    );
    // Rolled back to before its child started, the parent no longer links it; the child stays.
    let linked_at = events(&open(&store), "p")
        .into_iter()
        .find(|(_, e)| matches!(e.kind, EventKind::ChildRunStarted { .. }))
        .unwrap()
        .0;
    let back = runlog(&store)
        .args([
            "rollback",
            "p",
            "--to",
            &(linked_at - 1).to_string(),
            "--reason",
            "redo it",
        ])
        .output()
        .unwrap();
    assert_eq!(back.status.code(), Some(0), "{}", text(&back));
    assert!(
        text(&back).contains("note: child run p.work of task work is no longer linked: it stays in the store as it is"),
        "{}",
        text(&back)
    );
    let runs = text(&runlog(&store).arg("runs").output().unwrap());
    assert!(
        runs.contains("sub-project of p/work (no longer linked)"),
        "{runs}"
    );
}

#[test]
fn sub_projects_nested_deeper_than_max_depth_are_refused_before_anything_runs() {
    let dir = tempfile::tempdir().unwrap();
    // A workflow that runs itself as its own sub-project: only max_depth stops it.
    let wf = common::workflow(
        dir.path(),
        "again",
        "name = \"again\"\n[settings]\nmax_depth = 3\n[[task]]\nid = \"inner\"\nworkflow = \"again.toml\"\n",
    );
    let out = common::run(&dir.path().join("store"), &wf, "a", &[]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        text(&out).contains("task \"inner\", field workflow: the task is at depth 1, and max_depth 1 leaves its sub-project no level (nesting counts across runs)"),
        "{}",
        text(&out)
    );
    assert!(!dir.path().join("store").exists(), "nothing ran");
    // A sub-project task cannot have a command of its own.
    let (out, _dir) =
        bad_workflow("name = \"x\"\n[[task]]\nid = \"a\"\nrun = \"true\"\nworkflow = \"b.toml\"\n");
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        text(&out).contains("leave out `run` and `test_file`"),
        "{}",
        text(&out)
    );
}

#[test]
fn seed_003_never_gives_up_until_the_checkpoints() {
    run_fixture("seed-003-never-give-up", 0);
}

#[test]
fn seed_004_runs_phases_with_the_verification_loop() {
    run_fixture("seed-004-phases", 0);
}

fn slow_workflow(dir: &Path) -> PathBuf {
    let path = dir.join("slow.toml");
    let bin = repo().join("fixtures/workflows/bin");
    let mut toml = String::from("name = \"slow\"\n[settings]\njobs = 2\n");
    for i in 0..6 {
        let after = if i >= 2 {
            format!("after = [\"t{}\"]\n", i - 2)
        } else {
            String::new()
        };
        toml.push_str(&format!(
            "[[task]]\nid = \"t{i}\"\nrun = \"{}/agent.sh --sleep 0.3\"\ntest = \"{}/check.sh\"\n{after}",
            bin.display(),
            bin.display()
        ));
    }
    std::fs::write(&path, toml).unwrap();
    path
}

#[test]
fn kill_9_then_resume_finishes_the_run_and_redoes_nothing_done() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let wf = slow_workflow(dir.path());
    let mut child = runlog(&store)
        .args(["run", wf.to_str().unwrap(), "--run-id", "slow", "--quiet"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Kill -9 once three agents have finished their work (t2 only starts after t0 is done),
    // while later tasks are still to run.
    wait_for(|| {
        (0..6)
            .filter(|i| store.join(format!("worktrees/slow/t{i}/done")).exists())
            .count()
            >= 3
    });
    child.kill().unwrap();
    child.wait().unwrap();
    let out = runlog(&store)
        .args(["resume", "slow", "--quiet"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let log = open(&store);
    assert!(
        log.verify("slow").unwrap().is_ok(),
        "the log verifies after kill -9 and resume"
    );
    let all = events(&log, "slow");
    let crash = all
        .iter()
        .find(|(_, e)| matches!(&e.kind, EventKind::RunInterrupted { reason } if reason.contains("without recording")))
        .map(|(s, _)| *s)
        .expect("resume records that the runner stopped without recording it");
    let before = Replay::new(&log).state_at("slow", crash).unwrap();
    let done_before: Vec<_> = before
        .tasks_in_order()
        .filter(|t| t.status == TaskStatus::Done)
        .map(|t| t.spec.id.clone())
        .collect();
    assert!(
        !done_before.is_empty() && done_before.len() < 6,
        "the kill came mid-run: {done_before:?}"
    );
    for (seq, e) in &all {
        if let EventKind::TaskStarted { task, .. } = &e.kind {
            assert!(
                *seq < crash || !done_before.contains(task),
                "{task} was done before the crash and started again"
            );
        }
    }
    let head = Replay::new(&log).head_state("slow").unwrap();
    assert!(head.tasks.values().all(|t| t.status == TaskStatus::Done));
}

/// The attempts the run recorded as started, and whether each one's agent ran (the fixture
/// agent writes `attempt N` to its worktree's work.log as it starts).
fn started_and_ran(store: &Path, run: &str) -> Vec<(String, u32, bool)> {
    let log = open(store);
    let started = events(&log, run)
        .into_iter()
        .filter_map(|(_, e)| match e.kind {
            EventKind::TaskStarted { task, attempt, .. } => Some((task.0, attempt)),
            _ => None,
        })
        .collect::<Vec<_>>();
    started
        .into_iter()
        .map(|(task, attempt)| {
            let work =
                std::fs::read_to_string(store.join(format!("worktrees/{run}/{task}/work.log")))
                    .unwrap_or_default();
            let ran = work
                .lines()
                .filter(|l| l.starts_with(&format!("attempt {attempt} ")))
                .count();
            assert!(ran <= 1, "{task} attempt {attempt} ran {ran} times");
            (task, attempt, ran == 1)
        })
        .collect()
}

#[test]
fn a_kill_between_a_steps_append_and_its_processes_redoes_nothing_done() {
    use std::os::unix::process::ExitStatusExt;
    // Each step's decisions are appended together and its processes start after that append:
    // the runner kills itself right there. Six untested tasks, two at a time, each pair after
    // the one before: at least three appends start attempts (fewer steps than tasks when two
    // end together), so each cut is reached, whatever the machine's speed.
    for cut in [1, 2, 3] {
        let dir = tempfile::tempdir().unwrap();
        let store = dir.path().join("store");
        let bin = repo().join("fixtures/workflows/bin");
        let mut toml = String::from("name = \"cut\"\n[settings]\njobs = 2\n");
        for i in 0..6 {
            toml.push_str(&format!(
                "[[task]]\nid = \"t{i}\"\nrun = \"{}/agent.sh --sleep 0.2\"\nrequires_testing = false\n",
                bin.display()
            ));
            if i >= 2 {
                toml.push_str(&format!("after = [\"t{}\"]\n", i - 2));
            }
        }
        let wf = dir.path().join("cut.toml");
        std::fs::write(&wf, toml).unwrap();
        let out = runlog(&store)
            .args(["run", wf.to_str().unwrap(), "--run-id", "cut", "--quiet"])
            .env("RUNLOG_TEST_KILL_AFTER_APPENDS", cut.to_string())
            .output()
            .unwrap();
        assert_eq!(out.status.signal(), Some(9), "cut {cut}: {}", text(&out));
        let before = started_and_ran(&store, "cut");
        let not_run: Vec<_> = before.iter().filter(|(.., ran)| !ran).collect();
        assert!(
            !not_run.is_empty(),
            "cut {cut}: the last append started attempts whose processes never ran: {before:?}"
        );
        if cut == 1 {
            let first: Vec<_> = before.iter().map(|(t, a, _)| (t.as_str(), *a)).collect();
            assert_eq!(first, [("t0", 1), ("t1", 1)], "cut 1 is the first step");
        }
        let log = open(&store);
        let head = log.head("cut").unwrap().unwrap().seq;
        let done_before: Vec<String> = Replay::new(&log)
            .state_at("cut", head)
            .unwrap()
            .tasks_in_order()
            .filter(|t| t.status == TaskStatus::Done)
            .map(|t| t.spec.id.0.clone())
            .collect();
        drop(log);

        let out = runlog(&store)
            .args(["resume", "cut", "--quiet"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "cut {cut}: {}", text(&out));
        let log = open(&store);
        assert!(log.verify("cut").unwrap().is_ok());
        let state = Replay::new(&log).head_state("cut").unwrap();
        assert!(state.tasks.values().all(|t| t.status == TaskStatus::Done));
        drop(log);
        let after = started_and_ran(&store, "cut");
        for (task, attempt, ran) in &after[before.len()..] {
            assert!(
                !done_before.contains(task),
                "cut {cut}: {task} was done and started again"
            );
            assert!(
                ran,
                "cut {cut}: {task} attempt {attempt} was started on resume and never ran"
            );
        }
        // What the cut started and never ran is taken on again.
        for (task, ..) in not_run {
            assert!(
                after[before.len()..].iter().any(|(t, ..)| t == task),
                "cut {cut}: {task} was not retried"
            );
        }
    }
}

#[test]
fn a_signal_interrupts_with_exit_130_and_resume_completes() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let wf = slow_workflow(dir.path());
    let child = runlog(&store)
        .args(["run", wf.to_str().unwrap(), "--run-id", "slow", "--quiet"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // The runner serves its socket once it is driving the run (signal handlers installed).
    wait_for(|| runner_marker(&store).is_some());
    std::thread::sleep(Duration::from_millis(100));
    let pid = nix::unistd::Pid::from_raw(child.id() as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGINT).unwrap();
    let started = Instant::now();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130));
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "it stops promptly, killing running agents"
    );
    {
        let log = open(&store);
        let last = events(&log, "slow").pop().unwrap().1;
        assert!(
            matches!(last.kind, EventKind::RunInterrupted { .. }),
            "{last:?}"
        );
    }
    let out = runlog(&store)
        .args(["resume", "slow", "--quiet"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
}

#[test]
fn kill_9_of_a_parent_mid_child_then_resume_finishes_both_with_one_child_run() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    slow_workflow(dir.path());
    let wf = common::workflow(
        dir.path(),
        "parent",
        "name = \"parent\"\n[[task]]\nid = \"inner\"\nworkflow = \"slow.toml\"\nrequires_testing = false\n",
    );
    let mut parent = runlog(&store)
        .args(["run", wf.to_str().unwrap(), "--run-id", "p", "--quiet"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Killed once the child run has started its own tasks.
    wait_for(|| {
        runlog(&store)
            .args(["log", "p.inner", "--kind", "task-started"])
            .output()
            .is_ok_and(|o| o.status.success() && !o.stdout.is_empty())
    });
    parent.kill().unwrap();
    parent.wait().unwrap();
    let out = runlog(&store)
        .args(["resume", "p", "--quiet"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let outcomes = outcomes(&store);
    assert_eq!(
        outcomes,
        [
            ("p".to_owned(), "succeeded".to_owned()),
            ("p.inner".to_owned(), "succeeded".to_owned())
        ],
        "the child was resumed, not started again"
    );
    let log = open(&store);
    let state = Replay::new(&log).head_state("p.inner").unwrap();
    assert!(state.tasks_in_order().all(|t| t.status == TaskStatus::Done));
    for run in ["p", "p.inner"] {
        assert!(
            events(&log, run)
                .iter()
                .any(|(_, e)| matches!(e.kind, EventKind::RunInterrupted { .. })),
            "{run} was stopped mid-way and says so"
        );
    }
}

/// Each run in the store with its outcome, as `runlog runs --json` lists them.
fn outcomes(store: &Path) -> Vec<(String, String)> {
    let runs = text(&runlog(store).args(["runs", "--json"]).output().unwrap());
    let runs: Vec<serde_json::Value> = serde_json::from_str(runs.trim()).unwrap();
    runs.into_iter()
        .map(|v| {
            (
                v["run"].as_str().unwrap().to_owned(),
                v["outcome"].as_str().unwrap_or("").to_owned(),
            )
        })
        .collect()
}

fn bad_workflow(body: &str) -> (Output, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.toml");
    std::fs::write(&path, body).unwrap();
    let out = runlog(&dir.path().join("store"))
        .args(["run", path.to_str().unwrap()])
        .output()
        .unwrap();
    (out, dir)
}

#[test]
fn bad_workflow_files_are_refused_with_exit_2_and_nothing_runs() {
    let cases = [
        ("name = \"x\"\n[[task]]\nid = \"a\"\nrun = \"true\"\ncolour = \"red\"\n", "unknown field `colour`"),
        ("name = \"x\"\n[[task]]\nid = \"a\"\nrun = \"true\"\nafter = [\"b\"]\n[[task]]\nid = \"b\"\nrun = \"true\"\nafter = [\"a\"]\n", "dependency cycle"),
        ("name = \"x\"\n[[task]]\nid = \"a\"\nrun = \"true\"\nafter = [\"ghost\"]\n", "line 3: task a depends on ghost"),
        ("name = \"x\"\n[settings]\nmax_depth = 1\n[[task]]\nid = \"g\"\n[[task]]\nid = \"a\"\nparent = \"g\"\nrun = \"true\"\n", "nested 2 deep"),
        ("name = \"x\"\n[[task]\nid = \"a\"\n", "line 2"),
        ("name = \"x\"\n[[task]]\nid = \"a\"\n", "needs a `run` command"),
        ("name = \"x\"\n[[task]]\nid = \"a\"\nrun = \"true\"\nretry = { max = \"forever\" }\n", "allowed: a number or \"unlimited\""),
        ("name = \"x\"\n[settings]\neval_threshold = 3.0\n", "eval_threshold"),
        ("name = \"x\"\n[settings]\nworkspace = \"gti\"\n[[task]]\nid = \"a\"\nrun = \"true\"\n", "unknown variant `gti`, expected `git` or `none`"),
        ("name = \"x\"\n[[task]]\nid = \"a\"\nrun = \"true\"\n[providers.corp]\nkind = \"openai\"\nbase_url = \"https://proxy.example/v1\"\nca_file = \"missing-ca.pem\"\n", "[providers.corp], field ca_file: "),
        ("name = \"x\"\n[[task]]\nid = \"a\"\nrun = \"true\"\n[providers.corp]\nkind = \"openai\"\nbase_url = \"http://127.0.0.1:9/v1\"\nrequests_per_minute = 0\n", "[providers.corp], field requests_per_minute: 0 would refuse every call"),
        ("name = \"x\"\n[settings]\nmax_output_tokens = 0\n[[task]]\nid = \"a\"\nrun = \"true\"\n", "field max_output_tokens: 0 leaves no room for an answer"),
    ];
    for (body, expected) in cases {
        let (out, dir) = bad_workflow(body);
        assert_eq!(out.status.code(), Some(2), "{body}\n{}", text(&out));
        assert!(
            text(&out).contains(expected),
            "{body}\nexpected {expected:?} in:\n{}",
            text(&out)
        );
        assert!(
            text(&out).contains("bad.toml"),
            "the error names the file: {}",
            text(&out)
        );
        assert!(
            !dir.path().join("store").exists(),
            "nothing ran, no store was created"
        );
    }
    let out = runlog(Path::new("/nonexistent-store"))
        .args(["run", "no/such/file.toml"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out).contains("cannot read workflow no/such/file.toml"));
}

#[test]
fn an_evaluator_printing_garbage_is_recorded_not_a_crash() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let path = dir.path().join("garbage.toml");
    let bin = repo().join("fixtures/workflows/bin");
    std::fs::write(
        &path,
        format!(
            "name = \"garbage\"\n[[task]]\nid = \"a\"\nrun = \"{0}/agent.sh\"\neval = \"{0}/judge.sh --garbage\"\nrequires_testing = false\n",
            bin.display()
        ),
    )
    .unwrap();
    let out = runlog(&store)
        .args(["run", path.to_str().unwrap(), "--run-id", "g", "--quiet"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(text(&out).contains("paused"), "{}", text(&out));
    let log = open(&store);
    let errored = events(&log, "g")
        .into_iter()
        .find_map(|(_, e)| match e.kind {
            EventKind::EvalErrored { error, .. } => Some(error),
            _ => None,
        });
    assert!(errored.unwrap().contains("no JSON object with a \"score\""));
    let state = Replay::new(&log).head_state("g").unwrap();
    assert_eq!(state.status_of(&"a".into()), Some(TaskStatus::PendingEval));
}

#[test]
fn log_follow_tails_a_live_run() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let wf = slow_workflow(dir.path());
    let mut runner = runlog(&store)
        .args(["run", wf.to_str().unwrap(), "--run-id", "live", "--quiet"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Wait until the runner drives the run.
    wait_for(|| runner_marker(&store).is_some());
    let socket = runner_marker(&store).unwrap();
    let follow = runlog(&store)
        .args(["log", "live", "--follow", "--json"])
        .output()
        .unwrap();
    assert!(runner.wait().unwrap().success());
    assert_eq!(follow.status.code(), Some(0), "{}", text(&follow));
    let lines = common::followed_from_the_start(&follow);
    assert_eq!(
        lines.last().unwrap()["event"]["type"],
        "run-finished",
        "it followed to the end"
    );
    assert!(
        !socket.exists(),
        "the runner removes its marker when it exits"
    );
}

#[test]
fn agents_get_absolute_worktree_and_feedback_paths_with_the_default_store() {
    // The default store is `.runlog` in the current directory, a relative path, while agents
    // run in the workflow's directory: the paths they get must still point into the store.
    let dir = tempfile::tempdir().unwrap();
    let wf = dir.path().join("wf");
    std::fs::create_dir_all(&wf).unwrap();
    std::fs::write(
        wf.join("w.toml"),
        "name = \"w\"\n[[task]]\nid = \"a\"\nrun = \"echo $RUNLOG_WORKTREE; echo $RUNLOG_FEEDBACK; test -f $RUNLOG_FEEDBACK\"\nrequires_testing = false\n",
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_runlog"))
        .current_dir(dir.path())
        .env_remove("RUNLOG_STORE")
        .args(["run", "wf/w.toml", "--quiet"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(
        dir.path().join(".runlog/worktrees/w-1/a").is_dir(),
        "the worktree is in the store"
    );
    assert!(
        !wf.join(".runlog").exists(),
        "nothing was created beside the workflow"
    );
    let log = open(&dir.path().join(".runlog"));
    let output = events(&log, "w-1")
        .into_iter()
        .find_map(|(_, e)| match e.kind {
            EventKind::OutputRecorded { text, .. } => Some(text),
            _ => None,
        })
        .unwrap();
    assert!(
        output.lines().all(|l| Path::new(l).is_absolute()),
        "{output}"
    );
}

#[test]
fn an_empty_worktree_is_handed_on_and_one_with_work_in_it_kept() {
    // A chain of twelve tasks: each finds its worktree empty and named for it; t3 leaves a
    // file in its own, which stays; the others end with theirs empty and hand them on.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("check.sh"),
        "test -z \"$(ls -A \"$RUNLOG_WORKTREE\")\" || { echo \"not empty: $RUNLOG_WORKTREE\"; exit 1; }\n\
         test \"$(basename \"$RUNLOG_WORKTREE\")\" = \"$1\" || { echo \"not $1's: $RUNLOG_WORKTREE\"; exit 1; }\n\
         if [ \"$2\" = leave ]; then echo work > \"$RUNLOG_WORKTREE/kept\"; fi\n",
    )
    .unwrap();
    let mut wf = String::from("name = \"w\"\n");
    for i in 0..12 {
        let leave = if i == 3 { " leave" } else { "" };
        wf.push_str(&format!(
            "[[task]]\nid = \"t{i}\"\nrun = \"sh check.sh t{i}{leave}\"\nrequires_testing = false\n"
        ));
        if i > 0 {
            wf.push_str(&format!("after = [\"t{}\"]\n", i - 1));
        }
    }
    let workflow = dir.path().join("w.toml");
    std::fs::write(&workflow, wf).unwrap();
    let store = dir.path().join("store");
    let out = runlog(&store)
        .arg("run")
        .arg(&workflow)
        .arg("--quiet")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let work = store.join("worktrees/w-1");
    assert_eq!(
        std::fs::read_to_string(work.join("t3/kept")).unwrap(),
        "work\n"
    );
    let mut dirs: Vec<String> = std::fs::read_dir(&work)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with('t'))
        .collect();
    dirs.sort();
    // t3's, and the one handed on from task to task, now the last task's.
    assert_eq!(dirs, ["t11", "t3"]);
}

#[test]
fn a_run_paused_for_a_replan_continues_after_a_plan_revised_by_hand() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let bin = repo().join("fixtures/workflows/bin");
    // seed-000 without its replan command: the run pauses when the replan is requested.
    let wf = std::fs::read_to_string(repo().join("fixtures/workflows/seed-000-reevaluation.toml"))
        .unwrap()
        .replace("replan = \"bin/replan.sh\"\n", "")
        .replace("bin/agent.sh", &format!("{}/agent.sh", bin.display()));
    let path = dir.path().join("wf.toml");
    std::fs::write(&path, wf).unwrap();
    let out = runlog(&store)
        .args(["run", path.to_str().unwrap(), "--run-id", "p", "--quiet"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(
        text(&out).contains("paused") && text(&out).contains("runlog replan"),
        "{}",
        text(&out)
    );
    let plan = dir.path().join("plan.json");
    std::fs::write(
        &plan,
        format!(
            r#"{{"cancel": ["volume"], "add": [{{"id": "volume2", "run": "{}/agent.sh"}}], "replaces": {{"volume2": "volume"}}, "reason": "by hand"}}"#,
            bin.display()
        ),
    )
    .unwrap();
    let out = runlog(&store)
        .args([
            "replan",
            "p",
            "--file",
            plan.to_str().unwrap(),
            "--by",
            "carol",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let out = runlog(&store)
        .args(["resume", "p", "--quiet"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let log = open(&store);
    let state = Replay::new(&log).head_state("p").unwrap();
    assert_eq!(
        state.status_of(&"volume".into()),
        Some(TaskStatus::Cancelled)
    );
    assert_eq!(state.status_of(&"volume2".into()), Some(TaskStatus::Done));
    assert!(events(&log, "p").iter().any(|(_, e)| matches!(&e.kind, EventKind::PlanRevised { reason, .. } if reason == "by hand (by carol)")));
}

#[test]
fn a_reader_closing_the_pipe_ends_a_command_quietly() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    // A history far larger than a pipe's buffer, so the writer really meets the closed pipe.
    let mut script = String::from(
        r#"{"command":"start-run","run":"big","workflow":"w","workflow_hash":"0000000000000000000000000000000000000000000000000000000000000000","settings":{"eval_threshold":0.7,"auto_rescue":true,"max_eval_rescues":3,"max_test_retries":3,"max_depth":3,"jobs":1,"history_warn_events":100000},"tasks":[]}"#,
    );
    script.push('\n');
    for i in 0..3_000 {
        script.push_str(&format!("{{\"command\":\"post-message\",\"task\":null,\"from\":\"bot\",\"text\":\"message number {i} with some padding to make the line long\"}}\n"));
    }
    let out = common::emit(&store, "big", &script);
    assert!(out.status.success(), "{}", text(&out));
    let mut child = runlog(&store)
        .args(["log", "big"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(child.stdout.take().unwrap()),
        &mut first,
    )
    .unwrap();
    // The reader is gone now (like `runlog log RUN | head -1`).
    let out = child.wait_with_output().unwrap();
    assert!(first.contains("run-started"));
    assert!(
        !String::from_utf8_lossy(&out.stderr).contains("panicked"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn a_retry_behind_a_circuit_that_opened_meanwhile_ends_the_run_as_failed_not_as_a_bug() {
    // b's failure opens the shared circuit while a waits for its retry: the retry must not be
    // proposed (decide would refuse it); the run ends with a blocked behind the circuit.
    let dir = tempfile::tempdir().unwrap();
    let wf = dir.path().join("circuit.toml");
    std::fs::write(
        &wf,
        "name = \"circuit\"\n\
         [[task]]\nid = \"a\"\nrun = \"exit 1\"\nstage = \"dev\"\nrequires_testing = false\nretry = { max = 5, delay_ms = 1500, circuit_after = 2 }\n\
         [[task]]\nid = \"b\"\nrun = \"sleep 0.5; exit 1\"\nstage = \"dev\"\nrequires_testing = false\nretry = { max = 5, delay_ms = 1500, circuit_after = 2 }\n",
    )
    .unwrap();
    let store = dir.path().join("store");
    let out = runlog(&store)
        .args([
            "run",
            wf.to_str().unwrap(),
            "--quiet",
            "--run-id",
            "c1",
            "--jobs",
            "2",
        ])
        .output()
        .unwrap();
    let said = text(&out);
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(!said.contains("runlog bug"), "{said}");
    let state = Replay::new(&open(&store)).head_state("c1").unwrap();
    assert!(
        matches!(
            &state.status,
            runlog_core::RunStatus::Finished(runlog_core::RunOutcome::Failed { blocked, .. })
                if !blocked.is_empty()
        ),
        "{:?}",
        state.status
    );
}
