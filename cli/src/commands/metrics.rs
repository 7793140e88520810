//! `runlog metrics [RUN…]`: a run's success metrics, per run and over all of them.

use crate::ctx::Ctx;
use crate::error::Result;
use crate::render;
use runlog_core::projections::metrics::Rate;
use runlog_core::projections::RunMetrics;
use runlog_replay::Replay;
use runlog_store::EventLog;

/// Arguments of `runlog metrics`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The runs [default: every run in the store].
    runs: Vec<String>,
}

/// Prints each run's metrics, then the runs' together when there are several.
pub fn run(a: Args, ctx: &Ctx) -> Result<()> {
    let log = ctx.open()?;
    let replay = Replay::new(&log);
    let runs = if a.runs.is_empty() {
        let mut all = Vec::new();
        for meta in log.runs()? {
            // A run with no readable head (damaged or empty) has no history to measure:
            // `runlog runs` and `verify` say what is wrong with it.
            if meta.head.is_some() && !runlog_replay::forgotten::is_register(&meta.run) {
                all.push(meta.run);
            }
        }
        all
    } else {
        a.runs
    };
    let mut total = RunMetrics::default();
    let mut untested_total = 0;
    for run in &runs {
        let p = replay.project(run, None, None)?;
        let (m, untested) = (p.metrics, p.state.done_untested());
        if ctx.json {
            render::json(&serde_json::json!({"run": run, "metrics": m,
                "attempts_per_task": m.attempts_per_task(), "untested": untested}))?;
        } else {
            print(&format!("metrics of {run}"), &m)?;
            outln!("  done untested              {}", untested_words(&untested));
        }
        untested_total += untested.len();
        total = total.plus(&m);
    }
    if runs.len() > 1 || ctx.json {
        if ctx.json {
            render::json(&serde_json::json!({"all": runs.len(), "metrics": total,
                "attempts_per_task": total.attempts_per_task(), "untested": untested_total}))?;
        } else {
            print(&format!("all {} runs", runs.len()), &total)?;
            outln!("  done untested              {untested_total} tasks");
        }
    }
    if runs.is_empty() && !ctx.json {
        outln!("no runs in {}", ctx.store_name());
    }
    Ok(())
}

fn rate(r: &Rate) -> String {
    match r.rate {
        Some(x) => format!("{} of {} ({:.0} %)", r.of, r.total, x * 100.0),
        None => "none to count".into(),
    }
}

fn counts(map: &std::collections::BTreeMap<String, u32>) -> String {
    map.iter()
        .map(|(k, n)| format!("{k} {n}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Tasks done without a test, named.
fn untested_words(untested: &[runlog_core::TaskId]) -> String {
    if untested.is_empty() {
        "none".into()
    } else {
        render::join(untested)
    }
}

fn print(title: &str, m: &RunMetrics) -> Result<()> {
    outln!("{title}");
    let per_task = m
        .attempts_per_task()
        .map_or_else(|| "-".into(), |x| format!("{x:.2}"));
    outln!(
        "  tasks                      {} ({} started; attempts {}, {per_task} per task, most {})",
        m.tasks,
        m.tasks_started,
        m.attempts,
        m.max_attempts
    );
    outln!(
        "  final test pass rate       {}",
        rate(&m.final_test_pass_rate)
    );
    outln!(
        "  test failures              {}; recovered without a person: {}",
        m.test_failures,
        rate(&m.autonomous_recovery)
    );
    let failing = if m.done_with_failing_tests.is_empty() {
        "none".into()
    } else {
        render::join(&m.done_with_failing_tests)
    };
    outln!("  done with failing tests    {failing}");
    outln!(
        "  eval pass at first try     {}",
        rate(&m.eval_pass_at_first_try)
    );
    outln!("  rescue success             {}", rate(&m.rescue_success));
    if m.interventions.is_empty() {
        outln!("  human interventions        none");
    } else {
        outln!(
            "  human interventions        {}: {}; by {}",
            m.interventions.len(),
            counts(&m.interventions_by_kind),
            counts(&m.interventions_by_who)
        );
    }
    let cost = &m.cost;
    if cost.total.tokens.total() > 0 || cost.total.unpriced > 0 {
        outln!(
            "  cost                       {}",
            render::spend(&cost.total)
        );
        outln!(
            "  cost per task done         {}",
            cost.usd_per_task_done
                .map_or_else(|| "-".into(), runlog_core::usage::usd)
        );
        outln!(
            "  on rescues and retries     {}",
            render::spend(&cost.rescues_and_retries)
        );
        let models: Vec<String> = cost
            .by_model
            .iter()
            .map(|(model, s)| format!("{model} {} tokens", s.tokens.total()))
            .collect();
        outln!("  tokens by model            {}", models.join(", "));
    }
    let times: Vec<String> = m
        .time_in_state_ms
        .iter()
        .filter(|(_, ms)| **ms > 0)
        .map(|(s, ms)| format!("{s} {:.1} s", *ms as f64 / 1000.0))
        .collect();
    outln!(
        "  time in each state         {}",
        if times.is_empty() {
            "-".into()
        } else {
            times.join(", ")
        }
    );
    Ok(())
}
