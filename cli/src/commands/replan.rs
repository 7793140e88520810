//! `runlog replan RUN --file PLAN.json`: the same plan format as a replan command prints.

use super::control::record;
use crate::ctx::Ctx;
use crate::error::{bad_file, Result};
use crate::intake::actor;
use runlog_core::CommandKind;
use runlog_runner::parse_revision;
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

const PLAN_FILE: &str = "write the revision as one JSON object; `runlog replan --help` shows one";

/// Records a plan revision written by hand.
pub fn run(a: Args, ctx: &Ctx) -> Result<()> {
    let text = std::fs::read_to_string(&a.file)
        .map_err(|e| bad_file(format!("cannot read: {e}"), &a.file, PLAN_FILE))?;
    let who = actor(a.by);
    // The plan revision event has no author field: the acting user goes into its reason. A
    // person revises from the run as it is now, so the revision answers every pending request.
    let mut kind = parse_revision(&text, "revised by hand", None)
        .map_err(|e| bad_file(e, &a.file, PLAN_FILE))?;
    if let CommandKind::RevisePlan { reason, .. } = &mut kind {
        *reason = format!("{reason} (by {who})");
    }
    record(ctx, &a.run, kind)
}
