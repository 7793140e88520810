//! The runner under the conditions users put it in: agents that leave children behind or need
//! a moment to clean up, tests that time out, evaluators and replanners that talk too much, a
//! replan racing a finishing task, a follower that stops reading, a closed terminal. Each test
//! goes through the real binary with real processes and checks what a user would look at: the
//! exit code, the recorded events, the files the agents left.

mod common;

use common::{
    events, every_reader_answers, finish_within, gone, open, run, runlog, runner_marker, text,
    wait_for, workflow,
};
use runlog_core::{EventKind, RunState, TaskStatus};
use runlog_replay::Replay;
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

fn head(store: &Path, run: &str) -> RunState {
    Replay::new(&open(store)).head_state(run).unwrap()
}

/// Everything of a run's events that `pick` picks something from, in order.
fn all<T>(store: &Path, run: &str, pick: impl Fn(EventKind) -> Option<T>) -> Vec<T> {
    events(&open(store), run)
        .into_iter()
        .filter_map(|(_, e)| pick(e.kind))
        .collect()
}

/// The messages the run recorded, as text.
fn messages(store: &Path, run: &str) -> Vec<String> {
    all(store, run, |e| match e {
        EventKind::MessagePosted { text, .. } => Some(text),
        _ => None,
    })
}

/// Fails unless the run recorded a message containing `needle`.
fn assert_said(store: &Path, run: &str, needle: &str) {
    let said = messages(store, run);
    assert!(
        said.iter().any(|m| m.contains(needle)),
        "no message says {needle:?}: {said:?}"
    );
}

/// The first thing `pick` picks from a run's events.
fn first<T>(store: &Path, run: &str, pick: impl Fn(EventKind) -> Option<T>) -> Option<T> {
    all(store, run, pick).into_iter().next()
}

/// `runlog run WF --run-id RUN --quiet` in the background, its output captured.
fn spawn(store: &Path, wf: &Path, run: &str) -> std::process::Child {
    runlog(store)
        .args(["run", wf.to_str().unwrap(), "--run-id", run, "--quiet"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

#[test]
fn an_agent_that_exits_leaving_a_background_child_is_done_at_once_and_the_child_stopped() {
    let dir = tempfile::tempdir().unwrap();
    let wf = workflow(
        dir.path(),
        "bg",
        "name = \"bg\"\n[[task]]\nid = \"a\"\nrun = \"echo hi; sleep 300 & echo $! > bg.pid; exit 0\"\nrequires_testing = false\nretry = { max = 0, timeout_ms = 5000 }\n",
    );
    let store = dir.path().join("store");
    let out = run(&store, &wf, "bg", &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(
        head(&store, "bg").status_of(&"a".into()),
        Some(TaskStatus::Done)
    );
    let pid = std::fs::read_to_string(dir.path().join("bg.pid")).unwrap();
    assert!(
        gone(&pid),
        "the background sleep {pid} was stopped with the group"
    );
    assert_said(&store, "bg", "leaving processes of its group running");
}

#[test]
fn a_timed_out_test_keeps_its_output_and_the_retry_sees_it_line_by_line() {
    let dir = tempfile::tempdir().unwrap();
    let wf = workflow(
        dir.path(),
        "slowtest",
        "name = \"slowtest\"\n[settings]\nmax_test_retries = 1\n[[task]]\nid = \"a\"\nrun = \"cp \\\"$RUNLOG_FEEDBACK\\\" feedback-$RUNLOG_ATTEMPT.txt\"\ntest = \"echo checking widgets; echo checking gears; sleep 30\"\nretry = { timeout_ms = 1000 }\n",
    );
    let store = dir.path().join("store");
    let out = run(&store, &wf, "slow", &[]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let feedback = std::fs::read_to_string(dir.path().join("feedback-2.txt")).unwrap();
    assert!(feedback.contains("timed out"), "{feedback}");
    assert!(
        feedback.contains("checking widgets\nchecking gears"),
        "what the test printed before its timeout, lines kept: {feedback}"
    );
}

#[test]
fn a_failed_tests_feedback_keeps_its_lines_and_both_ends_of_a_long_output() {
    let dir = tempfile::tempdir().unwrap();
    let wf = workflow(
        dir.path(),
        "longtest",
        "name = \"longtest\"\n[settings]\nmax_test_retries = 0\n[[task]]\nid = \"a\"\nrun = \"true\"\ntest = \"echo FIRST; seq 1 20000; echo LAST >&2; exit 1\"\n",
    );
    let store = dir.path().join("store");
    let out = run(&store, &wf, "long", &[]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let details = first(&store, "long", |e| match e {
        EventKind::TestsFailed { details, .. } => Some(details),
        _ => None,
    })
    .unwrap();
    assert!(details.contains("FIRST\n1\n2\n3\n"), "{details}");
    assert!(details.contains("19999\n20000\n"), "{details}");
    assert!(details.contains("LAST"), "{details}");
    assert!(details.contains("bytes left out"), "{details}");
    assert!(!details.contains(" | "), "newlines are kept: {details}");
    assert!(details.len() < 10_000, "capped: {} bytes", details.len());
}

#[test]
fn an_example_object_before_the_verdict_does_not_decide_the_gate() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("judge.sh"),
        "echo 'A perfect answer would get {\"score\": 1.0}.'\necho 'My verdict:'\necho '{\"score\": 0.2, \"notes\": \"no tests\", \"detail\": {\"score\": 0.9}}'\n",
    )
    .unwrap();
    let wf = workflow(
        dir.path(),
        "gate",
        "name = \"gate\"\n[settings]\nauto_rescue = false\n[[task]]\nid = \"a\"\nrun = \"true\"\neval = \"sh judge.sh\"\nrequires_testing = false\n",
    );
    let store = dir.path().join("store");
    let out = run(&store, &wf, "gate", &[]);
    let score = first(&store, "gate", |e| match e {
        EventKind::EvalScored { score, .. } => Some(score),
        _ => None,
    });
    assert_eq!(
        score,
        Some(0.2),
        "the last top-level verdict: {}",
        text(&out)
    );
    assert_ne!(out.status.code(), Some(0), "0.2 is below the threshold");
}

/// A workflow whose destructive task `d` makes `p` (sharing its file) wait for a revision.
fn replanned(dir: &Path, replan: &str, extra: &str) -> std::path::PathBuf {
    std::fs::write(dir.join("replan.sh"), replan).unwrap();
    workflow(
        dir,
        "re",
        &format!(
            "name = \"re\"\n[settings]\nreplan = \"sh replan.sh\"\n{extra}\n\
             [[task]]\nid = \"d\"\nrun = \"true\"\nfiles = [\"f.py\"]\ndestructive = true\nrequires_testing = false\n\
             [[task]]\nid = \"p\"\nrun = \"true\"\nfiles = [\"f.py\"]\nafter = [\"d\"]\nrequires_testing = false\n"
        ),
    )
}

#[test]
fn a_revision_cancelling_a_task_whose_tests_run_stops_them_and_the_run_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let wf = replanned(
        dir.path(),
        "cat > /dev/null\necho '{\"cancel\": [\"s\", \"p\"], \"reason\": \"not needed\"}'\n",
        "",
    );
    let mut toml = std::fs::read_to_string(&wf).unwrap();
    toml.push_str(
        "[[task]]\nid = \"s\"\nrun = \"true\"\ntest = \"sleep 5; touch tests-finished\"\n",
    );
    std::fs::write(&wf, toml).unwrap();
    let store = dir.path().join("store");
    let out = run(&store, &wf, "re", &["--jobs", "2"]);
    let said = text(&out);
    assert!(!said.contains("runlog bug"), "{said}");
    assert_eq!(out.status.code(), Some(0), "{said}");
    let state = head(&store, "re");
    assert_eq!(state.status_of(&"s".into()), Some(TaskStatus::Cancelled));
    assert!(
        !dir.path().join("tests-finished").exists(),
        "the cancelled task's tests were stopped"
    );
    assert_said(
        &store,
        "re",
        "test command was stopped: a plan revision cancelled the task",
    );
}

#[test]
fn a_replan_request_raised_while_the_replanner_runs_is_served_by_a_second_revision() {
    let dir = tempfile::tempdir().unwrap();
    // The first answer takes 3 s, long enough for d2's tests to pass and raise a second request
    // while it runs; it cancels p only. The second cancels p2.
    let wf = replanned(
        dir.path(),
        "n=$(cat count 2>/dev/null || echo 0); n=$((n+1)); echo $n > count\ncat > /dev/null\n\
         if [ $n = 1 ]; then sleep 3; echo '{\"cancel\": [\"p\"]}'; else echo '{\"cancel\": [\"p2\"]}'; fi\n",
        "",
    );
    let mut toml = std::fs::read_to_string(&wf).unwrap();
    toml.push_str(
        "[[task]]\nid = \"d2\"\nrun = \"true\"\ntest = \"sleep 1\"\nfiles = [\"g.py\"]\ndestructive = true\n\
         [[task]]\nid = \"p2\"\nrun = \"true\"\nfiles = [\"g.py\"]\nafter = [\"d2\"]\nrequires_testing = false\n",
    );
    std::fs::write(&wf, toml).unwrap();
    let store = dir.path().join("store");
    let out = run(&store, &wf, "re", &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let state = head(&store, "re");
    assert_eq!(
        state.status_of(&"p2".into()),
        Some(TaskStatus::Cancelled),
        "p2 waited for the second revision instead of running"
    );
    let revisions = all(&store, "re", |e| {
        matches!(e, EventKind::PlanRevised { .. }).then_some(())
    });
    assert_eq!(revisions.len(), 2);
}

#[test]
fn the_replan_command_gets_a_large_board_while_it_writes_and_may_answer_in_prose() {
    let dir = tempfile::tempdir().unwrap();
    // It writes 200 KB to stderr before reading its stdin: fed only after, it would deadlock.
    let wf = replanned(
        dir.path(),
        "head -c 200000 /dev/zero | tr '\\0' x >&2\ncat > board.json\n\
         echo 'Here is the revised plan:'\necho '```json'\necho '{\"cancel\": [\"p\"], \"reason\": \"p is obsolete\"}'\necho '```'\n",
        "",
    );
    let mut toml = std::fs::read_to_string(&wf).unwrap();
    let long = "x".repeat(400);
    for i in 0..250 {
        toml.push_str(&format!(
            "[[task]]\nid = \"w{i}\"\ndescription = \"{long}\"\nrun = \"true\"\nafter = [\"p\"]\nrequires_testing = false\n"
        ));
    }
    std::fs::write(&wf, toml).unwrap();
    let store = dir.path().join("store");
    let child = spawn(&store, &wf, "re");
    let out = finish_within(
        child,
        Duration::from_secs(120),
        "the run with a large board",
    );
    let board = std::fs::metadata(dir.path().join("board.json"))
        .unwrap()
        .len();
    assert!(
        board > 65_536,
        "the board is larger than a pipe: {board} bytes"
    );
    assert_eq!(
        head(&store, "re").status_of(&"p".into()),
        Some(TaskStatus::Cancelled),
        "the plan inside prose and a fence was taken: {}",
        text(&out)
    );
    let recorded = all(&store, "re", |e| match e {
        EventKind::OutputRecorded { stream, .. } => Some(stream),
        _ => None,
    });
    assert!(
        recorded.contains(&"replan.stdout".to_owned())
            && recorded.contains(&"replan.stderr".to_owned()),
        "the replan command's output is recorded: {recorded:?}"
    );
}

#[test]
fn a_replan_command_that_answers_nonsense_or_hangs_pauses_the_run_saying_why() {
    let dir = tempfile::tempdir().unwrap();
    let wf = replanned(dir.path(), "cat > /dev/null\necho 'I cannot decide.'\n", "");
    let store = dir.path().join("store");
    let out = run(&store, &wf, "nonsense", &[]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert_said(&store, "nonsense", "I cannot decide.");

    let dir = tempfile::tempdir().unwrap();
    let wf = replanned(dir.path(), "sleep 300\n", "replan_timeout_ms = 500\n");
    let store = dir.path().join("store");
    let child = spawn(&store, &wf, "hang");
    let out = finish_within(
        child,
        Duration::from_secs(60),
        "a run with a hanging replanner",
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert_said(&store, "hang", "timed out");
}

#[test]
fn a_timeout_asks_the_agent_to_stop_before_killing_it() {
    let dir = tempfile::tempdir().unwrap();
    // The first agent cleans up its lock on SIGTERM; the second ignores SIGTERM and is killed
    // once the grace period is over.
    let wf = workflow(
        dir.path(),
        "gentle",
        "name = \"gentle\"\n[settings]\nkill_grace_ms = 500\n\
         [[task]]\nid = \"polite\"\nrun = \"trap 'rm -f index.lock; exit 143' TERM; touch index.lock; sleep 30 & wait\"\nrequires_testing = false\nretry = { max = 0, timeout_ms = 1000 }\n\
         [[task]]\nid = \"stubborn\"\nrun = \"trap '' TERM; sleep 30\"\nrequires_testing = false\nretry = { max = 0, timeout_ms = 1000 }\n",
    );
    let store = dir.path().join("store");
    let child = spawn(&store, &wf, "g");
    let out = finish_within(
        child,
        Duration::from_secs(25),
        "a run whose agents time out",
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(
        !dir.path().join("index.lock").exists(),
        "SIGTERM came first, so the agent removed its lock"
    );
    let state = head(&store, "g");
    for t in ["polite", "stubborn"] {
        assert_eq!(state.status_of(&t.into()), Some(TaskStatus::Failed), "{t}");
    }
}

#[test]
fn a_hangup_or_sigterm_interrupts_the_run_stops_the_agent_and_resume_continues() {
    for signal in [
        nix::sys::signal::Signal::SIGHUP,
        nix::sys::signal::Signal::SIGTERM,
    ] {
        interrupted_by(signal);
    }
}

fn interrupted_by(signal: nix::sys::signal::Signal) {
    let dir = tempfile::tempdir().unwrap();
    let wf = workflow(
        dir.path(),
        "hup",
        "name = \"hup\"\n[[task]]\nid = \"a\"\nrun = \"if [ -e ran-once ]; then exit 0; fi; touch ran-once; trap 'touch got-term; exit 143' TERM; sleep 30 & wait\"\nrequires_testing = false\n",
    );
    let store = dir.path().join("store");
    let child = spawn(&store, &wf, "hup");
    wait_for(|| dir.path().join("ran-once").exists() && runner_marker(&store).is_some());
    std::thread::sleep(Duration::from_millis(200));
    let pid = nix::unistd::Pid::from_raw(child.id() as i32);
    nix::sys::signal::kill(pid, signal).unwrap();
    let out = finish_within(
        child,
        Duration::from_secs(20),
        "the runner after the signal",
    );
    assert_eq!(out.status.code(), Some(130), "{signal}: {}", text(&out));
    assert!(
        dir.path().join("got-term").exists(),
        "the agent was asked to stop"
    );
    let last = events(&open(&store), "hup").pop().unwrap().1;
    assert!(
        matches!(last.kind, EventKind::RunInterrupted { .. }),
        "{last:?}"
    );
    let out = runlog(&store)
        .args(["resume", "hup", "--quiet"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
}

#[test]
fn a_follower_that_stops_reading_does_not_hold_up_the_run() {
    let dir = tempfile::tempdir().unwrap();
    // 40 agents each print 8 KB: far more event lines than a socket buffers.
    let mut toml = String::from("name = \"chatty\"\n[settings]\njobs = 4\n");
    let mut all = Vec::new();
    for i in 0..40 {
        toml.push_str(&format!(
            "[[task]]\nid = \"t{i}\"\nrun = \"head -c 8000 /dev/zero | tr '\\\\0' x; head -c 8000 /dev/zero | tr '\\\\0' y >&2\"\nrequires_testing = false\n"
        ));
        all.push(format!("\"t{i}\""));
    }
    toml.push_str(&format!(
        "[[task]]\nid = \"last\"\nrun = \"sleep 1\"\nafter = [{}]\nrequires_testing = false\n",
        all.join(", ")
    ));
    let wf = workflow(dir.path(), "chatty", &toml);
    let store = dir.path().join("store");
    let child = spawn(&store, &wf, "chatty");
    wait_for(|| runner_marker(&store).is_some());
    // A follower whose reader never reads: its pipe fills, and it waits on it, not the run.
    let follower = runlog(&store)
        .args(["log", "chatty", "--follow", "--json"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let out = finish_within(
        child,
        Duration::from_secs(60),
        "the runner with a stuck follower",
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let mut follower = follower;
    let _ = follower.kill();
    let _ = follower.wait();
}

#[test]
fn the_summary_of_a_run_waiting_for_a_person_counts_every_task_and_says_what_to_do() {
    let dir = tempfile::tempdir().unwrap();
    let wf = workflow(
        dir.path(),
        "wait",
        "name = \"wait\"\n[settings]\nauto_rescue = false\n\
         [[task]]\nid = \"a\"\nrun = \"true\"\ntest = \"true\"\neval = \"echo no verdict\"\n\
         [[task]]\nid = \"b\"\nrun = \"true\"\nafter = [\"a\"]\nrequires_testing = false\n",
    );
    let store = dir.path().join("store");
    let out = run(&store, &wf, "w", &[]);
    let said = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(said.contains("tasks: 1 open, 1 pending-eval"), "{said}");
    assert!(said.contains("test failures 0"), "{said}");
    assert!(said.contains("approve w a"), "{said}");
    assert!(said.contains("reject w a"), "{said}");

    let out = run(&store, &wf, "w0", &["--jobs", "0"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        text(&out).contains("invalid jobs: must be at least 1"),
        "the same rule as `jobs = 0` in a workflow: {}",
        text(&out)
    );
    let mut zero = std::fs::read_to_string(&wf).unwrap();
    zero = zero.replace("auto_rescue = false", "auto_rescue = false\njobs = 0");
    std::fs::write(&wf, zero).unwrap();
    let out = run(&store, &wf, "w1", &[]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        text(&out).contains("invalid jobs: must be at least 1"),
        "{}",
        text(&out)
    );
}

#[test]
fn a_result_nested_too_deep_to_read_back_is_kept_as_text_and_the_run_stays_readable() {
    let dir = tempfile::tempdir().unwrap();
    let deep = format!("{}1{}", "{\"a\":".repeat(100), "}".repeat(100));
    std::fs::write(dir.path().join("deep.json"), &deep).unwrap();
    let wf = workflow(
        dir.path(),
        "deep",
        "name = \"deep\"\n[[task]]\nid = \"a\"\nrun = \"cat deep.json\"\nrequires_testing = false\n",
    );
    let store = dir.path().join("store");
    let out = run(&store, &wf, "deep", &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    every_reader_answers(&store, "deep", "a", 2);
    assert_said(&store, "deep", "kept as text");
}

#[test]
fn verify_reports_an_event_no_command_can_read() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    {
        let log = runlog_store::Log::open(&store, runlog_store::Options::default()).unwrap();
        use runlog_store::EventLog;
        log.append("x", Some(0), vec![b"not an event".to_vec()])
            .unwrap();
    }
    let out = runlog(&store).args(["verify", "x"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(
        text(&out).contains("seq 1 does not decode as an event"),
        "{}",
        text(&out)
    );
}

#[test]
fn agents_left_running_by_a_killed_runner_are_stopped_before_resume_retries_them() {
    let dir = tempfile::tempdir().unwrap();
    // The first attempt starts a worker that the parent-death signal (sent to the agent's shell
    // only) does not reach and records its pid; the retry finishes at once.
    let wf = workflow(
        dir.path(),
        "orphan",
        "name = \"orphan\"\n[[task]]\nid = \"a\"\nrun = \"if [ -e first.pid ]; then exit 0; fi; sleep 60 & echo $! > first.pid; wait\"\nrequires_testing = false\n",
    );
    let store = dir.path().join("store");
    let mut child = spawn(&store, &wf, "orphan");
    let pid_file = dir.path().join("first.pid");
    wait_for(|| std::fs::read_to_string(&pid_file).is_ok_and(|p| p.ends_with('\n')));
    child.kill().unwrap(); // SIGKILL: the runner cannot stop its agent
    child.wait().unwrap();
    let first = std::fs::read_to_string(&pid_file).unwrap();
    assert!(
        !gone(&first),
        "kill -9 of the runner leaves its agent running"
    );
    let out = runlog(&store)
        .args(["resume", "orphan", "--quiet"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(
        gone(&first),
        "resume stopped the agent {first} before retrying"
    );
    assert_said(&store, "orphan", "left running by a runner that stopped");
}

#[test]
fn an_agent_dies_with_its_runner_killed_with_sigkill_without_waiting_for_resume() {
    let dir = tempfile::tempdir().unwrap();
    let wf = workflow(
        dir.path(),
        "pdeath",
        "name = \"pdeath\"\n[[task]]\nid = \"a\"\nrun = \"echo $$ > agent.pid; exec sleep 60\"\nrequires_testing = false\n",
    );
    let store = dir.path().join("store");
    let mut child = spawn(&store, &wf, "pdeath");
    let pid_file = dir.path().join("agent.pid");
    wait_for(|| std::fs::read_to_string(&pid_file).is_ok_and(|p| p.ends_with('\n')));
    let agent = std::fs::read_to_string(&pid_file).unwrap();
    child.kill().unwrap();
    child.wait().unwrap();
    wait_for(|| gone(&agent));
}

/// Bytes under `dir`, recursively.
fn disk_bytes(dir: &Path) -> u64 {
    std::fs::read_dir(dir).unwrap().flatten().fold(0, |sum, e| {
        let meta = e.metadata().unwrap();
        sum + if meta.is_dir() {
            disk_bytes(&e.path())
        } else {
            meta.len()
        }
    })
}

#[test]
fn an_agent_printing_200_mb_keeps_the_head_and_tail_and_its_report_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let wf = workflow(
        dir.path(),
        "loud",
        "name = \"loud\"\n[[task]]\nid = \"a\"\nrun = \"echo FIRST; head -c 200000000 /dev/zero | tr '\\\\0' x; echo; echo '::checkpoint printed'; echo '{\\\"lines\\\": 1}'\"\nrequires_testing = false\ncheckpoints = [\"printed\"]\n",
    );
    let store = dir.path().join("store");
    let out = run(&store, &wf, "loud", &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let state = head(&store, "loud");
    assert_eq!(state.status_of(&"a".into()), Some(TaskStatus::Done));
    let stored = disk_bytes(&store);
    assert!(
        stored < 40_000_000,
        "the store keeps the capped output, not 200 MB: {stored} bytes"
    );
    assert_said(&store, "loud", "bytes in the middle were left out");
    let recorded = first(&store, "loud", |e| match e {
        EventKind::OutputRecorded {
            stream,
            text,
            blob,
            bytes,
            ..
        } if stream == "agent.stdout" => Some((text, blob, bytes)),
        _ => None,
    })
    .unwrap();
    assert!(recorded.0.starts_with("FIRST\nxxx"), "the head is kept");
    assert!(recorded.1.is_some(), "large output goes to the blob area");
    assert!(recorded.2 <= 16 * 1024 * 1024 + 200, "{}", recorded.2);
    let log = runlog(&store)
        .args(["log", "loud", "--json"])
        .output()
        .unwrap();
    assert_eq!(log.status.code(), Some(0), "{}", text(&log));
    assert!(
        log.stdout.len() < 100_000,
        "log --json references the blob instead of inlining it: {} bytes",
        log.stdout.len()
    );
}

/// Every attempt's agent reads its task's whole story so far in `$RUNLOG_HISTORY` (the
/// progressive context of a loop that never gives up): the first attempt's large output whole, its failed tests, the retry
/// itself. With a small `history_cap_bytes` the newest events are kept and the file says how
/// many older ones were left out.
#[test]
fn each_attempt_reads_its_tasks_story_so_far() {
    let dir = tempfile::tempdir().unwrap();
    let agent = "if [ \\\"$RUNLOG_ATTEMPT\\\" = 1 ]; then echo first-attempt-said-this; head -c 6000 /dev/zero | tr '\\\\0' y; \
                 else cp \\\"$RUNLOG_HISTORY\\\" seen-$RUNLOG_ATTEMPT.jsonl; fi";
    let toml = |cap: &str| {
        format!(
            "name = \"story\"\n[settings]\nmax_test_retries = 2\n{cap}\
             [[task]]\nid = \"a\"\nrun = \"{agent}\"\ntest = \"test -e seen-$RUNLOG_ATTEMPT.jsonl\"\n"
        )
    };
    let wf = workflow(dir.path(), "story", &toml(""));
    let store = dir.path().join("store");
    let out = run(&store, &wf, "story", &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let seen = std::fs::read_to_string(dir.path().join("seen-2.jsonl")).unwrap();
    let lines: Vec<serde_json::Value> = seen
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let kinds: Vec<&str> = lines
        .iter()
        .map(|l| l["event"]["type"].as_str().unwrap())
        .collect();
    for kind in [
        "task-added",
        "task-started",
        "output-recorded",
        "tests-failed",
    ] {
        assert!(kinds.contains(&kind), "{kind} in {kinds:?}");
    }
    assert_eq!(
        lines
            .iter()
            .filter(|l| l["event"]["type"] == "task-started")
            .count(),
        2,
        "the second attempt's own start is there too"
    );
    let output = lines
        .iter()
        .find(|l| l["event"]["type"] == "output-recorded" && l["event"]["stream"] == "agent.stdout")
        .unwrap();
    let text_out = output["event"]["text"].as_str().unwrap();
    assert!(
        text_out.starts_with("first-attempt-said-this\n"),
        "{text_out}"
    );
    assert_eq!(
        text_out.matches('y').count(),
        6000,
        "the whole output, not the event's 4 KiB"
    );
    // A small cap: the newest events, and a first line saying what was left out.
    let wf = workflow(
        dir.path(),
        "story-capped",
        &toml("history_cap_bytes = 1500\n"),
    );
    let out = run(&store, &wf, "capped", &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let seen = std::fs::read_to_string(dir.path().join("seen-2.jsonl")).unwrap();
    let first: serde_json::Value = serde_json::from_str(seen.lines().next().unwrap()).unwrap();
    assert!(first["left_out"].as_u64().unwrap() >= 1, "{seen}");
    assert!(seen.len() <= 1500 + 200, "{} bytes", seen.len());
    assert!(seen.contains("\"task-started\""), "the newest kept: {seen}");
}

/// Tasks running at once each read their own story and feedback, and a run leaves one
/// feedback and one history file per command it ran at once, not one per task.
#[test]
fn commands_running_at_once_read_their_own_files_and_a_run_leaves_few() {
    let dir = tempfile::tempdir().unwrap();
    let mut toml = String::from("name = \"many\"\n[settings]\njobs = 4\n");
    // Each agent keeps a copy of its story and checks that its feedback is empty, while three
    // others run beside it.
    let agent =
        "cp \\\"$RUNLOG_HISTORY\\\" seen-$RUNLOG_TASK.jsonl && test -f \\\"$RUNLOG_FEEDBACK\\\" \
                 && ! test -s \\\"$RUNLOG_FEEDBACK\\\" && sleep 0.05";
    for i in 0..24 {
        toml.push_str(&format!(
            "[[task]]\nid = \"t{i}\"\nrun = \"{agent}\"\nrequires_testing = false\n"
        ));
    }
    let wf = workflow(dir.path(), "many", &toml);
    let store = dir.path().join("store");
    let out = run(&store, &wf, "many", &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    for i in 0..24 {
        let id = format!("t{i}");
        let seen = std::fs::read_to_string(dir.path().join(format!("seen-{id}.jsonl"))).unwrap();
        let mut started = false;
        for line in seen.lines() {
            let event = &serde_json::from_str::<serde_json::Value>(line).unwrap()["event"];
            let about = event["task"].as_str().or(event["spec"]["id"].as_str());
            assert_eq!(about, Some(id.as_str()), "{id}'s story: {line}");
            started |= event["type"] == "task-started";
        }
        assert!(started, "{id}'s story has its start: {seen}");
    }
    let names: Vec<String> = std::fs::read_dir(store.join("worktrees/many"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    let count = |end: &str| names.iter().filter(|n| n.ends_with(end)).count();
    assert!(
        (1..=4).contains(&count(".feedback")) && (1..=4).contains(&count(".history.jsonl")),
        "{names:?}"
    );
}
