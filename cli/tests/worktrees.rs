//! Runs in a git workspace, through the real binary and the real `git`, in repositories the
//! tests make: each task in a worktree of its own, its changes committed and recorded, merged
//! into the run's branch when done (a conflict rescued), rolled back with the run, and never
//! made twice after a kill -9.

mod common;

use common::git::{git, repository, DATE};
use common::{copy_tree, events, finish_within, open, pytest_found, repo, runlog, text, wait_for};
use runlog_core::EventKind;
use runlog_store::EventLog;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

fn run_in(store: &Path, repo: &Path, run: &str) -> std::process::Output {
    runlog(store)
        .args([
            "run",
            repo.join("wf.toml").to_str().unwrap(),
            "--run-id",
            run,
        ])
        .args(["--quiet"])
        .output()
        .unwrap()
}

fn merges(kinds: &[(u64, runlog_core::Event)]) -> Vec<(u64, String, String)> {
    kinds
        .iter()
        .filter_map(|(seq, e)| match &e.kind {
            EventKind::TaskMerged { task, commit } => Some((*seq, task.0.clone(), commit.clone())),
            _ => None,
        })
        .collect()
}

#[test]
fn tasks_at_once_work_apart_and_a_later_task_sees_both_merged() {
    let dir = tempfile::tempdir().unwrap();
    let repo = repository(
        dir.path(),
        &[(
            "wf.toml",
            "name = \"apart\"\n[settings]\njobs = 2\n\
             [[task]]\nid = \"a\"\nrun = \"sleep 0.3; echo alpha > a.txt\"\nrequires_testing = false\n\
             [[task]]\nid = \"b\"\nrun = \"sleep 0.3; echo beta > b.txt\"\nrequires_testing = false\n\
             [[task]]\nid = \"c\"\nafter = [\"a\", \"b\"]\n\
             run = \"cat a.txt b.txt > c.txt\"\nrequires_testing = false\n",
        )],
    );
    let main_before = git(&repo, &["rev-parse", "main"]);
    let store = dir.path().join("store");
    let out = run_in(&store, &repo, "apart");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(
        text(&out).contains("git merge runlog/apart"),
        "the summary names the branch: {}",
        text(&out)
    );
    assert_eq!(git(&repo, &["show", "runlog/apart:c.txt"]), "alpha\nbeta");
    let merged = merges(&events(&open(&store), "apart"));
    let tasks: Vec<&str> = merged.iter().map(|(_, t, _)| t.as_str()).collect();
    assert_eq!(tasks.len(), 3, "{merged:?}");
    assert_eq!(tasks[2], "c", "c merged last");
    // The user's branch and working directory are as they were.
    assert_eq!(git(&repo, &["rev-parse", "main"]), main_before);
    assert_eq!(git(&repo, &["rev-parse", "--abbrev-ref", "HEAD"]), "main");
    assert!(!repo.join("a.txt").exists() && !repo.join("c.txt").exists());
    // Each task committed as its agent on its own branch.
    let author = git(&repo, &["log", "-1", "--format=%an", "runlog-task/apart/a"]);
    assert_eq!(author, "agent-a");
}

#[test]
fn a_conflict_is_recorded_and_the_rescue_that_resolves_it_merges() {
    let dir = tempfile::tempdir().unwrap();
    let agent_y = "if [ -s \"$RUNLOG_FEEDBACK\" ] && grep -q conflict \"$RUNLOG_FEEDBACK\"; then \
                   printf \"X\\nY\\n\" > shared.txt; else sleep 0.6; echo Y > shared.txt; fi";
    let repo = repository(
        dir.path(),
        &[
            ("shared.txt", "line\n"),
            (
                "wf.toml",
                &format!(
                    "name = \"clash\"\n[settings]\njobs = 2\n\
                     [[task]]\nid = \"x\"\nrun = \"echo X > shared.txt\"\nrequires_testing = false\n\
                     [[task]]\nid = \"y\"\nrun = '{agent_y}'\nrequires_testing = false\n"
                ),
            ),
        ],
    );
    let store = dir.path().join("store");
    let out = run_in(&store, &repo, "clash");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let all = events(&open(&store), "clash");
    let conflict = all.iter().find_map(|(_, e)| match &e.kind {
        EventKind::MergeConflicted {
            task,
            files,
            rescue,
        } => Some((task.0.clone(), files.clone(), *rescue)),
        _ => None,
    });
    assert_eq!(
        conflict,
        Some(("y".into(), vec!["shared.txt".into()], Some(1))),
        "y's merge conflicted and went to a rescue"
    );
    let merged: Vec<String> = merges(&all).into_iter().map(|(_, t, _)| t).collect();
    assert_eq!(merged, ["x", "y"]);
    assert_eq!(git(&repo, &["show", "runlog/clash:shared.txt"]), "X\nY");
}

#[test]
fn a_retry_sees_the_failed_attempts_files_and_show_prints_each_attempts_diff() {
    let dir = tempfile::tempdir().unwrap();
    let agent = "if [ -f notes.txt ]; then echo second >> notes.txt; else echo first > notes.txt; exit 1; fi";
    let repo = repository(
        dir.path(),
        &[(
            "wf.toml",
            &format!(
                "name = \"again\"\n[[task]]\nid = \"t\"\nrun = '{agent}'\nrequires_testing = false\n\
                 retry = {{ delay_ms = 10 }}\n"
            ),
        )],
    );
    let store = dir.path().join("store");
    let out = run_in(&store, &repo, "again");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let show = |attempt: &str| {
        let out = runlog(&store)
            .args(["show", "again", "t", "--diff", "--attempt", attempt])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", text(&out));
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let first = show("1");
    assert!(
        first.contains("+first"),
        "the failed attempt's diff: {first}"
    );
    let second = show("2");
    assert!(
        second.contains("+second") && !second.contains("+first"),
        "{second}"
    );
    assert_eq!(
        git(&repo, &["show", "runlog/again:notes.txt"]),
        "first\nsecond"
    );
    // No such attempt: exit 2, naming the ones there are.
    let out = runlog(&store)
        .args(["show", "again", "t", "--diff", "--attempt", "9"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        text(&out).contains("attempts with changes: 1, 2"),
        "{}",
        text(&out)
    );
}

#[test]
fn a_rollback_to_before_a_merge_moves_the_branch_back_and_keeps_the_old_tip() {
    let dir = tempfile::tempdir().unwrap();
    let repo = repository(
        dir.path(),
        &[(
            "wf.toml",
            "name = \"back\"\n\
             [[task]]\nid = \"a\"\nrun = \"echo a > a.txt\"\nrequires_testing = false\n\
             [[task]]\nid = \"b\"\nafter = [\"a\"]\nrun = \"echo b > b.txt\"\nrequires_testing = false\n",
        )],
    );
    let store = dir.path().join("store");
    let out = run_in(&store, &repo, "back");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let merged = merges(&events(&open(&store), "back"));
    let (_, _, a_merge) = merged[0].clone();
    let (b_seq, _, b_merge) = merged[1].clone();
    assert_eq!(git(&repo, &["rev-parse", "runlog/back"]), b_merge);
    let to = (b_seq - 1).to_string();
    let out = runlog(&store)
        .args(["rollback", "back", "--to", &to, "--reason", "undo b"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(
        git(&repo, &["rev-parse", "runlog/back"]),
        a_merge,
        "the branch is at the merge recorded before"
    );
    let kept = git(
        &repo,
        &[
            "for-each-ref",
            "--format=%(refname) %(objectname)",
            "refs/runlog/back/",
        ],
    );
    assert!(
        kept.lines()
            .any(|l| l.contains("before-rollback-") && l.ends_with(&b_merge)),
        "the old tip is kept: {kept}"
    );
}

/// A run of one task whose tests wait for the file `$GO`, killed with -9 once its attempt's
/// commit is recorded and its tests run (before its merge): the repository, the store and the
/// file that lets the tests end.
fn killed_during_its_tests(dir: &Path, run: &str) -> (PathBuf, PathBuf, PathBuf) {
    let go = dir.join("go");
    let repo = repository(
        dir,
        &[(
            "wf.toml",
            &format!(
                "name = \"{run}\"\n[[task]]\nid = \"t\"\nrun = \"echo work > w.txt\"\n\
                 test = 'while [ ! -e \"$GO\" ]; do sleep 0.05; done'\n"
            ),
        )],
    );
    let store = dir.join("store");
    let mut runner = runlog(&store)
        .args([
            "run",
            repo.join("wf.toml").to_str().unwrap(),
            "--run-id",
            run,
            "--quiet",
        ])
        .env("GO", &go)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let base = git(&repo, &["rev-parse", "main"]);
    let branch = format!("runlog-task/{run}/t");
    wait_for(|| {
        let out = Command::new("git")
            .args([
                "-C",
                repo.to_str().unwrap(),
                "rev-parse",
                "--verify",
                "--quiet",
                &branch,
            ])
            .output()
            .unwrap();
        let tip = String::from_utf8_lossy(&out.stdout).trim().to_owned();
        !tip.is_empty() && tip != base
    });
    std::thread::sleep(Duration::from_millis(300));
    runner.kill().unwrap();
    runner.wait().unwrap();
    (repo, store, go)
}

#[test]
fn a_kill_between_a_commit_and_its_merge_makes_neither_twice_on_resume() {
    let dir = tempfile::tempdir().unwrap();
    let (repo, store, go) = killed_during_its_tests(dir.path(), "crash");
    std::fs::write(&go, "").unwrap();
    let resumed = runlog(&store)
        .args(["resume", "crash", "--quiet"])
        .env("GO", &go)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let out = finish_within(resumed, Duration::from_secs(60), "resume");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let base = git(&repo, &["rev-parse", "main"]);
    let commits = git(
        &repo,
        &[
            "rev-list",
            "--count",
            &format!("{base}..runlog-task/crash/t"),
        ],
    );
    assert_eq!(commits, "1", "one commit of the task's work");
    let merge_commits = git(
        &repo,
        &[
            "rev-list",
            "--merges",
            "--count",
            &format!("{base}..runlog/crash"),
        ],
    );
    assert_eq!(merge_commits, "1", "one merge");
    assert_eq!(merges(&events(&open(&store), "crash")).len(), 1);
}

#[derive(serde::Serialize)]
struct Final {
    exit: Option<i32>,
    board: runlog_core::projections::Board,
    summary: runlog_core::projections::RunSummary,
    changes: Vec<String>,
}

#[test]
fn the_fixture_agent_fixes_a_failing_test_from_its_feedback_in_its_worktree() {
    if !pytest_found() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let app = dir.path().join("repo");
    copy_tree(&repo().join("fixtures/workspaces/fix-the-test"), &app);
    git(&app, &["init", "-q", "-b", "main"]);
    git(&app, &["add", "-A"]);
    git(
        &app,
        &[
            "-c",
            "user.name=someone",
            "-c",
            "user.email=someone@example.invalid",
            "commit",
            "-q",
            "-m",
            "start",
        ],
    );
    let store = dir.path().join("store");
    let out = runlog(&store)
        .args([
            "run",
            app.join("workflow.toml").to_str().unwrap(),
            "--run-id",
            "fix-the-test",
            "--quiet",
        ])
        .env("RUNLOG_TEST_CLOCK", "1700000000000")
        .env("GIT_AUTHOR_DATE", DATE)
        .env("GIT_COMMITTER_DATE", DATE)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let log = open(&store);
    let all = events(&log, "fix-the-test");
    let changes: Vec<String> = all
        .iter()
        .filter_map(|(_, e)| match &e.kind {
            EventKind::ChangesRecorded {
                attempt,
                commit,
                files,
                insertions,
                deletions,
                ..
            } => Some(format!(
                "attempt {attempt}: {} {files:?} +{insertions} -{deletions}",
                &commit[..12]
            )),
            _ => None,
        })
        .collect();
    assert_eq!(changes.len(), 2, "both attempts' changes: {changes:?}");
    assert!(
        git(&app, &["show", "runlog/fix-the-test:prices.py"]).contains("sum(prices) * (1 + tax)"),
        "the fix is on the run's branch"
    );
    let p = runlog_replay::Replay::new(&log)
        .project("fix-the-test", None, None)
        .unwrap();
    // The repository is a temporary directory: its path is no part of what is checked.
    let mut summary = p.summary;
    summary.workflow = Some("REPO/workflow.toml".into());
    insta::assert_yaml_snapshot!(
        "fix-the-test",
        Final {
            exit: out.status.code(),
            board: runlog_core::projections::Board::of(&p.state),
            summary,
            changes,
        }
    );
    if std::env::var_os("RUNLOG_RECORD_FIXTURES").is_some() {
        let path = repo().join("fixtures/runs/fix-the-test.jsonl");
        let mut file = std::fs::File::create(&path).unwrap();
        runlog_replay::export::export(&log, "fix-the-test", &mut file).unwrap();
    }
}

#[test]
fn a_fork_works_on_a_branch_of_its_own_from_the_commit_at_its_seq() {
    let dir = tempfile::tempdir().unwrap();
    let repo = repository(
        dir.path(),
        &[(
            "wf.toml",
            "name = \"orig\"\n\
             [[task]]\nid = \"a\"\nrun = \"echo a > a.txt\"\nrequires_testing = false\n\
             [[task]]\nid = \"b\"\nafter = [\"a\"]\nrun = \"echo b-$RUNLOG_RUN > b.txt\"\nrequires_testing = false\n",
        )],
    );
    let store = dir.path().join("store");
    let out = run_in(&store, &repo, "orig");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let all = events(&open(&store), "orig");
    let (a_seq, _, a_merge) = merges(&all)[0].clone();
    let orig_tip = git(&repo, &["rev-parse", "runlog/orig"]);
    let at = a_seq.to_string();
    let out = runlog(&store)
        .args(["fork", "orig", "--at", &at, "--as", "forked"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let out = runlog(&store)
        .args(["resume", "forked", "--quiet"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let fork_tip = git(&repo, &["rev-parse", "runlog/forked"]);
    assert_eq!(
        git(&repo, &["rev-parse", "runlog/forked^1"]),
        a_merge,
        "the fork's branch starts at the commit at its seq"
    );
    assert_eq!(git(&repo, &["show", "runlog/forked:b.txt"]), "b-forked");
    assert_eq!(
        git(&repo, &["rev-parse", "runlog/orig"]),
        orig_tip,
        "the original's branch is untouched"
    );
    assert_ne!(fork_tip, orig_tip);
}

#[test]
fn a_repository_in_the_middle_of_a_merge_is_refused_with_the_way_out() {
    let dir = tempfile::tempdir().unwrap();
    let repo = repository(
        dir.path(),
        &[
            ("f.txt", "one\n"),
            (
                "wf.toml",
                "name = \"busy\"\n[[task]]\nid = \"a\"\nrun = \"true\"\nrequires_testing = false\n",
            ),
        ],
    );
    git(&repo, &["checkout", "-q", "-b", "other"]);
    std::fs::write(repo.join("f.txt"), "two\n").unwrap();
    git(&repo, &["commit", "-q", "-am", "two"]);
    git(&repo, &["checkout", "-q", "main"]);
    std::fs::write(repo.join("f.txt"), "three\n").unwrap();
    git(&repo, &["commit", "-q", "-am", "three"]);
    let merging = Command::new("git")
        .args(["-C", repo.to_str().unwrap(), "merge", "-q", "other"])
        .output()
        .unwrap();
    assert!(!merging.status.success(), "the merge conflicts");
    let store = dir.path().join("store");
    let out = run_in(&store, &repo, "busy");
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        text(&out).contains("in the middle of a merge"),
        "{}",
        text(&out)
    );
    assert!(text(&out).contains("git merge --abort"), "{}", text(&out));
    assert!(
        !store.join("db").exists() || open(&store).head("busy").unwrap().is_none(),
        "nothing recorded"
    );
}

/// A merge made before a crash and not recorded (made here by hand, as runlog makes it: a
/// merge commit of the run's branch and the task's, the branch moved onto it) is found on
/// `resume` and recorded, not made again.
#[test]
fn a_merge_made_but_not_recorded_before_a_crash_is_recorded_not_made_again() {
    let dir = tempfile::tempdir().unwrap();
    let (repo, store, go) = killed_during_its_tests(dir.path(), "gap");
    let base = git(&repo, &["rev-parse", "main"]);
    let task = git(&repo, &["rev-parse", "runlog-task/gap/t"]);
    let tree = git(
        &repo,
        &[
            "merge-tree",
            "--write-tree",
            "runlog/gap",
            "runlog-task/gap/t",
        ],
    );
    let merge = git(
        &repo,
        &[
            "commit-tree",
            &tree,
            "-p",
            &base,
            "-p",
            &task,
            "-m",
            "merged before the crash",
        ],
    );
    git(
        &repo,
        &["update-ref", "refs/heads/runlog/gap", &merge, &base],
    );
    std::fs::write(&go, "").unwrap();
    let out = runlog(&store)
        .args(["resume", "gap", "--quiet"])
        .env("GO", &go)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let recorded: Vec<String> = merges(&events(&open(&store), "gap"))
        .into_iter()
        .map(|(_, _, commit)| commit)
        .collect();
    assert_eq!(
        recorded,
        [merge.as_str()],
        "the merge made before the crash is the one recorded"
    );
    assert_eq!(git(&repo, &["rev-parse", "runlog/gap"]), merge);
    assert_eq!(
        git(
            &repo,
            &[
                "rev-list",
                "--merges",
                "--count",
                &format!("{base}..runlog/gap")
            ]
        ),
        "1"
    );
}

/// How many git checkouts (directories holding `.git`) `dir` holds.
fn checkouts(dir: &Path) -> usize {
    std::fs::read_dir(dir).map_or(0, |entries| {
        entries
            .flatten()
            .filter(|e| e.path().join(".git").exists())
            .count()
    })
}

/// The names `git branch` lists in `repo`.
fn branches(repo: &Path) -> Vec<String> {
    git(repo, &["branch", "--format=%(refname:short)"])
        .lines()
        .map(str::to_owned)
        .collect()
}

/// Three tasks writing a file each and `release` after them, which needs all three files
/// (and, when `gate` is set, the file it names: without it, `release` fails).
fn release_workflow(dir: &Path, run: &str, gate: Option<&Path>) -> PathBuf {
    let needs = gate.map_or(String::new(), |g| format!("test -e {} && ", g.display()));
    repository(
        dir,
        &[(
            "wf.toml",
            &format!(
                "name = \"{run}\"\n\
                 [[task]]\nid = \"a\"\nrun = \"echo a > a.txt\"\nrequires_testing = false\n\
                 [[task]]\nid = \"b\"\nrun = \"echo b > b.txt\"\nrequires_testing = false\n\
                 [[task]]\nid = \"c\"\nrun = \"echo c > c.txt\"\nrequires_testing = false\n\
                 [[task]]\nid = \"release\"\nafter = [\"a\", \"b\", \"c\"]\n\
                 run = '{needs}cat a.txt b.txt c.txt > release.txt'\nrequires_testing = false\n\
                 retry = {{ max = 1, delay_ms = 10 }}\n"
            ),
        )],
    )
}

/// Rolls `run` back to just before its last merge of a, b or c (that task done, not merged)
/// and resumes it: `release` must start from the integration branch as it is when it starts,
/// holding the three tasks' work, not from the tip at the rollback's seq.
fn rolled_back_before_the_last_merge_and_resumed(store: &Path, repo: &Path, run: &str) {
    let all = events(&open(store), run);
    let (last_dep_merge, _, _) = merges(&all)
        .into_iter()
        .rfind(|(_, t, _)| t != "release")
        .unwrap();
    let to = (last_dep_merge - 1).to_string();
    let out = runlog(store)
        .args(["rollback", run, "--to", &to, "--reason", "again"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let out = runlog(store)
        .args(["resume", run, "--quiet"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "release holds every dependency's merged work: {}",
        text(&out)
    );
    assert_eq!(
        git(repo, &["show", &format!("runlog/{run}:release.txt")]),
        "a\nb\nc"
    );
    // Its attempt started on the merge made after the resume, the branch's tip then.
    let all = events(&open(store), run);
    let last_merge_before_release = merges(&all)
        .into_iter()
        .rfind(|(_, t, _)| t != "release")
        .unwrap()
        .2;
    let parent = all
        .iter()
        .rev()
        .find_map(|(_, e)| match &e.kind {
            EventKind::ChangesRecorded { task, parent, .. } if task.0 == "release" => {
                Some(parent.clone())
            }
            _ => None,
        })
        .unwrap();
    assert_eq!(parent, last_merge_before_release);
}

#[test]
fn after_a_rollback_past_a_merge_a_task_not_yet_run_starts_from_the_tip_as_it_is_then() {
    let dir = tempfile::tempdir().unwrap();
    let repo = release_workflow(dir.path(), "stale", None);
    let store = dir.path().join("store");
    let out = run_in(&store, &repo, "stale");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    rolled_back_before_the_last_merge_and_resumed(&store, &repo, "stale");
}

#[test]
fn after_a_rollback_a_failed_tasks_worktree_from_the_old_timeline_is_not_reused() {
    let dir = tempfile::tempdir().unwrap();
    let go = dir.path().join("go");
    let repo = release_workflow(dir.path(), "kept", Some(&go));
    let store = dir.path().join("store");
    let out = run_in(&store, &repo, "kept");
    assert_eq!(out.status.code(), Some(1), "release fails: {}", text(&out));
    assert!(
        store.join("worktrees/kept/release/.git").exists(),
        "a failed task's worktree stays for a person to look at"
    );
    std::fs::write(&go, "").unwrap();
    rolled_back_before_the_last_merge_and_resumed(&store, &repo, "kept");
}

/// A repository whose workflow `name` has a task that is merged and one that fails (its
/// worktree and branch stay).
fn merged_and_failed(dir: &Path, name: &str) -> PathBuf {
    repository(
        dir,
        &[(
            "wf.toml",
            &format!(
                "name = \"{name}\"\n[[task]]\nid = \"a\"\nrun = \"echo a > a.txt\"\nrequires_testing = false\n\
                 [[task]]\nid = \"b\"\nrun = \"exit 1\"\nrequires_testing = false\nretry = {{ max = 0 }}\n"
            ),
        )],
    )
}

#[test]
fn a_store_inside_the_repository_keeps_itself_out_of_it() {
    let dir = tempfile::tempdir().unwrap();
    let repo = merged_and_failed(dir.path(), "inside");
    // The default store: `.runlog/` where runlog runs, here the repository's top.
    let store = repo.join(".runlog");
    let out = run_in(&store, &repo, "first");
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(
        store.join("worktrees/first/b/.git").exists(),
        "b's worktree stays: the test needs one inside the repository"
    );
    assert_eq!(
        git(&repo, &["status", "--porcelain", "--untracked-files=all"]),
        "",
        "git status shows nothing of runlog's"
    );
    let out = run_in(&store, &repo, "second");
    assert!(
        !text(&out).contains("not committed"),
        "runlog's own files are no change of the user's: {}",
        text(&out)
    );
    git(&repo, &["add", "-A"]);
    assert_eq!(
        git(&repo, &["diff", "--cached", "--name-only"]),
        "",
        "git add -A stages nothing of runlog's"
    );
}

#[test]
fn a_succeeded_run_leaves_its_branch_and_refs_and_no_worktree() {
    let dir = tempfile::tempdir().unwrap();
    let repo = repository(
        dir.path(),
        &[
            (".gitignore", "cache/\n"),
            (
            "wf.toml",
            // c may be handed a's worktree: it must not see what a left there, even ignored.
            "name = \"tidy\"\n[settings]\njobs = 2\n\
             [[task]]\nid = \"a\"\nrun = \"echo a > a.txt; mkdir cache; echo a > cache/a; echo x > stray\"\nrequires_testing = false\n\
             [[task]]\nid = \"b\"\nrun = \"echo b > b.txt\"\nrequires_testing = false\n\
             [[task]]\nid = \"c\"\nafter = [\"a\"]\nrun = \"test ! -e cache && echo c > c.txt\"\nrequires_testing = false\n\
             [[task]]\nid = \"d\"\nafter = [\"b\", \"c\"]\nrun = \"test ! -e cache && cat a.txt b.txt c.txt > d.txt\"\nrequires_testing = false\n",
            ),
        ],
    );
    let store = dir.path().join("store");
    let out = run_in(&store, &repo, "tidy");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(branches(&repo), ["main", "runlog/tidy"]);
    let kept = git(
        &repo,
        &[
            "for-each-ref",
            "--format=%(refname)",
            "refs/runlog-task/tidy/",
        ],
    );
    assert_eq!(
        kept.lines().collect::<Vec<_>>(),
        [
            "refs/runlog-task/tidy/a",
            "refs/runlog-task/tidy/b",
            "refs/runlog-task/tidy/c",
            "refs/runlog-task/tidy/d"
        ],
        "each task's last commit is kept out of the branch list"
    );
    assert_eq!(
        checkouts(&store.join("worktrees/tidy")),
        0,
        "no checkout is left behind"
    );
    let listed = git(&repo, &["worktree", "list", "--porcelain"]);
    assert_eq!(
        listed
            .lines()
            .filter(|l| l.starts_with("worktree "))
            .count(),
        1,
        "git knows the repository's own checkout only: {listed}"
    );
    let out = runlog(&store)
        .args(["show", "tidy", "d", "--diff"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(text(&out).contains("+a"), "{}", text(&out));
    let out = runlog(&store).args(["du", "tidy"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    // The clean-up docs/workspaces.md gives leaves nothing of the run's in the repository.
    git(&repo, &["branch", "-D", "runlog/tidy"]);
    let refs = git(
        &repo,
        &[
            "for-each-ref",
            "--format=delete %(refname)",
            "refs/runlog/tidy",
            "refs/runlog-task/tidy",
        ],
    );
    let mut update = Command::new("git")
        .args(["-C", repo.to_str().unwrap(), "update-ref", "--stdin"])
        .stdin(Stdio::piped())
        .spawn()
        .unwrap();
    std::io::Write::write_all(
        update.stdin.as_mut().unwrap(),
        format!("{refs}\n").as_bytes(),
    )
    .unwrap();
    drop(update.stdin.take());
    assert!(update.wait().unwrap().success());
    assert_eq!(
        git(&repo, &["for-each-ref", "--format=%(refname)"]),
        "refs/heads/main"
    );
}

#[test]
fn forgetting_a_run_removes_its_worktrees_and_task_branches_from_the_repository() {
    let dir = tempfile::tempdir().unwrap();
    let repo = merged_and_failed(dir.path(), "gone");
    let store = dir.path().join("store");
    let out = run_in(&store, &repo, "gone");
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(branches(&repo).contains(&"runlog-task/gone/b".to_owned()));
    let out = runlog(&store)
        .args(["forget", "gone", "--reason", "done with it"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(branches(&repo), ["main", "runlog/gone"]);
    assert_eq!(
        git(&repo, &["for-each-ref", "refs/runlog-task/"]),
        "",
        "no kept tip of a forgotten run's tasks"
    );
    let listed = git(&repo, &["worktree", "list", "--porcelain"]);
    assert_eq!(
        listed
            .lines()
            .filter(|l| l.starts_with("worktree "))
            .count(),
        1,
        "{listed}"
    );
}

#[test]
fn a_verdict_whose_merge_conflicted_is_audited_as_the_conflict_and_the_rescue() {
    let dir = tempfile::tempdir().unwrap();
    let agent_y = "if [ -s \"$RUNLOG_FEEDBACK\" ] && grep -q conflict \"$RUNLOG_FEEDBACK\"; then \
                   printf \"X\\nY\\n\" > shared.txt; else sleep 0.6; echo Y > shared.txt; fi";
    let eval = "echo '{\"score\": 0.9}'";
    let repo = repository(
        dir.path(),
        &[
            ("shared.txt", "line\n"),
            (
                "wf.toml",
                &format!(
                    "name = \"judged\"\n[settings]\njobs = 2\n\
                     [[task]]\nid = \"x\"\nrun = \"echo X > shared.txt\"\nrequires_testing = false\neval = \"{}\"\n\
                     [[task]]\nid = \"y\"\nrun = '{agent_y}'\nrequires_testing = false\neval = \"{}\"\n",
                    eval.replace('"', "\\\""),
                    eval.replace('"', "\\\"")
                ),
            ),
        ],
    );
    let store = dir.path().join("store");
    let out = run_in(&store, &repo, "judged");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(
        text(&out).contains(": y (shared.txt), rescue 1"),
        "the closing summary names the conflict: {}",
        text(&out)
    );
    let out = runlog(&store).args(["audit", "judged"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let audit = text(&out);
    let y_lines: Vec<&str> = audit
        .lines()
        .filter(|l| l.split_whitespace().nth(1) == Some("y"))
        .collect();
    assert_eq!(y_lines.len(), 2, "{audit}");
    assert!(
        y_lines[0].ends_with("→ merge conflicted (shared.txt), rescue 1"),
        "{audit}"
    );
    assert!(
        y_lines[1].contains("→ done at seq") && y_lines[1].contains(", merged at seq"),
        "{audit}"
    );
    // The whole of y's work: what its merge brought, its two attempts together.
    let out = runlog(&store)
        .args(["show", "judged", "y", "--diff"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(
        text(&out).contains("task y in all (attempts 1, 2), as merged")
            && text(&out).contains("+Y")
            && !text(&out).contains("+X"),
        "{}",
        text(&out)
    );
}
