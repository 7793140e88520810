//! The archive and the heads manifest when something else is lost: a damaged archive segment, a
//! lost manifest, a store made before either existed, a lost sled database.

use runlog_store::{repair, EventLog, Head, Log, Options};
use std::path::Path;

/// Two runs, each appended by an open of its own (so each is one archive segment): `a` then `b`.
fn two_runs(store: &Path) -> (Head, Head) {
    let mut heads = Vec::new();
    for run in ["a", "b"] {
        let log = Log::open(store, Options::default()).unwrap();
        for seq in 0..10u64 {
            log.append(
                run,
                Some(seq),
                vec![format!("{run} {}", seq + 1).into_bytes()],
            )
            .unwrap();
        }
        heads.push(log.head(run).unwrap().unwrap());
        log.close().unwrap();
    }
    (heads[0], heads[1])
}

fn segments(store: &Path) -> Vec<std::path::PathBuf> {
    runlog_store::archive::segments(store)
        .unwrap()
        .into_iter()
        .map(|(_, p)| p)
        .collect()
}

fn lose_archive(store: &Path) {
    for segment in segments(store) {
        std::fs::remove_file(segment).unwrap();
    }
}

fn lose_sled(store: &Path) {
    std::fs::remove_dir_all(store.join("db")).unwrap();
}

#[test]
fn each_checkpoint_seals_the_wal_into_the_archive_and_the_wal_starts_empty() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s");
    two_runs(&store);
    // Segment 0 (empty: the store was new when its archive began), then one per checkpoint.
    let sizes: Vec<u64> = segments(&store)
        .iter()
        .map(|p| std::fs::metadata(p).unwrap().len())
        .collect();
    assert_eq!(sizes.len(), 3, "{sizes:?}");
    assert!(sizes[0] == 0 && sizes[1] > 0 && sizes[2] > 0, "{sizes:?}");
    assert_eq!(std::fs::metadata(store.join("wal")).unwrap().len(), 0);
    // An open that writes nothing seals nothing.
    Log::open(&store, Options::default())
        .unwrap()
        .close()
        .unwrap();
    assert_eq!(segments(&store).len(), 3);
}

#[test]
fn a_lost_sled_database_is_rebuilt_whole_from_the_archive() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s");
    let (a, b) = two_runs(&store);
    lose_sled(&store);
    // Opened as it is, sled is empty: both runs are still listed, and damaged.
    {
        let log = Log::open(&store, Options::default()).unwrap();
        let notes = log.recovery_notes().join("\n");
        assert!(
            notes.contains("run a:") && notes.contains("run b:"),
            "{notes}"
        );
        let listed: Vec<String> = log.runs().unwrap().into_iter().map(|m| m.run).collect();
        assert_eq!(listed, ["a", "b"]);
        let report = log.verify("a").unwrap();
        assert!(!report.is_ok(), "{report:?}");
        assert!(report
            .damage
            .unwrap()
            .reason
            .contains("seqs 1..=10 are missing"));
        // Nothing is appended after a hole.
        assert!(log.append("a", Some(0), vec![b"again".to_vec()]).is_err());
    }
    let repaired = repair(&store).unwrap();
    assert!(repaired.is_whole(), "{repaired:?}");
    let log = Log::open(&store, Options::default()).unwrap();
    assert_eq!(log.head("a").unwrap(), Some(a));
    assert_eq!(log.head("b").unwrap(), Some(b));
    assert!(
        log.recovery_notes().is_empty(),
        "{:?}",
        log.recovery_notes()
    );
}

/// Where each compressed frame of a segment starts (zstd's magic number).
fn frame_starts(bytes: &[u8]) -> Vec<usize> {
    bytes
        .windows(4)
        .enumerate()
        .filter(|(_, w)| *w == [0x28, 0xb5, 0x2f, 0xfd])
        .map(|(at, _)| at)
        .collect()
}

#[test]
fn a_damaged_archive_gives_back_every_run_up_to_its_first_missing_record_and_names_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s");
    // One entry per compressed frame: a damaged frame costs one append.
    let options = Options {
        archive_frame_bytes: 1,
        ..Options::default()
    };
    let log = Log::open(&store, options).unwrap();
    for seq in 0..10u64 {
        log.append("a", Some(seq), vec![format!("a {}", seq + 1).into_bytes()])
            .unwrap();
    }
    log.close().unwrap();
    // Flip the last byte (its checksum) of the frame that holds seq 6: entries are the run's
    // creation, then one per append.
    let segment = segments(&store).pop().unwrap();
    let mut bytes = std::fs::read(&segment).unwrap();
    let starts = frame_starts(&bytes);
    assert_eq!(
        starts.len(),
        11,
        "the segment is compressed, one frame per entry"
    );
    bytes[starts[7] - 1] ^= 0xff;
    std::fs::write(&segment, bytes).unwrap();
    lose_sled(&store);
    let repaired = repair(&store).unwrap();
    assert!(!repaired.is_whole());
    assert_eq!(repaired.unreadable.len(), 1, "{repaired:?}");
    assert_eq!(
        (repaired.unreadable[0].from, repaired.unreadable[0].to),
        (starts[6] as u64, starts[7] as u64)
    );
    let a = &repaired.runs[0];
    assert_eq!((a.verified, a.remembered), (5, Some(10)), "{a:?}");
    let damage = a.damage.as_ref().unwrap();
    assert!(
        damage.reason.contains("seqs 6..=10 are missing"),
        "{damage}"
    );
    let log = Log::open(&store, Options::default()).unwrap();
    assert_eq!(
        log.read("a", 1, 10, runlog_store::Direction::Forward)
            .unwrap()
            .len(),
        5
    );
}

#[test]
fn sealed_segments_are_compressed_and_sled_is_rebuilt_from_them_alone() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s");
    let log = Log::open(&store, Options::default()).unwrap();
    let body =
        |seq: u64| format!("{{\"task\":\"t{}\",\"status\":\"done\"}}", seq % 50).into_bytes();
    for seq in 0..2_000u64 {
        log.append("a", Some(seq), vec![body(seq)]).unwrap();
    }
    let head = log.head("a").unwrap();
    log.close().unwrap();
    let segment = segments(&store).pop().unwrap();
    let bytes = std::fs::read(&segment).unwrap();
    assert!(!frame_starts(&bytes).is_empty() && bytes.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]));
    // Each append's hashes and checksums do not compress; the rest does.
    let raw = runlog_store::archive::decompressed(&bytes);
    assert!(
        bytes.len() * 2 < raw.len(),
        "{} bytes of {}",
        bytes.len(),
        raw.len()
    );
    lose_sled(&store);
    assert!(repair(&store).unwrap().is_whole());
    let log = Log::open(&store, Options::default()).unwrap();
    assert_eq!(log.head("a").unwrap(), head);
    assert!(log.verify("a").unwrap().is_ok());
}

#[test]
fn a_raw_segment_a_crash_left_is_compressed_at_the_next_open_and_reads_the_same() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s");
    let (a, b) = two_runs(&store);
    // As a crash before the compression left it: the raw WAL entries under the segment's name,
    // and a temp file the compression was writing.
    let segment = segments(&store).pop().unwrap();
    let raw = runlog_store::archive::decompressed(&std::fs::read(&segment).unwrap());
    assert_eq!(raw.first(), Some(&b'V'));
    std::fs::write(&segment, &raw).unwrap();
    std::fs::write(store.join(".tmp-1-0"), b"half a segment").unwrap();
    Log::open(&store, Options::default())
        .unwrap()
        .close()
        .unwrap();
    let again = std::fs::read(&segment).unwrap();
    assert!(again.len() < raw.len() && again.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]));
    assert!(
        !store.join(".tmp-1-0").exists(),
        "the crash's temp file is gone"
    );
    lose_sled(&store);
    assert!(repair(&store).unwrap().is_whole());
    let log = Log::open(&store, Options::default()).unwrap();
    assert_eq!(log.head("a").unwrap(), Some(a));
    assert_eq!(log.head("b").unwrap(), Some(b));
}

#[test]
fn a_lost_heads_manifest_is_rebuilt_from_the_archive() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s");
    let (a, _) = two_runs(&store);
    std::fs::remove_file(store.join("heads")).unwrap();
    let log = Log::open(&store, Options::default()).unwrap();
    let notes = log.recovery_notes().join("\n");
    assert!(notes.contains("rebuilt from the archive"), "{notes}");
    assert!(log.verify("a").unwrap().is_ok());
    log.close().unwrap();
    // And it guards sled again.
    lose_sled(&store);
    let log = Log::open(&store, Options::default()).unwrap();
    assert!(!log.verify("a").unwrap().is_ok());
    drop(log);
    assert!(repair(&store).unwrap().is_whole());
    let log = Log::open(&store, Options::default()).unwrap();
    assert_eq!(log.head("a").unwrap(), Some(a));
}

#[test]
fn a_store_made_before_the_archive_gets_one_from_sled_and_can_be_repaired() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s");
    let (a, b) = two_runs(&store);
    // What an older runlog left: sled and an empty WAL, no manifest, no archive.
    std::fs::remove_file(store.join("heads")).unwrap();
    lose_archive(&store);
    Log::open(&store, Options::default())
        .unwrap()
        .close()
        .unwrap();
    assert_eq!(
        segments(&store).len(),
        1,
        "sled's content as the first segment"
    );
    assert!(store.join("heads").exists());
    lose_sled(&store);
    assert!(repair(&store).unwrap().is_whole());
    let log = Log::open(&store, Options::default()).unwrap();
    assert_eq!(log.head("a").unwrap(), Some(a));
    assert_eq!(log.head("b").unwrap(), Some(b));
}

#[test]
fn a_lost_archive_restarts_from_sled_when_sled_holds_every_remembered_run() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s");
    let (a, _) = two_runs(&store);
    lose_archive(&store);
    let log = Log::open(&store, Options::default()).unwrap();
    let notes = log.recovery_notes().join("\n");
    assert!(notes.contains("a new one was started from sled"), "{notes}");
    log.close().unwrap();
    lose_sled(&store);
    assert!(repair(&store).unwrap().is_whole());
    let log = Log::open(&store, Options::default()).unwrap();
    assert_eq!(log.head("a").unwrap(), Some(a));
}

#[test]
fn salvage_copies_every_verified_frame_of_an_unopenable_sled_without_an_archive() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s");
    let (a, b) = two_runs(&store);
    // Reopened, so that a flip early in sled's file leaves it unopenable; and no archive.
    Log::open(&store, Options::default())
        .unwrap()
        .close()
        .unwrap();
    lose_archive(&store);
    let db = store.join("db/db");
    let mut bytes = std::fs::read(&db).unwrap();
    bytes[100] ^= 0xff;
    std::fs::write(&db, bytes).unwrap();
    // Salvage reads the file as it is. (Opening it would not help: sled's recovery zeroes its
    // log from the first bad byte, which is why salvage must come first, or work on a copy.)
    let into = dir.path().join("salvaged");
    let salvaged = runlog_store::salvage(&store, None, &into, &[]).unwrap();
    let heads: Vec<(String, Head)> = salvaged
        .runs
        .iter()
        .map(|r| (r.run.clone(), r.head))
        .collect();
    assert_eq!(
        heads,
        [("a".to_owned(), a), ("b".to_owned(), b)],
        "{salvaged:?}"
    );
    assert!(salvaged.unnamed.is_empty(), "{salvaged:?}");
    let log = Log::open(&into, Options::default()).unwrap();
    assert!(log.verify("a").unwrap().is_ok());
    assert_eq!(log.head("b").unwrap(), Some(b));
    // It never writes into a store that holds runs.
    assert!(runlog_store::salvage(&store, None, &into, &[]).is_err());
    // And it is unopenable indeed.
    assert!(Log::open(&store, Options::default()).is_err());
}

#[test]
fn frames_only_sled_kept_are_added_to_the_archive_when_the_store_opens() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s");
    let (a, b) = two_runs(&store);
    // As after a power cut that kept sled's writes and lost the WAL's: the archive and the
    // manifest know nothing of run b (its segment is gone), sled has all of it.
    std::fs::remove_file(segments(&store).pop().unwrap()).unwrap();
    std::fs::remove_file(store.join("heads")).unwrap();
    {
        let log = Log::open(&store, Options::default()).unwrap();
        let notes = log.recovery_notes().join("\n");
        assert!(notes.contains("sled kept the end of appends"), "{notes}");
        assert!(notes.contains("b 1..=10"), "{notes}");
        assert_eq!(log.head("b").unwrap(), Some(b));
    }
    lose_sled(&store);
    assert!(repair(&store).unwrap().is_whole());
    let log = Log::open(&store, Options::default()).unwrap();
    assert_eq!(log.head("a").unwrap(), Some(a));
    assert_eq!(log.head("b").unwrap(), Some(b));
}
