//! The write-ahead log: zeros after the last whole entry are room written ahead; other bytes
//! there that were never shown to be acknowledged are set aside (kept, not deleted) and the
//! store opens; damage a later entry proves was acknowledged refuses to open and touches
//! nothing; what the WAL holds is replayed into sled on open. The crash states are built by
//! hand, as a power cut leaves the file.

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
    // Two entries in one sync (a new run's first commit), then one more in its own sync.
    wal.append(&entries[0]).unwrap();
    wal.append(&entries[1]).unwrap();
    wal.sync().unwrap();
    wal.append(&entries[2]).unwrap();
    wal.sync().unwrap();
    let bytes = std::fs::read(&path).unwrap();
    let len = usize::try_from(wal.len()).unwrap();
    assert!(
        bytes.len() > len && bytes[len..].iter().all(|b| *b == 0),
        "the file holds zeros ahead of its entries"
    );
    // The crash states below are cut from the entries; the room after them is tested apart.
    (bytes[..len].to_vec(), entries)
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
fn damage_a_later_entry_proves_acknowledged_is_reported_not_skipped() {
    let (mut bytes, _) = image();
    let (_, end_of_first) = parse(&bytes[..40]).unwrap();
    // Inside the first frames entry; the third entry was written after a sync covering it.
    bytes[end_of_first + 30] ^= 0x40;
    assert!(parse(&bytes).is_err());
    // A flipped length byte in the first entry: the same (it once read as a torn tail).
    let (mut bytes, _) = image();
    bytes[3] ^= 0x01;
    assert!(parse(&bytes).is_err());
}

#[test]
fn damage_in_the_last_sync_is_not_proven_acknowledged() {
    let (bytes, entries) = image();
    let (_, end_of_second) = parse(&bytes[..bytes.len() - 1]).unwrap();
    let mut damaged = bytes.clone();
    damaged[end_of_second + 30] ^= 0x40;
    let (parsed, valid) = parse(&damaged).unwrap();
    assert_eq!(parsed, entries[..2].to_vec());
    assert_eq!(valid, end_of_second);
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
    let entries = parse(&bytes).unwrap().1;
    bytes.truncate(entries);
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

/// A store whose process died after `appends` (each `(run, bodies)` one durable commit), with
/// sled's files gone, so that opening it replays the WAL: returns the store's directory.
fn crashed(dir: &std::path::Path, appends: &[(&str, usize)]) -> std::path::PathBuf {
    let store = dir.join("store");
    {
        let log = Log::open(&store, Options::default()).unwrap();
        for (run, n) in appends {
            let bodies = (0..*n).map(|i| format!("{run}{i}").into_bytes()).collect();
            log.append(run, None, bodies).unwrap();
        }
        std::mem::forget(log);
    }
    // The forgotten handle keeps sled's lock in this process: replay into a copy holding the
    // marker and the WAL but none of sled's files.
    let copy = dir.join("copy");
    std::fs::create_dir_all(&copy).unwrap();
    for f in ["RUNLOG_STORE", "wal"] {
        std::fs::copy(store.join(f), copy.join(f)).unwrap();
    }
    copy
}

/// Where each entry of a WAL image begins.
fn entry_starts(bytes: &[u8]) -> Vec<usize> {
    let mut starts = vec![0];
    let mut cut = 1;
    while cut <= bytes.len() {
        let (_, valid) = parse(&bytes[..cut]).unwrap();
        if valid > *starts.last().unwrap() {
            starts.push(valid);
        }
        cut += 1;
    }
    starts.pop();
    starts
}

fn set_aside_files(store: &std::path::Path) -> Vec<Vec<u8>> {
    std::fs::read_dir(store)
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("wal.aside-"))
        .map(|e| std::fs::read(e.path()).unwrap())
        .collect()
}

#[test]
fn an_append_after_reopening_goes_after_the_entries_not_after_the_room() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("wal");
    let first = Entry::Frames(vec![(1, 1, b"one".to_vec())]);
    let second = Entry::Frames(vec![(1, 2, b"two".to_vec())]);
    {
        let (mut wal, _) = Wal::open(&path).unwrap();
        wal.append(&first).unwrap();
        wal.sync().unwrap();
    }
    let (mut wal, replay) = Wal::open(&path).unwrap();
    assert_eq!(replay, vec![first.clone()]);
    wal.append(&second).unwrap();
    wal.sync().unwrap();
    let (entries, _) = parse(&std::fs::read(&path).unwrap()).unwrap();
    assert_eq!(entries, vec![first, second]);
}

/// Where a WAL image's valid entries end.
fn entries_end(bytes: &[u8]) -> usize {
    parse(bytes).unwrap().1
}

#[test]
fn zeros_after_the_entries_are_room_not_damage() {
    let dir = tempfile::tempdir().unwrap();
    let store = crashed(dir.path(), &[("r", 3)]);
    let wal = store.join("wal");
    let bytes = std::fs::read(&wal).unwrap();
    let end = entries_end(&bytes);
    assert!(
        bytes.len() > end,
        "the WAL was written ahead of its entries"
    );
    assert!(bytes[end..].iter().all(|b| *b == 0));
    // A power cut can also leave fewer zeros than were written ahead, or more (ext4 can
    // extend a file before its data lands): each is room.
    let written = bytes.len() - end;
    for room in [0, 64, written, written + 4096] {
        let copy = dir.path().join(format!("room-{room}"));
        std::fs::create_dir(&copy).unwrap();
        std::fs::copy(store.join("RUNLOG_STORE"), copy.join("RUNLOG_STORE")).unwrap();
        let mut image = bytes[..end].to_vec();
        image.resize(end + room, 0);
        std::fs::write(copy.join("wal"), &image).unwrap();
        let log = Log::open(&copy, Options::default()).unwrap();
        assert_eq!(log.head("r").unwrap().unwrap().seq, 3);
        assert!(
            log.recovery_notes().is_empty(),
            "{:?}",
            log.recovery_notes()
        );
        drop(log);
        assert!(set_aside_files(&copy).is_empty());
    }
}

#[test]
fn a_torn_entry_in_the_room_is_set_aside_without_the_zeros_after_it() {
    let dir = tempfile::tempdir().unwrap();
    let store = crashed(dir.path(), &[("r", 3)]);
    let wal = store.join("wal");
    let mut bytes = std::fs::read(&wal).unwrap();
    let end = entries_end(&bytes);
    let torn = b"V\x02\x00\x00\x01\x00partial";
    bytes[end..end + torn.len()].copy_from_slice(torn);
    std::fs::write(&wal, &bytes).unwrap();
    let log = Log::open(&store, Options::default()).unwrap();
    assert_eq!(log.head("r").unwrap().unwrap().seq, 3);
    let notes = log.recovery_notes();
    assert!(
        notes
            .iter()
            .any(|n| n.contains(&format!("{} bytes", torn.len()))),
        "{notes:?}"
    );
    drop(log);
    assert_eq!(set_aside_files(&store), vec![torn.to_vec()]);
}

#[test]
fn an_unsynced_entry_lost_before_a_later_one_of_the_same_sync_does_not_block_opening() {
    let dir = tempfile::tempdir().unwrap();
    // r is committed; then s is created: two entries, one sync. The power cut loses the first
    // of them while the second survives (the page cache wrote them out of order).
    let store = crashed(dir.path(), &[("r", 2), ("s", 1)]);
    let wal = store.join("wal");
    let mut bytes = std::fs::read(&wal).unwrap();
    let starts = entry_starts(&bytes[..entries_end(&bytes)]);
    assert_eq!(starts.len(), 4, "run r, frames r, run s, frames s");
    bytes[starts[2]..starts[3]].fill(0);
    std::fs::write(&wal, &bytes).unwrap();
    let log = Log::open(&store, Options::default()).unwrap();
    assert_eq!(
        log.head("r").unwrap().unwrap().seq,
        2,
        "the acknowledged run"
    );
    assert!(log.head("s").unwrap().is_none());
    assert!(!log.recovery_notes().is_empty());
}

#[test]
fn a_flipped_length_byte_never_deletes_an_acknowledged_run() {
    // Followed by a later commit, the damage is proven acknowledged: opening refuses and the
    // WAL is left exactly as it was.
    let dir = tempfile::tempdir().unwrap();
    let store = crashed(dir.path(), &[("r", 2), ("r", 1)]);
    let wal = store.join("wal");
    let mut bytes = std::fs::read(&wal).unwrap();
    bytes[3] ^= 0x01;
    std::fs::write(&wal, &bytes).unwrap();
    assert!(matches!(
        Log::open(&store, Options::default()),
        Err(StoreError::Damaged { .. })
    ));
    assert_eq!(std::fs::read(&wal).unwrap(), bytes, "nothing was cut");
    // Alone in the WAL, it cannot be told from a torn write: the bytes are kept aside.
    let dir = tempfile::tempdir().unwrap();
    let store = crashed(dir.path(), &[("r", 2)]);
    let wal = store.join("wal");
    let mut bytes = std::fs::read(&wal).unwrap();
    bytes[3] ^= 0x01;
    std::fs::write(&wal, &bytes).unwrap();
    let log = Log::open(&store, Options::default()).unwrap();
    assert!(log.head("r").unwrap().is_none());
    assert!(!log.recovery_notes().is_empty());
    drop(log);
    let written = bytes.iter().rposition(|b| *b != 0).unwrap() + 1;
    assert_eq!(
        set_aside_files(&store),
        vec![bytes[..written].to_vec()],
        "every byte is kept but the room's zeros"
    );
}
