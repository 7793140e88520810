//! Ids are names (issue 15, item 1), through the real binary and the API: a run, task, stage,
//! worktree or fork id that is not a name is refused with exit 2 (HTTP 400) and a hint, and
//! nothing is created outside the store; a log recorded before the rule, whose task id climbs
//! out of its directory, still replays and resumes inside the store.

mod common;

use common::{emit, repo, runlog, text, wait_for};
use std::collections::BTreeSet;
use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};

/// Every path below `dir`, relative, skipping `skip` (the store, whose inside is its own).
fn tree(dir: &Path, skip: &Path) -> BTreeSet<PathBuf> {
    let mut found = BTreeSet::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path == skip {
                continue;
            }
            if path.is_dir() {
                todo.push(path.clone());
            }
            found.insert(path.strip_prefix(dir).unwrap().to_path_buf());
        }
    }
    found
}

fn one_task(dir: &Path, name: &str, task_fields: &str) -> PathBuf {
    common::workflow(
        dir,
        name,
        &format!("name = \"{name}\"\n[[task]]\n{task_fields}\nrun = \"true\"\nrequires_testing = false\n"),
    )
}

fn refused(out: &Output, what: &str) {
    let said = text(out);
    assert_eq!(out.status.code(), Some(2), "{what}: {said}");
    assert!(said.contains("is not a name"), "{what}: {said}");
    assert!(
        said.contains("hint:") && said.contains("ASCII letters"),
        "{what}: {said}"
    );
}

#[test]
fn ids_that_are_not_names_are_refused_everywhere_and_nothing_escapes_the_store() {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path();
    // Deep enough that `../../..` from a run's worktrees stays inside the scratch directory,
    // where the test can see it.
    let store = base.join("a/b/store");
    let wf = base.join("wf");
    std::fs::create_dir_all(&wf).unwrap();
    let out = runlog(&store)
        .arg("import")
        .arg(repo().join("fixtures/runs/quickstart.jsonl"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let abs = base.join("abs-escaped");
    let long = "x".repeat(300);
    let workflows = [
        ("climbs", "id = \"../../../escaped-task\"".to_owned()),
        ("absolute", format!("id = \"{}\"", abs.display())),
        ("nul", "id = \"a\\u0000b\"".to_owned()),
        ("long", format!("id = \"{long}\"")),
        ("accented", "id = \"tâche\"".to_owned()),
        ("stage", "id = \"a\"\nstage = \"../s\"".to_owned()),
    ];
    for (name, fields) in &workflows {
        let file = one_task(&wf, name, fields);
        let out = runlog(&store)
            .args(["run", file.to_str().unwrap(), "--quiet"])
            .output()
            .unwrap();
        refused(&out, name);
    }
    let good = one_task(&wf, "good", "id = \"a\"");
    let out = runlog(&store)
        .args(["run", good.to_str().unwrap(), "--run-id", "../../evil"])
        .output()
        .unwrap();
    refused(&out, "--run-id");
    let out = runlog(&store)
        .args(["fork", "quickstart", "--at", "3", "--as", "../f"])
        .output()
        .unwrap();
    refused(&out, "fork --as");
    let out = runlog(&store)
        .arg("import")
        .arg(repo().join("fixtures/runs/quickstart.jsonl"))
        .args(["--as", "/tmp/x"])
        .output()
        .unwrap();
    refused(&out, "import --as");
    refused(
        &emit(
            &store,
            "../e",
            r#"{"command":"start-run","run":"../e","tasks":[{"id":"a"}]}"#,
        ),
        "emit start-run",
    );
    // A run started by emit, whose task an orchestrator then starts in a worktree of its
    // choosing: a path is refused, a name is taken.
    let ok = emit(
        &store,
        "e1",
        r#"{"command":"start-run","run":"e1","tasks":[{"id":"a"}]}"#,
    );
    assert!(ok.status.success(), "{}", text(&ok));
    for worktree in ["../../x", "/etc"] {
        let line = format!(
            r#"{{"command":"start-task","task":"a","agent":null,"worktree":"{worktree}"}}"#
        );
        refused(&emit(&store, "e1", &line), worktree);
    }
    let ok = emit(
        &store,
        "e1",
        r#"{"command":"start-task","task":"a","agent":"me","worktree":"wt-a"}"#,
    );
    assert!(ok.status.success(), "{}", text(&ok));

    // The API refuses the same with 400 and a hint.
    let mut server = runlog(&store)
        .arg("serve")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_for(|| store.join("api.sock").exists());
    let post = |path: &str, body: serde_json::Value| {
        let body = body.to_string();
        let mut s = UnixStream::connect(store.join("api.sock")).unwrap();
        write!(
            s,
            "POST {path} HTTP/1.1\r\nHost: runlog\r\nConnection: close\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        )
        .unwrap();
        let mut answer = String::new();
        s.read_to_string(&mut answer).unwrap();
        answer
    };
    for (name, _) in &workflows {
        let answer = post(
            "/v1/runs",
            serde_json::json!({"workflow": wf.join(format!("{name}.toml"))}),
        );
        assert!(answer.starts_with("HTTP/1.1 400"), "{name}: {answer}");
        assert!(
            answer.contains("is not a name") && answer.contains("\"hint\""),
            "{answer}"
        );
    }
    let answer = post(
        "/v1/runs",
        serde_json::json!({"workflow": good, "run": "../x"}),
    );
    assert!(answer.starts_with("HTTP/1.1 400"), "{answer}");
    let answer = post(
        "/v1/runs/q2/commands",
        serde_json::json!({"command": "start-run", "run": "q2", "tasks": [{"id": "../up"}]}),
    );
    assert!(answer.starts_with("HTTP/1.1 400"), "{answer}");
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(server.id() as i32),
        nix::sys::signal::Signal::SIGTERM,
    )
    .unwrap();
    server.wait().unwrap();

    // Nothing was made outside the store but the workflow files; no worktree either.
    let mut expected: BTreeSet<PathBuf> = ["a", "a/b", "wf"].iter().map(PathBuf::from).collect();
    for name in workflows.iter().map(|(n, _)| *n).chain(["good"]) {
        expected.insert(PathBuf::from(format!("wf/{name}.toml")));
    }
    assert_eq!(tree(base, &store), expected);
    assert!(
        !store.join("worktrees").exists()
            || tree(&store.join("worktrees"), &store)
                .iter()
                .all(|p| p.starts_with("e1"))
    );
}

#[test]
fn a_run_recorded_before_the_rule_still_resumes_inside_the_store() {
    use runlog_core::{Event, EventKind, Hash, RunId, Settings, TaskSpec, Timestamp};
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path();
    let store = base.join("a/b/store");
    // A task whose id climbs three directories up, as an older runlog recorded it; its
    // command leaves a mark where it ran.
    let mut spec = TaskSpec::new("../../../escaped-task", "old");
    spec.run = Some("pwd > \"$RUNLOG_WORKTREE/ran-here\"".into());
    let at = Timestamp(1_700_000_000_000);
    let events = [
        Event {
            at,
            kind: EventKind::RunStarted {
                run: RunId::from("old"),
                workflow: base.join("gone.toml").display().to_string(),
                workflow_hash: Hash::of(b"gone"),
                settings: Settings::default(),
            },
        },
        Event {
            at,
            kind: EventKind::TaskAdded {
                spec: Box::new(spec),
            },
        },
    ];
    {
        let log = runlog_store::Log::open(&store, runlog_store::Options::default()).unwrap();
        runlog_replay::control::append(&log, "old", 0, &events).unwrap();
    }
    let out = runlog(&store).args(["status", "old"]).output().unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let out = runlog(&store)
        .args(["resume", "old", "--quiet"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    // It ran in a directory of its own below the run's worktrees, named by its id's hash.
    let worktrees = store.join("worktrees/old");
    let marks: Vec<PathBuf> = tree(&worktrees, &store)
        .into_iter()
        .filter(|p| p.ends_with("ran-here"))
        .collect();
    assert_eq!(marks.len(), 1, "{marks:?}");
    assert!(marks[0].to_str().unwrap().starts_with('%'), "{marks:?}");
    assert!(!base.join("a/b/escaped-task").exists());
    assert!(!base.join("a/b/escaped-task.feedback").exists());
    assert_eq!(
        tree(base, &store),
        ["a", "a/b"].iter().map(PathBuf::from).collect()
    );
}
