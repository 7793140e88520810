//! The EventLog contract, run against the sled log and the in-memory log alike.

use runlog_store::frame::{genesis, link};
use runlog_store::*;
use std::time::Duration;

fn bodies(range: std::ops::Range<u64>) -> Vec<Vec<u8>> {
    range.map(|i| format!("event-{i}").into_bytes()).collect()
}

/// The first `n` records a subscription delivers (waiting at most 5 s for each), then any
/// more already there: a subscriber must get exactly what was appended.
fn take(from: &crossbeam_channel::Receiver<Record>, n: usize) -> Vec<Record> {
    let mut got: Vec<Record> = (0..n)
        .map_while(|_| from.recv_timeout(Duration::from_secs(5)).ok())
        .collect();
    std::thread::sleep(Duration::from_millis(50));
    got.extend(from.try_iter());
    got
}

fn all(log: &dyn EventLog, run: &str) -> Vec<Record> {
    log.read(run, 1, u64::MAX, Direction::Forward).unwrap()
}

mod cases {
    use super::*;

    pub fn appends_get_gapless_seqs_from_one(log: &dyn EventLog) {
        assert_eq!(log.append("r", Some(0), bodies(0..3)).unwrap().seq, 3);
        assert_eq!(log.append("r", Some(3), bodies(3..4)).unwrap().seq, 4);
        assert_eq!(log.append("r", None, bodies(4..10)).unwrap().seq, 10);
        let seqs: Vec<u64> = all(log, "r").iter().map(|r| r.seq).collect();
        assert_eq!(seqs, (1..=10).collect::<Vec<_>>());
        let texts: Vec<Vec<u8>> = all(log, "r").into_iter().map(|r| r.body).collect();
        assert_eq!(texts, bodies(0..10));
    }

    pub fn reads_by_range_forward_and_backward(log: &dyn EventLog) {
        log.append("r", Some(0), bodies(0..600)).unwrap();
        let fwd = log.read("r", 250, 260, Direction::Forward).unwrap();
        assert_eq!(
            fwd.iter().map(|r| r.seq).collect::<Vec<_>>(),
            (250..=260).collect::<Vec<_>>()
        );
        assert_eq!(fwd[0].body, b"event-249");
        let back = log.read("r", 595, 700, Direction::Backward).unwrap();
        assert_eq!(
            back.iter().map(|r| r.seq).collect::<Vec<_>>(),
            vec![600, 599, 598, 597, 596, 595]
        );
        assert!(log
            .read("r", 601, 700, Direction::Forward)
            .unwrap()
            .is_empty());
        assert!(log.read("r", 10, 5, Direction::Forward).unwrap().is_empty());
    }

    pub fn a_stale_expected_head_is_a_conflict_and_appends_nothing(log: &dyn EventLog) {
        log.append("r", Some(0), bodies(0..2)).unwrap();
        match log.append("r", Some(1), bodies(2..5)) {
            Err(StoreError::Conflict {
                run,
                expected,
                actual,
            }) => {
                assert_eq!((run.as_str(), expected, actual), ("r", 1, 2));
            }
            other => panic!("expected a conflict, got {other:?}"),
        }
        assert_eq!(log.head("r").unwrap().unwrap().seq, 2);
        assert!(matches!(
            log.append("new", Some(5), bodies(0..1)),
            Err(StoreError::Conflict { actual: 0, .. })
        ));
    }

    pub fn a_multi_frame_append_reads_back_whole(log: &dyn EventLog) {
        // 2,000 records span many frames; they are one append.
        let head = log.append("r", Some(0), bodies(0..2_000)).unwrap();
        assert_eq!(head.seq, 2_000);
        let got = all(log, "r");
        assert_eq!(got.len(), 2_000);
        assert_eq!(got[1_999].body, b"event-1999");
    }

    /// The blocked chain as its definition states it: each record's hash is blake3 over the
    /// hash that ended the block before (the run's genesis for the first) and the forms of its
    /// block's records up to it.
    fn blocked_hashes(run: &str, bodies: &[Vec<u8>]) -> Vec<[u8; 32]> {
        let mut base =
            *blake3::hash(&[b"runlog-chain-v2\0".as_slice(), run.as_bytes()].concat()).as_bytes();
        let mut out = Vec::new();
        for block in bodies.chunks(64) {
            let mut input = base.to_vec();
            for body in block {
                input.extend(runlog_store::blocks::form(body));
                out.push(*blake3::hash(&input).as_bytes());
            }
            base = *out.last().unwrap();
        }
        out
    }

    pub fn the_head_carries_the_chain_hash(log: &dyn EventLog) {
        // Past two block ends, with bodies kept in the blob area on the way.
        let mut b = bodies(0..150);
        b[70] = vec![7; 5_000];
        b[128] = vec![8; 3_000];
        let head = log.append("r", Some(0), b.clone()).unwrap();
        let want = blocked_hashes("r", &b);
        assert_eq!(head.hash, want[149]);
        assert_eq!(log.head("r").unwrap(), Some(head));
        assert_eq!(log.chain("r").unwrap(), Some(Chain::Blocked));
        for seq in [1, 63, 64, 65, 71, 128, 129, 150] {
            assert_eq!(
                log.hash_at("r", seq).unwrap(),
                Some(want[seq as usize - 1]),
                "seq {seq}"
            );
        }
        let records = all(log, "r");
        let got: Vec<[u8; 32]> = records.iter().map(|r| r.hash).collect();
        assert_eq!(got, want);
    }

    pub fn a_run_s_hashes_do_not_depend_on_how_it_was_appended(log: &dyn EventLog) {
        let mut b = bodies(0..300);
        b[100] = vec![1; 4_000];
        log.append("whole", Some(0), b.clone()).unwrap();
        let mut at = 0;
        for n in [1usize, 63, 2, 64, 5, 100, 65] {
            log.append("parts", Some(at as u64), b[at..at + n].to_vec())
                .unwrap();
            at += n;
        }
        let whole = all(log, "whole");
        let parts = all(log, "parts");
        assert_eq!(parts.len(), 300);
        assert_eq!(
            whole.iter().map(|r| r.hash).collect::<Vec<_>>(),
            blocked_hashes("whole", &b)
        );
        assert_eq!(
            parts.iter().map(|r| r.hash).collect::<Vec<_>>(),
            blocked_hashes("parts", &b)
        );
        for from in [1, 2, 64, 65, 100, 101, 299] {
            let mut seen = Vec::new();
            log.scan_bodies("parts", from, 300, &mut |seq, body| {
                seen.push((seq, body.to_vec()));
                Ok(true)
            })
            .unwrap();
            let want: Vec<(u64, Vec<u8>)> = (from..=300)
                .map(|s| (s, b[s as usize - 1].clone()))
                .collect();
            assert_eq!(seen, want, "from {from}");
        }
        assert!(log.verify("parts").unwrap().is_ok());
    }

    pub fn a_run_created_on_the_per_record_chain_keeps_it(log: &dyn EventLog) {
        let b = bodies(0..100);
        let head = log
            .create("old", Chain::PerRecord, b[..70].to_vec())
            .unwrap();
        assert_eq!(head.seq, 70);
        log.append("old", Some(70), b[70..].to_vec()).unwrap();
        let mut h = genesis("old");
        let mut want = Vec::new();
        for body in &b {
            h = link(&h, body);
            want.push(h);
        }
        let records = all(log, "old");
        assert_eq!(records.iter().map(|r| r.hash).collect::<Vec<_>>(), want);
        assert_eq!(log.head("old").unwrap().unwrap().hash, want[99]);
        assert_eq!(log.chain("old").unwrap(), Some(Chain::PerRecord));
        assert!(log.verify("old").unwrap().is_ok());
        // Creating a run that exists is a conflict, whatever the chain.
        assert!(matches!(
            log.create("old", Chain::Blocked, bodies(0..1)),
            Err(StoreError::Conflict { .. })
        ));
        assert_eq!(log.chain("nothing").unwrap(), None);
    }

    pub fn runs_are_listed_with_their_heads(log: &dyn EventLog) {
        log.append("beta", Some(0), bodies(0..2)).unwrap();
        log.append("alpha", Some(0), bodies(0..3)).unwrap();
        let runs = log.runs().unwrap();
        let summary: Vec<(String, u64)> = runs
            .iter()
            .map(|r| (r.run.clone(), r.head.unwrap().seq))
            .collect();
        assert_eq!(summary, vec![("alpha".into(), 3), ("beta".into(), 2)]);
        assert!(runs.iter().all(|r| r.created_ms > 0));
    }

    pub fn unknown_runs_read_empty(log: &dyn EventLog) {
        assert_eq!(log.head("ghost").unwrap(), None);
        assert!(all(log, "ghost").is_empty());
        let report = log.verify("ghost").unwrap();
        assert!(report.is_ok() && report.verified == 0);
    }

    pub fn subscribers_get_every_append_in_order(log: &dyn EventLog) {
        let only_a = log.subscribe(Some("a"));
        let every = log.subscribe(None);
        log.append("a", Some(0), bodies(0..3)).unwrap();
        log.append("b", Some(0), bodies(0..1)).unwrap();
        log.append("a", Some(3), bodies(3..4)).unwrap();
        // Delivery may trail the append (through a store's owner it crosses a socket).
        let got_a: Vec<u64> = take(&only_a, 4).into_iter().map(|r| r.seq).collect();
        assert_eq!(got_a, vec![1, 2, 3, 4]);
        let got_all: Vec<(String, u64)> = take(&every, 5)
            .into_iter()
            .map(|r| (r.run, r.seq))
            .collect();
        assert_eq!(got_all.len(), 5);
        assert_eq!(got_all[3], ("b".into(), 1));
        // Delivered records carry the same chain hash as a read.
        let live = log.subscribe(Some("a"));
        log.append("a", Some(4), bodies(4..5)).unwrap();
        let rec = live.recv_timeout(Duration::from_secs(5)).unwrap();
        assert_eq!(rec.hash, log.hash_at("a", 5).unwrap().unwrap());
    }

    /// Subscribing and then reading the log (what a follower does) misses no append made
    /// meanwhile: every record is in the read or comes through the subscription.
    pub fn a_subscriber_that_then_reads_misses_nothing(log: &dyn EventLog) {
        const APPENDS: u64 = 200;
        std::thread::scope(|s| {
            s.spawn(|| {
                for seq in 0..APPENDS {
                    log.append("r", Some(seq), bodies(seq..seq + 1)).unwrap();
                }
            });
            let mut rounds = 0;
            loop {
                let head = |log: &dyn EventLog| log.head("r").unwrap().map_or(0, |h| h.seq);
                let live = log.subscribe(Some("r"));
                let read = all(log, "r");
                let read_to = read.last().map_or(0, |r| r.seq);
                // Some appends after the read, delivered (if at all) by the subscription.
                let until = (read_to + 3).min(APPENDS);
                while head(log) < until {
                    std::thread::yield_now();
                }
                let mut seen: Vec<u64> = read.iter().map(|r| r.seq).collect();
                // Delivery may trail the append; a missed record never comes (2 s to be sure).
                let mut delivered_to = read_to;
                while delivered_to < until {
                    let Ok(r) = live.recv_timeout(Duration::from_secs(2)) else {
                        break;
                    };
                    seen.push(r.seq);
                    delivered_to = r.seq;
                }
                seen.sort_unstable();
                seen.dedup();
                assert_eq!(
                    seen,
                    (1..=seen.last().copied().unwrap_or(0).max(until)).collect::<Vec<_>>(),
                    "round {rounds}: read to {read_to}, then the subscription"
                );
                rounds += 1;
                if until == APPENDS {
                    break;
                }
            }
        });
    }

    /// A head or a verify read while the run is being appended to sees the run before or after
    /// an append, never a lost tail: the store remembers what it committed only once it holds it.
    pub fn reads_racing_appends_report_no_damage(log: &dyn EventLog) {
        use std::sync::atomic::{AtomicU64, Ordering};
        const RUNS: u64 = 150;
        // The run being appended to; RUNS when all are done.
        let at = AtomicU64::new(0);
        std::thread::scope(|s| {
            s.spawn(|| {
                for i in 0..RUNS {
                    at.store(i, Ordering::Release);
                    let run = format!("r{i}");
                    log.append(&run, Some(0), bodies(0..1)).unwrap();
                    log.append(&run, Some(1), bodies(1..2)).unwrap();
                }
                at.store(RUNS, Ordering::Release);
            });
            let mut reads = 0u64;
            loop {
                let i = at.load(Ordering::Acquire);
                if i == RUNS {
                    break;
                }
                let run = format!("r{i}");
                let seq = if reads % 2 == 0 {
                    log.head(&run).map(|h| h.map_or(0, |h| h.seq))
                } else {
                    log.verify(&run).map(|r| {
                        assert!(r.is_ok(), "{run}: {:?}", r.damage);
                        r.verified
                    })
                };
                assert!(seq.unwrap() <= 2, "{run}");
                reads += 1;
            }
        });
    }

    pub fn an_intact_log_verifies(log: &dyn EventLog) {
        log.append("r", Some(0), bodies(0..700)).unwrap();
        log.append("r", Some(700), vec![vec![7u8; 10_000]]).unwrap();
        let report = log.verify("r").unwrap();
        assert!(report.is_ok(), "{:?}", report.damage);
        assert_eq!(report.verified, 701);
        assert_eq!(report.head.unwrap().seq, 701);
    }

    pub fn large_bodies_round_trip_through_the_blob_area(log: &dyn EventLog) {
        let big: Vec<u8> = (0..100_000u32).flat_map(|i| i.to_le_bytes()).collect();
        log.append(
            "r",
            Some(0),
            vec![b"small".to_vec(), big.clone(), b"after".to_vec()],
        )
        .unwrap();
        let got = all(log, "r");
        assert_eq!(got[1].body, big);
        assert_eq!(got[2].body, b"after");
    }

    pub fn blobs_are_content_addressed(log: &dyn EventLog) {
        let h = log.put_blob(b"stdout of a long agent run").unwrap();
        assert_eq!(h, *blake3::hash(b"stdout of a long agent run").as_bytes());
        assert_eq!(log.put_blob(b"stdout of a long agent run").unwrap(), h);
        assert_eq!(
            log.get_blob(&h).unwrap().unwrap(),
            b"stdout of a long agent run"
        );
        assert_eq!(log.get_blob(&[0u8; 32]).unwrap(), None);
    }

    pub fn a_blob_put_like_another_reads_back_whole(log: &dyn EventLog) {
        let first = b"{\"messages\":[{\"role\":\"user\",\"content\":\"fix the test\"}]}".to_vec();
        let h1 = log.put_blob_like(&first, None).unwrap();
        let mut second = first.clone();
        second.extend_from_slice(b" and the next turn");
        let h2 = log.put_blob_like(&second, Some((&h1, &first))).unwrap();
        assert_eq!(h2, *blake3::hash(&second).as_bytes());
        assert_eq!(log.get_blob(&h2).unwrap().unwrap(), second);
        assert_eq!(log.get_blob(&h1).unwrap().unwrap(), first);
        // Put again, by either way, it is the same blob.
        assert_eq!(log.put_blob(&second).unwrap(), h2);
        // A base the store never held is no base.
        let h3 = log
            .put_blob_like(b"third", Some((&[7u8; 32], b"never stored")))
            .unwrap();
        assert_eq!(log.get_blob(&h3).unwrap().unwrap(), b"third");
    }

    pub fn concurrent_producers_are_all_acknowledged_gaplessly(log: &dyn EventLog) {
        std::thread::scope(|s| {
            for t in 0..8 {
                s.spawn(move || {
                    for i in 0..25 {
                        log.append("shared", None, vec![format!("{t}-{i}").into_bytes()])
                            .unwrap();
                        let own = format!("own-{t}");
                        log.append(&own, Some(i), vec![format!("{i}").into_bytes()])
                            .unwrap();
                    }
                });
            }
        });
        let shared = all(log, "shared");
        assert_eq!(shared.len(), 200);
        assert!(shared
            .iter()
            .enumerate()
            .all(|(i, r)| r.seq == i as u64 + 1));
        for t in 0..8 {
            let own = all(log, &format!("own-{t}"));
            assert_eq!(own.len(), 25);
            assert_eq!(own[24].body, b"24");
        }
        assert!(log.verify("shared").unwrap().is_ok());
    }

    pub fn an_acknowledged_append_is_readable_at_once(log: &dyn EventLog) {
        // Producers at once, so that their appends share syncs (and the writer's groups).
        std::thread::scope(|s| {
            for t in 0..8 {
                s.spawn(move || {
                    let run = format!("readable-{t}");
                    for i in 0..40u64 {
                        let body = format!("{t}-{i}").into_bytes();
                        let head = log.append(&run, Some(i), vec![body.clone()]).unwrap();
                        assert_eq!(log.head(&run).unwrap().map(|h| h.seq), Some(head.seq));
                        let mut read = Vec::new();
                        log.scan(&run, head.seq, head.seq, &mut |r| {
                            read.push(r.body.to_vec());
                            Ok(true)
                        })
                        .unwrap();
                        assert_eq!(read, [body], "{run} seq {} read after its ack", head.seq);
                    }
                });
            }
        });
    }

    pub fn invalid_appends_are_refused(log: &dyn EventLog) {
        assert!(matches!(
            log.append("r", None, vec![]),
            Err(StoreError::Invalid(_))
        ));
        assert!(matches!(
            log.append("", None, bodies(0..1)),
            Err(StoreError::Invalid(_))
        ));
        assert!(matches!(
            log.append("bad\nid", None, bodies(0..1)),
            Err(StoreError::Invalid(_))
        ));
        assert_eq!(log.runs().unwrap(), vec![]);
    }

    pub fn a_scan_can_stop_early(log: &dyn EventLog) {
        log.append("r", Some(0), bodies(0..1_000)).unwrap();
        let mut seen = Vec::new();
        log.scan("r", 100, u64::MAX, &mut |r| {
            seen.push(r.seq);
            Ok(seen.len() < 3)
        })
        .unwrap();
        assert_eq!(seen, vec![100, 101, 102]);
    }

    pub fn a_reader_error_comes_back_unchanged(log: &dyn EventLog) {
        log.append("r", Some(0), bodies(0..5)).unwrap();
        let err = log
            .scan("r", 1, 5, &mut |_| {
                Err(StoreError::Invalid("reader gave up".into()))
            })
            .unwrap_err();
        assert!(matches!(err, StoreError::Invalid(m) if m == "reader gave up"));
    }

    pub fn the_cache_keeps_entries_by_key(log: &dyn EventLog) {
        log.cache_put(b"snap/r/0010", b"ten").unwrap();
        log.cache_put(b"snap/r/0020", b"twenty").unwrap();
        log.cache_put(b"other", b"x").unwrap();
        assert_eq!(log.cache_get(b"snap/r/0020").unwrap().unwrap(), b"twenty");
        assert_eq!(
            log.cache_keys(b"snap/r/").unwrap(),
            vec![b"snap/r/0010".to_vec(), b"snap/r/0020".to_vec()]
        );
    }

    pub fn the_cache_lists_one_run_s_entries_apart(log: &dyn EventLog) {
        let key =
            |run: &str, seq: u64| [format!("snap/{run}\0").as_bytes(), &seq.to_be_bytes()].concat();
        // A run id long enough that its entries' names are hashes.
        let long = "l".repeat(120);
        for (run, seq) in [("a", 2), ("a", 1), ("ab", 1), ("b", 1), (long.as_str(), 7)] {
            log.cache_put(&key(run, seq), run.as_bytes()).unwrap();
        }
        assert_eq!(
            log.cache_keys(b"snap/a\0").unwrap(),
            vec![key("a", 1), key("a", 2)]
        );
        assert_eq!(
            log.cache_keys(&key(&long, 7)[..126]).unwrap(),
            vec![key(&long, 7)]
        );
        assert_eq!(log.cache_get(&key("ab", 1)).unwrap().unwrap(), b"ab");
        assert_eq!(
            log.cache_get(&key(&long, 7)).unwrap().unwrap(),
            long.as_bytes()
        );
        assert_eq!(
            log.cache_keys(b"snap/").unwrap(),
            vec![
                key("a", 1),
                key("a", 2),
                key("ab", 1),
                key("b", 1),
                key(&long, 7)
            ]
        );
    }

    pub fn sync_succeeds_and_size_grows(log: &dyn EventLog) {
        let before = log.size_bytes().unwrap();
        log.append("r", Some(0), bodies(0..1_000)).unwrap();
        log.sync().unwrap();
        assert!(log.size_bytes().unwrap() > before);
    }
}

macro_rules! contract {
    ($module:ident, $make:expr) => {
        mod $module {
            use super::*;
            contract!(@cases $make;
                appends_get_gapless_seqs_from_one,
                reads_by_range_forward_and_backward,
                a_stale_expected_head_is_a_conflict_and_appends_nothing,
                a_multi_frame_append_reads_back_whole,
                the_head_carries_the_chain_hash,
                a_run_s_hashes_do_not_depend_on_how_it_was_appended,
                a_run_created_on_the_per_record_chain_keeps_it,
                runs_are_listed_with_their_heads,
                unknown_runs_read_empty,
                subscribers_get_every_append_in_order,
                a_subscriber_that_then_reads_misses_nothing,
                reads_racing_appends_report_no_damage,
                an_intact_log_verifies,
                large_bodies_round_trip_through_the_blob_area,
                blobs_are_content_addressed,
                a_blob_put_like_another_reads_back_whole,
                concurrent_producers_are_all_acknowledged_gaplessly,
                an_acknowledged_append_is_readable_at_once,
                invalid_appends_are_refused,
                a_scan_can_stop_early,
                a_reader_error_comes_back_unchanged,
                the_cache_keeps_entries_by_key,
                the_cache_lists_one_run_s_entries_apart,
                sync_succeeds_and_size_grows,
            );
        }
    };
    (@cases $make:expr; $($case:ident),* $(,)?) => {
        $(
            #[test]
            fn $case() {
                let (log, _dir) = $make;
                cases::$case(&log);
            }
        )*
    };
}

fn sled_log() -> (Log, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let log = Log::open(&dir.path().join("store"), Options::default()).unwrap();
    (log, dir)
}

fn sled_buffered() -> (Log, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let opts = Options {
        durability: Durability::Buffered {
            interval: Duration::from_millis(20),
        },
        create: true,
        ..Options::default()
    };
    let log = Log::open(&dir.path().join("store"), opts).unwrap();
    (log, dir)
}

contract!(sled_durable, sled_log());
contract!(sled_buffered_mode, sled_buffered());
contract!(memory, (Log::memory().unwrap(), ()));

/// The shared store, on a database of its own (skipped, saying so, without a server).
fn postgres_log() -> Option<(PgLog, runlog_store::postgres::scratch::Scratch)> {
    let db = runlog_store::postgres::scratch::scratch()?;
    let log = PgLog::connect(&db.url).unwrap();
    Some((log, db))
}

contract!(
    postgres,
    match postgres_log() {
        Some(made) => made,
        None => return,
    }
);

/// The shared store over TLS only (`verify-full` against the test CA), once.
fn postgres_tls_log() -> Option<(PgLog, runlog_store::postgres::scratch::Scratch)> {
    let db = runlog_store::postgres::scratch::scratch_tls()?;
    let log = PgLog::connect(&db.url).unwrap();
    Some((log, db))
}

contract!(
    postgres_over_tls,
    match postgres_tls_log() {
        Some(made) => made,
        None => return,
    }
);

/// The store opened by the process that owns it (and serves it to others).
fn store_owner() -> (Store, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("store"), Options::default()).unwrap();
    assert!(store.is_owner());
    (store, dir)
}

/// The store reached through its owner's socket, as a second process reaches it.
fn store_client() -> (Store, (Store, tempfile::TempDir)) {
    let (owner, dir) = store_owner();
    let client = Store::open(&dir.path().join("store"), Options::default()).unwrap();
    assert!(
        !client.is_owner(),
        "a second handle must go through the owner"
    );
    (client, (owner, dir))
}

contract!(store_owning, store_owner());
contract!(store_through_the_owner, store_client());

/// When the owner goes, a client takes the store over and nothing acknowledged is lost.
#[test]
fn a_client_takes_over_when_the_owner_goes() {
    let (client, (owner, dir)) = store_client();
    client.append("r", Some(0), bodies(0..5)).unwrap();
    owner.append("r", Some(5), bodies(5..7)).unwrap();
    drop(owner);
    // The next call finds nobody serving, opens the store itself and serves it.
    assert_eq!(client.append("r", Some(7), bodies(7..8)).unwrap().seq, 8);
    assert!(client.is_owner());
    let third = Store::open(&dir.path().join("store"), Options::default()).unwrap();
    assert!(!third.is_owner());
    assert_eq!(all(&third, "r").len(), 8);
    assert_eq!(
        all(&third, "r")
            .into_iter()
            .map(|r| r.body)
            .collect::<Vec<_>>(),
        bodies(0..8)
    );
}

/// A subscription through the owner carries on with the next owner: nothing missed, nothing
/// twice (a running engine keeps hearing decisions after its store changed hands).
#[test]
fn a_subscription_survives_a_change_of_owner() {
    let (client, (owner, _dir)) = store_client();
    let appended = client.subscribe(Some("r"));
    owner.append("r", Some(0), bodies(0..2)).unwrap();
    assert_eq!(take(&appended, 2).len(), 2);
    owner.append("r", Some(2), bodies(2..3)).unwrap();
    drop(owner);
    client.append("r", Some(3), bodies(3..5)).unwrap();
    let seqs: Vec<u64> = take(&appended, 3).into_iter().map(|r| r.seq).collect();
    assert_eq!(seqs, vec![3, 4, 5]);
}
