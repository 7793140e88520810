//! Tamper and damage tests: flip any byte of a frame and `verify` names the seq; a cut-off
//! last frame is a torn tail, damage anywhere else is corruption; reads refuse damaged bytes.

use runlog_store::backend::memory::MemoryBackend;
use runlog_store::backend::sled_db::FRAMES_TREE;
use runlog_store::frame::{CRC_LEN, HEADER_LEN, TAG_LEN};
use runlog_store::*;
use std::path::Path;
use std::sync::Arc;

const BODIES: [&[u8]; 3] = [b"alpha", b"bravo-bravo", b"charlie!"];

/// Bytes a record takes in a frame besides its body (a one-byte length field, and its tag or
/// its CRC-32).
fn overhead(chain: Chain) -> usize {
    match chain {
        Chain::PerRecord => 1 + TAG_LEN,
        Chain::Blocked => CRC_LEN + 1,
    }
}

/// The seq whose bytes contain `pos` in a one-frame run of BODIES (None: header, any seq will do).
fn owner_of(chain: Chain, pos: usize) -> Option<u64> {
    let mut start = HEADER_LEN;
    for (i, b) in BODIES.iter().enumerate() {
        let end = start + overhead(chain) + b.len();
        if pos >= start && pos < end {
            return Some(i as u64 + 1);
        }
        start = end;
    }
    (pos >= start).then_some(3)
}

fn three() -> Vec<Vec<u8>> {
    BODIES.iter().map(|b| b.to_vec()).collect()
}

fn check_flip(chain: Chain, report: &VerifyReport, pos: usize) {
    let damage = report
        .damage
        .as_ref()
        .unwrap_or_else(|| panic!("flip at byte {pos} went unnoticed"));
    match owner_of(chain, pos) {
        Some(seq) => assert_eq!(damage.seq, seq, "flip at byte {pos}: {damage}"),
        None => assert!(
            (1..=3).contains(&damage.seq),
            "flip at byte {pos}: {damage}"
        ),
    }
    // In the last frame a longer length field looks exactly like a write cut short.
    assert!(
        damage.kind == DamageKind::Corrupt || damage.reason.contains("cut short"),
        "flip at byte {pos}: {damage}"
    );
}

/// Appends BODIES as one frame of `chain`.
fn append_three(log: &dyn EventLog, chain: Chain) {
    log.create("r", chain, three()).unwrap();
}

fn memory_flip_of_any_byte_is_named_by_verify(chain: Chain) {
    let backend = Arc::new(MemoryBackend::default());
    let log = Log::with_memory(Arc::clone(&backend)).unwrap();
    append_three(&log, chain);
    let len = HEADER_LEN
        + BODIES
            .iter()
            .map(|b| overhead(chain) + b.len())
            .sum::<usize>()
        + 32;
    for pos in 0..len {
        for bit in [0u8, 7] {
            assert!(backend.tamper("r", 1, |f| f[pos] ^= 1 << bit).unwrap());
            check_flip(chain, &log.verify("r").unwrap(), pos);
            backend.tamper("r", 1, |f| f[pos] ^= 1 << bit).unwrap();
        }
    }
    assert!(
        log.verify("r").unwrap().is_ok(),
        "restored frame verifies again"
    );
}

#[test]
fn memory_flip_of_any_byte_is_named_by_verify_per_record_chain() {
    memory_flip_of_any_byte_is_named_by_verify(Chain::PerRecord);
}

#[test]
fn memory_flip_of_any_byte_is_named_by_verify_blocked_chain() {
    memory_flip_of_any_byte_is_named_by_verify(Chain::Blocked);
}

fn with_sled_frames(store: &Path, f: impl FnOnce(&sled::Tree)) {
    // sled releases its lock a moment after the last runlog handle closes.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(3);
    let db = loop {
        match sled::open(store.join("db")) {
            Ok(db) => break db,
            Err(e) if std::time::Instant::now() < deadline => {
                let _ = e;
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            Err(e) => panic!("cannot open sled directly: {e}"),
        }
    };
    let frames = db.open_tree(FRAMES_TREE).unwrap();
    f(&frames);
    db.flush().unwrap();
}

fn flip_first_frame(frames: &sled::Tree, pos: usize) {
    let (k, v) = frames.iter().next().unwrap().unwrap();
    let mut v = v.to_vec();
    v[pos] ^= 0x01;
    frames.insert(k, v).unwrap();
}

fn sled_flip_of_any_byte_is_named_by_verify(chain: Chain, len: usize) {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    append_three(&Log::open(&store, Options::default()).unwrap(), chain);
    // Every byte would reopen sled once a byte; every third byte covers each field.
    for pos in (0..len).step_by(3) {
        with_sled_frames(&store, |t| flip_first_frame(t, pos));
        let log = Log::open(&store, Options::default()).unwrap();
        check_flip(chain, &log.verify("r").unwrap(), pos);
        // Reads refuse the damaged record instead of returning it.
        if let Some(seq) = owner_of(chain, pos) {
            let err = log.read("r", seq, seq, Direction::Forward).unwrap_err();
            assert!(matches!(err, StoreError::Damaged { .. }), "{err}");
        }
        drop(log);
        with_sled_frames(&store, |t| flip_first_frame(t, pos));
    }
    assert!(Log::open(&store, Options::default())
        .unwrap()
        .verify("r")
        .unwrap()
        .is_ok());
}

#[test]
fn sled_flip_of_any_byte_is_named_by_verify_per_record_chain() {
    sled_flip_of_any_byte_is_named_by_verify(Chain::PerRecord, 122);
}

#[test]
fn sled_flip_of_any_byte_is_named_by_verify_blocked_chain() {
    sled_flip_of_any_byte_is_named_by_verify(Chain::Blocked, 110);
}

fn many_frames(log: &Log) {
    log.append("r", Some(0), vec![b"first frame".to_vec(); 10])
        .unwrap();
    log.append("r", Some(10), vec![b"second frame".to_vec(); 10])
        .unwrap();
    log.append("r", Some(20), vec![b"third frame".to_vec(); 10])
        .unwrap();
}

fn a_cut_off_last_frame_is_a_torn_tail(chain: Chain) {
    let backend = Arc::new(MemoryBackend::default());
    let log = Log::with_memory(Arc::clone(&backend)).unwrap();
    log.create("r", chain, vec![b"first frame".to_vec(); 10])
        .unwrap();
    log.append("r", Some(10), vec![b"second frame".to_vec(); 10])
        .unwrap();
    log.append("r", Some(20), vec![b"third frame".to_vec(); 10])
        .unwrap();
    backend
        .tamper("r", 21, |f| f.truncate(f.len() - 60))
        .unwrap();
    let report = log.verify("r").unwrap();
    let damage = report.damage.unwrap();
    assert_eq!(damage.kind, DamageKind::TornTail, "{damage}");
    assert!(damage.seq > 20, "{damage}");
    match chain {
        Chain::PerRecord => assert_eq!(report.verified, damage.seq - 1),
        // A blocked frame's records are checked by the chain together, at its end hash.
        Chain::Blocked => assert_eq!(report.verified, 20),
    }
}

#[test]
fn a_cut_off_last_frame_is_a_torn_tail_per_record_chain() {
    a_cut_off_last_frame_is_a_torn_tail(Chain::PerRecord);
}

#[test]
fn a_cut_off_last_frame_is_a_torn_tail_blocked_chain() {
    a_cut_off_last_frame_is_a_torn_tail(Chain::Blocked);
}

#[test]
fn a_cut_off_middle_frame_is_corruption() {
    let backend = Arc::new(MemoryBackend::default());
    let log = Log::with_memory(Arc::clone(&backend)).unwrap();
    many_frames(&log);
    backend
        .tamper("r", 11, |f| f.truncate(f.len() - 60))
        .unwrap();
    let damage = log.verify("r").unwrap().damage.unwrap();
    assert_eq!(damage.kind, DamageKind::Corrupt, "{damage}");
    assert!((11..=20).contains(&damage.seq), "{damage}");
}

#[test]
fn a_missing_middle_frame_is_corruption_at_its_first_seq() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    many_frames(&Log::open(&store, Options::default()).unwrap());
    with_sled_frames(&store, |t| {
        let (k, _) = t.iter().nth(1).unwrap().unwrap();
        t.remove(k).unwrap();
    });
    let damage = Log::open(&store, Options::default())
        .unwrap()
        .verify("r")
        .unwrap()
        .damage
        .unwrap();
    assert_eq!(
        (damage.seq, damage.kind),
        (11, DamageKind::Corrupt),
        "{damage}"
    );
}

#[test]
fn a_frame_copied_from_another_run_breaks_the_chain() {
    let backend = Arc::new(MemoryBackend::default());
    let log = Log::with_memory(Arc::clone(&backend)).unwrap();
    log.append("a", Some(0), three()).unwrap();
    log.append("b", Some(0), three()).unwrap();
    let mut stolen = Vec::new();
    backend.tamper("a", 1, |f| stolen = f.clone()).unwrap();
    backend.tamper("b", 1, |f| *f = stolen.clone()).unwrap();
    assert_eq!(log.verify("b").unwrap().damage.unwrap().seq, 1);
}

#[test]
fn appending_to_a_damaged_run_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    Log::open(&store, Options::default())
        .unwrap()
        .append("r", Some(0), three())
        .unwrap();
    with_sled_frames(&store, |t| flip_first_frame(t, 60));
    let log = Log::open(&store, Options::default()).unwrap();
    let err = log.append("r", Some(3), three()).unwrap_err();
    assert!(
        matches!(err, StoreError::Damaged { ref damage, .. } if damage.seq == 2),
        "{err}"
    );
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig { cases: 300, ..Default::default() })]
    #[test]
    fn random_frame_bytes_never_panic(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..400)) {
        let backend = Arc::new(MemoryBackend::default());
        let log = Log::with_memory(Arc::clone(&backend)).unwrap();
        log.append("r", Some(0), three()).unwrap();
        backend.tamper("r", 1, |f| *f = bytes.clone()).unwrap();
        let _ = log.verify("r");
        let _ = log.read("r", 1, 3, Direction::Forward);
    }
}
