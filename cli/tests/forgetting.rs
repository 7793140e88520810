//! `runlog forget` through the real binary: what stays is whole, what went leaves no byte in
//! the store's files and a tombstone that an export kept elsewhere still checks against; what
//! something still needs is refused; a kill -9 in the middle leaves each run whole or
//! forgotten.

mod common;

use common::{runlog, text, workflow};
use std::path::Path;

/// A workflow whose agent prints `marker` twice: in a line, and at the end of an output larger
/// than an event holds (so the blob area holds it too).
fn marked(dir: &Path, marker: &str) -> std::path::PathBuf {
    workflow(
        dir,
        marker,
        &format!(
            "name = \"marked\"\n[settings]\nworkspace = \"none\"\n[[task]]\nid = \"a\"\n\
             run = \"echo {marker}-line; head -c 100000 /dev/zero | tr '\\\\0' y; echo {marker}-blob\"\n"
        ),
    )
}

fn files_holding(dir: &Path, needle: &str) -> Vec<std::path::PathBuf> {
    runlog_store::testkit::files_holding(dir, needle.as_bytes())
}

fn ok(out: &std::process::Output) -> String {
    assert!(out.status.success(), "{}", text(out));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn a_forgotten_run_is_gone_from_every_file_and_its_kept_export_checks_against_the_tombstone() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    for (run, marker) in [("old", "GONE7f3a"), ("new", "KEPT9c1d")] {
        let wf = marked(dir.path(), marker);
        ok(&common::run(&store, &wf, run, &[]));
    }
    assert!(!files_holding(&store, "GONE7f3a-blob").is_empty());
    let kept_digest = ok(&runlog(&store).args(["digest", "new"]).output().unwrap());
    let exports = dir.path().join("exports");
    let said = ok(&runlog(&store)
        .args(["forget", "old", "--reason", "a test", "--keep-export"])
        .arg(&exports)
        .output()
        .unwrap());
    assert!(said.contains("forgot old: succeeded,"), "{said}");
    assert!(said.contains("the store went from"), "{said}");
    // No byte of the run's records or outputs is left in the store.
    for needle in ["GONE7f3a-line", "GONE7f3a-blob"] {
        assert_eq!(
            files_holding(&store, needle),
            Vec::<std::path::PathBuf>::new(),
            "{needle}"
        );
    }
    assert!(!files_holding(&store, "KEPT9c1d-blob").is_empty());
    // verify says the run was forgotten, by whom and why; everything else verifies.
    let said = ok(&runlog(&store).args(["verify", "old"]).output().unwrap());
    assert!(
        said.contains("old: forgotten by ") && said.contains("(a test): succeeded"),
        "{said}"
    );
    let said = ok(&runlog(&store).arg("verify").output().unwrap());
    assert!(
        said.contains("new: ok,")
            && said.contains("register of forgotten runs: ok, 1 tombstone(s)"),
        "{said}"
    );
    let runs = ok(&runlog(&store).args(["--json", "runs"]).output().unwrap());
    assert!(
        runs.contains("\"new\"") && !runs.contains("\"old\"") && !runs.contains(".forgotten"),
        "{runs}"
    );
    // The export kept elsewhere checks out, line by line, against the tombstone's digest.
    let export = exports.join("old.jsonl");
    let said = ok(&runlog(&store)
        .args(["digest", "old", "--export"])
        .arg(&export)
        .output()
        .unwrap());
    assert!(
        said.contains("the export checks out and matches the digest its tombstone keeps"),
        "{said}"
    );
    let said = ok(&runlog(&store)
        .args(["digest", "old", "--check"])
        .arg(exports.join("old.digest.json"))
        .output()
        .unwrap());
    assert!(
        said.contains("matches the digest its tombstone keeps"),
        "{said}"
    );
    // The API says the same, from a server that applies its retention as it starts (nothing
    // is old enough here).
    let (mut server, url) = common::serve_http(&store, &["--retain-days".as_ref(), "30".as_ref()]);
    let addr = url.trim_start_matches("http://");
    let mut conn = std::net::TcpStream::connect(addr).unwrap();
    let (status, body) = common::request(&mut conn, "GET", "/v1/runs/old/verify", &[], "");
    let _ = server.kill();
    let _ = server.wait();
    assert_eq!(status, 200, "{body}");
    let v: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(v["forgotten"]["reason"], "a test", "{v}");
    assert_eq!(v["forgotten"]["outcome"], "succeeded", "{v}");
    assert!(store.join("db").exists());
    ok(&runlog(&store).args(["verify", "new"]).output().unwrap());
    // An export changed by one byte does not.
    let changed = std::fs::read_to_string(&export)
        .unwrap()
        .replacen("succeeded", "succeedet", 1);
    std::fs::write(&export, changed).unwrap();
    let out = runlog(&store)
        .args(["digest", "old", "--export"])
        .arg(&export)
        .output()
        .unwrap();
    assert!(!out.status.success(), "{}", text(&out));
    // The kept run is untouched, and the archive alone rebuilds the store.
    std::fs::remove_dir_all(store.join("db")).unwrap();
    ok(&runlog(&store).arg("repair").output().unwrap());
    let digest_file = dir.path().join("new.digest");
    std::fs::write(&digest_file, kept_digest).unwrap();
    ok(&runlog(&store)
        .args(["digest", "new", "--check"])
        .arg(&digest_file)
        .output()
        .unwrap());
    let said = ok(&runlog(&store).args(["verify", "old"]).output().unwrap());
    assert!(said.contains("old: forgotten by "), "{said}");
}

#[test]
fn forget_is_refused_for_a_run_with_a_fork_and_for_a_live_run_and_nothing_is_forgotten() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let wf = marked(dir.path(), "forked");
    ok(&common::run(&store, &wf, "parent", &[]));
    ok(&runlog(&store)
        .args(["fork", "parent", "--as", "child"])
        .output()
        .unwrap());
    let out = runlog(&store).args(["forget", "parent"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(
        text(&out).contains("run child was forked from parent"),
        "{}",
        text(&out)
    );
    assert!(
        text(&out).contains("forget the forks in the same command"),
        "{}",
        text(&out)
    );
    ok(&runlog(&store).args(["verify", "parent"]).output().unwrap());
    // Both together may go.
    ok(&runlog(&store)
        .args(["forget", "parent", "child"])
        .output()
        .unwrap());
    // A run being executed is refused.
    let slow = workflow(
        dir.path(),
        "slow",
        "name = \"slow\"\n[settings]\nworkspace = \"none\"\n[[task]]\nid = \"a\"\nrun = \"sleep 30\"\n",
    );
    let mut child = runlog(&store)
        .args(["run", slow.to_str().unwrap(), "--run-id", "live", "--quiet"])
        .spawn()
        .unwrap();
    common::wait_for(|| {
        store.join("runners").join("live").exists()
            && runlog_runner::marker::is_held(&store.join("runners").join("live"))
    });
    let out = runlog(&store).args(["forget", "live"]).output().unwrap();
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(
        text(&out).contains("run live is being executed now"),
        "{}",
        text(&out)
    );
}

#[test]
fn a_kill_9_in_the_middle_of_a_forget_leaves_each_run_whole_or_forgotten() {
    let dir = tempfile::tempdir().unwrap();
    let pristine = dir.path().join("pristine");
    // Enough history that a forget takes a while: 24 imported copies of one run.
    let wf = marked(dir.path(), "bulk");
    ok(&common::run(&pristine, &wf, "r0", &[]));
    let export = dir.path().join("r0.jsonl");
    std::fs::write(
        &export,
        ok(&runlog(&pristine).args(["export", "r0"]).output().unwrap()),
    )
    .unwrap();
    for i in 1..24 {
        ok(&runlog(&pristine)
            .args(["import"])
            .arg(&export)
            .args(["--as", &format!("r{i}")])
            .output()
            .unwrap());
    }
    let heads = heads_of(&pristine);
    let doomed: Vec<String> = (0..24).step_by(2).map(|i| format!("r{i}")).collect();
    let timed = std::time::Instant::now();
    let probe = dir.path().join("probe");
    common::copy_tree(&pristine, &probe);
    ok(&runlog(&probe).arg("forget").args(&doomed).output().unwrap());
    let whole = timed.elapsed();
    for i in 0..6u32 {
        let store = dir.path().join(format!("cut-{i}"));
        common::copy_tree(&pristine, &store);
        let mut child = runlog(&store).arg("forget").args(&doomed).spawn().unwrap();
        std::thread::sleep(whole * i / 6);
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(child.id() as i32),
            nix::sys::signal::Signal::SIGKILL,
        );
        let _ = child.wait();
        eprintln!(
            "cut {i} at {:?} of {whole:?}: {}",
            whole * i / 6,
            if store.join("forgetting").exists() {
                "in the rebuild (its journal left)"
            } else {
                "before or after the rebuild"
            }
        );
        // The store opens (a forget cut short is finished as it does), every run verifies,
        // and each run is either whole (its head as before) or forgotten (the same head in its
        // tombstone).
        let after = heads_of(&store);
        for (run, head) in &heads {
            let now = after
                .get(run)
                .unwrap_or_else(|| panic!("{run} after cut {i}: {after:?}"));
            assert_eq!(now.0, head.0, "{run} after cut {i}");
            assert!(
                !now.1 || doomed.contains(run),
                "{run} forgotten after cut {i}"
            );
        }
    }
}

/// Each run's head seq and whether it is forgotten (its head then read from its tombstone),
/// once `verify` has checked every chain (exit 0).
fn heads_of(store: &Path) -> std::collections::BTreeMap<String, (u64, bool)> {
    ok(&runlog(store).arg("verify").output().unwrap());
    let log = common::open(store);
    let mut heads = std::collections::BTreeMap::new();
    let register = runlog_store::EventLog::head(&log, runlog_core::FORGOTTEN_RUNS).unwrap();
    let tombstones = match register {
        Some(_) => common::events(&log, runlog_core::FORGOTTEN_RUNS),
        None => Vec::new(),
    };
    for (_, event) in tombstones {
        if let runlog_core::EventKind::RunForgotten(f) = event.kind {
            heads.insert(f.run.0, (f.head_seq, true));
        }
    }
    for i in 0..24 {
        let run = format!("r{i}");
        if let Some(head) = runlog_store::EventLog::head(&log, &run).unwrap() {
            heads.insert(run, (head.seq, false));
        }
    }
    heads
}

#[test]
fn on_postgresql_a_forgotten_runs_rows_are_deleted_and_its_tombstone_kept() {
    let Some(db) = runlog_store::postgres::scratch::scratch() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let store = Path::new(&db.url);
    for (run, marker) in [("old", "PGGONE"), ("new", "PGKEPT")] {
        let wf = marked(dir.path(), marker);
        ok(&common::run(store, &wf, run, &[]));
    }
    // Counting its size keeps a count beside its snapshots, which goes with it.
    ok(&runlog(store).args(["du", "old"]).output().unwrap());
    let exports = dir.path().join("exports");
    let said = ok(&runlog(store)
        .args(["forget", "old", "--keep-export"])
        .arg(&exports)
        .output()
        .unwrap());
    assert!(said.contains("forgot old: succeeded,"), "{said}");
    // The shared store holds none of the run's events, and its blob is gone.
    let pg = runlog_store::PgLog::connect(&db.url).unwrap();
    let runs: Vec<String> = runlog_store::EventLog::runs(&pg)
        .unwrap()
        .into_iter()
        .map(|m| m.run)
        .collect();
    assert_eq!(runs, [runlog_core::FORGOTTEN_RUNS, "new"]);
    assert_eq!(
        runlog_store::EventLog::cache_keys(&pg, b"snap/old\0").unwrap(),
        Vec::<Vec<u8>>::new(),
        "nothing cached of the run is left"
    );
    let said = ok(&runlog(store).args(["verify", "old"]).output().unwrap());
    assert!(said.contains("old: forgotten by "), "{said}");
    let said = ok(&runlog(store)
        .args(["digest", "old", "--export"])
        .arg(exports.join("old.jsonl"))
        .output()
        .unwrap());
    assert!(
        said.contains("matches the digest its tombstone keeps"),
        "{said}"
    );
    ok(&runlog(store).args(["verify", "new"]).output().unwrap());
}

#[test]
fn a_server_started_with_retain_days_forgets_the_runs_that_ended_before() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    // A run recorded long ago (the fixture's clock), and one that ends now.
    ok(&runlog(&store)
        .args(["import", "fixtures/runs/quickstart.jsonl"])
        .output()
        .unwrap());
    let wf = marked(dir.path(), "recent");
    ok(&common::run(&store, &wf, "recent", &[]));
    let (mut server, _) = common::serve_http(&store, &["--retain-days".as_ref(), "30".as_ref()]);
    let _ = server.kill();
    let _ = server.wait();
    let said = ok(&runlog(&store)
        .args(["verify", "quickstart"])
        .output()
        .unwrap());
    assert!(
        said.contains("(ended more than 30 days ago (--retain-days 30)): succeeded"),
        "{said}"
    );
    let said = ok(&runlog(&store).args(["verify", "recent"]).output().unwrap());
    assert!(said.contains("recent: ok,"), "{said}");
}

/// Every command given a forgotten run's id says it was forgotten, by whom, when and why, and
/// points at `runlog verify RUN`, with exit 2; no answer shows the register as a run.
#[test]
fn a_forgotten_run_is_named_as_forgotten_by_every_command_and_the_register_is_no_run() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    for run in ["r1", "r2"] {
        let wf = marked(dir.path(), run);
        ok(&common::run(&store, &wf, run, &[]));
    }
    ok(&runlog(&store)
        .args(["forget", "r1", "--reason", "kept too long"])
        .output()
        .unwrap());
    let commands: &[&[&str]] = &[
        &["status", "r1"],
        &["show", "r1", "a"],
        &["log", "r1"],
        &["replay", "r1"],
        &["stack", "r1"],
        &["stages", "r1"],
        &["audit", "r1"],
        &["metrics", "r1"],
        &["cost", "r1"],
        &["export", "r1"],
        &["du", "r1"],
        &["viz", "r1"],
        &["diff", "r1", "r2"],
        &["fork", "r1", "--as", "r3"],
        &["rollback", "r1", "--to", "1", "--reason", "back"],
        &["resume", "r1"],
        &["approve", "r1", "a"],
        &["reopen", "r1", "a"],
        &["forget", "r1"],
    ];
    for args in commands {
        let out = runlog(&store).args(*args).output().unwrap();
        let said = text(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {said}");
        assert!(
            said.contains("run r1 was forgotten by")
                && said.contains("kept too long")
                && said.contains("runlog verify r1"),
            "{args:?}: {said}"
        );
        assert!(!said.contains(".forgotten"), "{args:?}: {said}");
    }
    // A run that never was: the runs there are, the register not among them.
    let out = runlog(&store).args(["status", "nope"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("runs: r2"), "{}", text(&out));
    assert!(!text(&out).contains(".forgotten"), "{}", text(&out));
    let runs = ok(&runlog(&store).args(["runs"]).output().unwrap());
    assert!(
        !runs.contains(".forgotten") && !runs.contains("r1"),
        "{runs}"
    );
    // `verify` over the whole store names the forgotten run, from its verified tombstone.
    let verified = ok(&runlog(&store).args(["verify"]).output().unwrap());
    assert!(
        verified
            .lines()
            .any(|l| l.starts_with("r1: forgotten by") && l.contains("kept too long")),
        "{verified}"
    );
    ok(&runlog(&store).args(["verify", "r1"]).output().unwrap());
}
