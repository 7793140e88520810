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
    /// Also look for secrets: the values in FILE (one per line, `NAME=VALUE` or a bare value,
    /// as `redact_file`) and the well-known key shapes, in every record and in the outputs and
    /// patches kept beside them. Says where each is (exit 1 if any); prints no value.
    #[arg(long, value_name = "FILE")]
    secrets: Option<std::path::PathBuf>,
}

/// Verifies and reports each run; damage anywhere is exit 1.
pub fn run(a: Args, ctx: &Ctx) -> Result<()> {
    let wanted = match &a.secrets {
        Some(file) => Some(secrets_of(file)?),
        None => None,
    };
    let log = ctx.open()?;
    let runs: Vec<String> = match a.run.as_deref() {
        Some(r) => {
            // Existence only: the head itself may sit in the damage verify is about to report.
            let known: Vec<String> = log.runs()?.into_iter().map(|m| m.run).collect();
            if !known.iter().any(|k| k == r) {
                if let Some(c) = crate::queries::verify::check_forgotten(&log, r)? {
                    if ctx.json {
                        render::json(&c)?;
                    } else {
                        print(&c)?;
                    }
                    return match c.damage {
                        None => Ok(()),
                        Some(_) => Err(CliError::failed(
                            "the register of forgotten runs is damaged",
                        )
                        .with_hint("`runlog repair` rebuilds the store from its archive")),
                    };
                }
                return Err(runlog_replay::forgotten::unknown_run(&log, r).into());
            }
            vec![r.to_owned()]
        }
        None => log.runs()?.into_iter().map(|m| m.run).collect(),
    };
    let mut damaged = 0;
    for r in &runs {
        let c = check(&log, r)?;
        if ctx.json {
            render::json(&c)?;
        } else {
            print(&c)?;
        }
        let damage = c.damage;
        if damage.is_some() {
            damaged += 1;
        } else if runlog_replay::forgotten::is_register(r) {
            // The register verified: each run it holds is named, as `verify RUN` names it.
            for t in crate::queries::forget::tombstones(&log)? {
                let c = crate::queries::verify::Checked::forgotten(t);
                if ctx.json {
                    render::json(&c)?;
                } else {
                    print(&c)?;
                }
            }
        }
    }
    if let Some(wanted) = &wanted {
        let mut leaks = 0usize;
        for r in &runs {
            for leak in crate::queries::secrets::scan(&log, r, wanted)? {
                leaks += 1;
                if ctx.json {
                    render::json(&leak)?;
                } else {
                    outln!(
                        "{}: secret {} at seq {} ({}{})",
                        leak.run,
                        leak.secret,
                        leak.seq,
                        leak.event,
                        if leak.place == "blob" {
                            ", in its blob"
                        } else {
                            ""
                        }
                    );
                }
            }
        }
        if leaks > 0 {
            return Err(CliError::failed(format!(
                "{leaks} secret(s) found in the history"
            ))
            .with_hint(
                "a chained log cannot be edited: revoke and rotate each secret named; new records have secrets replaced before they are kept (the workflow's redact_env and redact_file)",
            ));
        }
        if !ctx.json {
            outln!(
                "no secret of the file, and no key shape, in {} run(s)",
                runs.len()
            );
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
pub(crate) fn print(c: &Checked) -> Result<()> {
    if let Some(t) = &c.forgotten {
        outln!(
            "{}: forgotten by {} at {} ({}): {}, {} events ending in {}; the tombstone (seq {} of the register) verified",
            c.run,
            t.by,
            runlog_store::layout::utc(t.at_ms),
            t.reason,
            t.outcome,
            t.head_seq,
            t.head_hash,
            t.seq
        );
        return Ok(());
    }
    if c.run == runlog_core::FORGOTTEN_RUNS && c.damage.is_none() {
        outln!(
            "register of forgotten runs: ok, {} tombstone(s), checksums, chain and encoding verified",
            c.verified
        );
        return Ok(());
    }
    match &c.damage {
        None => outln!(
            "{}: ok, {} events, checksums, chain and encoding verified",
            c.run,
            c.verified
        ),
        Some(d) => outln!(
            "{}: DAMAGED: {} ({} events before it verified)",
            c.run,
            d.reason,
            c.verified
        ),
    }
    Ok(())
}

/// The secrets of `--secrets FILE`.
fn secrets_of(file: &std::path::Path) -> Result<crate::queries::secrets::Wanted> {
    let text = std::fs::read_to_string(file).map_err(|e| {
        crate::error::bad_file(
            format!("cannot read: {e}"),
            file,
            "--secrets takes a file of secrets, one per line: NAME=VALUE or a bare value",
        )
    })?;
    Ok(crate::queries::secrets::Wanted::new(
        runlog_core::redact::Redactor::parse_file(&text),
    ))
}
