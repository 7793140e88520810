//! One flipped byte in sled's file, through the binary: a run sled dropped is reported (never
//! "ok, 0 events"), a database sled cannot open points at `runlog repair`, and the repair brings
//! every run back to its digest with the damaged files kept aside.

mod common;
use common::{runlog, text};
use std::path::{Path, PathBuf};

/// The seed scenarios as runs, written by `opens` processes' worth of opens; their digests.
fn store_of_seeds(store: &Path, opens: usize) -> Vec<(String, PathBuf)> {
    let scenarios = runlog_core::scenarios::all().unwrap();
    let per_open = scenarios.len().div_ceil(opens);
    for chunk in scenarios.chunks(per_open) {
        let log = runlog_store::Log::open(store, runlog_store::Options::default()).unwrap();
        for (name, events) in chunk {
            runlog_replay::control::append(&log, name, 0, events).unwrap();
        }
        log.close().unwrap();
    }
    // Digests from a copy: opening changes how sled's file looks (the flips need the original).
    let reads = store.with_file_name("reads");
    copy(store, &reads);
    scenarios
        .iter()
        .map(|(name, _)| {
            let out = runlog(&reads).args(["digest", name]).output().unwrap();
            assert!(out.status.success(), "{}", text(&out));
            let file = store.parent().unwrap().join(format!("{name}.digest"));
            std::fs::write(&file, &out.stdout).unwrap();
            (name.to_string(), file)
        })
        .collect()
}

/// The store as it was, with the byte at `at` of sled's file flipped.
fn flipped(pristine: &Path, at: usize) -> PathBuf {
    static COPIES: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = COPIES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let to = pristine.with_file_name(format!("flipped-{at}-{n}"));
    copy(pristine, &to);
    let db = to.join("db/db");
    let mut bytes = std::fs::read(&db).unwrap();
    bytes[at] ^= 0xff;
    std::fs::write(&db, bytes).unwrap();
    to
}

fn copy(from: &Path, to: &Path) {
    let status = std::process::Command::new("cp")
        .arg("-a")
        .arg(from)
        .arg(to)
        .status()
        .unwrap();
    assert!(status.success());
}

fn written(store: &Path) -> usize {
    let bytes = std::fs::read(store.join("db/db")).unwrap();
    bytes.iter().rposition(|b| *b != 0).unwrap() + 1
}

fn repair_restores_every_digest(store: &Path, digests: &[(String, PathBuf)]) {
    let out = runlog(store).arg("repair").output().unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let said = text(&out);
    assert!(said.contains("the damaged database was moved to"), "{said}");
    let kept_aside = std::fs::read_dir(store)
        .unwrap()
        .flatten()
        .any(|e| e.file_name().to_string_lossy().starts_with("db.damaged-"));
    assert!(kept_aside, "the damaged database is kept");
    let out = runlog(store).arg("verify").output().unwrap();
    assert!(out.status.success(), "{}", text(&out));
    for (run, digest) in digests {
        let out = runlog(store)
            .args(["digest", run, "--check"])
            .arg(digest)
            .output()
            .unwrap();
        assert!(out.status.success(), "{run}: {}", text(&out));
    }
}

#[test]
fn a_run_sled_cut_short_is_reported_as_missing_and_repair_restores_it() {
    let dir = tempfile::tempdir().unwrap();
    let pristine = dir.path().join("store");
    let digests = store_of_seeds(&pristine, 1);
    let end = written(&pristine);
    // Late bytes of sled's log hold the last frames: a flip there makes sled drop them.
    let (store, out) = (1..=64)
        .map(|back| {
            let store = flipped(&pristine, end - back);
            let out = runlog(&store).arg("verify").output().unwrap();
            (store, out)
        })
        .find(|(_, out)| text(out).contains("are missing"))
        .expect("a flip near the end of sled's log cuts a run short");
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let said = text(&out);
    assert!(said.contains("DAMAGED"), "{said}");
    assert!(said.contains("runlog repair"), "{said}");
    assert!(!said.contains("ok, 0 events"), "{said}");
    // Every run is still listed, the short one as damaged.
    let out = runlog(&store).args(["runs", "--json"]).output().unwrap();
    for (run, _) in &digests {
        assert!(
            text(&out).contains(run.as_str()),
            "{run} listed: {}",
            text(&out)
        );
    }
    assert!(text(&out).contains("\"damaged\""), "{}", text(&out));
    repair_restores_every_digest(&store, &digests);
}

#[test]
fn a_database_sled_cannot_open_points_at_repair_which_restores_every_run() {
    let dir = tempfile::tempdir().unwrap();
    let pristine = dir.path().join("store");
    let digests = store_of_seeds(&pristine, 3);
    let store = flipped(&pristine, 100);
    let out = runlog(&store).arg("runs").output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("runlog repair"), "{said}");
    repair_restores_every_digest(&store, &digests);
}

#[test]
fn repair_refuses_a_store_another_process_holds() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    store_of_seeds(&store, 1);
    let held = runlog_store::Log::open(&store, runlog_store::Options::default()).unwrap();
    let out = runlog(&store).arg("repair").output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("locked"), "{}", text(&out));
    drop(held);
}

#[test]
fn salvage_without_an_archive_copies_every_run_to_its_digest_into_a_new_store() {
    let dir = tempfile::tempdir().unwrap();
    let pristine = dir.path().join("store");
    let digests = store_of_seeds(&pristine, 3);
    for (_, segment) in runlog_store::archive::segments(&pristine).unwrap() {
        std::fs::remove_file(segment).unwrap();
    }
    let store = flipped(&pristine, 100);
    let rescued = dir.path().join("rescued");
    let out = runlog(&store)
        .args(["salvage", "--into"])
        .arg(&rescued)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        text(&out).contains("events salvaged, whole"),
        "{}",
        text(&out)
    );
    for (run, digest) in &digests {
        let out = runlog(&rescued)
            .args(["digest", run, "--check"])
            .arg(digest)
            .output()
            .unwrap();
        assert!(out.status.success(), "{run}: {}", text(&out));
    }
    // Once a runlog has opened the damaged file, sled has zeroed it: salvage says so.
    let again = flipped(&pristine, 100);
    let out = runlog(&again).arg("runs").output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let out = runlog(&again)
        .args(["salvage", "--into"])
        .arg(dir.path().join("nothing"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(text(&out).contains("--from FILE"), "{}", text(&out));
}
