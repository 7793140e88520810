//! `runlog audit RUN`: every eval decision with the threshold in force and its flags.

use crate::ctx::Ctx;
use crate::error::Result;
use crate::render;
use runlog_replay::Replay;

/// Arguments of `runlog audit`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The run.
    run: String,
}

/// Prints each eval decision, then the decisions taken outside the gate.
pub fn run(a: Args, ctx: &Ctx) -> Result<()> {
    let run = a.run.as_str();
    let log = ctx.open()?;
    let p =
        Replay::new(&log).project(run, None, Some(&mut render::replay_progress("replaying")))?;
    if ctx.json {
        p.audit.entries.iter().try_for_each(render::json)?;
        p.audit.out_of_gate.iter().try_for_each(render::json)?;
        return Ok(());
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
