//! An agent writing outside its own worktree, as a coding agent told an absolute path does:
//! into the person's checkout and into another run's worktree. Each write is named in the
//! run's history and on its board; `outside_writes = "fail"` fails the attempt naming them;
//! the person's files are never touched.

mod common;
use common::git::{git, repository};
use common::provider::logged;
use common::{runlog, text};
use serde_json::json;
use std::path::Path;

/// The workflow of one task `t` running `run` in a git workspace, with `settings`.
fn workflow(name: &str, run: &str, settings: &str) -> String {
    format!(
        "name = \"{name}\"\n[settings]\n{settings}\n[[task]]\nid = \"t\"\nrun = {run:?}\n\
         requires_testing = false\nretry = {{ max = 0, delay_ms = 0 }}\n"
    )
}

/// `runlog run` of `repo/file` as `run`: its output.
fn run(store: &Path, repo: &Path, file: &str, run: &str) -> std::process::Output {
    runlog(store)
        .args([
            "run",
            repo.join(file).to_str().unwrap(),
            "--run-id",
            run,
            "--quiet",
        ])
        .output()
        .unwrap()
}

#[test]
fn writes_into_the_checkout_and_another_runs_worktree_are_named_and_the_files_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let checkout = dir.path().join("repo");
    let kept = store.join("worktrees/earlier/t");
    // The agent writes its own file, then by absolute path into the person's checkout and
    // into the worktree a failed run left.
    let agent = format!(
        "echo mine > mine.txt && echo from-the-agent > {}/hello.txt && echo notes > {}/notes.txt",
        checkout.display(),
        kept.display()
    );
    let repo = repository(
        dir.path(),
        &[
            (
                "earlier.toml",
                &workflow("earlier", "echo half > half.txt; exit 1", ""),
            ),
            ("later.toml", &workflow("later", &agent, "")),
            (
                "strict.toml",
                &workflow("strict", &agent, "outside_writes = \"fail\""),
            ),
        ],
    );
    assert_eq!(repo, checkout);
    // The person has a file of their own in the checkout, not committed, before any run.
    std::fs::write(checkout.join("draft.md"), "the person's draft\n").unwrap();

    let out = run(&store, &repo, "earlier.toml", "earlier");
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(
        kept.join("half.txt").exists(),
        "a failed task's worktree stays"
    );

    // warn (the default): the run goes on, and the writes are named, attempt and place.
    let out = run(&store, &repo, "later.toml", "later");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let said = logged(&store, "later", &["--kind", "wrote-outside"]);
    assert_eq!(said.len(), 1, "{said:?}");
    assert_eq!(
        (&said[0]["attempt"], &said[0]["policy"], &said[0]["written"]),
        (
            &json!(1),
            &json!("warn"),
            &json!([
                {"place": {"place": "checkout"}, "paths": ["hello.txt"], "more": 0},
                {"place": {"place": "other-run", "run": "earlier"}, "paths": ["t/notes.txt"], "more": 0},
            ])
        ),
        "{said:?}"
    );
    let words = "attempt 1 wrote outside its worktree: hello.txt in the repository's checkout; \
                 t/notes.txt in run earlier's worktrees";
    let status = runlog(&store).args(["status", "later"]).output().unwrap();
    assert!(
        text(&status).contains(&format!("⚠ {words}")),
        "{}",
        text(&status)
    );
    let shown = runlog(&store)
        .args(["show", "later", "t"])
        .output()
        .unwrap();
    assert!(text(&shown).contains(words), "{}", text(&shown));
    let board = runlog(&store)
        .args(["--json", "status", "later"])
        .output()
        .unwrap();
    let board: serde_json::Value = serde_json::from_slice(&board.stdout).unwrap();
    assert_eq!(
        board["board"]["rows"][0]["outside"],
        json!([words]),
        "{board}"
    );
    // The task's own work went where it belongs.
    assert_eq!(git(&repo, &["show", "runlog/later:mine.txt"]), "mine");

    // fail: the attempt fails, naming the paths.
    let out = run(&store, &repo, "strict.toml", "strict");
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let failed = logged(&store, "strict", &["--kind", "stage-failed"]);
    assert_eq!(failed.len(), 1, "{failed:?}");
    let error = failed[0]["error"].as_str().unwrap();
    assert!(
        error.contains("hello.txt in the repository's checkout")
            && error.contains("(outside_writes = \"fail\")"),
        "{error}"
    );
    assert_eq!(failed[0]["error_type"], "outside-writes", "{failed:?}");

    // Nothing of the person's, or of the other run's, was deleted or reverted.
    assert_eq!(
        std::fs::read_to_string(checkout.join("hello.txt")).unwrap(),
        "from-the-agent\n"
    );
    assert_eq!(
        std::fs::read_to_string(checkout.join("draft.md")).unwrap(),
        "the person's draft\n"
    );
    assert_eq!(
        std::fs::read_to_string(kept.join("notes.txt")).unwrap(),
        "notes\n"
    );
    assert!(kept.join("half.txt").exists());
}

#[test]
fn the_persons_own_changes_made_before_the_attempt_are_not_taken_for_its_writes() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let repo = repository(
        dir.path(),
        &[
            ("wf.toml", &workflow("own", "echo mine > mine.txt", "")),
            ("README.md", "the project\n"),
        ],
    );
    // Before the run, the person edits a committed file and starts a draft.
    std::fs::write(repo.join("README.md"), "the project, edited\n").unwrap();
    std::fs::write(repo.join("draft.md"), "a draft\n").unwrap();
    let out = run(&store, &repo, "wf.toml", "own");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(logged(&store, "own", &["--kind", "wrote-outside"]).is_empty());
    let status = runlog(&store).args(["status", "own"]).output().unwrap();
    assert!(!text(&status).contains('⚠'), "{}", text(&status));
}
