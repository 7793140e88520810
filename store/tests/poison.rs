//! A failed sync poisons the log: the append that hit it is not acknowledged, no later write is
//! accepted (their durability could not be promised), and what was durable stays readable. A
//! blob that cannot be stored fails its append whole: nothing of it reaches the log.

use runlog_store::backend::memory::MemoryBackend;
use runlog_store::backend::{Backend, RunSlot};
use runlog_store::*;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Memory storage whose sync fails once `fail` is set, like a disk returning EIO on fdatasync,
/// and whose blob writes fail once `fail_blobs` is set. It remembers, for each run slot, the
/// highest seq written before the last sync that succeeded began: what a power cut would keep.
#[derive(Debug, Default)]
struct FailingDisk {
    inner: MemoryBackend,
    fail: Arc<AtomicBool>,
    fail_blobs: Arc<AtomicBool>,
    /// Each sync takes this long (a real fdatasync is not instant).
    sync_takes: Duration,
    /// Syncs that succeed before `fail` is set by the disk itself.
    fail_after_syncs: Option<usize>,
    seen: Arc<Seen>,
}

/// What the disk saw, kept by the test after the log owns the disk.
#[derive(Debug, Default)]
struct Seen {
    syncs: AtomicUsize,
    slots: Mutex<HashMap<String, u64>>,
    written: Mutex<HashMap<u64, u64>>,
    durable: Mutex<HashMap<u64, u64>>,
}

impl Seen {
    fn durable_seq(&self, run: &str) -> u64 {
        let num = self.slots.lock().unwrap()[run];
        self.durable.lock().unwrap().get(&num).copied().unwrap_or(0)
    }
}

impl Backend for FailingDisk {
    fn run_slot(&self, run: &str) -> Result<Option<RunSlot>> {
        self.inner.run_slot(run)
    }
    fn create_run(&self, run: &str, slot: RunSlot) -> Result<()> {
        self.seen
            .slots
            .lock()
            .unwrap()
            .insert(run.to_owned(), slot.num);
        self.inner.create_run(run, slot)
    }
    fn runs(&self) -> Result<Vec<(String, RunSlot)>> {
        self.inner.runs()
    }
    fn max_run_num(&self) -> Result<u64> {
        self.inner.max_run_num()
    }
    fn insert_frames(
        &self,
        frames: Vec<(u64, u64, Vec<u8>)>,
        logged: &mut dyn FnMut(),
    ) -> Result<()> {
        let ends: Vec<(u64, u64)> = frames
            .iter()
            .map(|(num, first, _)| (*num, *first))
            .collect();
        // The frames are written once the backend calls `logged` (a sync may begin from
        // there, while the insert goes on), so that is when the disk counts them.
        self.inner.insert_frames(frames, &mut || {
            let mut written = self.seen.written.lock().unwrap();
            for &(num, first) in &ends {
                // A frame's first seq is a lower bound of its last: enough to compare with
                // acks, which are checked against the frames' seqs read back below.
                let seq = written.entry(num).or_insert(0);
                *seq = (*seq).max(first);
            }
            drop(written);
            logged();
        })
    }
    fn frame_at_or_before(&self, num: u64, seq: u64) -> Result<Option<(u64, Vec<u8>)>> {
        self.inner.frame_at_or_before(num, seq)
    }
    fn scan_frames(
        &self,
        num: u64,
        from: u64,
        to: u64,
        f: &mut dyn FnMut(u64, &[u8]) -> Result<bool>,
    ) -> Result<()> {
        self.inner.scan_frames(num, from, to, f)
    }
    fn sync(&self) -> Result<()> {
        let began = self.seen.written.lock().unwrap().clone();
        std::thread::sleep(self.sync_takes);
        let n = self.seen.syncs.fetch_add(1, Ordering::SeqCst);
        if self.fail_after_syncs.is_some_and(|k| n >= k) {
            self.fail.store(true, Ordering::SeqCst);
        }
        if self.fail.load(Ordering::SeqCst) {
            return Err(StoreError::Io {
                what: "fdatasync failed on",
                path: "/dev/failing".into(),
                cause: std::io::Error::other("EIO"),
            });
        }
        *self.seen.durable.lock().unwrap() = began;
        Ok(())
    }
    fn put_blob(&self, hash: &[u8; 32], bytes: &[u8]) -> Result<()> {
        if self.fail_blobs.load(Ordering::SeqCst) {
            return Err(StoreError::Io {
                what: "cannot write blob",
                path: "/dev/full".into(),
                cause: std::io::Error::other("ENOSPC"),
            });
        }
        self.inner.put_blob(hash, bytes)
    }
    fn get_blob(&self, hash: &[u8; 32]) -> Result<Option<Vec<u8>>> {
        self.inner.get_blob(hash)
    }
    fn cache_put(&self, key: &[u8], value: &[u8]) -> Result<()> {
        self.inner.cache_put(key, value)
    }
    fn cache_get(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        self.inner.cache_get(key)
    }
    fn cache_keys(&self, prefix: &[u8]) -> Result<Vec<Vec<u8>>> {
        self.inner.cache_keys(prefix)
    }
    fn size_bytes(&self) -> Result<u64> {
        self.inner.size_bytes()
    }
}

#[test]
fn a_failed_sync_poisons_the_log_and_later_writes_are_refused() {
    let fail = Arc::new(AtomicBool::new(false));
    let disk = FailingDisk {
        fail: Arc::clone(&fail),
        ..FailingDisk::default()
    };
    let log = Log::with_backend(Box::new(disk), Durability::Durable).unwrap();
    log.append("r", Some(0), vec![b"durable".to_vec()]).unwrap();

    fail.store(true, Ordering::SeqCst);
    let err = log
        .append("r", Some(1), vec![b"lost?".to_vec()])
        .unwrap_err();
    assert!(
        matches!(err, StoreError::Poisoned { ref cause } if cause.contains("EIO")),
        "{err}"
    );

    // The disk recovers, but the log does not pretend it did: no write is accepted any more.
    fail.store(false, Ordering::SeqCst);
    let err = log.append("r", None, vec![b"after".to_vec()]).unwrap_err();
    assert!(matches!(err, StoreError::Poisoned { .. }), "{err}");
    assert!(matches!(log.sync(), Err(StoreError::Poisoned { .. })));
    assert!(err.hint().unwrap().contains("reopen"));

    // What was acknowledged is still there to read.
    let first = log.read("r", 1, 1, Direction::Forward).unwrap();
    assert_eq!(first[0].body, b"durable");
    assert!(
        matches!(log.close(), Err(StoreError::Poisoned { .. })),
        "closing reports the poison too"
    );
}

#[test]
fn a_failed_sync_in_a_group_fails_every_append_of_the_group() {
    let fail = Arc::new(AtomicBool::new(true));
    let disk = FailingDisk {
        fail,
        ..FailingDisk::default()
    };
    let log = Log::with_backend(Box::new(disk), Durability::Durable).unwrap();
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..4)
            .map(|i| {
                let log = &log;
                s.spawn(move || log.append(&format!("r{i}"), Some(0), vec![b"x".to_vec()]))
            })
            .collect();
        for h in handles {
            assert!(
                matches!(h.join().unwrap(), Err(StoreError::Poisoned { .. })),
                "no append of a failed group is acknowledged"
            );
        }
    });
}

/// Group commit with a sync in flight while the next group is written: every acknowledged
/// append was written before a sync that succeeded began, and none is acknowledged once a sync
/// failed, however the groups fell.
#[test]
fn no_append_is_acknowledged_before_a_sync_that_covers_it() {
    let seen = Arc::new(Seen::default());
    let disk = FailingDisk {
        sync_takes: Duration::from_millis(3),
        fail_after_syncs: Some(40),
        seen: Arc::clone(&seen),
        ..FailingDisk::default()
    };
    let log = Log::with_backend(Box::new(disk), Durability::Durable).unwrap();
    let acked: Vec<(String, u64)> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..8)
            .map(|p| {
                let log = &log;
                s.spawn(move || {
                    let mut acked = Vec::new();
                    // Two producers per run: appends without an expected seq share its head.
                    let run = format!("r{}", p % 4);
                    for i in 0..200 {
                        match log.append(&run, None, vec![format!("{p}-{i}").into_bytes()]) {
                            Ok(head) => acked.push((run.clone(), head.seq)),
                            Err(StoreError::Poisoned { .. }) => break,
                            Err(e) => panic!("{e}"),
                        }
                    }
                    acked
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    });
    assert!(seen.syncs.load(Ordering::SeqCst) > 40, "the disk failed");
    assert!(!acked.is_empty());
    for (run, seq) in &acked {
        assert!(
            *seq <= seen.durable_seq(run),
            "{run}@{seq} acknowledged but not durable (durable up to {})",
            seen.durable_seq(run)
        );
    }
    let groups: u64 = log.sync_groups().iter().skip(1).map(|(_, n)| n).sum();
    assert!(
        groups > 0,
        "some syncs acknowledged more than one append: {:?}",
        log.sync_groups()
    );
    // Per run, the acknowledged seqs are distinct and the log holds them in order.
    for r in 0..4 {
        let run = format!("r{r}");
        let mut seqs: Vec<u64> = acked
            .iter()
            .filter(|(x, _)| *x == run)
            .map(|(_, s)| *s)
            .collect();
        seqs.sort_unstable();
        let n = seqs.len();
        seqs.dedup();
        assert_eq!(
            seqs.len(),
            n,
            "{run}: two appends acknowledged with one seq"
        );
        assert!(log.verify(&run).unwrap().is_ok());
    }
}

#[test]
fn a_blob_failing_in_the_middle_of_an_append_leaves_nothing_of_it() {
    let fail_blobs = Arc::new(AtomicBool::new(false));
    let disk = FailingDisk {
        fail_blobs: Arc::clone(&fail_blobs),
        ..FailingDisk::default()
    };
    let log = Log::with_backend(Box::new(disk), Durability::Durable).unwrap();
    log.append("r", Some(0), vec![b"one".to_vec(), b"two".to_vec()])
        .unwrap();
    // Seven bodies fill two frames before the eighth, too large to inline, needs the blob area.
    let mut bodies: Vec<Vec<u8>> = (0..7).map(|i| vec![b'a' + i; 2_000]).collect();
    bodies.push(vec![b'z'; 3_000]);
    fail_blobs.store(true, Ordering::SeqCst);
    assert!(log.append("r", Some(2), bodies).is_err());
    fail_blobs.store(false, Ordering::SeqCst);
    let head = log.append("r", Some(2), vec![b"three".to_vec()]).unwrap();
    assert_eq!(head.seq, 3);
    assert!(log.verify("r").unwrap().is_ok(), "{:?}", log.verify("r"));
    let bodies: Vec<Vec<u8>> = log
        .read("r", 1, 10, Direction::Forward)
        .unwrap()
        .into_iter()
        .map(|r| r.body)
        .collect();
    assert_eq!(
        bodies,
        vec![b"one".to_vec(), b"two".to_vec(), b"three".to_vec()]
    );
}
