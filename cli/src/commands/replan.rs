//! `runlog replan RUN --file PLAN.json`: the same plan format as a replan command prints.

use super::control::{actor, record};
use super::Ctx;
use crate::error::{CliError, Result};
use crate::runner::parse_revision;
use runlog_core::CommandKind;
use std::path::PathBuf;

/// Arguments of `runlog replan`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The run.
    run: String,
    /// {"cancel": [...], "add": [tasks], "replaces": {"new": "old"}, "reason": "..."}
    #[arg(long, value_name = "PLAN.json")]
    file: PathBuf,
    /// Who [default: $USER]
    #[arg(long)]
    by: Option<String>,
}

/// Records a plan revision written by hand.
pub fn run(a: Args, ctx: &Ctx) -> Result<()> {
    let text = std::fs::read_to_string(&a.file)
        .map_err(|e| CliError::input(format!("cannot read {}: {e}", a.file.display())))?;
    let who = actor(a.by);
    let kind = match parse_revision(&text, "revised by hand") {
        // The plan revision event has no author field: the acting user goes into its reason.
        Ok(CommandKind::RevisePlan {
            cancel,
            add,
            replaces,
            reason,
        }) => CommandKind::RevisePlan {
            cancel,
            add,
            replaces,
            reason: format!("{reason} (by {who})"),
        },
        Ok(other) => other,
        Err(e) => return Err(CliError::input(format!("{}: {e}", a.file.display()))),
    };
    record(ctx, &a.run, kind)
}
