//! The write-ahead log: a torn last entry is dropped, a damaged middle entry refuses to open,
//! and what it holds is replayed into sled on open.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use runlog_store::wal::{parse, Entry, Wal};
use runlog_store::*;

fn image() -> (Vec<u8>, Vec<Entry>) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("wal");
    let entries = vec![
        Entry::Run {
            name: "r".into(),
            num: 1,
            created_ms: 5,
        },
        Entry::Frames(vec![
            (1, 1, b"frame one".to_vec()),
            (1, 2, b"frame two".to_vec()),
        ]),
        Entry::Frames(vec![(1, 3, b"frame three".to_vec())]),
    ];
    let (mut wal, replay) = Wal::open(&path).unwrap();
    assert!(replay.is_empty());
    for e in &entries {
        wal.append(e).unwrap();
    }
    wal.sync().unwrap();
    (std::fs::read(&path).unwrap(), entries)
}

#[test]
fn a_whole_wal_parses_back_to_its_entries() {
    let (bytes, entries) = image();
    let (parsed, valid) = parse(&bytes).unwrap();
    assert_eq!(parsed, entries);
    assert_eq!(valid, bytes.len());
}

#[test]
fn a_torn_last_entry_is_dropped_at_every_cut() {
    let (bytes, entries) = image();
    let (_, end_of_second) = parse(&bytes[..bytes.len() - 1]).unwrap();
    for cut in end_of_second..bytes.len() {
        let (parsed, valid) = parse(&bytes[..cut]).unwrap();
        assert_eq!(parsed, entries[..2].to_vec(), "cut at {cut}");
        assert_eq!(valid, end_of_second);
    }
}

#[test]
fn a_damaged_middle_entry_is_reported_not_skipped() {
    let (mut bytes, _) = image();
    bytes[30] ^= 0x40; // inside the first frames entry, which is followed by another
    assert!(parse(&bytes).is_err());
}

#[test]
fn opening_replays_the_wal_and_truncates_a_torn_tail() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    {
        let log = Log::open(&store, Options::default()).unwrap();
        log.append("r", Some(0), vec![b"a".to_vec(), b"b".to_vec()])
            .unwrap();
        // Simulate a crash: the WAL keeps the entries, sled never gets its checkpoint.
        std::mem::forget(log);
    }
    let wal = store.join("wal");
    let mut bytes = std::fs::read(&wal).unwrap();
    assert!(!bytes.is_empty(), "the commit is in the WAL");
    bytes.extend_from_slice(b"W\x02\x00\x00\x01\x00partial");
    std::fs::write(&wal, &bytes).unwrap();
    // The forgotten handle keeps sled's lock in this process, so replay into a copy of the
    // store that has the marker and the WAL but none of sled's files.
    let copy = dir.path().join("copy");
    std::fs::create_dir_all(&copy).unwrap();
    for f in ["RUNLOG_STORE", "wal"] {
        std::fs::copy(store.join(f), copy.join(f)).unwrap();
    }
    let log = Log::open(&copy, Options::default()).unwrap();
    let records = log.read("r", 1, 10, Direction::Forward).unwrap();
    assert_eq!(
        records.iter().map(|r| r.body.clone()).collect::<Vec<_>>(),
        vec![b"a".to_vec(), b"b".to_vec()]
    );
    assert!(log.verify("r").unwrap().is_ok());
    drop(log);
    assert_eq!(
        std::fs::metadata(copy.join("wal")).unwrap().len(),
        0,
        "a clean close leaves an empty WAL"
    );
}
