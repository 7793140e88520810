//! Blobs kept packed in a directory store: a conversation's requests, each stored against the
//! one before, read back whole, take a fraction of their bytes, survive the forgetting of the
//! run that stored their base, and a damaged one is an error, never wrong bytes.

use runlog_store::{forget, EventLog, Log, Options};
use std::path::Path;

/// A request of turn `n`: the same long preamble, then every turn so far, as an agent resends
/// its whole conversation.
fn request(n: usize) -> Vec<u8> {
    let mut r = String::from("{\"system\":\"");
    for i in 0..400 {
        r.push_str(&format!("rule {i}: keep the tests passing and say why. "));
    }
    r.push_str("\",\"messages\":[");
    for turn in 0..n {
        r.push_str(&format!(
            "{{\"role\":\"user\",\"content\":\"result of step {turn}: {}\"}},",
            (0..40)
                .map(|w| format!("w{}", (w * 7919 + turn * 104_729) % 10_007))
                .collect::<Vec<_>>()
                .join(" ")
        ));
    }
    r.push_str("]}");
    r.into_bytes()
}

/// Stores `turns` requests the way the engine does (each against the one before).
fn conversation(log: &dyn EventLog, turns: usize) -> Vec<[u8; 32]> {
    let mut hashes = Vec::new();
    let mut previous: Option<([u8; 32], Vec<u8>)> = None;
    for n in 1..=turns {
        let bytes = request(n);
        let like = previous.as_ref().map(|(h, b)| (h, b.as_slice()));
        let hash = log.put_blob_like(&bytes, like).unwrap();
        previous = Some((hash, bytes));
        hashes.push(hash);
    }
    hashes
}

fn blob_files(store: &Path) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    for fan in std::fs::read_dir(store.join("blobs")).unwrap() {
        for f in std::fs::read_dir(fan.unwrap().path()).unwrap() {
            files.push(f.unwrap().path());
        }
    }
    files
}

#[test]
fn a_conversation_s_requests_read_back_whole_and_take_a_fraction_of_their_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s");
    let log = Log::open(&store, Options::default()).unwrap();
    // Deeper than the longest chain of bases, so that some are packed whole again.
    let hashes = conversation(&log, 80);
    let raw: usize = (1..=80).map(|n| request(n).len()).sum();
    for (i, hash) in hashes.iter().enumerate() {
        assert_eq!(
            log.get_blob(hash).unwrap().unwrap(),
            request(i + 1),
            "turn {}",
            i + 1
        );
    }
    drop(log);
    let stored: u64 = blob_files(&store)
        .iter()
        .map(|f| std::fs::metadata(f).unwrap().len())
        .sum();
    assert!(
        (stored as f64) < 0.1 * raw as f64,
        "{stored} bytes stored for {raw} bytes of requests"
    );
    // Reopened, the same.
    let log = Log::open(&store, Options::default()).unwrap();
    assert_eq!(log.get_blob(&hashes[79]).unwrap().unwrap(), request(80));
}

#[test]
fn forgetting_the_run_that_stored_a_base_leaves_the_blobs_packed_against_it_readable() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s");
    let hashes = {
        let log = Log::open(&store, Options::default()).unwrap();
        log.append("gone", Some(0), vec![b"a run".to_vec()])
            .unwrap();
        log.append("kept", Some(0), vec![b"another".to_vec()])
            .unwrap();
        conversation(&log, 6)
    };
    // The run forgotten named the first three requests alone; the kept one names the rest.
    let (gone, kept) = hashes.split_at(3);
    let forgot = forget(&store, &["gone".to_owned()], gone).unwrap();
    assert_eq!(forgot.blobs, 3);
    let log = Log::open(&store, Options::default()).unwrap();
    for (i, hash) in kept.iter().enumerate() {
        assert_eq!(log.get_blob(hash).unwrap().unwrap(), request(i + 4));
    }
    for hash in gone {
        assert_eq!(log.get_blob(hash).unwrap(), None);
    }
}

#[test]
fn a_damaged_packed_blob_is_an_error_and_never_other_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s");
    let hashes = {
        let log = Log::open(&store, Options::default()).unwrap();
        conversation(&log, 3)
    };
    let packed: Vec<_> = blob_files(&store)
        .into_iter()
        .filter(|f| f.extension().is_some_and(|e| e == "z"))
        .collect();
    assert_eq!(packed.len(), 3, "{packed:?}");
    for file in &packed {
        let mut bytes = std::fs::read(file).unwrap();
        let at = bytes.len() - 3;
        bytes[at] ^= 0x55;
        std::fs::write(file, &bytes).unwrap();
    }
    let log = Log::open(&store, Options::default()).unwrap();
    for hash in &hashes {
        let read = log.get_blob(hash);
        assert!(read.is_err(), "{read:?}");
    }
    // Cut short, the same.
    for file in &packed {
        std::fs::write(file, b"rlp1").unwrap();
    }
    assert!(log.get_blob(&hashes[2]).is_err());
}
