//! What only the shared store has to get right: a schema made by a newer runlog, and
//! connections the server cuts (`pg_terminate_backend`) in the middle of appends and of
//! subscriptions. Needs a real PostgreSQL (see `runlog_store::postgres::scratch`).

mod pg_admin;

use pg_admin::admin;
use runlog_store::frame::{genesis, link};
use runlog_store::postgres::scratch::scratch;
use runlog_store::{Chain, Direction, EventLog, Log, PgLog, StoreError};
use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// Ends every other session on the test's database, as an administrator (or a failover) does.
fn cut_connections(url: &str) -> u64 {
    let cut = admin(
        url,
        "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
         WHERE datname = current_database() AND pid <> pg_backend_pid()",
    );
    u64::try_from(cut).unwrap()
}

#[test]
fn a_schema_made_by_a_newer_runlog_is_refused() {
    let Some(db) = scratch() else { return };
    drop(PgLog::connect(&db.url).unwrap());
    admin(&db.url, "UPDATE runlog_schema SET version = 99");
    match PgLog::connect(&db.url) {
        Err(e @ StoreError::NewerSchema { found: 99, .. }) => {
            assert!(e.hint().unwrap().contains("upgrade runlog"));
            assert!(!e.to_string().contains("runlog@"), "{e}");
        }
        other => panic!("expected a refusal of schema 99, got {other:?}"),
    }
}

/// A database from before the blocked chain (schema 2) is brought to schema 3: its runs keep
/// their per-record chain and go on with it, and a new run takes the blocked chain with the
/// hashes the sled store gives the same records.
#[test]
fn a_database_from_before_the_blocked_chain_keeps_its_runs() {
    let Some(db) = scratch() else { return };
    let bodies: Vec<Vec<u8>> = (0..150u32)
        .map(|i| format!("event {i}").into_bytes())
        .collect();
    let log = PgLog::connect(&db.url).unwrap();
    log.create("old", Chain::PerRecord, bodies[..100].to_vec())
        .unwrap();
    drop(log);
    admin(
        &db.url,
        "ALTER TABLE runlog_runs DROP COLUMN chain; UPDATE runlog_schema SET version = 2",
    );
    let log = PgLog::connect(&db.url).unwrap();
    assert_eq!(admin(&db.url, "SELECT version FROM runlog_schema"), 3);
    assert_eq!(log.chain("old").unwrap(), Some(Chain::PerRecord));
    log.append("old", Some(100), bodies[100..].to_vec())
        .unwrap();
    let mut hash = genesis("old");
    for body in &bodies {
        hash = link(&hash, body);
    }
    assert_eq!(log.head("old").unwrap().unwrap().hash, hash);
    assert!(log.verify("old").unwrap().is_ok());
    // A new run, appended in parts by two processes' logs in turn (each goes on from a block
    // the other left half full), against the same records in one append to the memory store.
    let other = PgLog::connect(&db.url).unwrap();
    for (i, (at, part)) in [(0, 0..70), (70, 70..100), (100, 100..130), (130, 130..150)]
        .into_iter()
        .enumerate()
    {
        let by: &PgLog = if i % 2 == 0 { &log } else { &other };
        by.append("new", Some(at), bodies[part].to_vec()).unwrap();
    }
    let memory = Log::memory().unwrap();
    let same = memory.append("new", Some(0), bodies.clone()).unwrap();
    assert_eq!(log.chain("new").unwrap(), Some(Chain::Blocked));
    assert_eq!(log.head("new").unwrap(), Some(same));
    assert_eq!(
        log.hash_at("new", 77).unwrap(),
        memory.hash_at("new", 77).unwrap()
    );
    assert!(log.verify("new").unwrap().is_ok());
}

/// A body changed in the database is refused by every read that reaches it, named by its seq:
/// a fold's read, which checks a block's rows together, as well as a read of each row's hash.
#[test]
fn a_changed_body_is_named_by_every_read() {
    let Some(db) = scratch() else { return };
    let log = PgLog::connect(&db.url).unwrap();
    let bodies: Vec<Vec<u8>> = (0..150u32)
        .map(|i| format!("event {i}").into_bytes())
        .collect();
    log.append("r", Some(0), bodies).unwrap();
    admin(
        &db.url,
        "UPDATE runlog_events SET body = 'changed' WHERE seq = 70",
    );
    for from in [1, 66, 70] {
        let named = |e: StoreError| match e {
            StoreError::Damaged { damage, .. } => damage.seq,
            other => panic!("{other}"),
        };
        let folded = log.scan_bodies("r", from, 150, &mut |_, _| Ok(true));
        assert_eq!(named(folded.unwrap_err()), 70, "from {from}");
        let hashed = log.scan("r", from, 150, &mut |_| Ok(true));
        assert_eq!(named(hashed.unwrap_err()), 70, "from {from}");
    }
    // The blocks before it read whole.
    let mut seen = 0;
    log.scan_bodies("r", 1, 64, &mut |_, _| {
        seen += 1;
        Ok(true)
    })
    .unwrap();
    assert_eq!(seen, 64);
    assert_eq!(log.verify("r").unwrap().damage.unwrap().seq, 70);
}

#[test]
fn a_password_never_appears_in_an_error() {
    let err = PgLog::connect("postgres://runlog:s3cret@127.0.0.1:1/nowhere").unwrap_err();
    let text = format!("{err} {err:?}");
    assert!(!text.contains("s3cret"), "{text}");
    assert!(
        matches!(err, StoreError::Postgres { lost: true, .. }),
        "{err:?}"
    );
}

/// Appends keep going while the server ends the producers' sessions again and again: every
/// acknowledged append is in the log exactly once, and nothing else is.
#[test]
fn connections_cut_mid_append_lose_and_duplicate_nothing() {
    let Some(db) = scratch() else { return };
    let log = Arc::new(PgLog::connect(&db.url).unwrap());
    let done = Arc::new(AtomicBool::new(false));
    let producers: Vec<_> = (0..4)
        .map(|p| {
            let log = log.clone();
            std::thread::spawn(move || {
                let mut acked = Vec::new();
                let mut failed = Vec::new();
                for i in 0..150 {
                    let body = format!("p{p}-{i}").into_bytes();
                    match log.append("cut", None, vec![body.clone()]) {
                        Ok(_) => acked.push(body),
                        Err(StoreError::Postgres { lost: true, .. }) => failed.push(body),
                        Err(e) => panic!("{e}"),
                    }
                }
                (acked, failed)
            })
        })
        .collect();
    let cutter = {
        let done = done.clone();
        let url = db.url.clone();
        std::thread::spawn(move || {
            let mut cuts = 0;
            while !done.load(Ordering::Acquire) {
                std::thread::sleep(Duration::from_millis(40));
                cuts += cut_connections(&url);
            }
            cuts
        })
    };
    let mut acked = Vec::new();
    let mut failed = Vec::new();
    for p in producers {
        let (a, f) = p.join().unwrap();
        acked.extend(a);
        failed.extend(f);
    }
    done.store(true, Ordering::Release);
    let cuts = cutter.join().unwrap();
    assert!(cuts > 0, "the test cut no connection");
    let stored: Vec<Vec<u8>> = log
        .read("cut", 1, u64::MAX, Direction::Forward)
        .unwrap()
        .into_iter()
        .map(|r| r.body)
        .collect();
    let unique: HashSet<&Vec<u8>> = stored.iter().collect();
    assert_eq!(unique.len(), stored.len(), "a record was stored twice");
    for body in &acked {
        assert!(unique.contains(body), "an acknowledged append was lost");
    }
    let allowed: HashSet<&Vec<u8>> = acked.iter().chain(&failed).collect();
    assert!(stored.iter().all(|b| allowed.contains(b)));
    assert!(log.verify("cut").unwrap().is_ok());
    eprintln!(
        "{cuts} sessions cut; {} appends acknowledged, {} reported as failed",
        acked.len(),
        failed.len()
    );
}

/// A subscriber keeps receiving after its listening connection is cut: it reconnects and reads
/// on from the last seq it was given.
#[test]
fn a_subscription_survives_a_cut_connection() {
    let Some(db) = scratch() else { return };
    let log = PgLog::connect(&db.url).unwrap();
    let follow = log.subscribe(Some("r"));
    log.append("r", Some(0), vec![b"one".to_vec()]).unwrap();
    assert_eq!(follow.recv_timeout(Duration::from_secs(5)).unwrap().seq, 1);
    assert!(cut_connections(&db.url) > 0);
    log.append("r", Some(1), vec![b"two".to_vec(), b"three".to_vec()])
        .unwrap();
    let seqs: Vec<u64> = (0..2)
        .map(|_| follow.recv_timeout(Duration::from_secs(10)).unwrap().seq)
        .collect();
    assert_eq!(seqs, vec![2, 3]);
    std::thread::sleep(Duration::from_millis(1_200));
    assert!(follow.try_recv().is_err(), "a record was delivered twice");
}

/// A worker whose lease expired records nothing more, even though its process goes on; its
/// name is free for another, and a live worker's name is not.
#[test]
fn an_expired_lease_fences_every_append_of_its_worker() {
    let Some(db) = scratch() else { return };
    let first = PgLog::connect(&db.url).unwrap();
    first.join("w1", Duration::from_secs(30)).unwrap();
    first.append("r", Some(0), vec![b"one".to_vec()]).unwrap();
    assert_eq!(first.live_workers().unwrap(), vec!["w1".to_string()]);

    let second = PgLog::connect(&db.url).unwrap();
    match second.join("w1", Duration::from_secs(30)) {
        Err(StoreError::WorkerNameTaken { worker, .. }) => assert_eq!(worker, "w1"),
        other => panic!("a live worker's name was given again: {other:?}"),
    }
    // The lease runs out (a worker cut off from the server for longer than its lease).
    admin(
        &db.url,
        "UPDATE runlog_workers SET expires_at = now() - interval '1 second'",
    );
    assert!(first.live_workers().unwrap().is_empty());
    match first.append("r", Some(1), vec![b"late".to_vec()]) {
        Err(e @ StoreError::Fenced { .. }) => assert!(e.to_string().contains("expired"), "{e}"),
        other => panic!("an expired worker appended: {other:?}"),
    }
    second.join("w1", Duration::from_secs(30)).unwrap();
    match first.append("r", Some(1), vec![b"late".to_vec()]) {
        Err(e @ StoreError::Fenced { .. }) => {
            assert!(e.to_string().contains("another process"), "{e}")
        }
        other => panic!("a worker whose name was taken over appended: {other:?}"),
    }
    assert_eq!(
        second
            .append("r", Some(1), vec![b"two".to_vec()])
            .unwrap()
            .seq,
        2
    );
    assert_eq!(first.head("r").unwrap().unwrap().seq, 2);
    second.leave().unwrap();
    assert!(second.live_workers().unwrap().is_empty());
}

#[test]
fn appends_from_many_threads_share_transactions() {
    let Some(db) = scratch() else { return };
    let log = PgLog::connect(&db.url).unwrap();
    let (threads, each) = (8, 50);
    std::thread::scope(|s| {
        for t in 0..threads {
            let log = &log;
            s.spawn(move || {
                for i in 0..each {
                    let run = format!("group-{t}");
                    log.append(&run, Some(i), vec![format!("{t}-{i}").into_bytes()])
                        .unwrap();
                }
            });
        }
    });
    for t in 0..threads {
        assert_eq!(log.head(&format!("group-{t}")).unwrap().unwrap().seq, each);
        assert!(log.verify(&format!("group-{t}")).unwrap().is_ok());
    }
    // Each row's xmin is the transaction that inserted it.
    let transactions = admin(
        &db.url,
        "SELECT count(DISTINCT xmin::text) FROM runlog_events",
    );
    let appends = i64::try_from(threads * each).unwrap();
    assert!(
        transactions < appends / 2,
        "{appends} appends from {threads} threads took {transactions} transactions"
    );
}

#[test]
fn verify_names_records_past_the_head_and_a_head_past_its_records() {
    let Some(db) = scratch() else { return };
    let log = PgLog::connect(&db.url).unwrap();
    log.append("r", Some(0), vec![b"one".to_vec(), b"two".to_vec()])
        .unwrap();
    assert!(log.verify("r").unwrap().is_ok());
    // A record written by hand after the head, the head left where it was.
    admin(
        &db.url,
        "INSERT INTO runlog_events (num, seq, hash, body)
         SELECT num, 3, hash, body FROM runlog_events WHERE seq = 2",
    );
    let report = log.verify("r").unwrap();
    let damage = report.damage.expect("a record past the head is damage");
    assert_eq!(damage.seq, 3, "{}", damage.reason);
    assert!(
        damage.reason.contains("past the run's head"),
        "{}",
        damage.reason
    );
    // The head moved on by hand past the records it has.
    admin(&db.url, "DELETE FROM runlog_events WHERE seq = 3");
    admin(&db.url, "UPDATE runlog_runs SET head_seq = 3");
    let report = log.verify("r").unwrap();
    assert_eq!(report.verified, 2);
    let damage = report.damage.expect("a head past its records is damage");
    assert!(
        damage.reason.contains("records end at seq 2"),
        "{}",
        damage.reason
    );
}
