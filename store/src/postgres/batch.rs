//! Group commit for the shared store: the appends a process's threads make while one
//! transaction is at the server wait for it to end and then go together in the next one, so
//! eight producers cost about one round trip and one WAL flush per round, not eight.
//!
//! One transaction takes the whole group. It makes the runs whose first append is in it, then
//! locks the head rows of every run in it, in the order of their numbers as every group does,
//! so two processes never wait on each other in a circle. It settles each append against the
//! head its run has by then (the earlier appends of the same group included), and inserts all
//! the records and moves all the heads in one statement. An append whose expected seq is stale
//! is answered with its conflict and leaves the others alone; a failure of the transaction
//! itself (a lost connection, a lost lease) is every append's answer, and each caller settles
//! it by reading the log as it would alone.

use super::lease::Fence;
use super::quick::{self, Heads, Known};
use super::{chain_of, check_from, to_i64, Pg, Rows};
use crate::blocks::{Blocks, Chain, Linker, BLOCK};
use crate::error::{Result, StoreError};
use crate::types::Head;
use std::collections::HashMap;
use std::sync::Arc;
use tokio::sync::mpsc;

/// A group closes at this many records: one statement stays a bounded size.
const GROUP_RECORDS: usize = 8_192;

/// One caller's append, waiting for its group.
struct Job {
    run: String,
    at: u64,
    /// How the run is chained, if this append creates it.
    chain: Chain,
    bodies: Arc<Vec<Vec<u8>>>,
    fence: Option<Fence>,
    answer: std::sync::mpsc::SyncSender<Result<Head>>,
}

/// Where appends queue for the next group.
#[derive(Debug)]
pub(super) struct Batcher {
    queue: mpsc::UnboundedSender<Job>,
}

impl Batcher {
    /// Starts the task that commits the groups, on the log's runtime.
    pub(super) fn start(handle: &tokio::runtime::Handle, pg: Arc<Pg>) -> Self {
        let (queue, jobs) = mpsc::unbounded_channel();
        handle.spawn(serve(pg, jobs));
        Self { queue }
    }

    /// Appends `bodies` to `run` right after seq `at`, in the next group; waits for its answer.
    pub(super) fn append(
        &self,
        run: &str,
        at: u64,
        chain: Chain,
        bodies: Arc<Vec<Vec<u8>>>,
        fence: Option<Fence>,
    ) -> Result<Head> {
        let (answer, answered) = std::sync::mpsc::sync_channel(1);
        let job = Job {
            run: run.to_owned(),
            at,
            chain,
            bodies,
            fence,
            answer,
        };
        self.queue.send(job).map_err(|_| StoreError::Closed)?;
        answered.recv().map_err(|_| StoreError::Closed)?
    }
}

async fn serve(pg: Arc<Pg>, mut jobs: mpsc::UnboundedReceiver<Job>) {
    let mut held: Option<Job> = None;
    // The head of each run this process appended to, where its last group left it: the next
    // append goes on from it in one statement, without reading the head or its block back.
    let mut heads = Heads::default();
    loop {
        let first = match held.take() {
            Some(job) => job,
            None => match jobs.recv().await {
                Some(job) => job,
                None => return,
            },
        };
        let mut records = first.bodies.len();
        let fence = first.fence.clone();
        let mut group = vec![first];
        while records < GROUP_RECORDS {
            match jobs.try_recv() {
                // A lease taken or lost between two appends: each group is checked under one.
                Ok(job) if job.fence != fence => {
                    held = Some(job);
                    break;
                }
                Ok(job) => {
                    records += job.bodies.len();
                    group.push(job);
                }
                Err(_) => break,
            }
        }
        let answers = commit(&pg, &group, fence.as_ref(), &mut heads).await;
        for (job, answer) in group.iter().zip(answers) {
            let _ = job.answer.send(answer);
        }
    }
}

/// Each append's answer: those this process can chain on its own in one statement
/// ([`quick`]), the rest (and those the statement left) in the group's transaction.
async fn commit(
    pg: &Pg,
    group: &[Job],
    fence: Option<&Fence>,
    heads: &mut Heads,
) -> Vec<Result<Head>> {
    let mut answers: Vec<Option<Result<Head>>> = group.iter().map(|_| None).collect();
    let appends = group
        .iter()
        .enumerate()
        .map(|(i, j)| (i, j.run.as_str(), j.at, j.bodies.as_slice()));
    if let Some(staged) = quick::stage(appends, heads) {
        let outcomes = match quick::append(pg, &staged, fence).await {
            Ok(outcomes) => outcomes,
            Err(e) => return group.iter().map(|_| Err(again(&e))).collect(),
        };
        for (s, outcome) in staged.into_iter().zip(outcomes) {
            let Some(answer) = answers.get_mut(s.index) else {
                continue;
            };
            match outcome {
                quick::Outcome::Landed => {
                    *answer = Some(Ok(Head {
                        seq: s.known.seq,
                        hash: s.known.linker.hash(),
                    }));
                    heads.left(s.run(), s.known);
                }
                // A lost race is answered at once, and this process goes on from the new head
                // when the records it was handed chain from where it left the run.
                quick::Outcome::Moved { actual, records } => {
                    *answer = Some(Err(conflict(s.run(), s.at(), actual)));
                    if let Some(known) = heads
                        .get(s.run())
                        .and_then(|k| quick::caught_up(k, actual, &records))
                    {
                        heads.left(s.run(), known);
                    }
                }
                quick::Outcome::Unsure => {}
            }
        }
    }
    let rest: Vec<&Job> = group
        .iter()
        .zip(&answers)
        .filter(|(_, a)| a.is_none())
        .map(|(j, _)| j)
        .collect();
    if !rest.is_empty() {
        let mut more = match transaction(pg, &rest, fence, heads).await {
            Ok(more) => more.into_iter(),
            Err(e) => rest
                .iter()
                .map(|_| Err(again(&e)))
                .collect::<Vec<_>>()
                .into_iter(),
        };
        for answer in answers.iter_mut().filter(|a| a.is_none()) {
            *answer = more.next();
        }
    }
    answers
        .into_iter()
        .map(|a| a.unwrap_or(Err(StoreError::Closed)))
        .collect()
}

/// The same failure for another append of the group.
fn again(e: &StoreError) -> StoreError {
    match e {
        StoreError::Postgres {
            at,
            what,
            why,
            lost,
        } => StoreError::Postgres {
            at: at.clone(),
            what,
            why: why.clone(),
            lost: *lost,
        },
        StoreError::Fenced { worker, why } => StoreError::Fenced {
            worker: worker.clone(),
            why: why.clone(),
        },
        StoreError::Closed => StoreError::Closed,
        other => StoreError::Invalid(other.to_string()),
    }
}

/// A run's head as the group's transaction moves it.
struct RunHead {
    num: i64,
    seq: u64,
    hash: [u8; 32],
    chain: Chain,
    /// The chain at the head, once the run is appended to.
    linker: Option<Linker>,
    moved: bool,
}

/// The group's transaction: each append's answer, or the failure they all share.
async fn transaction(
    pg: &Pg,
    group: &[&Job],
    fence: Option<&Fence>,
    heads: &mut Heads,
) -> Result<Vec<Result<Head>>> {
    let mut client = pg.client().await?;
    let tx = client
        .transaction()
        .await
        .map_err(|e| pg.error("cannot begin an append", &e))?;
    if let Some(fence) = fence {
        super::lease::check(pg, &tx, fence).await?;
    }
    let mut runs: Vec<&str> = group.iter().map(|j| j.run.as_str()).collect();
    runs.sort_unstable();
    runs.dedup();
    // Runs whose first append may be in this group are made first, before any head is
    // locked: a transaction waiting on another's new run then holds no lock that other one
    // could wait for. Two first appends from two processes race on the insert; the loser waits
    // for the winner's commit, then finds the row and (its expected seq now stale) a conflict.
    let new: Vec<&str> = runs
        .iter()
        .copied()
        .filter(|r| group.iter().any(|j| j.run == *r && j.at == 0))
        .collect();
    if !new.is_empty() {
        // A run's chain is the one its first append in the group asks for.
        let kinds: Vec<Chain> = new
            .iter()
            .map(|r| {
                group
                    .iter()
                    .find(|j| j.run == *r && j.at == 0)
                    .map_or(Chain::Blocked, |j| j.chain)
            })
            .collect();
        let geneses: Vec<Vec<u8>> = new
            .iter()
            .zip(&kinds)
            .map(|(r, c)| c.genesis(r).to_vec())
            .collect();
        let numbers: Vec<i16> = kinds.iter().map(|c| c.number() as i16).collect();
        tx.execute(
            "INSERT INTO runlog_runs (run, created_ms, head_seq, head_hash, chain)
             SELECT r, $2, 0, g, c FROM unnest($1::text[], $3::bytea[], $4::smallint[]) AS t(r, g, c)
             ON CONFLICT (run) DO NOTHING",
            &[&new, &now_ms(), &geneses, &numbers],
        )
        .await
        .map_err(|e| pg.error("cannot create the run", &e))?;
    }
    let mut locked = lock(pg, &tx, &runs).await?;
    let mut answers = Vec::with_capacity(group.len());
    let (mut nums, mut seqs, mut hashes, mut bodies) = (vec![], vec![], vec![], vec![]);
    for job in group {
        let Some(head) = locked.get_mut(job.run.as_str()) else {
            answers.push(Err(conflict(&job.run, job.at, 0)));
            continue;
        };
        if head.seq != job.at {
            answers.push(Err(conflict(&job.run, job.at, head.seq)));
            continue;
        }
        let linker = match head.linker.as_mut() {
            Some(l) => l,
            None => head
                .linker
                .insert(linker_at(pg, &tx, &job.run, head, heads).await?),
        };
        for body in job.bodies.iter() {
            head.hash = linker.push(body);
            head.seq += 1;
            nums.push(head.num);
            seqs.push(to_i64(head.seq));
            hashes.push(head.hash.to_vec());
            bodies.push(body.as_slice());
        }
        head.moved = true;
        answers.push(Ok(Head {
            seq: head.seq,
            hash: head.hash,
        }));
    }
    if nums.is_empty() {
        // Nothing to write: dropping the transaction rolls it back.
        return Ok(answers);
    }
    let moved: Vec<(&str, &RunHead)> = locked
        .iter()
        .filter(|(_, h)| h.moved)
        .map(|(r, h)| (*r, h))
        .collect();
    let head_nums: Vec<i64> = moved.iter().map(|(_, h)| h.num).collect();
    let head_seqs: Vec<i64> = moved.iter().map(|(_, h)| to_i64(h.seq)).collect();
    let head_hashes: Vec<Vec<u8>> = moved.iter().map(|(_, h)| h.hash.to_vec()).collect();
    // A wake-up per run, delivered at commit in commit order; followers read by seq.
    let notes: Vec<String> = moved
        .iter()
        .map(|(r, h)| format!("{} {r}", h.seq))
        .collect();
    // Prepared once per connection: each statement is then one round trip.
    let write = tx
        .prepare_cached(
            "WITH records AS (
                INSERT INTO runlog_events (num, seq, hash, body)
                SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::bytea[], $4::bytea[])
             ), heads AS (
                UPDATE runlog_runs AS r SET head_seq = t.s, head_hash = t.h
                FROM unnest($5::bigint[], $6::bigint[], $7::bytea[]) AS t(n, s, h)
                WHERE r.num = t.n
             )
             SELECT pg_notify('runlog', n) FROM unnest($8::text[]) AS n",
        )
        .await
        .map_err(|e| pg.error("cannot insert the records", &e))?;
    tx.execute(
        &write,
        &[
            &nums,
            &seqs,
            &hashes,
            &bodies,
            &head_nums,
            &head_seqs,
            &head_hashes,
            &notes,
        ],
    )
    .await
    .map_err(|e| pg.error("cannot insert the records", &e))?;
    tx.commit()
        .await
        .map_err(|e| pg.error("cannot commit the append", &e))?;
    for (run, head) in moved {
        if let Some(linker) = &head.linker {
            heads.left(
                run,
                Known {
                    num: head.num,
                    seq: head.seq,
                    linker: linker.clone(),
                },
            );
        }
    }
    Ok(answers)
}

/// The chain at a run's head, to go on from: as this process's last group left it, or else
/// read back from the rows of the head's block (checked).
async fn linker_at(
    pg: &Pg,
    tx: &deadpool_postgres::Transaction<'_>,
    run: &str,
    head: &RunHead,
    heads: &Heads,
) -> Result<Linker> {
    if head.chain == Chain::PerRecord {
        return Ok(Linker::PerRecord(head.hash));
    }
    if let Some(linker) = heads.linker(run, head.num, head.seq, &head.hash) {
        return Ok(linker);
    }
    if head.seq % BLOCK == 0 {
        return Ok(Linker::Blocked(Box::new(Blocks::at_block_end(
            head.seq, head.hash,
        ))));
    }
    let start = check_from(Chain::Blocked, head.seq + 1);
    let statement = tx
        .prepare_cached(
            "SELECT seq, hash, body FROM runlog_events
             WHERE num = $1 AND seq >= $2 AND seq <= $3 ORDER BY seq",
        )
        .await
        .map_err(|e| pg.error("cannot read the run's last block", &e))?;
    let rows = tx
        .query(&statement, &[&head.num, &to_i64(start), &to_i64(head.seq)])
        .await
        .map_err(|e| pg.error("cannot read the run's last block", &e))?;
    let mut checker = Rows::new(run, Chain::Blocked, start);
    for row in &rows {
        checker.take(&super::row_of(head.num, row)?)?;
    }
    match checker.linker() {
        Some(linker) if linker.hash() == head.hash => Ok(linker),
        _ => Err(StoreError::Damaged {
            run: run.to_owned(),
            damage: crate::error::Damage::corrupt(
                head.seq,
                "the run's records do not end at its head",
            ),
        }),
    }
}

/// Locks the head rows of `runs` (those that exist), in the order of their numbers.
async fn lock<'r>(
    pg: &Pg,
    tx: &deadpool_postgres::Transaction<'_>,
    runs: &[&'r str],
) -> Result<HashMap<&'r str, RunHead>> {
    let statement = tx
        .prepare_cached(
            "SELECT run, num, head_seq, head_hash, chain FROM runlog_runs
             WHERE run = ANY($1) ORDER BY num FOR UPDATE",
        )
        .await
        .map_err(|e| pg.error("cannot lock the run's head", &e))?;
    let rows = tx
        .query(&statement, &[&runs])
        .await
        .map_err(|e| pg.error("cannot lock the run's head", &e))?;
    let mut heads = HashMap::with_capacity(rows.len());
    for row in rows {
        let name: String = row.get(0);
        let Some(run) = runs.iter().copied().find(|r| *r == name) else {
            continue;
        };
        let head_seq = row.get::<_, i64>(2).max(0) as u64;
        let stored: Vec<u8> = row.get(3);
        let hash = <[u8; 32]>::try_from(stored.as_slice()).map_err(|_| StoreError::Damaged {
            run: run.to_owned(),
            damage: crate::error::Damage::corrupt(head_seq, "the run's head hash is not 32 bytes"),
        })?;
        heads.insert(
            run,
            RunHead {
                num: row.get(1),
                seq: head_seq,
                hash,
                chain: chain_of(run, row.get(4))?,
                linker: None,
                moved: false,
            },
        );
    }
    Ok(heads)
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
