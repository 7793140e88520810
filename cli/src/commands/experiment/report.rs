//! `runlog experiment show`, `gate` and `runlog experiments`: the report in words (or the
//! API's bytes with --json), the criteria for CI, the list.

use crate::ctx::Ctx;
use crate::error::{ExitKind, Result};
use crate::queries::experiment::gate::{check, Criteria};
use crate::queries::experiment::report::{list as rows, view, ExperimentView};
use runlog_core::experiment::report::VariantFigures;
use runlog_core::experiment::stats::Share;
use runlog_core::usage::usd;

#[derive(Debug, clap::Args)]
pub(super) struct ShowArgs {
    /// The experiment.
    name: String,
}

#[derive(Debug, clap::Args)]
pub(super) struct GateArgs {
    /// The experiment.
    name: String,
    /// Only this variant (default: every one)
    #[arg(long, value_name = "NAME")]
    variant: Option<String>,
    /// Fail when the pass rate falls by more than this share (0.02: two points)
    #[arg(long, value_name = "SHARE")]
    max_pass_rate_drop: Option<f64>,
    /// Fail when the mean cost per task grows past this ratio to the recording's
    #[arg(long, value_name = "RATIO")]
    max_cost_ratio: Option<f64>,
    /// Fail when more than this many tasks are broken
    #[arg(long, value_name = "N")]
    max_broken: Option<u32>,
    /// Fail when the mean score falls by more than this
    #[arg(long, value_name = "POINTS")]
    max_score_drop: Option<f64>,
}

#[derive(Debug, clap::Args)]
pub(super) struct ExportArgs {
    /// The experiment.
    name: String,
    /// Phoenix's address: http(s)://HOST:PORT
    #[arg(long, value_name = "URL")]
    phoenix: String,
    /// The dataset's name in Phoenix [default: runlog NAME at the time of the export]
    #[arg(long, value_name = "NAME")]
    dataset: Option<String>,
    #[command(flatten)]
    delivery: crate::otlp::Delivery,
}

pub(super) fn export(ctx: &Ctx, a: &ExportArgs) -> Result<()> {
    let v = view(&ctx.open()?, &a.name)?;
    let endpoint = crate::otlp::Endpoint::parse(&a.phoenix, &a.delivery)?;
    let now = ctx.host.clock().now();
    let dataset = a
        .dataset
        .clone()
        .unwrap_or_else(|| format!("runlog {} {}", v.name, runlog_core::calendar::rfc3339(now)));
    let rt = crate::runtime::for_command("experiment export")?;
    let sent = rt
        .block_on(crate::otlp::experiment::to_phoenix(&endpoint, &v, &dataset))
        .map_err(|e| {
            crate::error::CliError::sending(format!("the export to {} failed", a.phoenix), e)
                .with_hint("is Phoenix (20.x) serving there? `phoenix serve` starts one")
        })?;
    if ctx.json {
        return crate::render::json(&sent);
    }
    outln!(
        "dataset {:?} ({} examples, id {})",
        sent.dataset,
        v.figures.tasks.len(),
        sent.dataset_id
    );
    for (variant, id, runs) in &sent.experiments {
        outln!("experiment {variant}: {runs} runs with their evaluations (id {id})");
    }
    Ok(())
}

pub(super) fn show(ctx: &Ctx, a: &ShowArgs) -> Result<()> {
    let v = view(&ctx.open()?, &a.name)?;
    if ctx.json {
        return crate::render::json(&v);
    }
    print(&v)
}

pub(super) fn gate(ctx: &Ctx, a: &GateArgs) -> Result<Option<ExitKind>> {
    let v = view(&ctx.open()?, &a.name)?;
    if let Some(name) = &a.variant {
        if !v.variants.iter().skip(1).any(|x| &x.name == name) {
            return Err(crate::error::CliError::input(format!(
                "experiment {} has no variant {name}",
                a.name
            )));
        }
    }
    let criteria = Criteria {
        max_pass_rate_drop: a.max_pass_rate_drop,
        max_cost_ratio: a.max_cost_ratio,
        max_broken: a.max_broken,
        max_score_drop: a.max_score_drop,
    };
    let failed = check(&v, criteria, a.variant.as_deref());
    if ctx.json {
        crate::render::json(&serde_json::json!({"experiment": v.name, "failed": failed}))?;
    } else if failed.is_empty() {
        outln!("experiment {}: every criterion holds", v.name);
    } else {
        for f in &failed {
            outln!(
                "failed: {}{}: {}",
                f.variant
                    .as_deref()
                    .map(|v| format!("{v} "))
                    .unwrap_or_default(),
                f.criterion,
                f.found
            );
        }
    }
    Ok((!failed.is_empty()).then_some(ExitKind::Failed))
}

pub(super) fn list(ctx: &Ctx) -> Result<()> {
    let all = rows(&ctx.open()?)?;
    if ctx.json {
        return crate::render::json(&all);
    }
    if all.is_empty() {
        outln!("no experiments (`runlog experiment run NAME --runs R --variant V=FILE` makes one)");
    }
    for r in &all {
        outln!(
            "{}  {} runs  variants {}  {}/{} reruns  {} live  {} from the recording",
            r.name,
            r.runs,
            r.variants.join(", "),
            r.progress.ended,
            r.progress.total,
            usd(r.progress.live_usd),
            usd(r.progress.saved_usd)
        );
    }
    Ok(())
}

fn share(s: &Share) -> String {
    if s.n == 0 {
        return "-".into();
    }
    format!(
        "{:.0}% ({}/{}, 95% {:.0}–{:.0}%)",
        s.share * 100.0,
        s.k,
        s.n,
        s.low * 100.0,
        s.high * 100.0
    )
}

/// The report in words.
pub(super) fn print(v: &ExperimentView) -> Result<()> {
    let p = v.progress;
    outln!(
        "experiment {}: {} runs, {}/{} reruns ended, {} live, {} answered from the recording",
        v.name,
        v.suite.len(),
        p.ended,
        p.total,
        usd(p.live_usd),
        usd(p.saved_usd)
    );
    for s in v.suite.iter().filter(|s| s.gone) {
        outln!(
            "run {} is no longer in the store (forgotten?): its base figures are missing",
            s.run
        );
    }
    for s in &v.skipped {
        outln!("skipped: {} under {}: {}", s.run, s.variant, s.reason);
    }
    for f in &v.figures.variants {
        variant(v, f)?;
    }
    Ok(())
}

fn variant(v: &ExperimentView, f: &VariantFigures) -> Result<()> {
    outln!("");
    let what = v
        .variants
        .iter()
        .find(|x| x.name == f.name)
        .and_then(|x| x.file.clone())
        .unwrap_or_else(|| "the recording".into());
    outln!(
        "{} ({what}): {} executions{}",
        f.name,
        f.executions,
        match f.unfinished {
            0 => String::new(),
            n => format!(", {n} not ended"),
        }
    );
    outln!("  pass rate     {}", share(&f.pass_rate));
    outln!("  tests passed  {}", share(&f.tests_passed));
    outln!("  judge passed  {}", share(&f.judge_passed));
    if let Some(m) = f.mean_score {
        let diff = f.score_difference.map_or_else(String::new, |d| {
            format!(
                ", against base {:+.3} (95% {:+.3} to {:+.3}, {} pairs)",
                d.mean, d.low, d.high, d.pairs
            )
        });
        outln!("  mean score    {m:.3}{diff}");
    }
    let t = &f.totals;
    outln!(
        "  cost          {} in all, {} a task ({} live, {} from the recording); {} tokens, {} calls ({} recorded); {:.1}s a task",
        usd(t.cost_usd),
        usd(t.cost_usd_mean),
        usd(t.live_usd),
        usd(t.saved_usd),
        t.tokens,
        t.calls,
        t.recorded_calls,
        t.wall_ms_mean / 1000.0
    );
    if f.name != runlog_core::experiment::BASE {
        outln!(
            "  fixed {}, broken {} (sign test p = {:.4})",
            f.fixed.len(),
            f.broken.len(),
            f.sign_test_p
        );
        for (word, flips) in [("fixed", &f.fixed), ("broken", &f.broken)] {
            for flip in flips {
                let compare = flip
                    .rerun
                    .as_ref()
                    .map(|r| format!(": runlog diff {} {r}", flip.run))
                    .unwrap_or_default();
                outln!("    {word} {}/{}{compare}", flip.run, flip.task);
            }
        }
    }
    if !f.flaky.is_empty() {
        outln!("  not the same every time: {}", f.flaky.join(", "));
    }
    Ok(())
}
