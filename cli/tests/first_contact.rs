//! What a new user meets first, through the real binary: the one-task hello-world runs,
//! `runlog init` writes a workflow that runs right away, every command's help speaks runlog's own
//! words, and the shell completions and the man page come out of the binary.

mod common;

use common::{runlog, text, workflow};

#[test]
fn the_one_task_hello_world_runs_untested() {
    let dir = tempfile::tempdir().unwrap();
    let wf = workflow(
        dir.path(),
        "hello",
        "name = \"hello\"\n[[task]]\nid = \"hello\"\nrun = \"echo hi\"\n",
    );
    let store = dir.path().join("store");
    let out = runlog(&store)
        .args(["run", wf.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(
        text(&out).contains("run hello-1 succeeded"),
        "{}",
        text(&out)
    );
    let status = runlog(&store).args(["status", "hello-1"]).output().unwrap();
    let shown = String::from_utf8_lossy(&status.stdout);
    assert!(
        shown
            .lines()
            .any(|l| l.starts_with("hello ") && l.contains("done") && l.ends_with("untested")),
        "{shown}"
    );
    let show = runlog(&store)
        .args(["show", "hello-1", "hello"])
        .output()
        .unwrap();
    assert!(
        text(&show).contains("test: none (untested)"),
        "{}",
        text(&show)
    );
    let metrics = runlog(&store)
        .args(["metrics", "hello-1"])
        .output()
        .unwrap();
    assert!(
        text(&metrics).contains("done untested              hello"),
        "{}",
        text(&metrics)
    );
    // Asking for testing brings the conventions back: with no test to be found, refused.
    let strict = workflow(
        dir.path(),
        "strict",
        "name = \"strict\"\n[settings]\nrequires_testing = true\n[[task]]\nid = \"hello\"\nrun = \"echo hi\"\n",
    );
    let out = runlog(&store)
        .args(["run", strict.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("requires testing"), "{}", text(&out));
}

#[test]
fn runlog_init_writes_a_workflow_that_runs_right_after() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let target = dir.path().join("starter");
    let out = runlog(&store)
        .args(["init", target.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let said = String::from_utf8_lossy(&out.stdout).into_owned();
    let command = said
        .lines()
        .find_map(|l| l.strip_prefix("run it: "))
        .unwrap_or_else(|| panic!("init says how to run it: {said}"));
    let args: Vec<&str> = command.split_whitespace().collect();
    assert_eq!(args[..2], ["runlog", "--store"], "{command}");
    // The command it printed, as printed.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_runlog"))
        .args(&args[1..])
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(text(&out).contains("succeeded"), "{}", text(&out));
    let audit = runlog(&store)
        .args(["audit", "starter-1"])
        .output()
        .unwrap();
    assert!(text(&audit).contains("score 0.9"), "{}", text(&audit));
    // Never over what is there.
    let again = runlog(&store)
        .args(["init", target.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(again.status.code(), Some(2), "{}", text(&again));
    assert!(text(&again).contains("exist already"), "{}", text(&again));
}

#[test]
fn the_log_is_off_unless_asked_for_and_goes_to_stderr() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let target = dir.path().join("starter");
    let init = runlog(&store)
        .args(["init", target.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(init.status.code(), Some(0), "{}", text(&init));
    let workflow = target.join("workflow.toml");
    let run = |extra: &[&str], filter: Option<&str>| {
        let mut c = runlog(&store);
        c.args(extra).args(["run", workflow.to_str().unwrap()]);
        if let Some(f) = filter {
            c.env("RUNLOG_LOG", f);
        }
        let out = c.output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", text(&out));
        (
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (_, quiet) = run(&[], None);
    assert!(!quiet.contains("DEBUG"), "no log by default: {quiet}");
    let (stdout, logged) = run(&["--debug"], None);
    assert!(
        stdout.contains("succeeded") && !stdout.contains("DEBUG"),
        "{stdout}"
    );
    for line in [
        "owning the store",
        "driving",
        "starting a command",
        "a command ended",
        "finishing",
    ] {
        assert!(logged.contains(line), "--debug logs {line:?}: {logged}");
    }
    let (_, engine_only) = run(&[], Some("runlog_runner=debug"));
    assert!(engine_only.contains("starting a command"), "{engine_only}");
    assert!(!engine_only.contains("owning the store"), "{engine_only}");
    let (_, bad) = run(&[], Some("nonsense==="));
    assert!(bad.contains("is not a log filter"), "{bad}");
}

/// Every command's name, from `runlog --help`.
fn commands(store: &std::path::Path) -> Vec<String> {
    let out = runlog(store).arg("--help").output().unwrap();
    let help = String::from_utf8_lossy(&out.stdout).into_owned();
    help.lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter(|l| !l.starts_with("   "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|c| *c != "help")
        .map(str::to_owned)
        .collect()
}

#[test]
fn no_help_speaks_of_seeds_or_issues() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let all = commands(&store);
    assert!(all.len() > 25, "{all:?}");
    let mut pages = vec![(
        String::from("runlog"),
        runlog(&store).arg("--help").output().unwrap(),
    )];
    for c in &all {
        pages.push((
            c.clone(),
            runlog(&store)
                .args([c.as_str(), "--help"])
                .output()
                .unwrap(),
        ));
    }
    for (name, out) in pages {
        let help = String::from_utf8_lossy(&out.stdout).to_lowercase();
        assert!(out.status.success(), "{name} --help");
        for word in ["seed", "issue"] {
            assert!(
                !help.contains(word),
                "`{name} --help` says {word:?}:\n{help}"
            );
        }
    }
}

#[test]
fn completions_come_for_every_shell_and_name_every_command() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let out = runlog(&store)
            .args(["completions", shell])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{shell}: {}", text(&out));
        let script = String::from_utf8_lossy(&out.stdout);
        for c in ["resume", "rollback", "worker", "init"] {
            assert!(script.contains(c), "{shell} completes {c}");
        }
    }
    let out = runlog(&store)
        .args(["completions", "tcsh"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "an unknown shell is bad input");
}

/// `docs/man/` is what `runlog man --dir` writes now: the pages in the repository never lie.
#[test]
fn the_man_pages_in_docs_are_the_binarys() {
    let dir = tempfile::tempdir().unwrap();
    let made = dir.path().join("man");
    let out = runlog(&dir.path().join("store"))
        .args(["man", "--dir", made.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let committed = common::repo().join("docs/man");
    let names = |d: &std::path::Path| {
        let mut n: Vec<String> = std::fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        n.sort();
        n
    };
    assert_eq!(
        names(&made),
        names(&committed),
        "regenerate: runlog man --dir docs/man"
    );
    for page in names(&made) {
        assert_eq!(
            std::fs::read_to_string(made.join(&page)).unwrap(),
            std::fs::read_to_string(committed.join(&page)).unwrap(),
            "docs/man/{page} is stale: regenerate with `runlog man --dir docs/man`"
        );
    }
    let top = runlog(&dir.path().join("store"))
        .arg("man")
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&top.stdout).contains(".TH runlog 1"));
}
