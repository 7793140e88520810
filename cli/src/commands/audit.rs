//! `runlog audit RUN`: every eval decision with the threshold in force and its flags; with
//! `--against OTHER`, two runs' verdicts side by side (a run and its rerun).

use crate::ctx::Ctx;
use crate::error::Result;
use crate::render;
use runlog_replay::Replay;

/// Arguments of `runlog audit`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The run.
    run: String,
    /// Another run (a rerun of it, a fork): each task's verdicts beside the run's, attempt
    /// by attempt.
    #[arg(long, value_name = "OTHER")]
    against: Option<String>,
}

/// Prints each eval decision, then the decisions taken outside the gate.
pub fn run(a: Args, ctx: &Ctx) -> Result<()> {
    let run = a.run.as_str();
    let log = ctx.open()?;
    let p =
        Replay::new(&log).project(run, None, Some(&mut render::replay_progress("replaying")))?;
    if let Some(other) = &a.against {
        let q = Replay::new(&log).project(
            other,
            None,
            Some(&mut render::replay_progress("replaying the other")),
        )?;
        return side_by_side((run, &p.audit.entries), (other, &q.audit.entries), ctx.json);
    }
    if ctx.json {
        return render::json(&crate::queries::audit::AuditView::of(run, p));
    }
    outln!(
        "eval audit of {run}: {} evals, {} flagged",
        p.audit.entries.len(),
        p.audit.flagged().count()
    );
    for e in &p.audit.entries {
        let render::AuditWords {
            decision,
            consequence,
            flags,
        } = render::AuditWords::of(e);
        outln!(
            "{:>6}  {:<18} attempt {} score {} {decision} → {consequence}{}",
            e.seq,
            e.task.as_str(),
            e.attempt,
            e.score,
            if e.rolled_back { " (rolled back)" } else { "" }
        );
        let dims: Vec<String> = e
            .dimensions
            .iter()
            .map(|(k, v)| format!("{k} {v}"))
            .collect();
        if !dims.is_empty() {
            outln!("          dimensions: {}", dims.join(", "));
        }
        if !e.notes.is_empty() {
            outln!("          notes: {}", render::event::first_line(&e.notes));
        }
        if let Some(cost) = &e.cost {
            outln!("          evaluation cost: {}", render::spend(cost));
        }
        if let Some(j) = &e.judged {
            outln!(
                "          judged: attempt {}'s commit {}, {} (+{} -{}); `runlog show {run} {} --diff --attempt {}`",
                j.attempt,
                render::event::short(&j.commit),
                render::join(&j.files),
                j.insertions,
                j.deletions,
                e.task,
                j.attempt
            );
        }
        for text in flags {
            outln!("          ⚑ {text}");
        }
    }
    for o in &p.audit.out_of_gate {
        match o {
            runlog_core::projections::audit::OutOfGate::Approved {
                seq,
                task,
                by,
                principal,
                claim_differs,
                ..
            } => {
                outln!(
                    "{seq:>6}  {:<18} approved by {by}{}",
                    task.as_str(),
                    recorded_as(principal.as_ref())
                );
                flag_claim(by, principal.as_ref(), *claim_differs)?;
            }
            runlog_core::projections::audit::OutOfGate::Rejected {
                seq,
                task,
                by,
                reopen,
                reason,
                principal,
                claim_differs,
            } => {
                outln!(
                    "{seq:>6}  {:<18} rejected by {by}{}{}: {reason}",
                    task.as_str(),
                    recorded_as(principal.as_ref()),
                    if *reopen { " (reopened)" } else { "" }
                );
                flag_claim(by, principal.as_ref(), *claim_differs)?;
            }
            runlog_core::projections::audit::OutOfGate::EvalError {
                seq, task, error, ..
            } => outln!("{seq:>6}  {:<18} evaluator error: {error}", task.as_str()),
            runlog_core::projections::audit::OutOfGate::SecretsRedacted {
                seq,
                task,
                redactions,
            } => outln!(
                "{seq:>6}  {:<18} secrets redacted: {}",
                task.as_ref().map_or("(run)", |t| t.as_str()),
                render::event::redaction_words(redactions)
            ),
        }
    }
    Ok(())
}

/// ` [recorded: NAME via HOW]`, or nothing for a log from before principals were recorded.
fn recorded_as(principal: Option<&runlog_core::projections::Recorder>) -> String {
    principal.map_or_else(String::new, |p| {
        format!(" [recorded: {} via {}]", p.name, p.via)
    })
}

/// A second line when the claimed `by` is not who recorded the decision.
fn flag_claim(
    by: &str,
    principal: Option<&runlog_core::projections::Recorder>,
    differs: bool,
) -> Result<()> {
    if let (true, Some(p)) = (differs, principal) {
        outln!(
            "          ⚑ claimed to be {by}, but recorded by {} ({})",
            p.name,
            p.via
        );
    }
    Ok(())
}

/// Each task's eval verdicts in two runs, attempt by attempt (the left run's order, then what
/// only the right has).
fn side_by_side(
    (left, l): (&str, &[runlog_core::projections::audit::AuditEntry]),
    (right, r): (&str, &[runlog_core::projections::audit::AuditEntry]),
    json: bool,
) -> Result<()> {
    let key = |e: &runlog_core::projections::audit::AuditEntry| (e.task.clone(), e.attempt);
    let mut rows: Vec<(runlog_core::TaskId, u32)> = Vec::new();
    for e in l.iter().chain(r) {
        if !rows.contains(&key(e)) {
            rows.push(key(e));
        }
    }
    let verdict = |side: &[runlog_core::projections::audit::AuditEntry],
                   row: &(runlog_core::TaskId, u32)| {
        side.iter()
            .rev()
            .find(|e| &key(e) == row)
            .map(|e| (e.score, render::AuditWords::of(e).decision))
    };
    if !json {
        outln!("eval verdicts: {left} | {right}");
    }
    for row in &rows {
        let (a, b) = (verdict(l, row), verdict(r, row));
        if json {
            let side = |v: &Option<(f64, String)>| {
                v.as_ref().map(
                    |(score, decision)| serde_json::json!({"score": score, "decision": decision}),
                )
            };
            render::json(&serde_json::json!({
                "task": row.0, "attempt": row.1, left: side(&a), right: side(&b),
            }))?;
            continue;
        }
        let words = |v: &Option<(f64, String)>| {
            v.as_ref().map_or_else(
                || "-".to_owned(),
                |(score, decision)| format!("{score} {decision}"),
            )
        };
        let changed = if a.as_ref().map(|v| &v.1) != b.as_ref().map(|v| &v.1) {
            "  ⚑ changed"
        } else {
            ""
        };
        outln!(
            "  {:<18} attempt {}: {} | {}{changed}",
            row.0.as_str(),
            row.1,
            words(&a),
            words(&b)
        );
    }
    Ok(())
}
