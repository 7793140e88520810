//! A write to the WAL that fails part way (a short write, then the disk is full) poisons the
//! store, as a failed sync does: nothing may be acknowledged behind a partial entry, and the
//! store opens afterwards with every acknowledged record.
//!
//! The failure is the kernel's own: `RLIMIT_FSIZE` makes writes past a size fail with EFBIG.
//! The limit is per process, so this file holds this one test.

mod common;

use common::with_file_size_limit;
use runlog_store::*;

#[test]
fn a_failed_wal_write_poisons_and_loses_nothing_acknowledged() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let log = Log::open(&store, Options::default()).unwrap();
    log.append("a", Some(0), vec![b"acknowledged".to_vec()])
        .unwrap();
    // Where the WAL's entries end: the file holds zeros ahead of them, written over in place.
    let wal = std::fs::read(store.join("wal")).unwrap();
    let wal_len = runlog_store::wal::parse(&wal).unwrap().1 as u64;
    assert!(wal.len() as u64 > wal_len, "the WAL has room ahead");
    // Room for part of the next entry only: a short write, then EFBIG.
    let failed = with_file_size_limit(wal_len + 20, || {
        log.append("b", Some(0), vec![b"never acknowledged".to_vec()])
    });
    assert!(failed.is_err(), "{failed:?}");
    // The disk has room again, but the log does not pretend it is sound.
    let later = log.append("a", Some(1), vec![b"after".to_vec()]);
    assert!(
        matches!(later, Err(StoreError::Poisoned { .. })),
        "no write is acknowledged behind a failed one: {later:?}"
    );
    drop(log);
    let log = Log::open(&store, Options::default()).unwrap();
    assert_eq!(log.head("a").unwrap().unwrap().seq, 1);
    assert!(log.verify("a").unwrap().is_ok());
    assert!(log.head("b").unwrap().is_none());
}
