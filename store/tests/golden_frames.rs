//! The frame formats and the chains' hashes, pinned byte for byte: a change to either would make
//! every store written before unreadable, or every export and digest of a run disagree with it.
//! The per-record bytes below are what the build before the blocked chain wrote.

use runlog_store::backend::memory::MemoryBackend;
use runlog_store::*;
use std::sync::Arc;

fn bodies() -> Vec<Vec<u8>> {
    vec![
        b"alpha".to_vec(),
        b"bravo-bravo".to_vec(),
        vec![0x42; 3_000],
    ]
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The frame holding seq 1 of `run` recorded on `chain`, and the run's head hash.
fn recorded(chain: Chain) -> (String, String) {
    let backend = Arc::new(MemoryBackend::default());
    let log = Log::with_memory(Arc::clone(&backend)).unwrap();
    let head = log.create("golden", chain, bodies()).unwrap();
    let mut frame = Vec::new();
    assert!(backend
        .tamper("golden", 1, |f| frame.clone_from(f))
        .unwrap());
    (hex(&frame), hex(&head.hash))
}

#[test]
fn a_per_record_frame_is_byte_for_byte_what_it_was() {
    let (frame, head) = recorded(Chain::PerRecord);
    assert_eq!(frame, PER_RECORD_FRAME);
    assert_eq!(head, PER_RECORD_HEAD);
}

#[test]
fn a_blocked_frame_is_byte_for_byte_what_it_was() {
    let (frame, head) = recorded(Chain::Blocked);
    assert_eq!(frame, BLOCKED_FRAME);
    assert_eq!(head, BLOCKED_HEAD);
}

#[test]
fn the_blocked_chain_across_a_block_end_is_what_it_was() {
    let log = Log::memory().unwrap();
    let bodies: Vec<Vec<u8>> = (0..130u32).map(|i| i.to_be_bytes().to_vec()).collect();
    log.append("golden", Some(0), bodies).unwrap();
    let at = |seq| hex(&log.hash_at("golden", seq).unwrap().unwrap());
    assert_eq!(
        [at(64), at(65), at(130)],
        [BLOCK_END_64, BLOCK_NEXT_65, BLOCK_HEAD_130]
    );
}

const PER_RECORD_FRAME: &str =
    "524c01000000034c29c4dbed09e914c80a2357c8063aba3324da58197a807c2b7e21f9c5425b9b0a8aeedf2657010955616c70686116193fe5d72d42e9df627261766f2d627261766ff12e4e93935ce150d16992ba81be116e601b0540055468daafa3f1b6e29dd701cc48c8d1bd86448f92694e93935ce150d169a910e65e8f927089cc18a89911ad34b7dde5448506fbce94";
const PER_RECORD_HEAD: &str = "4e93935ce150d169a910e65e8f927089cc18a89911ad34b7dde5448506fbce94";
const BLOCKED_FRAME: &str =
    "524c02000000031f8c01d98da821bb614070b12e6142cc194912ffe04e5d173d6d7a694db31468069b4cb20a616c7068614aa69caf16627261766f2d627261766fddcb94c4f12e92ba81be116e601b0540055468daafa3f1b6e29dd701cc48c8d1bd86448f926972cf6314d6a31954e711de0fde78552542eaaa5abd49680c050e14e13da2f2c3";
const BLOCKED_HEAD: &str = "72cf6314d6a31954e711de0fde78552542eaaa5abd49680c050e14e13da2f2c3";
const BLOCK_END_64: &str = "cd6b2e320d88860618205a7409e1e2f38d0a7f77192628b6430b74817e556ab3";
const BLOCK_NEXT_65: &str = "061049793a09e3ef078b91c57bc95867c7f559820f6634f07ee9779ff7432314";
const BLOCK_HEAD_130: &str = "922890e6a2c450c122850bc627547ee6f7b1abdce7b6f5bb5a4992aa5f15f800";
