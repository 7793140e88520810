//! An append: it goes to the server in the next group ([`super::batch`]), one transaction
//! that locks the run's head row, checks the expected seq, inserts the records and moves the
//! head.
//!
//! When the connection is lost the transaction may or may not have committed. The answer is in
//! the log: if it now holds exactly these records right after the expected head, the append
//! went through; if the head is still the expected one, it did not and is tried again on a new
//! connection. An append with no expected seq is made into one with the head read just before,
//! so that it too can be settled this way (and is retried when someone else appended first).

use super::PgLog;
use crate::blocks::Chain;
use crate::error::{Result, StoreError};
use crate::log::{landed, validate_append, EventLog};
use crate::types::Head;
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
    chain: Chain,
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
        let tried = log
            .batcher
            .append(run, at, chain, bodies.clone(), log.held.append_fence());
        // After a lost connection, the transaction the server had may have committed while
        // this one waited for the head's lock: a conflict with its own records is success.
        if lost > 0 && matches!(tried, Err(StoreError::Conflict { .. })) {
            if let Some(head) = landed(log, run, Some(at), &bodies)? {
                return Ok(head);
            }
        }
        match tried {
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
