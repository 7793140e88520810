//! Events for people: one line each, in words, or as a JSON line.

use super::gate_word;
use runlog_core::{Event, EventKind, Family};
pub use runlog_replay::events::EventLine;

/// One event in words (used by log, show, replay).
pub fn describe(e: &EventKind) -> String {
    match e.family() {
        Family::Run => run_words(e),
        Family::Plan => plan_words(e),
        Family::Attempt => attempt_words(e),
        Family::Judgement => judgement_words(e),
        Family::SubProject => sub_project_words(e),
        Family::Code => code_words(e),
        Family::Spend => spend_words(e),
        Family::Stage => stage_words(e),
        Family::Said => said_words(e),
    }
}

/// The run as a whole.
fn run_words(e: &EventKind) -> String {
    match e {
        EventKind::ParentLinked { parent_run, task } => {
            format!("this run is the sub-project of task {task} of run {parent_run}")
        }
        EventKind::RerunStarted(r) => rerun_words(r),
        EventKind::CommandKeyed { key, events, .. } => {
            format!("the {events} event(s) before this one record the command sent with idempotency key {key:?}")
        }
        EventKind::RunStarted {
            run,
            workflow,
            settings,
            ..
        } => format!(
            "run {run} started from {workflow} (jobs {}, eval threshold {}, {} rescues, {} test retries)",
            settings.jobs, settings.eval_threshold, settings.max_eval_rescues, settings.max_test_retries
        ),
        EventKind::RunFinished { outcome } => match outcome {
            runlog_core::RunOutcome::Succeeded => "run finished: succeeded".into(),
            runlog_core::RunOutcome::Failed { failed, blocked } => format!(
                "run finished: failed ({}{})",
                join_or(failed, "no task failed"),
                if blocked.is_empty() {
                    String::new()
                } else {
                    format!("; blocked: {}", super::join(blocked))
                }
            ),
            runlog_core::RunOutcome::Paused { reason } => {
                format!("run finished: paused ({})", first_line(reason))
            }
        },
        EventKind::RunInterrupted { reason } => format!("run interrupted: {}", first_line(reason)),
        EventKind::RunResumed { reason } => format!("run resumed: {}", first_line(reason)),
        EventKind::Forked {
            run,
            from_run,
            at_seq,
            ..
        } => format!("run {run} forked from {from_run} at seq {at_seq}"),
        EventKind::RolledBack { to_seq, reason, by } => {
            format!("rolled back to seq {to_seq} by {by}: {}", first_line(reason))
        }
        // Not of this family: `describe` sends each kind to its own.
        _ => String::new(),
    }
}

/// The plan.
fn plan_words(e: &EventKind) -> String {
    match e {
        EventKind::TaskAdded { spec } => {
            let mut parts = vec![format!("{} added", spec.id)];
            if !spec.after.is_empty() {
                parts.push(format!("after {}", super::join(&spec.after)));
            }
            if let Some(parent) = &spec.parent {
                parts.push(format!("in group {parent}"));
            }
            if let Some(test) = &spec.test {
                parts.push(format!("test `{test}`"));
            }
            if let Some(eval) = &spec.eval {
                parts.push(format!("eval `{eval}`"));
            }
            if spec.test.is_none() && spec.run.is_some() {
                parts.push("untested".into());
            }
            parts.join(", ")
        }
        EventKind::ReplanRequested {
            after_task,
            reason,
            affected,
            ..
        } => format!(
            "replan requested after {after_task} ({}): affects {}",
            first_line(reason),
            join_or(affected, "no pending task")
        ),
        EventKind::PlanRevised {
            cancelled,
            added,
            replaces,
            reason,
            ..
        } => {
            let added: Vec<&runlog_core::TaskId> = added.iter().map(|s| &s.id).collect();
            let replaced: Vec<String> = replaces
                .iter()
                .map(|r| format!("{} by {}", r.old, r.new))
                .collect();
            format!(
                "plan revised ({}): cancelled {}; added {}{}",
                first_line(reason),
                join_or(cancelled, "none"),
                join_or(&added, "none"),
                if replaced.is_empty() {
                    String::new()
                } else {
                    format!("; replaced {}", replaced.join(", "))
                }
            )
        }
        EventKind::ReplanLoopDetected {
            same_as_revision, ..
        } => format!("replan loop: the new plan is revision {same_as_revision} again"),
        // Not of this family: `describe` sends each kind to its own.
        _ => String::new(),
    }
}

/// A task's attempts.
fn attempt_words(e: &EventKind) -> String {
    match e {
        EventKind::TaskStarted {
            task,
            agent,
            worktree,
            attempt,
        } => format!("{task} attempt {attempt} started by {agent} in {worktree}"),
        EventKind::TaskSubmitted { task, summary } => format!("{task} submitted: {summary}"),
        EventKind::TestsStarted { task, attempt } => {
            format!("{task} tests started (attempt {attempt})")
        }
        EventKind::TestsPassed { task, .. } => format!("{task} tests passed"),
        EventKind::TestsFailed { task, details, .. } => {
            format!("{task} tests failed: {}", first_line(details))
        }
        EventKind::WorkerClaimed {
            task,
            attempt,
            worker,
            fresh_worktree,
            previous,
        } => {
            let from = previous
                .as_ref()
                .map(|p| format!(" from worker {p}"))
                .unwrap_or_default();
            let fresh = if *fresh_worktree {
                " in a fresh worktree (the feedback goes with it)"
            } else {
                ""
            };
            format!("{task} attempt {attempt} taken on by worker {worker}{from}{fresh}")
        }
        EventKind::AttemptAbandoned {
            task,
            attempt,
            worker,
            reason,
        } => format!("{task} attempt {attempt} of worker {worker} abandoned: {reason}"),
        EventKind::TaskFailed { task, reason } => format!("{task} failed: {}", first_line(reason)),
        EventKind::TaskCancelled { task, reason } => {
            format!("{task} cancelled: {}", first_line(reason))
        }
        EventKind::TaskReopened { task, by } => format!("{task} reopened by {by}"),
        EventKind::CheckpointReached { task, name } => format!("{task} reached checkpoint {name}"),
        EventKind::TaskClassified { task, class } => {
            format!("{task} classified as {}", class.name())
        }
        // Not of this family: `describe` sends each kind to its own.
        _ => String::new(),
    }
}

/// A task's evaluation, gate and review.
fn judgement_words(e: &EventKind) -> String {
    match e {
        EventKind::EvalScored {
            task,
            score,
            dimensions,
            notes,
            ..
        } => format!(
            "{task} scored {score} [{}] {notes}",
            dimensions
                .iter()
                .map(|(k, v)| format!("{k} {v}"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        EventKind::GateDecided {
            task,
            score,
            threshold,
            outcome,
        } => {
            format!(
                "{task} gate: {score} vs threshold {threshold} → {}",
                gate_word(outcome)
            )
        }
        EventKind::ReviewSet { policy } => format!(
            "people review {} verdicts{}",
            match policy.mode {
                runlog_core::review::ReviewMode::None => "no",
                runlog_core::review::ReviewMode::Failing => "failing",
                runlog_core::review::ReviewMode::All => "all",
            },
            match policy.sample > 0.0 {
                true => format!(" and {}% of the rest", policy.sample * 100.0),
                false => String::new(),
            }
        ),
        EventKind::ReviewHeld {
            task,
            score,
            threshold,
            outcome,
        } => format!(
            "{task} gate: {score} vs threshold {threshold} → {}, held for a person's review",
            gate_word(outcome)
        ),
        EventKind::PendingValidation { task } => format!("{task} waits for validation"),
        EventKind::EvalErrored {
            task,
            evaluator,
            error,
        } => format!(
            "{task} evaluator `{evaluator}` failed: {}",
            first_line(error)
        ),
        EventKind::TaskApproved { task, by } => format!("{task} approved by {by}"),
        EventKind::TaskRejected {
            task,
            by,
            reopen,
            reason,
        } => format!(
            "{task} rejected by {by}{}: {}",
            if *reopen { " and reopened" } else { "" },
            first_line(reason)
        ),
        // Not of this family: `describe` sends each kind to its own.
        _ => String::new(),
    }
}

/// A sub-project and its child run.
fn sub_project_words(e: &EventKind) -> String {
    match e {
        EventKind::SubProjectDeclared { task, workflow } => {
            format!("{task} is a sub-project: it runs the workflow {workflow} as a child run")
        }
        EventKind::ChildRunStarted { task, child_run } => {
            format!("{task} runs child run {child_run}")
        }
        EventKind::ChildRunEnded {
            task,
            child_run,
            succeeded: true,
            ..
        } => format!("{task}'s child run {child_run} succeeded"),
        EventKind::ChildRunEnded {
            task,
            child_run,
            failures,
            ..
        } => format!("{task}'s child run {child_run} did not succeed: {failures}; {task} waits"),
        // Not of this family: `describe` sends each kind to its own.
        _ => String::new(),
    }
}

/// The git workspace and what tasks wrote.
fn code_words(e: &EventKind) -> String {
    match e {
        EventKind::WorkspaceOpened { repo, branch, base } => {
            format!(
                "works in git: branch {branch} from {} in {repo}",
                short(base)
            )
        }
        EventKind::ChangesRecorded {
            task,
            attempt,
            commit,
            files,
            ..
        } if files.is_empty() => {
            format!(
                "{task} attempt {attempt} changed nothing (at {})",
                short(commit)
            )
        }
        EventKind::ChangesRecorded {
            task,
            attempt,
            commit,
            files,
            insertions,
            deletions,
            ..
        } => format!(
            "{task} attempt {attempt} changed {} file{} (+{insertions} -{deletions}) in {}",
            files.len(),
            if files.len() == 1 { "" } else { "s" },
            short(commit)
        ),
        EventKind::TaskMerged { task, commit } => {
            format!("{task} merged into the run's branch: {}", short(commit))
        }
        EventKind::MergeConflicted {
            task,
            files,
            rescue,
        } => format!(
            "{task} did not merge: conflict in {}; {}",
            files.join(", "),
            match rescue {
                Some(n) => format!("rescue {n} resolves it"),
                None => "waits for a person (resolve in its worktree, then approve)".into(),
            }
        ),
        EventKind::WroteOutside(w) => format!(
            "{} {}{}",
            w.task,
            w.describe(),
            match w.policy {
                runlog_core::outside::OutsidePolicy::Fail =>
                    " (outside_writes = \"fail\": the attempt fails)",
                runlog_core::outside::OutsidePolicy::Warn => "",
            }
        ),
        // Not of this family: `describe` sends each kind to its own.
        _ => String::new(),
    }
}

/// Usage, model calls, prices and budgets.
fn spend_words(e: &EventKind) -> String {
    match e {
        EventKind::UsageRecorded { usage } => format!(
            "{} attempt {} {}",
            usage.task,
            usage.attempt,
            usage.describe()
        ),
        EventKind::ModelCalled(call) => {
            format!("{} attempt {} {}", call.task, call.attempt, call.describe())
        }
        EventKind::ModelCallReserved(r) => {
            format!("{} attempt {} {}", r.task, r.attempt, r.describe())
        }
        EventKind::ModelCallDidNotFit(d) => {
            let r = &d.reservation;
            format!(
                "{} attempt {} {} call {} refused: {}",
                r.task,
                r.attempt,
                r.stage.name(),
                r.n,
                d.shortfall().describe()
            )
        }
        EventKind::PricesSet { prices } => format!(
            "prices set for {}",
            prices.keys().cloned().collect::<Vec<_>>().join(", ")
        ),
        EventKind::BudgetSet { task, limits, by } => format!(
            "{} budget set by {by}: {}",
            task.as_ref()
                .map_or_else(|| "the run's".to_owned(), |t| format!("{t}'s")),
            limits_words(limits)
        ),
        EventKind::BudgetSpent { task, .. } => format!(
            "{task} stopped: {}",
            e.budget_stop().map(|s| s.describe()).unwrap_or_default()
        ),
        // Not of this family: `describe` sends each kind to its own.
        _ => String::new(),
    }
}

/// Stages, retries and circuits.
fn stage_words(e: &EventKind) -> String {
    match e {
        EventKind::StageCompleted {
            stage,
            task,
            duration_ms,
            retry_count,
            result,
        } => {
            let said = match result {
                // A command that printed no result: nothing to say after the colon.
                runlog_core::Value::Null => String::new(),
                r => format!(": {}", serde_json::to_string(r).unwrap_or_default()),
            };
            format!("stage {stage} ({task}) completed in {duration_ms} ms after {retry_count} retries{said}")
        }
        EventKind::StageFailed {
            stage,
            task,
            error,
            error_type,
            retry_count,
            ..
        } => {
            format!(
                "stage {stage} ({task}) failed [{error_type}] (retry {retry_count}): {}",
                first_line(error)
            )
        }
        EventKind::StageStarted {
            stage,
            task,
            attempt,
        } => format!("stage {stage} ({task}) started, attempt {attempt}"),
        EventKind::RetryScheduled {
            task,
            attempt,
            delay_ms,
            ..
        } => format!("{task} retry {attempt} in {delay_ms} ms"),
        EventKind::CircuitOpened { stage, failures } => {
            format!("circuit of stage {stage} opened after {failures} failures in a row")
        }
        EventKind::CircuitClosed { stage } => format!("circuit of stage {stage} closed"),
        EventKind::StrategySet { stage, strategy } => format!(
            "stage {stage} retries: {}, delay {} ms, backoff {}",
            match strategy.limit {
                runlog_core::RetryLimit::Max(n) => format!("at most {n}"),
                runlog_core::RetryLimit::Unlimited => "never give up".into(),
            },
            strategy.delay_ms,
            strategy.backoff
        ),
        // Not of this family: `describe` sends each kind to its own.
        _ => String::new(),
    }
}

/// What is said without changing the state.
fn said_words(e: &EventKind) -> String {
    match e {
        EventKind::Attributed { principal, via } => {
            format!("recorded by {principal} ({via})")
        }
        EventKind::RunForgotten(f) => format!(
            "run {} forgotten by {} ({}): {}, {} events ending in {}; {}",
            f.run,
            f.principal,
            f.via,
            f.outcome,
            f.head_seq,
            f.head_hash.to_hex(),
            f.reason
        ),
        EventKind::OutputRecorded {
            task,
            stream,
            bytes,
            blob,
            ..
        } => format!(
            "{task} {stream}: {bytes} bytes{}",
            blob.map(|b| format!(" (blob {})", &b.to_hex()[..12]))
                .unwrap_or_default()
        ),
        EventKind::TestsDiscovered {
            task,
            convention,
            test,
        } => format!("{task} tests found by the convention {convention}: {test}"),
        EventKind::EvaluatorNamed {
            task,
            model,
            version,
        } => format!(
            "{task} evaluator: {}",
            super::join(
                &[("model", model), ("version", version)]
                    .iter()
                    .filter(|(_, v)| !v.is_empty())
                    .map(|(k, v)| format!("{k} {v}"))
                    .collect::<Vec<_>>()
            )
        ),
        EventKind::SecretsRedacted { task, redactions } => format!(
            "secrets redacted from {}: {}",
            task.as_ref().map_or_else(
                || "the run's record".to_owned(),
                |t| format!("{t}'s record")
            ),
            redaction_words(redactions)
        ),
        EventKind::MessagePosted { task, from, text } => match task {
            Some(task) => format!("{task}: message from {from}: {}", first_line(text)),
            None => format!("message from {from}: {}", first_line(text)),
        },
        EventKind::UsageClaimed { usage } => format!(
            "{} attempt {} {}: its claim, beside the calls the gateway measured",
            usage.task,
            usage.attempt,
            usage.describe().replacen(" used ", " says it used ", 1)
        ),
        EventKind::AnswerMapped(m) => format!(
            "{} attempt {}, call {}: the recorded answer given in this run's places: {}",
            m.task,
            m.attempt,
            m.n,
            runlog_core::relocate::Mapped::describe(&m.mapped)
        ),
        EventKind::CallDiverged(d) => format!(
            "{} ({})",
            d.describe(),
            if d.live {
                "sent to the provider"
            } else {
                "refused: the attempt stops"
            }
        ),
        EventKind::ExperimentDefined(x) => format!(
            "experiment {} defined: {} runs, variants {}, {} repeat(s)",
            x.name,
            x.suite.len(),
            x.variants
                .iter()
                .map(|v| v.name.as_str())
                .collect::<Vec<_>>()
                .join(", "),
            x.repeat
        ),
        EventKind::ExperimentRerun(r) => r.describe(),
        EventKind::AlertSent(sent) => sent.describe(),
        EventKind::ExperimentBudgetSet { max_cost_usd } => match max_cost_usd {
            Some(usd) => format!("experiment budget set to {}", runlog_core::usage::usd(*usd)),
            None => "experiment budget removed".to_owned(),
        },
        // Not of this family: `describe` sends each kind to its own.
        _ => String::new(),
    }
}

/// Ids joined, or `none` words when there are none.
fn join_or<T: std::fmt::Display>(ids: &[T], none: &str) -> String {
    if ids.is_empty() {
        none.into()
    } else {
        super::join(ids)
    }
}

/// The first line of a long text, for one line of output.
pub fn first_line(s: &str) -> String {
    runlog_runner::protocol::first_line(s, 140)
}

/// The first 12 characters of a commit id.
pub fn short(commit: &str) -> &str {
    runlog_runner::workspace::short(commit)
}

/// Writes one event: a line in words, or a JSON line.
pub fn write_event(
    out: &mut impl std::io::Write,
    seq: u64,
    e: &Event,
    json: bool,
) -> std::io::Result<()> {
    if json {
        super::write_json(out, &EventLine::of(seq, e))
    } else {
        writeln!(
            out,
            "{seq:>6}  {}  {:<20} {}",
            clock(e.at.0),
            e.kind.name(),
            describe(&e.kind)
        )
    }
}

/// An event as the API sends it: its line (seq, time, kind) and the same words `runlog log`
/// prints for it, so that the web view and the CLI cannot word it differently.
#[derive(Debug, serde::Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
pub struct Worded<'a> {
    /// The event.
    #[serde(flatten)]
    pub line: EventLine<'a>,
    /// What it says, in words.
    pub words: String,
}

impl<'a> Worded<'a> {
    /// Event `e` at `seq`, with its words.
    pub fn of(seq: u64, e: &'a runlog_core::Event) -> Self {
        Self {
            line: EventLine::of(seq, e),
            words: describe(&e.kind),
        }
    }
}

/// `HH:MM:SS` (UTC) of a timestamp.
pub fn clock(ms: u64) -> String {
    let s = ms / 1000;
    format!("{:02}:{:02}:{:02}", (s / 3600) % 24, (s / 60) % 60, s % 60)
}

/// `seq  kind  description`: an event in a task's story or a replay step.
pub fn line(seq: u64, kind: &EventKind) -> String {
    format!("{seq:>6}  {:<20} {}", kind.name(), describe(kind))
}

/// A budget's bounds in words: `$2.0000, 500000 tokens`, or `no bound`.
pub fn limits_words(l: &runlog_core::usage::Limits) -> String {
    let parts: Vec<String> = l
        .max_cost_usd
        .map(runlog_core::usage::usd)
        .into_iter()
        .chain(l.max_tokens.map(|t| format!("{t} tokens")))
        .collect();
    if parts.is_empty() {
        "no bound".into()
    } else {
        parts.join(", ")
    }
}

/// What was redacted, by name: `OPENAI_API_KEY ×2, aws-access-key ×1`.
pub fn redaction_words(redactions: &[runlog_core::redact::Redaction]) -> String {
    redactions
        .iter()
        .map(|r| format!("{} ×{}", r.name, r.count))
        .collect::<Vec<_>>()
        .join(", ")
}

/// `rerun of RUN from seq 12, answers recorded; again: implement (from 3f2a1c9); specs changed: review`.
fn rerun_words(r: &runlog_core::rerun::Rerun) -> String {
    let mut words = format!(
        "rerun of {} from seq {}, answers {}",
        r.from_run,
        r.from_seq,
        r.answers.name()
    );
    if !r.tasks.is_empty() {
        let again: Vec<String> = r
            .tasks
            .iter()
            .map(|t| match &t.commit {
                Some(c) => format!("{} (from {})", t.task, c.get(..7).unwrap_or(c)),
                None => t.task.to_string(),
            })
            .collect();
        words.push_str(&format!("; again: {}", again.join(", ")));
    }
    if !r.specs.is_empty() {
        let ids: Vec<&str> = r.specs.iter().map(|s| s.id.as_str()).collect();
        words.push_str(&format!("; specs changed: {}", ids.join(", ")));
    }
    words
}
