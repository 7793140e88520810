//! Commands that record decisions: approve, reject, reopen, replan, rollback, fork, emit.
//! Each goes through the engine's rules and is recorded with the acting user.

use crate::error::{CliError, Result};
use crate::output;
use crate::runner::clock::Clock;
use runlog_core::{Command, CommandKind, TaskId};
use runlog_replay::Replay;
use std::io::BufRead;
use std::path::Path;

/// Who is acting: `--by`, else `$USER`, else "unknown".
pub fn actor(by: Option<String>) -> String {
    by.or_else(|| std::env::var("USER").ok())
        .unwrap_or_else(|| "unknown".into())
}

fn record(store: &Path, run: &str, kind: CommandKind, json: bool) -> Result<()> {
    let log = crate::store::open(store, false)?;
    let replay = Replay::new(&log);
    let (events, head) = replay.execute(run, Command::new(Clock::from_env().now(), kind))?;
    if json {
        for (i, e) in events.iter().enumerate() {
            output::json(
                &serde_json::json!({"seq": head.seq + 1 - events.len() as u64 + i as u64, "event": e.kind}),
            );
        }
    } else {
        for (i, e) in events.iter().enumerate() {
            let seq = head.seq + 1 - events.len() as u64 + i as u64;
            println!(
                "{seq:>6}  {:<20} {}",
                e.kind.name(),
                crate::cmd_inspect::describe(&e.kind)
            );
        }
    }
    Ok(())
}

/// `runlog approve RUN TASK`.
pub fn approve(store: &Path, run: &str, task: &str, by: Option<String>, json: bool) -> Result<()> {
    record(
        store,
        run,
        CommandKind::Approve {
            task: TaskId::from(task),
            by: actor(by),
        },
        json,
    )
}

/// `runlog reject RUN TASK [--reopen]`.
pub fn reject(
    store: &Path,
    run: &str,
    task: &str,
    reopen: bool,
    reason: String,
    by: Option<String>,
    json: bool,
) -> Result<()> {
    record(
        store,
        run,
        CommandKind::Reject {
            task: TaskId::from(task),
            by: actor(by),
            reopen,
            reason,
        },
        json,
    )
}

/// `runlog reopen RUN TASK`.
pub fn reopen(store: &Path, run: &str, task: &str, by: Option<String>, json: bool) -> Result<()> {
    record(
        store,
        run,
        CommandKind::Reopen {
            task: TaskId::from(task),
            by: actor(by),
        },
        json,
    )
}

/// `runlog replan RUN --file PLAN.json`: the same plan format as a replan command prints.
pub fn replan(store: &Path, run: &str, file: &Path, by: Option<String>, json: bool) -> Result<()> {
    let text = std::fs::read_to_string(file)
        .map_err(|e| CliError::input(format!("cannot read {}: {e}", file.display())))?;
    let who = actor(by);
    let kind = match crate::workflow::parse_revision(&text, "revised by hand") {
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
        Err(e) => return Err(CliError::input(format!("{}: {e}", file.display()))),
    };
    record(store, run, kind, json)
}

/// `runlog rollback RUN --to SEQ --reason TEXT`.
pub fn rollback(
    store: &Path,
    run: &str,
    to: u64,
    reason: String,
    by: Option<String>,
    json: bool,
) -> Result<()> {
    record(
        store,
        run,
        CommandKind::Rollback {
            to_seq: to,
            reason,
            by: actor(by),
        },
        json,
    )
}

/// `runlog fork RUN --at SEQ [--as NEW]`.
pub fn fork(
    store: &Path,
    run: &str,
    at: Option<u64>,
    new: Option<String>,
    json: bool,
) -> Result<()> {
    let log = crate::store::open(store, false)?;
    let replay = Replay::new(&log);
    let at = match at {
        Some(a) => a,
        None => replay.head_seq(run)?,
    };
    let new = match new {
        Some(n) => n,
        None => crate::store::free_run_id(&log, &format!("{run}-fork"))?,
    };
    let head = replay.fork(run, at, &new, Clock::from_env().now())?;
    if json {
        output::json(
            &serde_json::json!({"run": new, "from_run": run, "at_seq": at, "seq": head.seq}),
        );
    } else {
        println!("forked {run}@{at} as {new}; continue it with `runlog resume {new}`");
    }
    Ok(())
}

/// `runlog emit RUN`: commands as JSON lines on stdin, each decided and recorded on its own;
/// a rejected line records nothing and is reported, the next lines go on.
pub fn emit(store: &Path, run: &str, json: bool) -> Result<()> {
    let log = crate::store::open(store, true)?;
    let replay = Replay::new(&log);
    let clock = Clock::from_env();
    let mut state = match runlog_store::EventLog::head(&log, run)? {
        Some(_) => replay.head_state(run)?,
        None => runlog_core::RunState::default(),
    };
    let mut rejected = 0usize;
    for (i, line) in std::io::stdin().lock().lines().enumerate() {
        let n = i + 1;
        let line = line.map_err(|e| CliError::input(format!("stdin line {n}: {e}")))?;
        if line.trim().is_empty() {
            continue;
        }
        let cmd = match serde_json::from_str::<Command>(&line) {
            Ok(c) => c,
            Err(_) => match serde_json::from_str::<CommandKind>(&line) {
                Ok(kind) => Command::new(clock.now(), kind),
                Err(e) => {
                    rejected += 1;
                    report(json, n, Err(format!("not a command: {e}")));
                    continue;
                }
            },
        };
        match runlog_core::decide(&state, cmd) {
            Ok(events) => {
                let head = runlog_replay::control::append(&log, run, state.seq, &events)?;
                for e in &events {
                    runlog_core::evolve::evolve_in_place(&mut state, e);
                }
                report(
                    json,
                    n,
                    Ok((head.seq, events.iter().map(|e| e.kind.name()).collect())),
                );
            }
            Err(r) => {
                rejected += 1;
                report(json, n, Err(format!("{r} ({})", r.hint())));
            }
        }
    }
    if rejected > 0 {
        return Err(CliError::failed(format!(
            "{rejected} command(s) rejected; the others were recorded"
        )));
    }
    Ok(())
}

fn report(json: bool, line: usize, outcome: std::result::Result<(u64, Vec<&str>), String>) {
    match (json, outcome) {
        (true, Ok((seq, events))) => output::json(
            &serde_json::json!({"line": line, "ok": true, "head_seq": seq, "events": events}),
        ),
        (true, Err(why)) => {
            output::json(&serde_json::json!({"line": line, "ok": false, "rejected": why}))
        }
        (false, Ok((seq, events))) => {
            println!("line {line}: recorded {} (head {seq})", events.join(", "))
        }
        (false, Err(why)) => println!("line {line}: rejected: {why}"),
    }
}
