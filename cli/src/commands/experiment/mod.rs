//! `runlog experiment run|resume|show|gate` and `runlog experiments`: recorded runs executed
//! again under variants, and whether a variant is better on them.

mod execute;
mod report;

use crate::ctx::Ctx;
use crate::error::{CliError, ExitKind, Result};
use crate::queries::experiment::{suite, Asked, ExperimentError};
use runlog_core::rerun::Answers;
use std::path::PathBuf;

/// Where the reruns' calls are answered from.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum AnswersArg {
    /// From the recording until a call asks something else, then from the provider.
    RecordedThenLive,
    /// Every call from the provider.
    Live,
}

/// Arguments of `runlog experiment`.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    what: What,
}

#[derive(Debug, clap::Subcommand)]
enum What {
    /// Define an experiment and execute it: every suite run again under each variant.
    ///
    /// Example: runlog experiment run haiku-trial --since 2026-11-01 --variant haiku=haiku.toml
    Run(RunArgs),
    /// Go on with an experiment after an interrupt, a kill or its budget: reruns already ended
    /// are not executed again, those cut off are resumed.
    ///
    /// Example: runlog experiment resume haiku-trial --max-cost-usd 20
    Resume(ResumeArgs),
    /// The report: per variant against the recording (`base`), pass rates with their 95%
    /// intervals, tasks fixed and broken with a sign test, the mean score's paired difference,
    /// cost, tokens, calls and time; each task per variant.
    ///
    /// Example: runlog experiment show haiku-trial
    Show(report::ShowArgs),
    /// Hold each variant to criteria, for CI: exit 1 naming each criterion failed, 0 if none.
    ///
    /// Example: runlog experiment gate haiku-trial --max-pass-rate-drop 0.02 --max-cost-ratio 1.1
    #[command(
        after_help = "Exit codes: 0 every criterion holds, 1 one failed (each is named), 2 usage or no such experiment."
    )]
    Gate(report::GateArgs),
    /// Send the experiment to Arize Phoenix: the suite's tasks as a dataset, each variant as a
    /// Phoenix experiment with a run for each execution and its outcome, score and cost as
    /// evaluations.
    ///
    /// Example: runlog experiment export haiku-trial --phoenix http://127.0.0.1:6006
    Export(report::ExportArgs),
}

/// How the reruns are driven.
#[derive(Debug, clap::Args)]
struct Driving {
    /// Reruns executed at once
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=64))]
    jobs: u32,
    /// The most the experiment's live calls may cost, in USD: no rerun starts past it
    #[arg(long, value_name = "USD")]
    max_cost_usd: Option<f64>,
}

#[derive(Debug, clap::Args)]
struct RunArgs {
    /// The experiment's name.
    name: String,
    /// Suite runs by id, comma-separated
    #[arg(long, value_delimiter = ',', value_name = "RUN,...")]
    runs: Vec<String>,
    /// Suite: runs started on or after this date
    #[arg(long, value_name = "DATE", value_parser = crate::queries::judges::parse_since)]
    since: Option<runlog_core::Timestamp>,
    /// Suite: runs of this workflow (its name or file)
    #[arg(long, value_name = "NAME")]
    workflow: Option<String>,
    /// Suite: runs that ended so (succeeded, failed, paused)
    #[arg(long, value_name = "OUTCOME")]
    outcome: Option<String>,
    /// Suite: a file listing runs (`[[run]] id = "R"`, optionally `tasks = ["T"]`)
    #[arg(long, value_name = "FILE")]
    suite: Option<PathBuf>,
    /// A variant: its name and its file (repeatable)
    #[arg(long = "variant", value_name = "NAME=FILE", value_parser = parse_variant, required = true)]
    variants: Vec<(String, PathBuf)>,
    /// Execute each run this many times under each variant; above 1, the recording too, live
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=100))]
    repeat: u32,
    /// Where the reruns' calls are answered from
    #[arg(long, value_enum, default_value = "recorded-then-live")]
    answers: AnswersArg,
    #[command(flatten)]
    driving: Driving,
}

#[derive(Debug, clap::Args)]
struct ResumeArgs {
    /// The experiment.
    name: String,
    #[command(flatten)]
    driving: Driving,
}

fn parse_variant(s: &str) -> std::result::Result<(String, PathBuf), String> {
    match s.split_once('=') {
        Some((name, file)) if !name.is_empty() && !file.is_empty() => {
            Ok((name.to_owned(), PathBuf::from(file)))
        }
        _ => Err(format!("{s:?} is not NAME=FILE")),
    }
}

/// Runs the subcommand.
pub fn run(a: Args, ctx: &Ctx) -> Result<Option<ExitKind>> {
    match a.what {
        What::Run(r) => {
            let asked = Asked {
                name: r.name,
                suite: suite::Choice {
                    runs: r.runs,
                    since: r.since,
                    workflow: r.workflow,
                    outcome: r.outcome,
                    file: r.suite,
                },
                variants: r.variants,
                repeat: r.repeat,
                answers: match r.answers {
                    AnswersArg::RecordedThenLive => Answers::RecordedThenLive,
                    AnswersArg::Live => Answers::Live,
                },
                max_cost_usd: r.driving.max_cost_usd,
            };
            execute::define_and_run(ctx, &asked, r.driving.jobs)
        }
        What::Resume(r) => execute::resume(ctx, &r.name, r.driving.jobs, r.driving.max_cost_usd),
        What::Show(s) => report::show(ctx, &s).map(|()| None),
        What::Gate(g) => report::gate(ctx, &g),
        What::Export(e) => report::export(ctx, &e).map(|()| None),
    }
}

/// Arguments of `runlog experiments`.
#[derive(Debug, clap::Args)]
pub struct ListArgs {}

/// Lists the experiments.
pub fn list(_: ListArgs, ctx: &Ctx) -> Result<()> {
    report::list(ctx)
}

// The command line's words for a refused experiment: bad input (exit 2) with what to do.
impl From<ExperimentError> for CliError {
    fn from(e: ExperimentError) -> Self {
        use ExperimentError as E;
        match e {
            E::Replay(r) => r.into(),
            E::Store(s) => s.into(),
            E::Unknown { .. } => CliError::wrap(
                ExitKind::Input,
                Some("`runlog experiments` lists them".into()),
                e,
            ),
            E::Name { .. } | E::Suite { .. } => CliError::wrap(
                ExitKind::Input,
                Some("`runlog experiment run --help` shows how a suite and variants are given".into()),
                e,
            ),
            E::Variant { .. } => CliError::wrap(
                ExitKind::Input,
                Some("a variant file holds [gateway.models], [all] and [task.ID] tables of run, test, eval, requires_testing, description: see docs/experiments.md".into()),
                e,
            ),
            E::Rerun { .. } => CliError::wrap(ExitKind::Failed, None, e),
        }
    }
}
