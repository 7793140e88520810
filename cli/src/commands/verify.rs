//! `runlog verify [RUN]`: checksums and chain of one run or all, and that every event decodes
//! (a run no command can read is not fine); exit 1 on damage.

use crate::ctx::Ctx;
use crate::error::{CliError, Result};
use crate::queries::verify::{check, Checked};
use crate::render;
use runlog_store::EventLog;

/// Arguments of `runlog verify`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The run [default: every run]
    run: Option<String>,
}

/// Verifies and reports each run; damage anywhere is exit 1.
pub fn run(a: Args, ctx: &Ctx) -> Result<()> {
    let log = ctx.open()?;
    let runs: Vec<String> = match a.run.as_deref() {
        Some(r) => {
            // Existence only: the head itself may sit in the damage verify is about to report.
            let known: Vec<String> = log.runs()?.into_iter().map(|m| m.run).collect();
            if !known.iter().any(|k| k == r) {
                return Err(runlog_replay::ReplayError::UnknownRun {
                    run: r.to_owned(),
                    known,
                }
                .into());
            }
            vec![r.to_owned()]
        }
        None => log.runs()?.into_iter().map(|m| m.run).collect(),
    };
    let mut damaged = 0;
    for r in &runs {
        let c = check(&log, r)?;
        if ctx.json {
            render::json(&c);
        } else {
            print(&c);
        }
        let damage = c.damage;
        if damage.is_some() {
            damaged += 1;
        }
    }
    if damaged > 0 {
        return Err(CliError::failed(format!("{damaged} run(s) damaged")).with_hint(
            "`runlog repair` rebuilds the store from its archive (the damaged database is kept aside); or export the intact prefix with `runlog export`",
        ));
    }
    Ok(())
}

/// One run's line: ok with its count, or what is damaged.
pub(crate) fn print(c: &Checked) {
    match &c.damage {
        None => println!(
            "{}: ok, {} events, checksums, chain and encoding verified",
            c.run, c.verified
        ),
        Some(d) => println!(
            "{}: DAMAGED: {} ({} events before it verified)",
            c.run, d.reason, c.verified
        ),
    }
}
