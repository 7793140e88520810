//! `runlog verify [RUN]`: checksums and chain of one run or all; exit 1 on damage.

use super::Ctx;
use crate::error::{CliError, Result};
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
        let report = log.verify(r)?;
        if ctx.json {
            render::json(&serde_json::json!({
                "run": r,
                "ok": report.is_ok(),
                "verified": report.verified,
                "head_seq": report.head.map(|h| h.seq),
                "damage": report.damage.as_ref().map(|d| serde_json::json!({"seq": d.seq, "kind": d.kind.name(), "reason": d.reason})),
            }));
        } else {
            match &report.damage {
                None => println!(
                    "{r}: ok, {} events, checksums and chain verified",
                    report.verified
                ),
                Some(d) => println!(
                    "{r}: DAMAGED: {d} ({} events before it verified)",
                    report.verified
                ),
            }
        }
        if !report.is_ok() {
            damaged += 1;
        }
    }
    if damaged > 0 {
        return Err(CliError::failed(format!("{damaged} run(s) damaged")).with_hint("export the intact prefix with `runlog export`, or fork from a seq before the damage"));
    }
    Ok(())
}
