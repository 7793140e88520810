//! Bad input everywhere (issue 13, item 4): every command given bad arguments, bad files or a bad
//! store path exits 2 with a hint, never panics, and leaves the store as it was. One table, one
//! snapshot of what each case prints (`bad_input__every_bad_input.snap`).

mod common;

use common::{repo, runlog, text};
use std::io::Write;
use std::path::Path;
use std::process::{Output, Stdio};

/// Which store directory a case points `--store` at.
#[derive(Clone, Copy, Debug)]
enum At {
    /// A store holding the quickstart fixture run.
    Good,
    /// A directory that does not exist.
    Missing,
    /// A regular file.
    File,
    /// A directory with files but no store marker.
    NotAStore,
    /// A store written by a newer runlog (format 99).
    Newer,
}

/// `(what, store, args, stdin)`; `{dir}` in an argument is the scratch directory.
const CASES: &[(&str, At, &[&str], Option<&str>)] = &[
    ("no command", At::Good, &[], None),
    ("unknown command", At::Good, &["frobnicate"], None),
    ("unknown flag", At::Good, &["runs", "--colour"], None),
    ("missing argument", At::Good, &["status"], None),
    ("status: unknown run", At::Good, &["status", "nope"], None),
    (
        "status: seq not a number",
        At::Good,
        &["status", "quickstart", "--at", "abc"],
        None,
    ),
    (
        "status: seq past the head",
        At::Good,
        &["status", "quickstart", "--at", "9999"],
        None,
    ),
    (
        "show: unknown run",
        At::Good,
        &["show", "nope", "plan"],
        None,
    ),
    (
        "show: unknown task",
        At::Good,
        &["show", "quickstart", "nope"],
        None,
    ),
    ("log: unknown run", At::Good, &["log", "nope"], None),
    (
        "experiment show: unknown experiment",
        At::Good,
        &["experiment", "show", "nope"],
        None,
    ),
    (
        "experiment run: a variant file that is not there",
        At::Good,
        &[
            "experiment",
            "run",
            "trial",
            "--runs",
            "quickstart",
            "--variant",
            "v={dir}/no-such-variant.toml",
        ],
        None,
    ),
    (
        "experiment run: a variant not NAME=FILE",
        At::Good,
        &[
            "experiment",
            "run",
            "trial",
            "--runs",
            "quickstart",
            "--variant",
            "v",
        ],
        None,
    ),
    (
        "experiment run: no suite",
        At::Good,
        &["experiment", "run", "trial", "--variant", "v={dir}/v.toml"],
        None,
    ),
    (
        "log: unknown kind",
        At::Good,
        &["log", "quickstart", "--kind", "nope"],
        None,
    ),
    (
        "log: from past the head",
        At::Good,
        &["log", "quickstart", "--from", "9999"],
        None,
    ),
    ("replay: unknown run", At::Good, &["replay", "nope"], None),
    ("stack: unknown run", At::Good, &["stack", "nope"], None),
    ("stages: unknown run", At::Good, &["stages", "nope"], None),
    ("audit: unknown run", At::Good, &["audit", "nope"], None),
    (
        "diff: unknown run",
        At::Good,
        &["diff", "quickstart", "nope"],
        None,
    ),
    (
        "diff: seq past the head",
        At::Good,
        &["diff", "quickstart@9999", "quickstart"],
        None,
    ),
    ("verify: unknown run", At::Good, &["verify", "nope"], None),
    ("digest: unknown run", At::Good, &["digest", "nope"], None),
    (
        "digest: missing digest file",
        At::Good,
        &["digest", "quickstart", "--check", "{dir}/missing.digest"],
        None,
    ),
    (
        "digest: not a digest",
        At::Good,
        &["digest", "quickstart", "--check", "{dir}/garbage.txt"],
        None,
    ),
    ("export: unknown run", At::Good, &["export", "nope"], None),
    (
        "export: into a missing directory",
        At::Good,
        &["export", "quickstart", "-o", "{dir}/no/such/dir/x.jsonl"],
        None,
    ),
    ("viz: unknown run", At::Good, &["viz", "nope"], None),
    (
        "viz: unknown format",
        At::Good,
        &["viz", "quickstart", "--format", "png"],
        None,
    ),
    (
        "approve: unknown run",
        At::Good,
        &["approve", "nope", "plan"],
        None,
    ),
    (
        "approve: unknown task",
        At::Good,
        &["approve", "quickstart", "nope"],
        None,
    ),
    (
        "approve: a finished run",
        At::Good,
        &["approve", "quickstart", "plan"],
        None,
    ),
    (
        "reject: unknown task",
        At::Good,
        &["reject", "quickstart", "nope"],
        None,
    ),
    (
        "reopen: unknown task",
        At::Good,
        &["reopen", "quickstart", "nope"],
        None,
    ),
    (
        "replan: missing file",
        At::Good,
        &["replan", "quickstart", "--file", "{dir}/missing.json"],
        None,
    ),
    (
        "replan: not JSON",
        At::Good,
        &["replan", "quickstart", "--file", "{dir}/garbage.txt"],
        None,
    ),
    (
        "rollback: seq past the head",
        At::Good,
        &["rollback", "quickstart", "--to", "9999", "--reason", "r"],
        None,
    ),
    (
        "rollback: seq 0",
        At::Good,
        &["rollback", "quickstart", "--to", "0", "--reason", "r"],
        None,
    ),
    (
        "fork: unknown run",
        At::Good,
        &["fork", "nope", "--at", "3", "--as", "f"],
        None,
    ),
    (
        "fork: seq past the head",
        At::Good,
        &["fork", "quickstart", "--at", "9999", "--as", "f"],
        None,
    ),
    (
        "fork: onto an existing run",
        At::Good,
        &["fork", "quickstart", "--at", "3", "--as", "quickstart"],
        None,
    ),
    (
        "emit: not JSON",
        At::Good,
        &["emit", "quickstart"],
        Some("this is not json\n"),
    ),
    (
        "emit: unknown command",
        At::Good,
        &["emit", "quickstart"],
        Some("{\"command\":\"explode\"}\n"),
    ),
    (
        "import: missing file",
        At::Good,
        &["import", "{dir}/missing.jsonl"],
        None,
    ),
    (
        "import: not an export",
        At::Good,
        &["import", "{dir}/garbage.txt"],
        None,
    ),
    (
        "import: the same run twice",
        At::Good,
        &["import", "fixtures/runs/quickstart.jsonl"],
        None,
    ),
    (
        "run: missing workflow",
        At::Good,
        &["run", "{dir}/missing.toml"],
        None,
    ),
    (
        "run: bad TOML",
        At::Good,
        &["run", "{dir}/garbage.txt"],
        None,
    ),
    (
        "run: jobs 0",
        At::Good,
        &["run", "fixtures/workflows/quickstart.toml", "--jobs", "0"],
        None,
    ),
    (
        "run: an existing run id",
        At::Good,
        &[
            "run",
            "fixtures/workflows/quickstart.toml",
            "--run-id",
            "quickstart",
        ],
        None,
    ),
    ("resume: unknown run", At::Good, &["resume", "nope"], None),
    ("runs: missing store", At::Missing, &["runs"], None),
    (
        "status: missing store",
        At::Missing,
        &["status", "quickstart"],
        None,
    ),
    (
        "approve: missing store",
        At::Missing,
        &["approve", "quickstart", "plan"],
        None,
    ),
    (
        "run: bad TOML, missing store",
        At::Missing,
        &["run", "{dir}/garbage.txt"],
        None,
    ),
    (
        "import: missing file, missing store",
        At::Missing,
        &["import", "{dir}/missing.jsonl"],
        None,
    ),
    (
        "emit: not JSON, missing store",
        At::Missing,
        &["emit", "x"],
        Some("this is not json\n"),
    ),
    ("runs: store is a file", At::File, &["runs"], None),
    (
        "run: store is a file",
        At::File,
        &["run", "fixtures/workflows/quickstart.toml"],
        None,
    ),
    ("runs: not a store", At::NotAStore, &["runs"], None),
    (
        "run: not a store",
        At::NotAStore,
        &["run", "fixtures/workflows/quickstart.toml"],
        None,
    ),
    ("runs: a newer format", At::Newer, &["runs"], None),
    ("forget: nothing named", At::Good, &["forget"], None),
    ("forget: unknown run", At::Good, &["forget", "nope"], None),
    (
        "forget: an age without a unit",
        At::Good,
        &["forget", "--older-than", "30"],
        None,
    ),
    (
        "digest: an export that is no export",
        At::Good,
        &["digest", "quickstart", "--export", "{dir}/garbage.txt"],
        None,
    ),
    (
        "import: a newer format",
        At::Newer,
        &["import", "fixtures/runs/quickstart.jsonl"],
        None,
    ),
];

fn call(store: &Path, args: &[String], stdin: Option<&str>) -> Output {
    let mut child = runlog(store)
        .args(args)
        .env("RUNLOG_TEST_CLOCK", "1800000000000")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    input.write_all(stdin.unwrap_or("").as_bytes()).unwrap();
    drop(input);
    child.wait_with_output().unwrap()
}

/// What a person can check stayed the same: the runs, and the quickstart run's head hash.
fn fingerprint(store: &Path) -> String {
    let runs = call(store, &["--json".into(), "runs".into()], None);
    let digest = call(store, &["digest".into(), "quickstart".into()], None);
    format!("{}{}", text(&runs), text(&digest))
}

#[test]
fn every_bad_input_exits_2_with_a_hint_and_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let good = d.join("store");
    let imported = call(
        &good,
        &["import".into(), "fixtures/runs/quickstart.jsonl".into()],
        None,
    );
    assert!(imported.status.success(), "{}", text(&imported));
    std::fs::write(d.join("garbage.txt"), "this is { not what was asked for\n").unwrap();
    std::fs::write(d.join("a-file"), "x").unwrap();
    std::fs::create_dir_all(d.join("not-a-store")).unwrap();
    std::fs::write(d.join("not-a-store/notes.txt"), "mine").unwrap();
    std::fs::create_dir_all(d.join("newer")).unwrap();
    std::fs::write(d.join("newer/RUNLOG_STORE"), "runlog-store format 99\n").unwrap();
    let before = fingerprint(&good);

    let mut report = String::new();
    // Each case says exit 2, a hint (ours, or clap's "try '--help'"), and no panic.
    let mut wrong = Vec::new();
    for (what, at, args, stdin) in CASES {
        let store = match at {
            At::Good => good.clone(),
            At::Missing => d.join("missing"),
            At::File => d.join("a-file"),
            At::NotAStore => d.join("not-a-store"),
            At::Newer => d.join("newer"),
        };
        let args: Vec<String> = args
            .iter()
            .map(|a| a.replace("{dir}", d.to_str().unwrap()))
            .collect();
        let out = call(&store, &args, *stdin);
        let said = String::from_utf8_lossy(&out.stderr)
            .replace(d.to_str().unwrap(), "[DIR]")
            .replace(repo().to_str().unwrap(), "[REPO]");
        if out.status.code() != Some(2)
            || !(said.contains("hint:") || said.contains("--help"))
            || said.contains("panicked")
        {
            wrong.push(format!(
                "{what}: exit {:?}\n{}",
                out.status.code(),
                text(&out)
            ));
        }
        let typed = args.join(" ").replace(d.to_str().unwrap(), "[DIR]");
        report.push_str(&format!("## {what}\n$ runlog {typed}\n{said}\n"));
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    insta::assert_snapshot!("every_bad_input", report);

    assert_eq!(fingerprint(&good), before, "a bad input changed the store");
    assert!(!d.join("missing").exists(), "a bad input created a store");
    assert_eq!(std::fs::read_to_string(d.join("a-file")).unwrap(), "x");
    let not_a_store: Vec<_> = std::fs::read_dir(d.join("not-a-store")).unwrap().collect();
    assert_eq!(
        not_a_store.len(),
        1,
        "runlog wrote into a directory that is not a store"
    );
    let newer: Vec<_> = std::fs::read_dir(d.join("newer")).unwrap().collect();
    assert_eq!(newer.len(), 1, "runlog wrote into a newer store");
}

/// Mounts a tmpfs at `at` and returns whether it could (root and a kernel that lets us).
fn mount_tmpfs(at: &Path) -> bool {
    std::process::Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=64m", "tmpfs"])
        .arg(at)
        .status()
        .is_ok_and(|s| s.success())
}

#[test]
fn a_read_only_store_is_refused_with_a_hint() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("mnt");
    std::fs::create_dir_all(&root).unwrap();
    // Root writes through permission bits: a read-only mount is the only read-only for root.
    let as_root = nix::unistd::Uid::effective().is_root();
    if as_root && !mount_tmpfs(&root) {
        assert!(
            std::env::var("RUNLOG_REQUIRE_MOUNTS").as_deref() != Ok("1"),
            "the read-only store test needs to mount a tmpfs"
        );
        eprintln!("SKIPPED: running as root without the right to mount a tmpfs; run as a normal user or with mount rights (bash .ci/run does)");
        return;
    }
    let store = root.join("store");
    let imported = call(
        &store,
        &["import".into(), "fixtures/runs/quickstart.jsonl".into()],
        None,
    );
    assert!(imported.status.success(), "{}", text(&imported));
    let made_read_only = if as_root {
        std::process::Command::new("mount")
            .args(["-o", "remount,ro"])
            .arg(&root)
            .status()
            .unwrap()
            .success()
    } else {
        use std::os::unix::fs::PermissionsExt;
        for entry in walk(&store) {
            let mode = if entry.is_dir() { 0o555 } else { 0o444 };
            std::fs::set_permissions(&entry, std::fs::Permissions::from_mode(mode)).unwrap();
        }
        true
    };
    assert!(made_read_only);
    for args in [
        vec!["runs"],
        vec!["status", "quickstart"],
        vec!["approve", "quickstart", "plan"],
    ] {
        let args: Vec<String> = args.into_iter().map(String::from).collect();
        let out = call(&store, &args, None);
        let said = text(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {said}");
        assert!(
            said.contains("make the directory writable"),
            "{args:?}: {said}"
        );
    }
    if as_root {
        let _ = std::process::Command::new("umount").arg(&root).status();
    }
}

/// The store directory and everything in it, parents first.
fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut all = vec![dir.to_path_buf()];
    let mut i = 0;
    while let Some(path) = all.get(i).cloned() {
        if path.is_dir() {
            all.extend(std::fs::read_dir(&path).unwrap().map(|e| e.unwrap().path()));
        }
        i += 1;
    }
    all
}
