//! A live store (issue 10): while a run is running, every command works from another process,
//! decisions reach the live engine at once, runs share one store, and the store survives its
//! owner's kill -9. All through the real binary, as a second terminal would use it; each case
//! on a store directory and on the shared store in PostgreSQL (issue 12), where no process owns
//! the store and decisions reach the engine through LISTEN/NOTIFY.

mod common;

use common::{every_reader_answers, finish_within, gone, runlog, text, wait_for, workflow};
use runlog_store::postgres::scratch::scratch;
use std::path::Path;
use std::process::{Child, Stdio};
use std::time::Duration;

fn spawn_run(store: &Path, wf: &Path, run: &str) -> Child {
    runlog(store)
        .args(["run", wf.to_str().unwrap(), "--run-id", run, "--quiet"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// A task's status on the board, asked as a second terminal would.
fn status_of(store: &Path, run: &str, task: &str) -> Option<String> {
    let out = runlog(store)
        .args(["--json", "status", run])
        .output()
        .unwrap();
    let board: serde_json::Value = serde_json::from_slice(&out.stdout).ok()?;
    board["board"]["rows"]
        .as_array()?
        .iter()
        .find(|r| r["id"] == task)
        .and_then(|r| r["status"].as_str())
        .map(str::to_owned)
}

/// `a` fails the eval gate (score 0.2, no rescue) and waits for a person; `b` needs `a`; `c` runs until `release-c` exists, so
/// the run stays live while a person decides.
const GATE: &str = "name = \"gate\"\n[settings]\nauto_rescue = false\n\
    [[task]]\nid = \"a\"\nrun = \"true\"\neval = \"echo '{\\\"score\\\": 0.2}'\"\nrequires_testing = false\n\
    [[task]]\nid = \"b\"\nafter = [\"a\"]\nrun = \"true\"\nrequires_testing = false\n\
    [[task]]\nid = \"c\"\nrun = \"while [ ! -e release-c ]; do sleep 0.05; done\"\nrequires_testing = false\n";

fn a_second_terminal_reads_and_approves_a_live_run_and_its_engine_acts_at_once(
    store: &Path,
    dir: &Path,
) {
    let wf = workflow(dir, "gate", GATE);
    let runner = spawn_run(store, &wf, "gate");
    wait_for(|| status_of(store, "gate", "a").as_deref() == Some("failed"));

    // Every reader answers while the run is live (the runner owns the store).
    every_reader_answers(store, "gate", "a", 2);

    let approve = runlog(store)
        .args(["approve", "gate", "a"])
        .output()
        .unwrap();
    assert_eq!(approve.status.code(), Some(0), "{}", text(&approve));
    // b starts and finishes in the live run while c still runs: no resume, no waiting for c.
    wait_for(|| status_of(store, "gate", "b").as_deref() == Some("done"));
    assert_eq!(
        status_of(store, "gate", "c").as_deref(),
        Some("in-progress")
    );

    std::fs::write(dir.join("release-c"), "").unwrap();
    let out = finish_within(runner, Duration::from_secs(60), "the gate run");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
}

fn twenty_runs_share_one_store_each_with_its_own_exit_code(store: &Path, dir: &Path) {
    let ok = workflow(
        dir,
        "ok",
        "name = \"ok\"\n[[task]]\nid = \"a\"\nrun = \"sleep 0.2\"\nrequires_testing = false\n\
         [[task]]\nid = \"b\"\nafter = [\"a\"]\nrun = \"true\"\nrequires_testing = false\n",
    );
    let bad = workflow(
        dir,
        "bad",
        "name = \"bad\"\n[[task]]\nid = \"a\"\nrun = \"sleep 0.2; exit 3\"\nrequires_testing = false\nretry = { max = 0 }\n",
    );
    // Every fifth run fails: each process must report its own run, not another's.
    let runners: Vec<(String, Child)> = (0..20)
        .map(|i| {
            let (wf, name) = if i % 5 == 4 {
                (&bad, "bad")
            } else {
                (&ok, "ok")
            };
            let run = format!("{name}-{i}");
            let child = spawn_run(store, wf, &run);
            (run, child)
        })
        .collect();
    for (run, child) in runners {
        let out = finish_within(child, Duration::from_secs(120), &run);
        let want = if run.starts_with("bad") { 1 } else { 0 };
        assert_eq!(out.status.code(), Some(want), "{run}: {}", text(&out));
        let verify = runlog(store).args(["verify", &run]).output().unwrap();
        assert_eq!(verify.status.code(), Some(0), "{run}: {}", text(&verify));
    }
    let runs = runlog(store).args(["--json", "runs"]).output().unwrap();
    let runs: Vec<serde_json::Value> = serde_json::from_slice(&runs.stdout).unwrap();
    assert_eq!(runs.len(), 20);
}

fn a_run_outlives_the_kill_9_of_the_process_that_owned_the_store(store: &Path, dir: &Path) {
    let slow = workflow(
        dir,
        "slow",
        "name = \"slow\"\n[[task]]\nid = \"a\"\nrun = \"if [ -e resumed ]; then exit 0; fi; sleep 30\"\nrequires_testing = false\n",
    );
    let steps = workflow(
        dir,
        "steps",
        "name = \"steps\"\n[[task]]\nid = \"a\"\nrun = \"while [ ! -e go ]; do sleep 0.05; done\"\nrequires_testing = false\n\
         [[task]]\nid = \"b\"\nafter = [\"a\"]\nrun = \"true\"\nrequires_testing = false\n",
    );
    let mut owner = spawn_run(store, &slow, "slow");
    wait_for(|| status_of(store, "slow", "a").as_deref() == Some("in-progress"));
    let second = spawn_run(store, &steps, "steps");
    wait_for(|| status_of(store, "steps", "a").as_deref() == Some("in-progress"));
    owner.kill().unwrap(); // SIGKILL: the owner cannot hand the store over
    owner.wait().unwrap();
    // The second run's next append finds nobody serving the store and takes it over.
    std::fs::write(dir.join("go"), "").unwrap();
    let out = finish_within(second, Duration::from_secs(60), "the second run");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    // The killed owner's run continues where it was.
    std::fs::write(dir.join("resumed"), "").unwrap();
    let resume = runlog(store)
        .args(["resume", "slow", "--quiet"])
        .output()
        .unwrap();
    assert_eq!(resume.status.code(), Some(0), "{}", text(&resume));
    let verify = runlog(store).args(["verify", "slow"]).output().unwrap();
    assert_eq!(verify.status.code(), Some(0), "{}", text(&verify));
}

fn a_rollback_of_a_live_run_is_applied_by_its_engine(store: &Path, dir: &Path) {
    // b's first attempt waits forever; once rolled back, its next attempt finishes at once.
    let wf = workflow(
        dir,
        "back",
        "name = \"back\"\n[[task]]\nid = \"a\"\nrun = \"true\"\nrequires_testing = false\n\
         [[task]]\nid = \"b\"\nafter = [\"a\"]\nrun = \"if [ -e b-once ]; then exit 0; fi; echo $$ > b-once; while true; do sleep 0.05; done\"\nrequires_testing = false\n",
    );
    let runner = spawn_run(store, &wf, "back");
    let pid_file = dir.join("b-once");
    wait_for(|| std::fs::read_to_string(&pid_file).is_ok_and(|p| p.ends_with('\n')));
    // Roll back to just before b started: its running attempt is undone.
    let log = runlog(store)
        .args([
            "--json",
            "log",
            "back",
            "--task",
            "b",
            "--kind",
            "task-started",
        ])
        .output()
        .unwrap();
    let started: serde_json::Value =
        serde_json::from_str(String::from_utf8_lossy(&log.stdout).lines().next().unwrap()).unwrap();
    let before = started["seq"].as_u64().unwrap() - 1;
    let rollback = runlog(store)
        .args([
            "rollback",
            "back",
            "--to",
            &before.to_string(),
            "--reason",
            "redo b",
        ])
        .output()
        .unwrap();
    assert_eq!(rollback.status.code(), Some(0), "{}", text(&rollback));
    // The engine stops the undone attempt and runs b again, which now finishes.
    let out = finish_within(runner, Duration::from_secs(60), "the rolled-back run");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let first = std::fs::read_to_string(&pid_file).unwrap();
    assert!(gone(&first), "the undone attempt's process was stopped");
    let said = runlog(store).args(["log", "back"]).output().unwrap();
    assert!(
        text(&said).contains("was stopped: a decision recorded meanwhile"),
        "{}",
        text(&said)
    );
}

fn ctrl_c_in_one_terminal_interrupts_only_its_run(store: &Path, dir: &Path) {
    let wait = |name: &str| {
        workflow(
            dir,
            name,
            &format!("name = \"{name}\"\n[[task]]\nid = \"a\"\nrun = \"while [ ! -e go-{name} ]; do sleep 0.05; done\"\nrequires_testing = false\n"),
        )
    };
    let (first, second) = (wait("first"), wait("second"));
    // The first runner owns the store; Ctrl-C reaches it, not the second.
    let owner = spawn_run(store, &first, "first");
    wait_for(|| status_of(store, "first", "a").as_deref() == Some("in-progress"));
    let other = spawn_run(store, &second, "second");
    wait_for(|| status_of(store, "second", "a").as_deref() == Some("in-progress"));
    let pid = nix::unistd::Pid::from_raw(owner.id() as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGINT).unwrap();
    let out = finish_within(owner, Duration::from_secs(60), "the interrupted run");
    assert_eq!(out.status.code(), Some(130), "{}", text(&out));
    // The other run goes on, now owning the store itself, and ends on its own.
    std::fs::write(dir.join("go-second"), "").unwrap();
    let out = finish_within(other, Duration::from_secs(60), "the other run");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let runs = runlog(store).args(["runs"]).output().unwrap();
    let listed = String::from_utf8_lossy(&runs.stdout).into_owned();
    assert!(
        listed
            .lines()
            .any(|l| l.starts_with("first") && l.contains("interrupted")),
        "{listed}"
    );
}

/// Each case as a test on a store directory (`sled::`) and on a PostgreSQL database of its own
/// (`postgres::`, skipped with a message when no server is named).
macro_rules! on_both_stores {
    ($($case:ident),* $(,)?) => {
        mod sled {
            $(
                #[test]
                fn $case() {
                    let dir = tempfile::tempdir().unwrap();
                    super::$case(&dir.path().join("store"), dir.path());
                }
            )*
        }
        mod postgres {
            $(
                #[test]
                fn $case() {
                    let Some(db) = super::scratch() else { return };
                    let dir = tempfile::tempdir().unwrap();
                    super::$case(std::path::Path::new(&db.url), dir.path());
                }
            )*
        }
    };
}

on_both_stores!(
    a_second_terminal_reads_and_approves_a_live_run_and_its_engine_acts_at_once,
    twenty_runs_share_one_store_each_with_its_own_exit_code,
    a_run_outlives_the_kill_9_of_the_process_that_owned_the_store,
    a_rollback_of_a_live_run_is_applied_by_its_engine,
    ctrl_c_in_one_terminal_interrupts_only_its_run,
);
