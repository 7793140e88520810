//! `runlog emit RUN`: commands as JSON lines on stdin, each decided on the state the lines
//! before it left and recorded on its own; a rejected line records nothing and is reported,
//! the next lines go on.

use crate::ctx::Ctx;
use crate::error::{CliError, Result};
use crate::intake::parse_line;
use crate::render;
use runlog_core::Command;
use runlog_replay::Session;
use runlog_runner::clock::Clock;
use std::io::BufRead;

/// Arguments of `runlog emit`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The run (created by a start-run line if new).
    run: String,
}

/// Reads stdin to its end; exit 2 if any line was not a command or named an id that is not a
/// name, else 1 if the rules rejected any. The store is opened at the first command: lines that are all mistakes create nothing.
pub fn run(a: Args, ctx: &Ctx) -> Result<()> {
    let clock = ctx.host.clock();
    let mut lines = std::io::stdin().lock().lines().enumerate();
    let (mut rejected, mut malformed, mut unnamed) = (0usize, 0usize, 0usize);
    let mut next = || {
        next_command(
            &mut lines,
            &clock,
            ctx.host.intake_redactor(),
            ctx.json,
            &mut malformed,
        )
    };
    if let Some(first) = next()? {
        let log = ctx.open_or_create()?;
        let mut session = Session::open(&log, &a.run)?;
        let me = crate::intake::os_user();
        let mut command = Some(first);
        while let Some((n, cmd)) = command {
            match session.execute(cmd.issued_by(me.clone()))? {
                Ok(recorded) => report(
                    ctx.json,
                    n,
                    Ok((
                        recorded.head_seq().unwrap_or(session.state().seq),
                        recorded.events.iter().map(|(_, e)| e.kind.name()).collect(),
                    )),
                )?,
                Err(r) => {
                    // An id that is not a name is bad input, as a line that is not a command.
                    match r {
                        runlog_core::Rejection::NotAName { .. } => unnamed += 1,
                        _ => rejected += 1,
                    }
                    report(
                        ctx.json,
                        n,
                        Err(format!("{r} ({})", crate::error::rejection_hint(&r))),
                    )?;
                }
            }
            command = next()?;
        }
    }
    if malformed + unnamed > 0 {
        let named = if unnamed > 0 {
            format!(", {unnamed} named an id that is not a name")
        } else {
            String::new()
        };
        return Err(CliError::input(format!(
            "{malformed} line(s) were not commands{named}, {rejected} rejected; the others were recorded"
        ))
        .with_hint("each line is one JSON command, e.g. {\"command\":\"approve\",\"task\":\"a\",\"by\":\"me\"}; `runlog emit --help` says more"));
    }
    if rejected > 0 {
        return Err(CliError::failed(format!(
            "{rejected} command(s) rejected; the others were recorded"
        )));
    }
    Ok(())
}

/// The next line that is a command, with its line number; blank lines are skipped, lines that
/// are not commands reported and counted.
fn next_command(
    lines: &mut impl Iterator<Item = (usize, std::io::Result<String>)>,
    clock: &Clock,
    redactor: &runlog_core::redact::Redactor,
    json: bool,
    malformed: &mut usize,
) -> Result<Option<(usize, Command)>> {
    for (i, line) in lines {
        let n = i + 1;
        let line = line.map_err(|e| CliError::input(format!("stdin line {n}: {e}")))?;
        if line.trim().is_empty() {
            continue;
        }
        match parse_line(&line, || clock.now(), redactor) {
            Ok(cmd) => return Ok(Some((n, cmd))),
            Err(e) => {
                *malformed += 1;
                report(json, n, Err(format!("not a command: {e}")))?;
            }
        }
    }
    Ok(None)
}

fn report(
    json: bool,
    line: usize,
    outcome: std::result::Result<(u64, Vec<&str>), String>,
) -> Result<()> {
    match (json, outcome) {
        (true, Ok((seq, events))) => render::json(
            &serde_json::json!({"line": line, "ok": true, "head_seq": seq, "events": events}),
        )?,
        (true, Err(why)) => {
            render::json(&serde_json::json!({"line": line, "ok": false, "rejected": why}))?
        }
        (false, Ok((seq, events))) => {
            outln!("line {line}: recorded {} (head {seq})", events.join(", "))
        }
        (false, Err(why)) => outln!("line {line}: rejected: {why}"),
    }
    Ok(())
}
