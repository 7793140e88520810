//! A run's git workspace: a task's work counts for what waits on it only once merged into the
//! integration branch; a merge conflict sends the task to a rescue, or to a person when no
//! rescue is left; a rollback takes the merges back with the state.

mod support;
use runlog_core::*;
use support::*;

const BASE: &str = "1111111111111111111111111111111111111111";

fn open() -> CommandKind {
    CommandKind::OpenWorkspace {
        repo: "/src/app".into(),
        branch: "runlog/run-1".into(),
        base: BASE.into(),
    }
}

fn merged(t: &str, commit: &str) -> CommandKind {
    CommandKind::RecordMerge {
        task: id(t),
        commit: Some(commit.into()),
        conflicts: Vec::new(),
    }
}

fn conflicted(t: &str, files: &[&str]) -> CommandKind {
    CommandKind::RecordMerge {
        task: id(t),
        commit: None,
        conflicts: files.iter().map(|f| (*f).to_owned()).collect(),
    }
}

fn changes(t: &str, commit: &str) -> CommandKind {
    CommandKind::RecordChanges {
        task: id(t),
        changes: Changes {
            commit: commit.into(),
            parent: BASE.into(),
            files: vec!["a.py".into()],
            insertions: 2,
            deletions: 1,
            patch: String::new(),
            blob: None,
            patch_bytes: 0,
        },
    }
}

fn after(id_: &str, deps: &[&str]) -> TaskSpec {
    let mut s = task(id_);
    s.after = deps.iter().map(|d| id(d)).collect();
    s
}

#[test]
fn opening_the_workspace_records_the_integration_branch_at_the_base() {
    let g = given_run(vec![task("a")])
        .when(open())
        .then(vec![EventKind::WorkspaceOpened {
            repo: "/src/app".into(),
            branch: "runlog/run-1".into(),
            base: BASE.into(),
        }]);
    let w = g.state.workspace.clone().unwrap();
    assert_eq!((w.tip.as_str(), w.branch.as_str()), (BASE, "runlog/run-1"));
    g.when(open())
        .then_rejected_where(|r| matches!(r, Rejection::WorkspaceOpen { .. }));
}

#[test]
fn a_dependent_waits_for_the_merge_not_only_for_done() {
    let g = complete(
        given_run(vec![task("a"), after("b", &["a"])]).and(open()),
        "a",
    );
    assert_eq!(g.status("a"), TaskStatus::Done);
    assert_eq!(g.state.merges_due(), vec![id("a")]);
    g.clone()
        .when(start("b"))
        .then_rejected_where(|r| matches!(r, Rejection::NotReady { .. }));
    let g = g.and(merged("a", "2222"));
    assert!(g.state.merges_due().is_empty());
    assert_eq!(g.state.workspace.as_ref().unwrap().tip, "2222");
    g.when(start("b")).then_ok();
}

#[test]
fn without_a_workspace_done_is_enough() {
    let g = complete(given_run(vec![task("a"), after("b", &["a"])]), "a");
    assert!(g.state.merges_due().is_empty());
    g.clone().when(start("b")).then_ok();
    g.when(merged("a", "2222"))
        .then_rejected(Rejection::NoWorkspace);
}

#[test]
fn a_conflict_goes_to_a_rescue_with_the_files_as_feedback() {
    let g = complete(given_run(vec![task("a")]).and(open()), "a");
    let g = g
        .when(conflicted("a", &["src/app.py"]))
        .then(vec![EventKind::MergeConflicted {
            task: id("a"),
            files: vec!["src/app.py".into()],
            rescue: Some(1),
        }]);
    let t = g.task("a");
    assert_eq!(
        (t.status, t.rescues, t.running),
        (TaskStatus::InProgress, 1, false)
    );
    assert!(t.feedback.as_deref().unwrap().contains("src/app.py"));
    // The rescue starts in the same worktree; once done again, it merges.
    let g = complete(g, "a");
    let g = g.and(merged("a", "3333"));
    assert_eq!(g.task("a").code.conflict, None);
    assert_eq!(g.task("a").code.merged.as_deref(), Some("3333"));
}

#[test]
fn a_conflict_with_no_rescue_left_waits_for_a_person_who_approves() {
    let settings = Settings {
        auto_rescue: false,
        ..Settings::default()
    };
    let g = complete(given_run_with(settings, vec![task("a")]).and(open()), "a");
    let g = g
        .when(conflicted("a", &["x"]))
        .then(vec![EventKind::MergeConflicted {
            task: id("a"),
            files: vec!["x".into()],
            rescue: None,
        }]);
    assert_eq!(g.status("a"), TaskStatus::PendingEval);
    let g = g.and(approve("a"));
    assert_eq!(g.state.merges_due(), vec![id("a")], "approved: merged next");
    g.when(merged("a", "4444")).then_ok();
}

#[test]
fn only_a_done_task_merges_and_only_once() {
    let g = given_run(vec![task("a")]).and(open());
    g.clone()
        .when(merged("a", "5555"))
        .then_rejected_where(|r| matches!(r, Rejection::WrongStatus { .. }));
    let g = complete(g, "a").and(merged("a", "5555"));
    g.when(merged("a", "6666"))
        .then_rejected(Rejection::AlreadyMerged { task: id("a") });
}

#[test]
fn changes_are_recorded_per_attempt_failed_ones_too() {
    let g = given_run(vec![task("a")]).and(open()).and(start("a"));
    let g = g
        .when(changes("a", "7777"))
        .then(vec![EventKind::ChangesRecorded {
            task: id("a"),
            attempt: 1,
            commit: "7777".into(),
            parent: BASE.into(),
            files: vec!["a.py".into()],
            insertions: 2,
            deletions: 1,
            patch: String::new(),
            blob: None,
            patch_bytes: 0,
        }]);
    assert_eq!(g.task("a").code.commit.as_deref(), Some("7777"));
}

#[test]
fn a_rollback_to_before_a_merge_takes_it_back() {
    let g = complete(
        given_run(vec![task("a"), after("b", &["a"])]).and(open()),
        "a",
    );
    let before = g.state.seq;
    let g = g.and(merged("a", "8888"));
    let g = g.and(CommandKind::Rollback {
        to_seq: before,
        reason: "undo the merge".into(),
        by: "me".into(),
    });
    assert_eq!(g.state.workspace.as_ref().unwrap().tip, BASE);
    assert_eq!(g.task("a").code.merged, None);
    assert_eq!(g.state.merges_due(), vec![id("a")]);
}
