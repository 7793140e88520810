//! `runlog rerun RUN`: run a recorded run again, its model calls answered from the recording.

use crate::ctx::Ctx;
use crate::error::{CliError, ExitKind, Result};
use crate::queries::rerun::{answered, start, Asked, RerunError};
use crate::render;
use runlog_core::rerun::Answers;
use runlog_runner::Launcher;
use std::path::PathBuf;
use std::sync::Arc;

/// Where a rerun's model calls are answered from.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum AnswersArg {
    /// Every call from the recording; the first that asks something else stops its attempt.
    Recorded,
    /// Every call from the provider.
    Live,
    /// From the recording until a call asks something else; it and its command's later
    /// calls go to the provider.
    RecordedThenLive,
}

/// Arguments of `runlog rerun`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The recorded run.
    run: String,
    /// The seq to re-execute from [default: before its first attempt]
    #[arg(long, value_name = "SEQ")]
    at: Option<u64>,
    /// Run only this task again (repeatable); the others are carried over as done, with
    /// their recorded work
    #[arg(long = "task", value_name = "TASK")]
    tasks: Vec<String>,
    /// A workflow file with the same tasks whose commands, tests or evaluators replace the
    /// run's (a what-if)
    #[arg(long, value_name = "FILE")]
    workflow: Option<PathBuf>,
    /// Where model calls are answered from
    #[arg(long, value_enum, default_value = "recorded")]
    answers: AnswersArg,
    /// The new run's id [default: RUN-rerun-N]
    #[arg(long = "as", value_name = "NEW")]
    new: Option<String>,
    #[command(flatten)]
    driving: super::resume::Driving,
}

/// Forks the run as a rerun, drives it, and says how its calls were answered.
pub fn run(a: Args, ctx: &Ctx) -> Result<Option<ExitKind>> {
    let opts = a.driving.options()?;
    let answers = match a.answers {
        AnswersArg::Recorded => Answers::Recorded,
        AnswersArg::Live => Answers::Live,
        AnswersArg::RecordedThenLive => Answers::RecordedThenLive,
    };
    let asked = Asked {
        run: a.run,
        at: a.at,
        tasks: a.tasks,
        answers,
        workflow: a.workflow,
        new: a.new,
        specs: None,
        lineage: None,
    };
    let launcher = Launcher::new(Arc::new(ctx.open()?), &ctx.store, &ctx.host);
    let log = launcher.log().as_ref();
    let started = start(log, asked, ctx.host.clock().now()).map_err(refused)?;
    let new = started.run.clone();
    if ctx.json {
        render::json(&serde_json::json!({"rerun": started}))?;
    } else {
        errln!(
            "rerunning {}@{} as {} (answers {}): {}",
            started.from_run,
            started.at_seq,
            new,
            started.answers,
            started.tasks.join(", ")
        );
    }
    let (engine, notes) = launcher.resume(&new, opts)?;
    for note in notes {
        errln!("note: {note}");
    }
    let exit = a.driving.drive(&launcher, ctx, engine);
    let calls = answered(log, &new)?;
    if ctx.json {
        render::json(&serde_json::json!({"answered": calls}))?;
    } else {
        outln!("model calls: {}", calls.describe());
        for d in &calls.divergences {
            outln!("diverged: {d}");
        }
        outln!("compare: runlog diff {} {new}", started.from_run);
    }
    exit
}

/// A refused rerun in the command line's words: bad input (exit 2) with what to do instead.
fn refused(e: RerunError) -> CliError {
    let hint = match &e {
        RerunError::Replay(_) | RerunError::Workflow(_) => None,
        RerunError::NoCalls { run } => Some(format!(
            "a run's calls are recorded when its workflow turns the gateway on ([providers], or a provider's key in the runner's environment); `runlog rerun {run} --answers live` runs it again against the providers"
        )),
        RerunError::UnknownTask { run, .. } => Some(format!("`runlog status {run}` lists its tasks")),
        RerunError::OtherTasks { .. } | RerunError::OtherOrder { .. } => Some(
            "give a copy of the run's workflow with only commands, tests or evaluators changed".into(),
        ),
    };
    match (e, hint) {
        (RerunError::Replay(r), _) => r.into(),
        (RerunError::Workflow(w), _) => (*w).into(),
        (e, Some(hint)) => CliError::input(e.to_string()).with_hint(hint),
        (e, None) => CliError::input(e.to_string()),
    }
}
