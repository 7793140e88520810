//! `runlog judges [RUN…]`: how far each evaluator can be trusted, across runs: its verdicts,
//! its agreement with people and with what happened afterwards, the same work judged again,
//! rises without a change, drift; with `--threshold` / `--weights`, what another gate would
//! have decided from the recorded scores (no evaluator runs).

use crate::ctx::Ctx;
use crate::error::Result;
use crate::queries::judges::{parse_since, parse_threshold, parse_weights, report, Ask};
use crate::render;
use runlog_core::projections::judges::{EvaluatorReport, Filter, Rate, VerdictRef};
use runlog_core::Timestamp;
use std::collections::BTreeMap;

/// Arguments of `runlog judges`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The runs [default: every run in the store].
    runs: Vec<String>,
    /// Only verdicts given on or after this day (YYYY-MM-DD, UTC).
    #[arg(long, value_name = "DATE", value_parser = parse_since)]
    since: Option<Timestamp>,
    /// Only runs of this workflow (its name, its file's name, or its path as recorded).
    #[arg(long, value_name = "NAME")]
    workflow: Option<String>,
    /// Only this evaluator (its eval command, as `runlog judges` lists it).
    #[arg(long, value_name = "COMMAND")]
    evaluator: Option<String>,
    /// What-if: decide every recorded score again at this threshold, in [0, 1].
    #[arg(long, value_name = "X", value_parser = parse_threshold)]
    threshold: Option<f64>,
    /// What-if: score each verdict by the weighted mean of its dimensions
    /// (`correctness=2,style=1`).
    #[arg(long, value_name = "DIM=W,…", value_parser = parse_weights)]
    weights: Option<BTreeMap<String, f64>>,
}

/// Prints each evaluator's report, or the report as one JSON object.
pub fn run(a: Args, ctx: &Ctx) -> Result<()> {
    let log = ctx.open()?;
    let ask = Ask::new(
        a.runs,
        Filter {
            since: a.since,
            workflow: a.workflow,
            evaluator: a.evaluator,
        },
        a.threshold,
        a.weights,
    );
    let r = report(&log, &ask)?;
    if ctx.json {
        return render::json(&r);
    }
    if r.evaluators.is_empty() {
        outln!(
            "no verdicts in {} run{} (an evaluator scores a task whose workflow names `eval`)",
            r.runs,
            if r.runs == 1 { "" } else { "s" }
        );
        return Ok(());
    }
    outln!(
        "judges over {} run{}: {} verdicts",
        r.runs,
        if r.runs == 1 { "" } else { "s" },
        r.verdicts
    );
    for e in &r.evaluators {
        outln!("");
        evaluator(e)?;
    }
    Ok(())
}

fn pct(x: Option<f64>) -> String {
    x.map_or("-".into(), |x| format!("{:.0}%", x * 100.0))
}

fn num(x: Option<f64>) -> String {
    x.map_or("-".into(), |x| format!("{x:.2}"))
}

fn named(v: &VerdictRef) -> String {
    format!(
        "{} {} attempt {} ({} {}, seq {})",
        v.run, v.task, v.attempt, v.decision, v.score, v.seq
    )
}

fn evaluator(e: &EvaluatorReport) -> Result<()> {
    let mut who = Vec::new();
    if !e.models.is_empty() {
        who.push(format!("model {}", e.models.join(", ")));
    }
    if !e.versions.is_empty() {
        who.push(format!("versions {}", e.versions.join(", ")));
    }
    match who.is_empty() {
        true => outln!("{}", e.evaluator),
        false => outln!("{}  ({})", e.evaluator, who.join("; ")),
    }
    outln!(
        "  verdicts    {} in {} run{}: {} pass, {} rescue, {} fail{}",
        e.verdicts,
        e.runs,
        if e.runs == 1 { "" } else { "s" },
        e.passes,
        e.rescues,
        e.fails,
        match e.held {
            0 => String::new(),
            n => format!(" ({n} held for a person's review)"),
        }
    );
    let dims: Vec<String> = e
        .dimensions
        .iter()
        .map(|(d, m)| format!("{d} {m:.2}"))
        .collect();
    outln!(
        "  scores      mean {:.2}, sd {:.2}{}",
        e.score_mean,
        e.score_sd,
        if dims.is_empty() {
            String::new()
        } else {
            format!("; {}", dims.join(", "))
        }
    );
    outln!(
        "  histogram   {}",
        e.histogram
            .iter()
            .enumerate()
            .map(|(i, n)| format!("{:.1}:{n}", i as f64 / 10.0))
            .collect::<Vec<_>>()
            .join(" ")
    );
    let p = &e.people;
    outln!(
        "  people      {} label{}: accuracy {}, kappa {} (n {}); {} verdict{} no person looked at",
        p.n,
        if p.n == 1 { "" } else { "s" },
        pct(p.accuracy),
        num(p.kappa),
        p.n,
        p.unlabelled,
        if p.unlabelled == 1 { "" } else { "s" }
    );
    if p.n > 0 {
        outln!("              gate × person  approved  rejected");
        outln!(
            "              pass          {:>8}  {:>8}",
            p.both_pass,
            p.gate_pass_person_fail
        );
        outln!(
            "              not pass      {:>8}  {:>8}",
            p.gate_fail_person_pass,
            p.both_fail
        );
    }
    contradicted("false passes", &e.false_pass)?;
    contradicted("false fails ", &e.false_fail)?;
    let t = &e.retest;
    if t.works > 0 {
        outln!(
            "  retest      {} work{} judged more than once ({} verdicts): spread mean {}, max {:.2}; {} flipped",
            t.works,
            if t.works == 1 { "" } else { "s" },
            t.judgements,
            num(t.mean_spread),
            t.max_spread,
            t.flipped
        );
        for flip in &t.flips {
            outln!(
                "                {}",
                flip.iter().map(named).collect::<Vec<_>>().join(" / ")
            );
        }
    } else {
        outln!("  retest      no work judged more than once");
    }
    if !e.unchanged_rises.is_empty() {
        outln!(
            "  ⚑ rises without a change: {} (a judge that can be talked into a pass)",
            e.unchanged_rises.len()
        );
        for v in &e.unchanged_rises {
            outln!("                {}: {}", named(v), v.why);
        }
    }
    drift(e)?;
    if let Some(w) = &e.what_if {
        outln!(
            "  what-if     {} passes → {}; {} decision{} flip ({} borne out by what happened, {} against it)",
            w.passed,
            w.passes_now,
            w.flips.len(),
            if w.flips.len() == 1 { "" } else { "s" },
            w.borne_out,
            w.gone_against
        );
        for f in &w.flips {
            outln!(
                "                {} → {} at {:.2}: {}",
                named(&f.verdict),
                if f.now_passes { "pass" } else { "not pass" },
                f.score,
                f.afterwards
            );
        }
    }
    Ok(())
}

fn contradicted(what: &str, r: &Rate) -> Result<()> {
    outln!("  {what} {} of {} ({})", r.contradicted, r.of, pct(r.rate));
    for v in &r.verdicts {
        outln!("                {}: {}", named(v), v.why);
    }
    Ok(())
}

fn drift(e: &EvaluatorReport) -> Result<()> {
    for (i, w) in e.drift.weeks.iter().enumerate() {
        outln!(
            "  {}  {}  {:>4} verdicts, mean {:.2}, {} passed{}",
            if i == 0 { "drift     " } else { "          " },
            w.week,
            w.verdicts,
            w.mean,
            pct(Some(w.pass_rate)),
            if w.versions.is_empty() {
                String::new()
            } else {
                format!(" [{}]", w.versions.join(", "))
            }
        );
    }
    // Where each version began: a change of prompt or rubric shows as a change of scores.
    let versions = &e.drift.versions;
    if versions.len() > 1 {
        for (i, v) in versions.iter().enumerate() {
            outln!(
                "  {}  {}: {} verdicts, mean {:.2}, {} passed, from {} ({})",
                if i == 0 { "versions  " } else { "          " },
                if v.version.is_empty() {
                    "(none said)"
                } else {
                    &v.version
                },
                v.verdicts,
                v.mean,
                pct(Some(v.pass_rate)),
                v.first_week,
                named(&v.first)
            );
        }
    }
    Ok(())
}
