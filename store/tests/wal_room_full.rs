//! Zeros the WAL writes ahead of its last entry are room, never a reason to refuse an append:
//! where the disk has no space for them, the file is cut back to its entries and the append
//! is written as into a file without room. Only an entry's own bytes that do not fit fail it.
//!
//! The failure is the kernel's own: `RLIMIT_FSIZE` makes writes past a size fail with EFBIG.
//! The limit is per process, so this file holds this one test.

mod common;

use common::with_file_size_limit;
use runlog_store::wal::{parse, Entry, Wal};

fn frame(seq: u64) -> Entry {
    Entry::Frames(vec![(1, seq, format!("frame {seq}").into_bytes())])
}

#[test]
fn zeros_that_do_not_fit_never_fail_an_append_that_does() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("wal");
    let (mut wal, _) = Wal::open(&path).unwrap();
    wal.append(&frame(1)).unwrap();
    wal.sync().unwrap();
    let room = std::fs::metadata(&path).unwrap().len();
    assert!(room > wal.len(), "the first append wrote room ahead");
    // Space for the entries up to the room's end and a few more, not for the next room.
    let limit = room + 200;
    let mut seq = 1;
    let failed = with_file_size_limit(limit, || loop {
        seq += 1;
        if let Err(e) = wal.append(&frame(seq)) {
            break e;
        }
        assert!(seq < 100_000, "the limit never stopped an append");
    });
    let last_ok = seq - 1;
    // Past the limit an entry's own bytes do not fit: that append fails, as without room.
    assert!(failed.to_string().contains("cannot write"), "{failed}");
    let bytes = std::fs::read(&path).unwrap();
    let (entries, end) = parse(&bytes).unwrap();
    assert_eq!(
        entries,
        (1..=last_ok).map(frame).collect::<Vec<_>>(),
        "every append that returned Ok is in the file, in order"
    );
    assert_eq!(end, bytes.len(), "the file ends on its last whole entry");
    assert!(
        end as u64 > room && end as u64 <= limit,
        "appends went on past the room's end, where no more room fitted: {end}, room {room}"
    );
}
