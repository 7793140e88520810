//! Auditing the judges across runs (`runlog judges`, `GET /v1/judges`) and the review queue
//! (`runlog review`, `GET /v1/review`).
//!
//! Each run's verdicts are folded once and kept in the store's cache, keyed by the run's head:
//! a report reads the kept verdicts of every run whose head has not moved, and folds again
//! only the runs that did.

use runlog_core::projections::audit::{AuditEntry, Consequence};
use runlog_core::projections::judges::{Filter, JudgesReport, Verdict, WhatIf};
use runlog_core::Timestamp;
use runlog_replay::forgotten::unknown_run;
use runlog_replay::{Replay, Result};
use runlog_store::{EventLog, Head};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// What a judges report asks.
#[derive(Debug, Clone, Default)]
pub struct Ask {
    /// The runs (every run when empty).
    pub runs: Vec<String>,
    /// Which verdicts.
    pub filter: Filter,
    /// Another threshold or weighting.
    pub what_if: Option<WhatIf>,
}

impl Ask {
    /// The report of `runs` (every run when empty) the filter takes, with a what-if when a
    /// threshold or weights are given.
    pub fn new(
        runs: Vec<String>,
        filter: Filter,
        threshold: Option<f64>,
        weights: Option<BTreeMap<String, f64>>,
    ) -> Self {
        let what_if = (threshold.is_some() || weights.is_some()).then(|| WhatIf {
            threshold,
            weights: weights.unwrap_or_default(),
        });
        Self {
            runs,
            filter,
            what_if,
        }
    }
}

/// `--since`, `since=`: a day, YYYY-MM-DD (UTC).
pub fn parse_since(s: &str) -> std::result::Result<Timestamp, String> {
    runlog_core::calendar::parse_date(s)
        .ok_or_else(|| format!("{s:?} is not a date: write YYYY-MM-DD"))
}

/// `--threshold`, `threshold=`: a number in [0, 1].
pub fn parse_threshold(s: &str) -> std::result::Result<f64, String> {
    match s.parse::<f64>() {
        Ok(x) if (0.0..=1.0).contains(&x) => Ok(x),
        Ok(x) => Err(format!(
            "{x} is outside [0, 1]: scores and thresholds are in [0, 1]"
        )),
        Err(_) => Err(format!("{s:?} is not a number")),
    }
}

/// `--weights`, `weights=`: `DIMENSION=WEIGHT,…`, each weight 0 or more.
pub fn parse_weights(s: &str) -> std::result::Result<BTreeMap<String, f64>, String> {
    s.split(',')
        .map(|pair| {
            let (name, w) = pair
                .split_once('=')
                .ok_or_else(|| format!("{pair:?}: write DIMENSION=WEIGHT"))?;
            match w.trim().parse::<f64>() {
                Ok(w) if w.is_finite() && w >= 0.0 => Ok((name.trim().to_owned(), w)),
                _ => Err(format!("{pair:?}: a weight is a number, 0 or more")),
            }
        })
        .collect()
}

/// A run's verdicts as last folded, at the head whose seq and hash they were folded to.
#[derive(Serialize, Deserialize)]
struct Kept {
    seq: u64,
    hash: [u8; 32],
    verdicts: Vec<Verdict>,
}

const KEPT: &str = "verdicts-judged";

/// A run's verdicts at `head`: kept ones when the head has not moved, else folded and kept.
pub fn verdicts(log: &dyn EventLog, run: &str, head: Head) -> Result<Vec<Verdict>> {
    let key = runlog_replay::snapshot::derived_key(run, KEPT);
    if let Some(kept) = log
        .cache_get(&key)?
        .and_then(|bytes| serde_json::from_slice::<Kept>(&bytes).ok())
        .filter(|k| k.seq == head.seq && k.hash == head.hash)
    {
        return Ok(kept.verdicts);
    }
    let folded = Replay::new(log).project(run, Some(head.seq), None)?;
    let kept = Kept {
        seq: head.seq,
        hash: head.hash,
        verdicts: folded.verdicts.verdicts,
    };
    // A cache: verdicts that cannot be kept are folded again next time.
    if let Ok(bytes) = serde_json::to_vec(&kept) {
        let _ = log.cache_put(&key, &bytes);
    }
    Ok(kept.verdicts)
}

/// The runs asked for with their heads, each once (every run when none is named).
fn heads(log: &dyn EventLog, runs: &[String]) -> Result<Vec<(String, Head)>> {
    if runs.is_empty() {
        return Ok(log
            .runs()?
            .into_iter()
            .filter(|m| !runlog_replay::forgotten::is_register(&m.run))
            .filter_map(|m| Some((m.run, m.head?)))
            .collect());
    }
    // A run named twice counts once: its verdicts are the same verdicts.
    let mut named = std::collections::HashSet::new();
    runs.iter()
        .filter(|run| named.insert(run.as_str()))
        .map(|run| match log.head(run)? {
            Some(head) => Ok((run.clone(), head)),
            None => Err(unknown_run(log, run)),
        })
        .collect()
}

/// The report: every evaluator of the runs asked.
pub fn report(log: &dyn EventLog, ask: &Ask) -> Result<JudgesReport> {
    let heads = heads(log, &ask.runs)?;
    // Each run's verdicts are read (or folded) on their own: both cores take half the runs.
    let half = heads.len().div_ceil(2).max(1);
    let mut all = Vec::new();
    std::thread::scope(|scope| {
        let parts: Vec<_> = heads
            .chunks(half)
            .map(|part| {
                scope.spawn(move || {
                    let mut got = Vec::new();
                    for (run, head) in part {
                        got.extend(verdicts(log, run, *head)?);
                    }
                    Ok::<_, runlog_replay::ReplayError>(got)
                })
            })
            .collect();
        for part in parts {
            match part.join() {
                Ok(got) => all.extend(got?),
                Err(panic) => std::panic::resume_unwind(panic),
            }
        }
        Ok::<_, runlog_replay::ReplayError>(())
    })?;
    Ok(JudgesReport::of(
        heads.len() as u64,
        &all,
        &ask.filter,
        ask.what_if.as_ref(),
    ))
}

/// A verdict waiting for a person.
#[derive(Debug, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
pub struct Waiting {
    /// The run.
    pub run: String,
    /// The verdict, as the audit lists it (score, dimensions, notes, the change judged).
    #[serde(flatten)]
    pub entry: AuditEntry,
}

/// The review queue: the held verdicts of the runs asked (every run when none is named).
pub fn queue(log: &dyn EventLog, runs: &[String]) -> Result<Vec<Waiting>> {
    let replay = Replay::new(log);
    let mut out = Vec::new();
    for (run, _) in heads(log, runs)? {
        let state = replay.head_state(&run)?;
        if !state.tasks.values().any(|t| t.held.is_some()) {
            continue;
        }
        let p = replay.project(&run, None, None)?;
        out.extend(
            p.audit
                .entries
                .into_iter()
                .filter(|e| e.consequence == Some(Consequence::Held) && !e.rolled_back)
                .filter(|e| p.state.tasks.get(&e.task).is_some_and(|t| t.held.is_some()))
                .map(|entry| Waiting {
                    run: run.clone(),
                    entry,
                }),
        );
    }
    Ok(out)
}
