//! An append: one transaction that locks the run's head row, checks the expected seq, inserts
//! the records and moves the head.
//!
//! When the connection is lost the transaction may or may not have committed. The answer is in
//! the log: if it now holds exactly these records right after the expected head, the append
//! went through; if the head is still the expected one, it did not and is tried again on a new
//! connection. An append with no expected seq is made into one with the head read just before,
//! so that it too can be settled this way (and is retried when someone else appended first).

use super::lease::Fence;
use super::{to_i64, Pg, PgLog};
use crate::error::{Result, StoreError};
use crate::frame::{genesis, link};
use crate::log::{landed, validate_append, EventLog};
use crate::types::Head;
use std::sync::Arc;
use std::time::Duration;

/// How many times a lost connection is tried again before it is reported.
pub(super) const RETRIES: u32 = 5;
/// How many times an append without an expected seq is tried again when others appended first.
const RACES: u32 = 1_000;

/// The pause before the `tries`th retry: 50 ms, doubling, at most 1.6 s.
pub(super) fn backoff(tries: u32) -> Duration {
    Duration::from_millis(50 << tries.min(5))
}

pub(super) fn append(
    log: &PgLog,
    run: &str,
    expected: Option<u64>,
    bodies: Vec<Vec<u8>>,
) -> Result<Head> {
    validate_append(run, &bodies)?;
    let bodies = std::sync::Arc::new(bodies);
    let (mut lost, mut races) = (0, 0);
    loop {
        let at = match expected {
            Some(seq) => seq,
            None => log.head(run)?.map_or(0, |h| h.seq),
        };
        let (owned, batch, fence) = (run.to_owned(), bodies.clone(), log.held.fence());
        let append = move |pg: Arc<Pg>| async move {
            transaction(&pg, &owned, at, &batch, fence.as_ref()).await
        };
        match log.call(append) {
            Err(StoreError::Conflict { .. }) if expected.is_none() && races < RACES => races += 1,
            Err(e @ StoreError::Postgres { lost: true, .. }) => {
                if lost >= RETRIES {
                    return Err(e);
                }
                lost += 1;
                std::thread::sleep(backoff(lost));
                match settle(log, run, at, &bodies) {
                    Ok(Some(head)) => return Ok(head),
                    Ok(None) => {}
                    // It did not land and others appended meanwhile: for an append with no
                    // expected seq, that is only a race to run again.
                    Err(StoreError::Conflict { .. }) if expected.is_none() => {}
                    Err(StoreError::Postgres { lost: true, .. }) => {}
                    Err(other) => return Err(other),
                }
            }
            other => return other,
        }
    }
}

/// After a lost connection: the head if the append landed, `None` if it did not (and may be
/// tried again), or a conflict if someone else appended after `at` instead.
fn settle(log: &PgLog, run: &str, at: u64, bodies: &[Vec<u8>]) -> Result<Option<Head>> {
    if let Some(head) = landed(log, run, Some(at), bodies)? {
        return Ok(Some(head));
    }
    let actual = log.head(run)?.map_or(0, |h| h.seq);
    if actual == at {
        Ok(None)
    } else {
        Err(StoreError::Conflict {
            run: run.to_owned(),
            expected: at,
            actual,
        })
    }
}

async fn transaction(
    pg: &Pg,
    run: &str,
    expected: u64,
    bodies: &[Vec<u8>],
    fence: Option<&Fence>,
) -> Result<Head> {
    let mut client = pg.client().await?;
    let tx = client
        .transaction()
        .await
        .map_err(|e| pg.error("cannot begin an append", &e))?;
    if let Some(fence) = fence {
        super::lease::check(pg, &tx, fence).await?;
    }
    // Prepared once per connection: each statement is then one round trip.
    let locked = tx
        .prepare_cached(
            "SELECT num, head_seq, head_hash FROM runlog_runs WHERE run = $1 FOR UPDATE",
        )
        .await
        .map_err(|e| pg.error("cannot lock the run's head", &e))?;
    let mut row = tx
        .query_opt(&locked, &[&run])
        .await
        .map_err(|e| pg.error("cannot lock the run's head", &e))?;
    if row.is_none() {
        if expected != 0 {
            return Err(conflict(run, expected, 0));
        }
        // Two first appends race here: one inserts, the other waits for it and then locks the
        // row it made (and finds its expected seq stale).
        tx.execute(
            "INSERT INTO runlog_runs (run, created_ms, head_seq, head_hash)
             VALUES ($1, $2, 0, $3) ON CONFLICT (run) DO NOTHING",
            &[&run, &now_ms(), &genesis(run).as_slice()],
        )
        .await
        .map_err(|e| pg.error("cannot create the run", &e))?;
        row = tx
            .query_opt(&locked, &[&run])
            .await
            .map_err(|e| pg.error("cannot lock the run's head", &e))?;
    }
    let Some(row) = row else {
        return Err(conflict(run, expected, 0));
    };
    let num: i64 = row.get(0);
    let head_seq = row.get::<_, i64>(1).max(0) as u64;
    if head_seq != expected {
        return Err(conflict(run, expected, head_seq));
    }
    let stored: Vec<u8> = row.get(2);
    let mut hash = <[u8; 32]>::try_from(stored.as_slice()).map_err(|_| StoreError::Damaged {
        run: run.to_owned(),
        damage: crate::error::Damage::corrupt(head_seq, "the run's head hash is not 32 bytes"),
    })?;
    let mut seqs = Vec::with_capacity(bodies.len());
    let mut hashes = Vec::with_capacity(bodies.len());
    for (i, body) in bodies.iter().enumerate() {
        hash = link(&hash, body);
        seqs.push(to_i64(expected + 1 + i as u64));
        hashes.push(hash.to_vec());
    }
    let seq = expected + bodies.len() as u64;
    // The records, the head moved, and the notification (delivered at commit, in commit order,
    // to every listener: a wake-up only, followers read by seq) in one statement.
    let append = tx
        .prepare_cached(
            "WITH records AS (
                INSERT INTO runlog_events (num, seq, hash, body)
                SELECT $1, s, h, b FROM unnest($2::bigint[], $3::bytea[], $4::bytea[]) AS t(s, h, b)
             ), head AS (
                UPDATE runlog_runs SET head_seq = $5, head_hash = $6 WHERE num = $1
             )
             SELECT pg_notify('runlog', $7)",
        )
        .await
        .map_err(|e| pg.error("cannot insert the records", &e))?;
    let note = format!("{seq} {run}");
    tx.execute(
        &append,
        &[
            &num,
            &seqs,
            &hashes,
            &bodies,
            &to_i64(seq),
            &hash.as_slice(),
            &note,
        ],
    )
    .await
    .map_err(|e| pg.error("cannot insert the records", &e))?;
    tx.commit()
        .await
        .map_err(|e| pg.error("cannot commit the append", &e))?;
    Ok(Head { seq, hash })
}

fn conflict(run: &str, expected: u64, actual: u64) -> StoreError {
    StoreError::Conflict {
        run: run.to_owned(),
        expected,
        actual,
    }
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}
