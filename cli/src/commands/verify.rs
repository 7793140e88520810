//! `runlog verify [RUN]`: checksums and chain of one run or all, and that every event decodes
//! (a run no command can read is not fine); exit 1 on damage.

use super::Ctx;
use crate::error::{CliError, Result};
use crate::render;
use runlog_store::EventLog;
use serde::Serialize;

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

/// What verifying one run found (`verify --json`, the API's `GET /v1/runs/{run}/verify`).
/// Fields in the alphabetical order `--json` has always printed them in.
#[derive(Debug, Serialize)]
pub(crate) struct Checked {
    damage: Option<Found>,
    head_seq: Option<u64>,
    ok: bool,
    run: String,
    verified: u64,
}

impl Checked {
    /// No damage.
    pub(crate) fn is_ok(&self) -> bool {
        self.ok
    }
}

/// The first damage in a run.
#[derive(Debug, Serialize)]
pub(crate) struct Found {
    kind: &'static str,
    reason: String,
    seq: u64,
}

/// Walks a run's checksums and chain, and decodes every event: a body that is not an event is
/// damage all the same (the store vouches for bytes, not meaning).
pub(crate) fn check(log: &dyn EventLog, run: &str) -> Result<Checked> {
    let report = log.verify(run)?;
    let undecodable = match (&report.damage, report.head) {
        (None, Some(head)) => first_undecodable(log, run, head.seq)?,
        _ => None,
    };
    let damage = match (&report.damage, undecodable) {
        (Some(d), _) => Some(Found {
            seq: d.seq,
            kind: d.kind.name(),
            reason: d.to_string(),
        }),
        (None, Some((seq, why))) => Some(Found {
            seq,
            kind: "undecodable",
            reason: format!("seq {seq} does not decode as an event: {why}"),
        }),
        (None, None) => None,
    };
    let verified = match &damage {
        Some(d) if d.kind == "undecodable" => d.seq - 1,
        _ => report.verified,
    };
    Ok(Checked {
        run: run.to_owned(),
        ok: damage.is_none(),
        verified,
        head_seq: report.head.map(|h| h.seq),
        damage,
    })
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
