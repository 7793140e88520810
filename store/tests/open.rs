//! Opening a sled store: persistence across reopen, clear errors for a locked store, a
//! directory that is not a store, and a newer format.

use runlog_store::*;
use std::time::Duration;

#[test]
fn records_survive_a_reopen_and_seqs_continue() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let head = Log::open(&store, Options::default())
        .unwrap()
        .append("r", Some(0), vec![b"one".to_vec()])
        .unwrap();
    let log = Log::open(&store, Options::default()).unwrap();
    assert_eq!(log.head("r").unwrap(), Some(head));
    assert_eq!(
        log.append("r", Some(1), vec![b"two".to_vec()]).unwrap().seq,
        2
    );
    assert_eq!(
        log.append("s", Some(0), vec![b"new run".to_vec()])
            .unwrap()
            .seq,
        1
    );
    assert_eq!(log.runs().unwrap().len(), 2);
}

#[test]
fn buffered_appends_are_synced_on_close() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let opts = Options {
        durability: Durability::Buffered {
            interval: Duration::from_secs(3600),
        },
        create: true,
        ..Options::default()
    };
    let log = Log::open(&store, opts).unwrap();
    log.append("r", Some(0), vec![b"x".to_vec(); 100]).unwrap();
    log.close().unwrap();
    assert_eq!(
        Log::open(&store, Options::default())
            .unwrap()
            .head("r")
            .unwrap()
            .unwrap()
            .seq,
        100
    );
}

#[test]
fn a_second_open_says_the_store_is_locked_and_by_whom() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let _first = Log::open(&store, Options::default()).unwrap();
    let err = Log::open(&store, Options::default()).unwrap_err();
    match &err {
        StoreError::Locked { path, owner } => {
            assert_eq!(path, &store);
            assert!(
                owner
                    .as_deref()
                    .unwrap()
                    .contains(&format!("pid {}", std::process::id())),
                "{owner:?}"
            );
        }
        other => panic!("expected Locked, got {other:?}"),
    }
    assert!(err.to_string().contains(&store.display().to_string()));
    assert!(err.hint().unwrap().contains("another store directory"));
}

#[test]
fn a_directory_with_other_files_is_not_a_store() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.txt"), "mine").unwrap();
    let err = Log::open(dir.path(), Options::default()).unwrap_err();
    assert!(matches!(err, StoreError::NotAStore { .. }), "{err}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("notes.txt")).unwrap(),
        "mine",
        "nothing touched"
    );
}

#[test]
fn a_missing_store_is_not_created_unless_asked() {
    let dir = tempfile::tempdir().unwrap();
    let err = Log::open(
        &dir.path().join("nope"),
        Options {
            create: false,
            ..Options::default()
        },
    )
    .unwrap_err();
    assert!(matches!(err, StoreError::NotAStore { .. }), "{err}");
    assert!(!dir.path().join("nope").exists());
}

#[test]
fn a_newer_format_is_refused_with_both_versions() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    drop(Log::open(&store, Options::default()).unwrap());
    std::fs::write(store.join("RUNLOG_STORE"), "runlog-store format 9\n").unwrap();
    let err = Log::open(&store, Options::default()).unwrap_err();
    assert!(
        matches!(
            err,
            StoreError::NewerFormat {
                found: 9,
                supported: 2,
                ..
            }
        ),
        "{err}"
    );
}

/// A store of the format before the blocked chain is read, and marked with this build's
/// format as it is opened: a build of the older format then refuses it instead of taking the
/// blocked chain's frames for damage.
#[test]
fn an_older_format_is_read_and_marked_as_this_one() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let log = Log::open(&store, Options::default()).unwrap();
    log.create("old", Chain::PerRecord, vec![b"one".to_vec()])
        .unwrap();
    drop(log);
    std::fs::write(store.join("RUNLOG_STORE"), "runlog-store format 1\n").unwrap();
    let log = Log::open(&store, Options::default()).unwrap();
    assert_eq!(
        std::fs::read_to_string(store.join("RUNLOG_STORE")).unwrap(),
        "runlog-store format 2\n"
    );
    assert!(log.verify("old").unwrap().is_ok());
    assert_eq!(log.chain("old").unwrap(), Some(Chain::PerRecord));
}

/// Many processes creating one new store at once (twenty `runlog run` in a fresh directory):
/// every one gets the store, one owns it, the rest reach it through the owner.
#[test]
fn many_openers_of_a_new_store_all_get_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("store");
    let stores: Vec<runlog_store::Store> = std::thread::scope(|s| {
        let openers: Vec<_> = (0..16)
            .map(|_| s.spawn(|| runlog_store::Store::open(&path, Options::default())))
            .collect();
        openers
            .into_iter()
            .map(|o| o.join().unwrap().unwrap())
            .collect()
    });
    assert_eq!(stores.iter().filter(|s| s.is_owner()).count(), 1);
    let entries: Vec<String> = std::fs::read_dir(&path)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        entries
            .iter()
            .all(|n| !n.starts_with("RUNLOG_STORE.creating-")),
        "{entries:?}"
    );
}

/// sled names a snapshot `snap.LSN.generating` while it writes it and renames it when whole,
/// but its open reads the unfinished name too, and it sorts last: a kill -9 while sled wrote
/// one (it writes one at every open that finds its log moved on) left a store sled called
/// corrupt. The store opens past it, with every record.
#[test]
fn a_snapshot_sled_was_killed_writing_does_not_stop_the_store_opening() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let log = Log::open(&store, Options::default()).unwrap();
    let head = log
        .append("r", Some(0), vec![b"one".to_vec(), b"two".to_vec()])
        .unwrap();
    log.close().unwrap();
    let torn = store.join("db").join("snap.7FFFFFFFFFFFFFFF.generating");
    std::fs::write(&torn, b"half a snapshot").unwrap();
    let log = Log::open(&store, Options::default()).unwrap();
    assert_eq!(log.head("r").unwrap(), Some(head));
    let records = log.read("r", 1, u64::MAX, Direction::Forward).unwrap();
    assert_eq!(records.len(), 2);
    assert!(!torn.exists(), "the unfinished snapshot is cleared away");
}

/// Many processes opening one new store at once: each opens it or is told it is locked; none
/// reads a database another is still creating as corrupt (sled writes its settings file in
/// place, not by a rename, at its first open).
#[test]
fn processes_opening_a_new_store_at_once_find_it_whole_or_locked() {
    if let Ok(store) = std::env::var("RUNLOG_TEST_OPEN_ONCE") {
        return match Log::open(std::path::Path::new(&store), Options::default()) {
            Ok(_) => println!("opened"),
            Err(StoreError::Locked { .. }) => println!("locked"),
            Err(e) => println!("failed: {e}"),
        };
    }
    let me = std::env::current_exe().unwrap();
    for round in 0..60 {
        let dir = tempfile::tempdir().unwrap();
        let store = dir.path().join("store");
        let openers: Vec<_> = (0..12)
            .map(|_| {
                std::process::Command::new(&me)
                    .args([
                        "--exact",
                        "processes_opening_a_new_store_at_once_find_it_whole_or_locked",
                        "--nocapture",
                    ])
                    .env("RUNLOG_TEST_OPEN_ONCE", &store)
                    .stdout(std::process::Stdio::piped())
                    .spawn()
                    .unwrap()
            })
            .collect();
        for opener in openers {
            let out = opener.wait_with_output().unwrap();
            let said = String::from_utf8_lossy(&out.stdout);
            assert!(
                said.lines().any(|l| l == "opened" || l == "locked"),
                "round {round}: {said}"
            );
        }
    }
}
