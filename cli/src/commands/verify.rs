//! `runlog verify [RUN]`: checksums and chain of one run or all, and that every event decodes
//! (a run no command can read is not fine); exit 1 on damage.

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
        // The store vouches for bytes; a body that is not an event is damage all the same.
        let undecodable = match (&report.damage, report.head) {
            (None, Some(head)) => first_undecodable(&log, r, head.seq)?,
            _ => None,
        };
        let damage = match (&report.damage, &undecodable) {
            (Some(d), _) => Some((d.seq, d.kind.name(), d.to_string())),
            (None, Some((seq, why))) => Some((
                *seq,
                "undecodable",
                format!("seq {seq} does not decode as an event: {why}"),
            )),
            (None, None) => None,
        };
        let verified = match &undecodable {
            Some((seq, _)) => seq - 1,
            None => report.verified,
        };
        if ctx.json {
            render::json(&serde_json::json!({
                "run": r,
                "ok": damage.is_none(),
                "verified": verified,
                "head_seq": report.head.map(|h| h.seq),
                "damage": damage.as_ref().map(|(seq, kind, reason)| serde_json::json!({"seq": seq, "kind": kind, "reason": reason})),
            }));
        } else {
            match &damage {
                None => {
                    println!("{r}: ok, {verified} events, checksums, chain and encoding verified")
                }
                Some((_, _, d)) => {
                    println!("{r}: DAMAGED: {d} ({verified} events before it verified)")
                }
            }
        }
        if damage.is_some() {
            damaged += 1;
        }
    }
    if damaged > 0 {
        return Err(CliError::failed(format!("{damaged} run(s) damaged")).with_hint("export the intact prefix with `runlog export`, or fork from a seq before the damage"));
    }
    Ok(())
}

/// The first seq of a run whose body is not an event, with why.
fn first_undecodable(log: &dyn EventLog, run: &str, head: u64) -> Result<Option<(u64, String)>> {
    match runlog_replay::events::for_each(log, run, 1, head, &mut |_, _, _| Ok(true)) {
        Ok(()) => Ok(None),
        Err(runlog_replay::ReplayError::Decode { seq, source, .. }) => {
            Ok(Some((seq, source.to_string())))
        }
        Err(e) => Err(e.into()),
    }
}
