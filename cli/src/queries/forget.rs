//! Forgetting runs (`runlog forget`, and the retention `serve` and workers apply): which runs
//! may go, the tombstone each leaves in the register of forgotten runs, and what that register
//! says afterwards (`verify`, `digest`).
//!
//! A run may go once nothing needs its history: no runner executes it, no run that stays was
//! forked from it (a fork replays from its parent's state), and it is no sub-project child of
//! a run that stays and has not finished (the parent would resume it).

use crate::queries::du::blobs_named;
use crate::queries::runs::{rows, Row};
use runlog_core::codec::encode_event;
use runlog_core::{Event, EventKind, Forgotten, Hash, RunId, Timestamp, FORGOTTEN_RUNS};
use runlog_replay::Result;
use runlog_store::EventLog;
use serde::Serialize;
use std::collections::BTreeSet;
use std::path::Path;

/// A run chosen to be forgotten, with what its tombstone will say.
#[derive(Debug, Clone, Serialize)]
pub struct Doomed {
    /// The run.
    pub run: String,
    /// Its head.
    pub head_seq: u64,
    /// Its chain hash there.
    pub head_hash: Hash,
    /// How it stood.
    pub outcome: String,
    /// When its last event happened.
    pub last_ms: Option<u64>,
}

/// Why a run may not be forgotten now.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "why", rename_all = "kebab-case")]
pub enum Refusal {
    /// A runner executes it on this host.
    Live {
        /// The run.
        run: String,
    },
    /// A run that stays was forked from it.
    Forked {
        /// The run.
        run: String,
        /// The fork.
        fork: String,
    },
    /// It is a sub-project child of a run that stays and has not finished.
    ParentNeedsIt {
        /// The run.
        run: String,
        /// The parent.
        parent: String,
    },
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refusal::Live { run } => write!(f, "run {run} is being executed now"),
            Refusal::Forked { run, fork } => write!(
                f,
                "run {fork} was forked from {run} and replays from its history"
            ),
            Refusal::ParentNeedsIt { run, parent } => write!(
                f,
                "run {run} is a sub-project of {parent}, which has not finished and may resume it"
            ),
        }
    }
}

/// The runs to forget: those named, and (with `older_than_ms`) every run that has ended and
/// whose last event is older than that; the ones that may not go, and why. On the shared store
/// (`shared`) a runner elsewhere holds no marker here: a run that says it is running is live.
pub fn choose(
    log: &dyn EventLog,
    store_dir: &Path,
    shared: bool,
    named: &[String],
    older_than_ms: Option<u64>,
    now_ms: u64,
) -> Result<(Vec<Doomed>, Vec<Refusal>)> {
    let all: Vec<Row> = rows(log)?;
    let mut wanted: BTreeSet<String> = BTreeSet::new();
    for run in named {
        if !all.iter().any(|r| &r.run == run) {
            return Err(runlog_replay::forgotten::unknown_run(log, run));
        }
        wanted.insert(run.clone());
    }
    if let Some(age) = older_than_ms {
        let cutoff = now_ms.saturating_sub(age);
        for row in &all {
            let ended = matches!(row.status.as_str(), "finished" | "interrupted");
            if ended && row.last_ms.is_some_and(|at| at < cutoff) {
                wanted.insert(row.run.clone());
            }
        }
    }
    let mut refused = Vec::new();
    for row in all.iter().filter(|r| wanted.contains(&r.run)) {
        let run = &row.run;
        let marker = runlog_runner::Layout::new(store_dir, run).marker();
        if runlog_runner::marker::is_held(&marker) || (shared && row.status == "running") {
            refused.push(Refusal::Live { run: run.clone() });
        }
        for fork in all.iter().filter(|r| r.fork_of.as_ref() == Some(run)) {
            if !wanted.contains(&fork.run) {
                refused.push(Refusal::Forked {
                    run: run.clone(),
                    fork: fork.run.clone(),
                });
            }
        }
        let parent = row
            .sub_project_of
            .as_deref()
            .and_then(|p| p.split_once('/'))
            .map(|(parent, _)| parent);
        if let Some(parent) = parent.and_then(|p| all.iter().find(|r| r.run == p)) {
            if !wanted.contains(&parent.run) && parent.status != "finished" {
                refused.push(Refusal::ParentNeedsIt {
                    run: run.clone(),
                    parent: parent.run.clone(),
                });
            }
        }
    }
    let refusing: BTreeSet<&str> = refused.iter().map(Refusal::run).collect();
    let mut doomed = Vec::new();
    for row in all.iter().filter(|r| wanted.contains(&r.run)) {
        if refusing.contains(row.run.as_str()) {
            continue;
        }
        let Some(head) = log.head(&row.run)? else {
            continue;
        };
        doomed.push(Doomed {
            run: row.run.clone(),
            head_seq: head.seq,
            head_hash: Hash(head.hash),
            outcome: row
                .outcome
                .as_ref()
                .map_or_else(|| row.status.clone(), |o| o.name().to_owned()),
            last_ms: row.last_ms,
        });
    }
    Ok((doomed, refused))
}

impl Refusal {
    /// The run refused.
    pub fn run(&self) -> &str {
        match self {
            Refusal::Live { run }
            | Refusal::Forked { run, .. }
            | Refusal::ParentNeedsIt { run, .. } => run,
        }
    }
}

/// The blobs only the doomed runs' events point to (outputs and patches): deleted with them.
pub fn unshared_blobs(log: &dyn EventLog, doomed: &[Doomed]) -> Result<Vec<[u8; 32]>> {
    let gone: BTreeSet<&str> = doomed.iter().map(|d| d.run.as_str()).collect();
    let mut theirs = BTreeSet::new();
    let mut kept = BTreeSet::new();
    for meta in log.runs()? {
        let into = if gone.contains(meta.run.as_str()) {
            &mut theirs
        } else {
            &mut kept
        };
        log.scan(&meta.run, 1, u64::MAX, &mut |r| {
            into.extend(blobs_named(r.body));
            Ok(true)
        })?;
    }
    Ok(theirs.difference(&kept).copied().collect())
}

/// One tombstone in the register.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
pub struct Tombstone {
    /// The run forgotten.
    pub run: String,
    /// Its last seq.
    pub head_seq: u64,
    /// Its chain hash there (hex).
    pub head_hash: String,
    /// How it stood.
    pub outcome: String,
    /// Who forgot it.
    pub by: String,
    /// When (ms since the epoch).
    pub at_ms: u64,
    /// Why.
    pub reason: String,
    /// The tombstone's own seq in the register.
    pub seq: u64,
}

impl From<runlog_replay::forgotten::Tombstone> for Tombstone {
    fn from(t: runlog_replay::forgotten::Tombstone) -> Self {
        let by = t.by();
        let f = t.forgotten;
        Self {
            run: f.run.0,
            head_seq: f.head_seq,
            head_hash: f.head_hash.to_hex(),
            outcome: f.outcome,
            by,
            at_ms: t.at.0,
            reason: f.reason,
            seq: t.seq,
        }
    }
}

/// Every tombstone, oldest first.
pub fn tombstones(log: &dyn EventLog) -> Result<Vec<Tombstone>> {
    Ok(runlog_replay::forgotten::tombstones(log)?
        .into_iter()
        .map(Tombstone::from)
        .collect())
}

/// The latest tombstone of a run, if it was forgotten.
pub fn tombstone_of(log: &dyn EventLog, run: &str) -> Result<Option<Tombstone>> {
    Ok(runlog_replay::forgotten::tombstone_of(log, run)?.map(Tombstone::from))
}

/// Records the tombstones of `doomed` in the register, in one append (a run whose tombstone
/// for the same head is there already, from a forget cut short, gets no second one).
pub fn record(
    log: &dyn EventLog,
    doomed: &[Doomed],
    by: &runlog_core::Principal,
    reason: &str,
    at: Timestamp,
) -> Result<()> {
    let recorded = tombstones(log)?;
    let mut bodies = Vec::new();
    for d in doomed {
        if recorded
            .iter()
            .any(|t| t.run == d.run && t.head_hash == d.head_hash.to_hex())
        {
            continue;
        }
        // The hash its chain started from, by the chain it was recorded on.
        let chain = log.chain(&d.run)?.unwrap_or(runlog_store::Chain::Blocked);
        let event = Event {
            at,
            kind: EventKind::RunForgotten(Box::new(Forgotten {
                run: RunId::from(d.run.as_str()),
                genesis: Hash(chain.genesis(&d.run)),
                head_seq: d.head_seq,
                head_hash: d.head_hash,
                outcome: d.outcome.clone(),
                principal: by.name.clone(),
                via: by.via.as_str().to_owned(),
                reason: reason.to_owned(),
            })),
        };
        bodies.push(
            encode_event(&event).map_err(|source| runlog_replay::ReplayError::Encode {
                run: FORGOTTEN_RUNS.to_owned(),
                cause: source,
            })?,
        );
    }
    if bodies.is_empty() {
        return Ok(());
    }
    let head = log.head(FORGOTTEN_RUNS)?.map_or(0, |h| h.seq);
    log.append(FORGOTTEN_RUNS, Some(head), bodies)?;
    Ok(())
}
