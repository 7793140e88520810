//! A group's append in one statement, one round trip: when this process already knows the
//! head of every run in the group (its own last append left it there), it chains the records
//! itself and sends a single statement, committed on its own, that takes the worker's lease (if
//! any) under a share lock, locks the runs' head rows in the order of their numbers, moves each
//! head that is still where this process left it, inserts those runs' records and notifies.
//!
//! A run whose head moved meanwhile (another process appended), whose lease is gone, or that
//! this process does not know is left untouched by the statement; its append goes on to the
//! transaction of [`super::batch`], which reads the head, chains from it and answers the
//! conflict or the fence as before. So the quick path changes how many round trips an append
//! takes, never what it answers.

use super::lease::Fence;
use super::{to_i64, Pg};
use crate::blocks::Linker;
use crate::error::Result;
use std::collections::HashMap;

/// Runs whose head a process keeps where its last append left it, at most (two kilobytes a
/// run for a blocked chain): past it, runs start again from their rows.
const KEPT: usize = 4_096;

/// A run's head as this process's last append to it left it.
#[derive(Clone, Debug)]
pub(super) struct Known {
    pub(super) num: i64,
    pub(super) seq: u64,
    pub(super) linker: Linker,
}

/// The heads this process knows, by run.
#[derive(Debug, Default)]
pub(super) struct Heads(HashMap<String, Known>);

impl Heads {
    /// The chain at `run`'s head if this process left it at (`num`, `seq`, `hash`).
    pub(super) fn linker(&self, run: &str, num: i64, seq: u64, hash: &[u8; 32]) -> Option<Linker> {
        self.0
            .get(run)
            .filter(|k| k.num == num && k.seq == seq && &k.linker.hash() == hash)
            .map(|k| k.linker.clone())
    }

    /// Where this process last left `run`.
    pub(super) fn get(&self, run: &str) -> Option<&Known> {
        self.0.get(run)
    }

    /// Remembers where an append left `run`.
    pub(super) fn left(&mut self, run: &str, known: Known) {
        if self.0.len() >= KEPT && !self.0.contains_key(run) {
            self.0.clear();
        }
        self.0.insert(run.to_owned(), known);
    }
}

/// One append of the group, chained as the statement would make it.
pub(super) struct Staged<'a> {
    /// Which of the group's appends.
    pub(super) index: usize,
    run: &'a str,
    bodies: &'a [Vec<u8>],
    at: u64,
    /// The head's hash this process left it at.
    old: [u8; 32],
    /// Each record's chain hash.
    hashes: Vec<[u8; 32]>,
    /// Where the append leaves the run.
    pub(super) known: Known,
}

impl<'a> Staged<'a> {
    pub(super) fn run(&self) -> &'a str {
        self.run
    }

    /// The seq the append expects the run's head at.
    pub(super) fn at(&self) -> u64 {
        self.at
    }
}

/// The group's appends staged for one statement, or `None` if any of them cannot be (a run
/// this process does not know at the expected seq, a new run, a run twice in the group).
pub(super) fn stage<'a>(
    appends: impl Iterator<Item = (usize, &'a str, u64, &'a [Vec<u8>])>,
    heads: &Heads,
) -> Option<Vec<Staged<'a>>> {
    let mut staged: Vec<Staged<'a>> = vec![];
    for (index, run, at, bodies) in appends {
        let known = heads.0.get(run).filter(|k| k.seq == at && at > 0)?;
        if staged.iter().any(|s| s.run == run) {
            return None;
        }
        let mut linker = known.linker.clone();
        let hashes = bodies.iter().map(|b| linker.push(b)).collect();
        staged.push(Staged {
            index,
            run,
            bodies,
            at,
            old: known.linker.hash(),
            hashes,
            known: Known {
                num: known.num,
                seq: at + bodies.len() as u64,
                linker,
            },
        });
    }
    Some(staged)
}

/// The statement's text without the lease checked, and with it (a worker's appends): made once.
static UNFENCED: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| statement(false));
static FENCED: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| statement(true));

/// The statement's text, with the lease checked or not (the lease as [`super::lease::check`]
/// reads it: the worker's token, unexpired on the server's clock).
fn statement(fenced: bool) -> String {
    let (fence, held) = if fenced {
        (
            "fence AS (
                SELECT 1 FROM runlog_workers
                WHERE name = $11 AND token = $12 AND expires_at > clock_timestamp() FOR SHARE
             ),",
            "AND EXISTS (SELECT 1 FROM fence)",
        )
    } else {
        ("", "")
    };
    format!(
        "WITH {fence} want AS (
            SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::bytea[], $4::bigint[],
                                 $5::bytea[], $6::text[]) AS w(num, at, old, seq, hash, note)
         ), locked AS (
            SELECT r.num, r.head_seq, r.head_hash FROM runlog_runs r
            WHERE r.num = ANY($1) {held} ORDER BY r.num FOR UPDATE
         ), moved AS (
            UPDATE runlog_runs r SET head_seq = w.seq, head_hash = w.hash
            FROM locked l, want w
            WHERE w.num = l.num AND r.num = l.num AND l.head_seq = w.at AND l.head_hash = w.old
            RETURNING r.num
         ), records AS (
            INSERT INTO runlog_events (num, seq, hash, body)
            SELECT e.n, e.s, e.h, e.b
            FROM unnest($7::bigint[], $8::bigint[], $9::bytea[], $10::bytea[]) AS e(n, s, h, b)
            WHERE e.n IN (SELECT num FROM moved)
         )
         SELECT l.num, l.head_seq, m.num IS NOT NULL,
                CASE WHEN m.num IS NOT NULL THEN pg_notify('runlog', w.note)::text END,
                e.seq, e.hash, e.body
         FROM locked l JOIN want w ON w.num = l.num
         LEFT JOIN moved m ON m.num = l.num
         LEFT JOIN LATERAL (
            SELECT seq, hash, body FROM runlog_events
            WHERE m.num IS NULL AND num = l.num AND seq > w.at AND seq <= l.head_seq
              AND l.head_seq - w.at <= {CATCH_UP}
            OFFSET 0
         ) e ON true
         ORDER BY l.num, e.seq"
    )
}

// `OFFSET 0` keeps the lost race's records a subquery of their own, run (by the primary key)
// only for a run whose head moved: flattened into a join, the planner read all of
// `runlog_events` at every append.

/// At most this many records another process appended are handed back with a lost race.
const CATCH_UP: u64 = 256;

/// What became of a staged append.
pub(super) enum Outcome {
    Landed,
    /// Another process moved the head to `actual` first; its records from the expected seq on,
    /// as the statement could see them (none when too many, or committed after it began).
    /// Answered at once as a conflict.
    Moved {
        actual: u64,
        records: Vec<(u64, Vec<u8>, Vec<u8>)>,
    },
    /// Not settled here (the lease, or the run, was not found, or the head is at the expected
    /// seq with another hash): the transaction decides.
    Unsure,
}

/// Sends the staged appends in one statement; answers what became of each, in their order.
pub(super) async fn append(
    pg: &Pg,
    staged: &[Staged<'_>],
    fence: Option<&Fence>,
) -> Result<Vec<Outcome>> {
    let client = pg.client().await?;
    let text: &str = if fence.is_some() { &FENCED } else { &UNFENCED };
    let prepared = client
        .prepare_cached(text)
        .await
        .map_err(|e| pg.error("cannot insert the records", &e))?;
    let nums: Vec<i64> = staged.iter().map(|s| s.known.num).collect();
    let ats: Vec<i64> = staged.iter().map(|s| to_i64(s.at)).collect();
    let olds: Vec<&[u8]> = staged.iter().map(|s| s.old.as_slice()).collect();
    let seqs: Vec<i64> = staged.iter().map(|s| to_i64(s.known.seq)).collect();
    let heads: Vec<Vec<u8>> = staged
        .iter()
        .map(|s| s.known.linker.hash().to_vec())
        .collect();
    let notes: Vec<String> = staged
        .iter()
        .map(|s| format!("{} {}", s.known.seq, s.run))
        .collect();
    let (mut record_nums, mut record_seqs, mut record_hashes, mut record_bodies) =
        (vec![], vec![], vec![], vec![]);
    for s in staged {
        for (i, (body, hash)) in s.bodies.iter().zip(&s.hashes).enumerate() {
            record_nums.push(s.known.num);
            record_seqs.push(to_i64(s.at + 1 + i as u64));
            record_hashes.push(hash.as_slice());
            record_bodies.push(body.as_slice());
        }
    }
    let mut params: Vec<&(dyn tokio_postgres::types::ToSql + Sync)> = vec![
        &nums,
        &ats,
        &olds,
        &seqs,
        &heads,
        &notes,
        &record_nums,
        &record_seqs,
        &record_hashes,
        &record_bodies,
    ];
    if let Some(fence) = fence {
        params.push(&fence.worker);
        params.push(&fence.token);
    }
    let rows = client
        .query(&prepared, &params)
        .await
        .map_err(|e| pg.error("cannot insert the records", &e))?;
    let at: HashMap<i64, u64> = staged.iter().map(|s| (s.known.num, s.at)).collect();
    let mut outcomes: HashMap<i64, Outcome> = HashMap::new();
    for row in &rows {
        let (num, head, landed): (i64, i64, bool) = (row.get(0), row.get(1), row.get(2));
        let actual = head.max(0) as u64;
        let outcome = outcomes.entry(num).or_insert_with(|| match landed {
            true => Outcome::Landed,
            false if at.get(&num) == Some(&actual) => Outcome::Unsure,
            false => Outcome::Moved {
                actual,
                records: vec![],
            },
        });
        if let (Outcome::Moved { records, .. }, Some(seq)) = (outcome, row.get::<_, Option<i64>>(4))
        {
            records.push((seq.max(0) as u64, row.get(5), row.get(6)));
        }
    }
    Ok(staged
        .iter()
        .map(|s| outcomes.remove(&s.known.num).unwrap_or(Outcome::Unsure))
        .collect())
}

/// The chain at `actual` from the chain at the expected seq and the records another process
/// appended after it, each hash checked; `None` unless they are all there and all agree.
pub(super) fn caught_up(
    from: &Known,
    actual: u64,
    records: &[(u64, Vec<u8>, Vec<u8>)],
) -> Option<Known> {
    if records.len() as u64 != actual.checked_sub(from.seq)? {
        return None;
    }
    let mut linker = from.linker.clone();
    for (i, (seq, hash, body)) in records.iter().enumerate() {
        if *seq != from.seq + 1 + i as u64 || linker.push(body).as_slice() != hash.as_slice() {
            return None;
        }
    }
    Some(Known {
        num: from.num,
        seq: actual,
        linker,
    })
}
