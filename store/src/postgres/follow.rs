//! Subscriptions: each subscriber remembers the last seq (and chain hash) it was given per run,
//! and is handed what follows it. A NOTIFY at each append's commit says which run to look at
//! now and up to which seq: taken in the order the server delivers them (commit order), they
//! give every subscriber the appends of all runs in the order they were committed. A poll every [`POLL`] and a full look after every reconnection catch whatever a lost
//! notification or a lost listening connection would have hidden. Reading by seq means nothing
//! is missed or given twice, and the chain is checked across what is delivered.

use super::{check_from, num_of, query_on, rows, Pg, PgLog, Rows, SCAN_BATCH};
use crate::blocks::Chain;
use crate::error::Result;
use crate::log::EventLog;
use crate::types::Record;
use crossbeam_channel::{Receiver, Sender};
use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;
use tokio_postgres::AsyncMessage;

/// How often followers look for appends even without a notification.
const POLL: Duration = Duration::from_millis(500);

/// The subscribers of one [`PgLog`] and whether its listener runs.
#[derive(Debug, Default)]
pub(super) struct Follow {
    subs: Arc<Mutex<Vec<Sub>>>,
    started: AtomicBool,
    listening: Arc<Listening>,
}

/// Whether the listener has issued LISTEN: a subscriber waits for it, so that the appends made
/// after `subscribe` returns reach it in commit order.
#[derive(Debug, Default)]
struct Listening {
    yes: Mutex<bool>,
    changed: Condvar,
}

/// How long a first subscriber waits for the listener before relying on the poll.
const LISTEN_WAIT: Duration = Duration::from_secs(5);

impl Listening {
    fn set(&self) {
        *self.yes.lock().unwrap_or_else(|p| p.into_inner()) = true;
        self.changed.notify_all();
    }

    fn wait(&self) {
        let yes = self.yes.lock().unwrap_or_else(|p| p.into_inner());
        let _ = self
            .changed
            .wait_timeout_while(yes, LISTEN_WAIT, |yes| !*yes);
    }
}

#[derive(Debug)]
struct Sub {
    run: Option<String>,
    /// Per run: the last seq delivered (or the head when it subscribed) and its chain hash.
    seen: HashMap<String, (u64, [u8; 32])>,
    tx: Sender<Record>,
}

impl Sub {
    fn wants(&self, run: &str) -> bool {
        self.run.as_deref().is_none_or(|r| r == run)
    }

    fn after(&self, run: &str) -> (u64, [u8; 32]) {
        self.seen.get(run).copied().unwrap_or((0, [0; 32]))
    }
}

pub(super) fn subscribe(log: &PgLog, run: Option<&str>) -> Receiver<Record> {
    let (tx, rx) = crossbeam_channel::unbounded();
    let heads = match run {
        Some(run) => log.head(run).map(|h| vec![(run.to_owned(), h)]),
        None => log
            .runs()
            .map(|runs| runs.into_iter().map(|m| (m.run, m.head)).collect()),
    };
    // Without the heads there is no "from now on": the subscriber gets a closed channel, as when
    // the store goes away.
    let Ok(heads) = heads else {
        return rx;
    };
    let seen = heads
        .into_iter()
        .map(|(run, head)| {
            let at = head.map_or((0, [0; 32]), |h| (h.seq, h.hash));
            (run, at)
        })
        .collect();
    lock(&log.follow.subs).push(Sub {
        run: run.map(str::to_owned),
        seen,
        tx,
    });
    if !log.follow.started.swap(true, Ordering::AcqRel) {
        log.handle.spawn(listen(
            log.pg.clone(),
            log.follow.subs.clone(),
            log.follow.listening.clone(),
        ));
    }
    log.follow.listening.wait();
    rx
}

fn lock(subs: &Mutex<Vec<Sub>>) -> std::sync::MutexGuard<'_, Vec<Sub>> {
    subs.lock().unwrap_or_else(|p| p.into_inner())
}

/// Listens for appends until the log is dropped, reconnecting when the connection goes.
async fn listen(pg: Arc<Pg>, subs: Arc<Mutex<Vec<Sub>>>, listening: Arc<Listening>) {
    loop {
        let Ok((client, mut connection)) = pg.config.connect(pg.connector.clone()).await else {
            // The server is away: keep polling through the pool, try to listen again later.
            tokio::time::sleep(POLL).await;
            let _ = catch_up(&pg, &subs, None).await;
            continue;
        };
        let (wake, mut woken) = tokio::sync::mpsc::unbounded_channel::<(String, u64)>();
        tokio::spawn(async move {
            while let Some(message) = std::future::poll_fn(|cx| connection.poll_message(cx)).await {
                match message {
                    Ok(AsyncMessage::Notification(n)) => {
                        if let Some((seq, run)) = n.payload().split_once(' ') {
                            let seq = seq.parse().unwrap_or(u64::MAX);
                            let _ = wake.send((run.to_owned(), seq));
                        }
                    }
                    Ok(_) => {}
                    Err(_) => break,
                }
            }
        });
        if client.batch_execute("LISTEN runlog").await.is_err() {
            tokio::time::sleep(POLL).await;
            continue;
        }
        // What was appended before listening, first; only then may subscribers go on, so that
        // what they see appended next comes through notifications, in commit order.
        let _ = catch_up(&pg, &subs, None).await;
        listening.set();
        loop {
            match tokio::time::timeout(POLL, woken.recv()).await {
                Ok(Some((run, upto))) => {
                    let _ = catch_up(&pg, &subs, Some((run, upto))).await;
                }
                // The listening connection is gone.
                Ok(None) => break,
                Err(_) => {
                    let _ = catch_up(&pg, &subs, None).await;
                }
            }
        }
    }
}

/// Delivers what each subscriber has not seen, of one run up to a seq (or of every run).
async fn catch_up(pg: &Pg, subs: &Mutex<Vec<Sub>>, one: Option<(String, u64)>) -> Result<()> {
    let (runs, upto): (Vec<String>, u64) = match one {
        Some((run, upto)) => (vec![run], upto),
        None => {
            let runs = query_on(
                pg,
                "cannot list the runs",
                "SELECT run FROM runlog_runs WHERE head_seq > 0",
                &[],
            )
            .await?
            .iter()
            .map(|r| r.get(0))
            .collect();
            (runs, u64::MAX)
        }
    };
    for run in runs {
        // Each distinct starting point is read once, however many subscribers share it.
        let starts: HashSet<(u64, [u8; 32])> = lock(subs)
            .iter()
            .filter(|s| s.wants(&run))
            .map(|s| s.after(&run))
            .collect();
        if starts.is_empty() {
            continue;
        }
        let Some((num, chain)) = num_of(pg, &run).await? else {
            continue;
        };
        for (after, hash) in starts {
            deliver(pg, subs, (&run, num, chain), (after, hash), upto).await?;
        }
    }
    Ok(())
}

/// Reads run `num` after `from` up to `upto` and hands each record to the subscribers that
/// stand at `from`.
async fn deliver(
    pg: &Pg,
    subs: &Mutex<Vec<Sub>>,
    (run, num, chain): (&str, i64, Chain),
    from: (u64, [u8; 32]),
    upto: u64,
) -> Result<()> {
    let (mut after, mut prev) = from;
    let mut next = check_from(chain, after + 1);
    let mut checker = Rows::new(run, chain, next);
    checker.holds = (after > 0).then_some(from);
    while after < upto {
        let batch = rows(pg, num, next, upto, SCAN_BATCH).await?;
        let full = batch.len() as i64 == SCAN_BATCH;
        let mut records = Vec::with_capacity(batch.len());
        for row in &batch {
            let checked = checker.take(row)?;
            next = row.0 + 1;
            let Some(hash) = checked.filter(|_| row.0 > after) else {
                continue;
            };
            records.push(Record {
                run: run.to_owned(),
                seq: row.0,
                hash,
                body: row.2.clone(),
            });
            (after, prev) = (row.0, hash);
        }
        let Some(first) = records.first().map(|r| r.seq) else {
            return Ok(());
        };
        lock(subs).retain_mut(|sub| {
            if !sub.wants(run) || sub.after(run).0 + 1 != first {
                return true;
            }
            for record in &records {
                if sub.tx.send(record.clone()).is_err() {
                    return false;
                }
            }
            sub.seen.insert(run.to_owned(), (after, prev));
            true
        });
        if !full {
            return Ok(());
        }
    }
    Ok(())
}
