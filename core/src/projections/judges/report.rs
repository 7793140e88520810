//! Verdicts of many runs put together by evaluator: counts, scores, agreement with people
//! and with what happened, test–retest, rises without a change, what another threshold or
//! weighting would have decided, and drift by week and by version.

use super::{Agreement, Verdict};
use crate::calendar::iso_week;
use crate::event::GateOutcome;
use crate::ids::{TaskId, Timestamp};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// Which verdicts a report takes.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
pub struct Filter {
    /// Given at or after this time.
    pub since: Option<Timestamp>,
    /// Of runs of this workflow (its name, its file's name, or its path as recorded).
    pub workflow: Option<String>,
    /// Of this evaluator (its command).
    pub evaluator: Option<String>,
}

impl Filter {
    /// Whether the report takes `v`.
    pub fn takes(&self, v: &Verdict) -> bool {
        let workflow = self.workflow.as_deref().is_none_or(|w| {
            let path = std::path::Path::new(&v.workflow);
            v.workflow == w
                || path.file_name().is_some_and(|n| n == w)
                || path.file_stem().is_some_and(|n| n == w)
        });
        workflow
            && self.since.is_none_or(|s| v.at >= s)
            && self.evaluator.as_deref().is_none_or(|e| v.evaluator == e)
            && v.decision.is_some()
    }
}

/// Another threshold, or a weighting of the dimensions, to decide the recorded scores again.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
pub struct WhatIf {
    /// The threshold (each verdict's own where none).
    pub threshold: Option<f64>,
    /// Weights by dimension: the score is their weighted mean (a verdict's own score where it
    /// has none of them).
    pub weights: BTreeMap<String, f64>,
}

impl WhatIf {
    /// The score this what-if reads from a verdict.
    pub fn score(&self, v: &Verdict) -> f64 {
        if self.weights.is_empty() {
            v.score
        } else {
            v.weighted(&self.weights)
        }
    }

    /// Whether it would have passed `v`.
    pub fn passes(&self, v: &Verdict) -> bool {
        self.score(v) >= self.threshold.unwrap_or(v.threshold)
    }
}

/// A verdict named in a report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
pub struct VerdictRef {
    /// The run.
    pub run: String,
    /// The task.
    pub task: TaskId,
    /// The attempt judged.
    pub attempt: u32,
    /// Seq of the score.
    pub seq: u64,
    /// The score.
    pub score: f64,
    /// The gate's decision: `pass`, `rescue` or `fail`.
    pub decision: String,
    /// Why it is named.
    pub why: String,
}

impl VerdictRef {
    fn of(v: &Verdict, why: String) -> Self {
        Self {
            run: v.run.clone(),
            task: v.task.clone(),
            attempt: v.attempt,
            seq: v.seq,
            score: v.score,
            decision: decision_word(v.decision),
            why,
        }
    }
}

/// The gate's decision in one word: `pass`, `rescue`, `fail` (`none` before it is recorded).
pub fn decision_word(d: Option<GateOutcome>) -> String {
    match d {
        Some(GateOutcome::Pass) => "pass",
        Some(GateOutcome::Rescue { .. }) => "rescue",
        Some(GateOutcome::Fail) => "fail",
        None => "none",
    }
    .into()
}

/// How often what happened afterwards contradicted one kind of decision.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
pub struct Rate {
    /// Decisions of the kind.
    pub of: u64,
    /// Contradicted.
    pub contradicted: u64,
    /// The share contradicted.
    pub rate: Option<f64>,
    /// The contradicted verdicts, with what contradicted each.
    pub verdicts: Vec<VerdictRef>,
}

/// The same work judged more than once.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
pub struct Retest {
    /// Works judged more than once.
    pub works: u64,
    /// The verdicts on them.
    pub judgements: u64,
    /// The mean of each work's score spread (highest less lowest).
    pub mean_spread: Option<f64>,
    /// The largest spread.
    pub max_spread: f64,
    /// Works whose decision was not always the same.
    pub flipped: u64,
    /// Those works' verdicts.
    pub flips: Vec<Vec<VerdictRef>>,
}

/// One ISO week of an evaluator's scores.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
pub struct Week {
    /// `YYYY-Www`.
    pub week: String,
    /// Verdicts.
    pub verdicts: u64,
    /// Mean score.
    pub mean: f64,
    /// Share passed.
    pub pass_rate: f64,
    /// The versions the evaluator said it was that week.
    pub versions: Vec<String>,
}

/// One version of an evaluator, as it said it was.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
pub struct VersionSeen {
    /// The version (empty: it said none).
    pub version: String,
    /// Verdicts.
    pub verdicts: u64,
    /// Mean score.
    pub mean: f64,
    /// Share passed.
    pub pass_rate: f64,
    /// Its first verdict's week.
    pub first_week: String,
    /// Its first verdict: the version changed there.
    pub first: VerdictRef,
}

/// How an evaluator's scores moved over time and across its versions.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
pub struct Drift {
    /// By week, oldest first.
    pub weeks: Vec<Week>,
    /// By version, in the order each first appeared.
    pub versions: Vec<VersionSeen>,
}

/// A decision another threshold or weighting would have changed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
pub struct Flip {
    /// The verdict.
    pub verdict: VerdictRef,
    /// The score the what-if read.
    pub score: f64,
    /// It would pass now (it did not), or not (it did).
    pub now_passes: bool,
    /// What became of the work.
    pub afterwards: String,
    /// What happened afterwards (a person, or a contradiction) sides with the new decision:
    /// `true`; with the old one: `false`; nothing says: none.
    pub borne_out: Option<bool>,
}

/// What a what-if would have decided for one evaluator.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
pub struct WhatIfResult {
    /// Passes the recorded decisions had.
    pub passed: u64,
    /// Passes the what-if would have.
    pub passes_now: u64,
    /// Decisions that flip, each with what became of its work.
    pub flips: Vec<Flip>,
    /// Flips that what happened bears out.
    pub borne_out: u64,
    /// Flips that what happened goes against.
    pub gone_against: u64,
}

/// One evaluator, across the verdicts a report takes.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
pub struct EvaluatorReport {
    /// The eval command.
    pub evaluator: String,
    /// The models it said it asked.
    pub models: Vec<String>,
    /// The versions it said it was.
    pub versions: Vec<String>,
    /// Verdicts.
    pub verdicts: u64,
    /// Runs they were given in.
    pub runs: u64,
    /// Passes.
    pub passes: u64,
    /// Rescues.
    pub rescues: u64,
    /// Fails.
    pub fails: u64,
    /// Held for a person's review.
    pub held: u64,
    /// The threshold in force at its latest verdict.
    pub threshold: f64,
    /// Mean score.
    pub score_mean: f64,
    /// Standard deviation of the scores.
    pub score_sd: f64,
    /// Mean score per dimension.
    pub dimensions: BTreeMap<String, f64>,
    /// Scores in ten bins of 0.1 (the last holds 1.0).
    pub histogram: Vec<u64>,
    /// Against people's decisions.
    pub people: Agreement,
    /// Passes that what happened afterwards contradicted.
    pub false_pass: Rate,
    /// Rescues and fails that what happened afterwards contradicted.
    pub false_fail: Rate,
    /// The same work judged again.
    pub retest: Retest,
    /// Scores that rose after a rescue whose attempt changed nothing but whitespace.
    pub unchanged_rises: Vec<VerdictRef>,
    /// Over time and versions.
    pub drift: Drift,
    /// The what-if asked for, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub what_if: Option<WhatIfResult>,
}

/// Every evaluator's report.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
pub struct JudgesReport {
    /// Runs read.
    pub runs: u64,
    /// Verdicts taken.
    pub verdicts: u64,
    /// The what-if asked for.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub what_if: Option<WhatIf>,
    /// By evaluator, by their command.
    pub evaluators: Vec<EvaluatorReport>,
}

impl JudgesReport {
    /// The report of the verdicts `filter` takes, from `runs` runs.
    pub fn of<'a>(
        runs: u64,
        verdicts: impl IntoIterator<Item = &'a Verdict>,
        filter: &Filter,
        what_if: Option<&WhatIf>,
    ) -> Self {
        let mut by: BTreeMap<&str, Vec<&Verdict>> = BTreeMap::new();
        for v in verdicts.into_iter().filter(|v| filter.takes(v)) {
            by.entry(v.evaluator.as_str()).or_default().push(v);
        }
        let evaluators: Vec<EvaluatorReport> = by
            .into_iter()
            .map(|(name, mut vs)| {
                vs.sort_by(|a, b| (a.at, &a.run, a.seq).cmp(&(b.at, &b.run, b.seq)));
                evaluator(name, &vs, what_if)
            })
            .collect();
        Self {
            runs,
            verdicts: evaluators.iter().map(|e| e.verdicts).sum(),
            what_if: what_if.cloned(),
            evaluators,
        }
    }
}

fn mean(xs: impl Iterator<Item = f64>) -> (f64, u64) {
    let (sum, n) = xs.fold((0.0, 0u64), |(s, n), x| (s + x, n + 1));
    (if n == 0 { 0.0 } else { sum / n as f64 }, n)
}

fn evaluator(name: &str, vs: &[&Verdict], what_if: Option<&WhatIf>) -> EvaluatorReport {
    let (score_mean, n) = mean(vs.iter().map(|v| v.score));
    let var = mean(vs.iter().map(|v| (v.score - score_mean).powi(2))).0;
    let mut dims: BTreeMap<String, (f64, u64)> = BTreeMap::new();
    let mut histogram = vec![0u64; 10];
    let mut people = Agreement::default();
    let (mut false_pass, mut false_fail) = (Rate::default(), Rate::default());
    let mut unchanged_rises = Vec::new();
    for v in vs {
        for (d, x) in &v.dimensions {
            let e = dims.entry(d.clone()).or_default();
            e.0 += x;
            e.1 += 1;
        }
        if let Some(bin) = histogram.get_mut(((v.score * 10.0) as usize).min(9)) {
            *bin += 1;
        }
        match &v.label {
            Some(l) => people.add(v.passed(), l.passes()),
            None => people.unlabelled += 1,
        }
        let rate = if v.passed() {
            &mut false_pass
        } else {
            &mut false_fail
        };
        rate.of += 1;
        if let Some(c) = v.contradiction() {
            rate.contradicted += 1;
            rate.verdicts.push(VerdictRef::of(v, c.describe()));
        }
        if let Some(before) = v.rose_unchanged_from {
            unchanged_rises.push(VerdictRef::of(
                v,
                format!("rose from {before} after a rescue whose attempt changed nothing but whitespace"),
            ));
        }
    }
    people.settle();
    for r in [&mut false_pass, &mut false_fail] {
        r.rate = (r.of > 0).then(|| r.contradicted as f64 / r.of as f64);
    }
    let set = |f: fn(&Verdict) -> &str| -> Vec<String> {
        let seen: BTreeSet<&str> = vs.iter().map(|v| f(v)).filter(|s| !s.is_empty()).collect();
        seen.into_iter().map(str::to_owned).collect()
    };
    EvaluatorReport {
        evaluator: name.to_owned(),
        models: set(|v| &v.model),
        versions: set(|v| &v.version),
        verdicts: n,
        runs: vs.iter().map(|v| &v.run).collect::<BTreeSet<_>>().len() as u64,
        passes: vs.iter().filter(|v| v.passed()).count() as u64,
        rescues: count(vs, |d| matches!(d, GateOutcome::Rescue { .. })),
        fails: count(vs, |d| d == GateOutcome::Fail),
        held: vs.iter().filter(|v| v.held).count() as u64,
        threshold: vs.last().map_or(0.0, |v| v.threshold),
        score_mean,
        score_sd: var.sqrt(),
        dimensions: dims
            .into_iter()
            .map(|(d, (s, n))| (d, s / n as f64))
            .collect(),
        histogram,
        people,
        false_pass,
        false_fail,
        retest: retest(vs),
        unchanged_rises,
        drift: drift(vs),
        what_if: what_if.map(|w| decide_again(vs, w)),
    }
}

fn count(vs: &[&Verdict], f: impl Fn(GateOutcome) -> bool) -> u64 {
    vs.iter().filter(|v| v.decision.is_some_and(&f)).count() as u64
}

fn retest(vs: &[&Verdict]) -> Retest {
    let mut works: BTreeMap<&str, Vec<&Verdict>> = BTreeMap::new();
    for v in vs {
        if let Some(w) = &v.work {
            works.entry(w).or_default().push(v);
        }
    }
    let mut out = Retest::default();
    let mut spreads = Vec::new();
    for group in works.values().filter(|g| g.len() > 1) {
        out.works += 1;
        out.judgements += group.len() as u64;
        let lo = group.iter().map(|v| v.score).fold(f64::INFINITY, f64::min);
        let hi = group
            .iter()
            .map(|v| v.score)
            .fold(f64::NEG_INFINITY, f64::max);
        spreads.push(hi - lo);
        out.max_spread = out.max_spread.max(hi - lo);
        if group.iter().any(|v| v.passed()) && group.iter().any(|v| !v.passed()) {
            out.flipped += 1;
            out.flips.push(
                group
                    .iter()
                    .map(|v| VerdictRef::of(v, "the same work".into()))
                    .collect(),
            );
        }
    }
    out.mean_spread = (!spreads.is_empty()).then(|| mean(spreads.into_iter()).0);
    out
}

fn drift(vs: &[&Verdict]) -> Drift {
    let mut weeks: BTreeMap<String, Vec<&Verdict>> = BTreeMap::new();
    let mut versions: Vec<(String, Vec<&Verdict>)> = Vec::new();
    for v in vs {
        weeks.entry(iso_week(v.at)).or_default().push(v);
        match versions.iter_mut().find(|(name, _)| *name == v.version) {
            Some((_, list)) => list.push(v),
            None => versions.push((v.version.clone(), vec![v])),
        }
    }
    let summary = |list: &[&Verdict]| {
        let (m, n) = mean(list.iter().map(|v| v.score));
        let passed = list.iter().filter(|v| v.passed()).count() as f64;
        (n, m, passed / n.max(1) as f64)
    };
    Drift {
        weeks: weeks
            .into_iter()
            .map(|(week, list)| {
                let (verdicts, mean, pass_rate) = summary(&list);
                let seen: BTreeSet<&str> = list
                    .iter()
                    .map(|v| v.version.as_str())
                    .filter(|s| !s.is_empty())
                    .collect();
                Week {
                    week,
                    verdicts,
                    mean,
                    pass_rate,
                    versions: seen.into_iter().map(str::to_owned).collect(),
                }
            })
            .collect(),
        versions: versions
            .into_iter()
            .filter_map(|(version, list)| {
                let first = *list.first()?;
                let (verdicts, mean, pass_rate) = summary(&list);
                Some(VersionSeen {
                    version,
                    verdicts,
                    mean,
                    pass_rate,
                    first_week: iso_week(first.at),
                    first: VerdictRef::of(first, "its first verdict".into()),
                })
            })
            .collect(),
    }
}

fn decide_again(vs: &[&Verdict], w: &WhatIf) -> WhatIfResult {
    let mut out = WhatIfResult::default();
    for v in vs {
        let now = w.passes(v);
        out.passed += u64::from(v.passed());
        out.passes_now += u64::from(now);
        if now == v.passed() {
            continue;
        }
        // What happened afterwards sides with the new decision when it contradicted the old
        // one, or a person decided as the new one would.
        let borne_out = match (v.contradiction(), &v.label) {
            (Some(_), _) => Some(true),
            (None, Some(l)) => Some(l.passes() == now),
            (None, None) => None,
        };
        match borne_out {
            Some(true) => out.borne_out += 1,
            Some(false) => out.gone_against += 1,
            None => {}
        }
        out.flips.push(Flip {
            verdict: VerdictRef::of(
                v,
                format!(
                    "{} → {}",
                    decision_word(v.decision),
                    if now { "pass" } else { "not pass" }
                ),
            ),
            score: w.score(v),
            now_passes: now,
            afterwards: v.afterwards(),
            borne_out,
        });
    }
    out
}
