//! `forget`: runs removed from a sled store for good. What stays is whole (verified, repairable
//! from the archive alone), and no byte of a forgotten run is left in any file of the store.

use runlog_store::{forget, repair, EventLog, Log, Options};
use std::path::Path;

fn files_holding(dir: &Path, needle: &[u8]) -> Vec<std::path::PathBuf> {
    runlog_store::testkit::files_holding(dir, needle)
}

fn fill(store: &Path) {
    // Several opens, so the archive has several segments and sled several generations.
    for round in 0..3u64 {
        let log = Log::open(store, Options::default()).unwrap();
        for run in ["gone", "kept"] {
            let head = log.head(run).unwrap().map_or(0, |h| h.seq);
            let mut bodies: Vec<Vec<u8>> = (0..50)
                .map(|i| format!("{run} marker-{run}-{round}-{i}").into_bytes())
                .collect();
            // A body large enough to spill into the blob area.
            bodies.push(format!("{run} spilled-{run}-{round} {}", "x".repeat(4096)).into_bytes());
            log.append(run, Some(head), bodies).unwrap();
        }
        log.close().unwrap();
    }
}

#[test]
fn a_forgotten_run_leaves_no_byte_behind_and_the_rest_is_whole_and_repairable() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s");
    fill(&store);
    let kept = {
        let log = Log::open(&store, Options::default()).unwrap();
        log.head("kept").unwrap().unwrap()
    };
    {
        let log = Log::open(&store, Options::default()).unwrap();
        for run in ["gone", "kept"] {
            for seq in [50u64, 100] {
                let key = [format!("snap/{run}\0").as_bytes(), &seq.to_be_bytes()].concat();
                log.cache_put(&key, format!("snapshot-{run}").as_bytes())
                    .unwrap();
            }
            // Derived from the run's history too, beside its snapshots, and not one of them.
            let key = format!("snap/{run}\0counted");
            log.cache_put(key.as_bytes(), format!("counted-{run}").as_bytes())
                .unwrap();
        }
    }
    let groups = || {
        std::fs::read_dir(store.join("cache"))
            .unwrap()
            .filter(|e| e.as_ref().unwrap().file_type().unwrap().is_dir())
            .count()
    };
    let before = groups();
    assert!(!files_holding(&store, b"marker-gone-").is_empty());
    let forgot = forget(&store, &["gone".to_owned()], &[]).unwrap();
    assert_eq!(forgot.runs, ["gone"]);
    assert!(forgot.frames > 0 && forgot.blobs == 3, "{forgot:?}");
    assert_eq!(forgot.snapshots, 2);
    assert_eq!(
        groups(),
        before - 1,
        "the run's directory of snapshots is gone"
    );
    assert_eq!(
        files_holding(&store, b"snapshot-gone"),
        Vec::<std::path::PathBuf>::new()
    );
    assert!(!files_holding(&store, b"snapshot-kept").is_empty());
    assert_eq!(
        files_holding(&store, b"counted-gone"),
        Vec::<std::path::PathBuf>::new()
    );
    assert!(!files_holding(&store, b"counted-kept").is_empty());
    assert_eq!(
        files_holding(&store, b"marker-gone-"),
        Vec::<std::path::PathBuf>::new(),
        "no record of the forgotten run is left"
    );
    assert_eq!(
        files_holding(&store, b"spilled-gone-"),
        Vec::<std::path::PathBuf>::new()
    );
    assert!(!files_holding(&store, b"marker-kept-").is_empty());
    {
        let log = Log::open(&store, Options::default()).unwrap();
        assert!(
            log.recovery_notes().is_empty(),
            "{:?}",
            log.recovery_notes()
        );
        let runs: Vec<String> = log.runs().unwrap().into_iter().map(|m| m.run).collect();
        assert_eq!(runs, ["kept"]);
        assert_eq!(log.head("kept").unwrap(), Some(kept));
        assert!(log.verify("kept").unwrap().is_ok());
        assert_eq!(log.head("gone").unwrap(), None);
        // The kept run goes on, and a run of the forgotten name starts again from nothing.
        log.append("kept", Some(kept.seq), vec![b"kept after".to_vec()])
            .unwrap();
        log.append("gone", Some(0), vec![b"a new run".to_vec()])
            .unwrap();
        log.close().unwrap();
    }
    // The archive alone rebuilds what stays.
    std::fs::remove_dir_all(store.join("db")).unwrap();
    let repaired = repair(&store).unwrap();
    assert!(repaired.is_whole(), "{repaired:?}");
    let log = Log::open(&store, Options::default()).unwrap();
    assert_eq!(log.head("kept").unwrap().unwrap().seq, kept.seq + 1);
    assert_eq!(log.head("gone").unwrap().unwrap().seq, 1);
}

#[test]
fn forget_gives_the_space_back() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s");
    let log = Log::open(&store, Options::default()).unwrap();
    for r in 0..20 {
        let bodies: Vec<Vec<u8>> = (0..2_000)
            .map(|i| format!("run {r} event {i} of a pipeline").into_bytes())
            .collect();
        log.append(&format!("r{r}"), Some(0), bodies).unwrap();
    }
    log.close().unwrap();
    let before = runlog_store::layout::dir_size(&store);
    let half: Vec<String> = (0..10).map(|r| format!("r{r}")).collect();
    forget(&store, &half, &[]).unwrap();
    let after = runlog_store::layout::dir_size(&store);
    assert!(
        after * 10 < before * 7,
        "{before} bytes before, {after} after"
    );
}

#[test]
fn a_forget_cut_short_is_finished_when_the_store_opens() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s");
    fill(&store);
    // As a kill -9 right after the journal was written leaves it.
    std::fs::write(store.join("forgetting"), "runlog-forget 1\nrun gone\n").unwrap();
    let log = Log::open(&store, Options::default()).unwrap();
    let runs: Vec<String> = log.runs().unwrap().into_iter().map(|m| m.run).collect();
    assert_eq!(runs, ["kept"]);
    assert!(log.verify("kept").unwrap().is_ok());
    drop(log);
    assert!(!store.join("forgetting").exists());
    assert_eq!(
        files_holding(&store, b"marker-gone-"),
        Vec::<std::path::PathBuf>::new()
    );
}

#[test]
fn forget_refuses_a_store_another_handle_holds() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s");
    fill(&store);
    let held = Log::open(&store, Options::default()).unwrap();
    let err = forget(&store, &["gone".to_owned()], &[]).unwrap_err();
    assert!(
        matches!(err, runlog_store::StoreError::Locked { .. }),
        "{err}"
    );
    assert!(held.verify("gone").unwrap().is_ok());
}
