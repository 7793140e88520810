//! What a finished command means for its run, worked out without doing anything: from the
//! run's state, the command that ran and how it ended, the [`Step`]s the engine then carries
//! out in order (decisions to record, output to keep, the replanner given up). Nothing here
//! reads a file, the clock or the store, so every rule can be stated by a test.

use crate::process::{Failure, Outcome};
use crate::protocol;
use crate::revision::{self, PlanError};
use crate::workflow::TaskFile;
use runlog_core::dispatch::Job;
use runlog_core::redact::{redactions, Counts, Redactor};
use runlog_core::usage::{self, UsageStage};
use runlog_core::{CommandKind, ErrorType, Principal, Rejection, RunId, RunState, TaskId, Via};

/// Output longer than this goes to the blob area; the event keeps its beginning.
pub const INLINE_OUTPUT: usize = 4_096;

/// The most of a failed test's output that goes into its feedback (head and tail, whole lines).
const TEST_FEEDBACK: usize = 8_000;

/// Which command ended: one of a task's, or the replanner.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ran {
    /// The task's agent (an attempt).
    Agent,
    /// The task's tests.
    Tests,
    /// The task's evaluator.
    Eval,
    /// The replan command.
    Replan,
}

impl Ran {
    /// The command that runs a task's job.
    pub fn of(job: Job) -> Self {
        match job {
            Job::Attempt => Ran::Agent,
            Job::Tests => Ran::Tests,
            Job::Eval => Ran::Eval,
        }
    }

    /// How messages and output streams name it (`agent.stdout`, "the test command").
    pub fn word(self) -> &'static str {
        match self {
            Ran::Agent => "agent",
            Ran::Tests => "test",
            Ran::Eval => "eval",
            Ran::Replan => "replan",
        }
    }

    /// Whose usage its report is.
    pub fn stage(self) -> UsageStage {
        match self {
            Ran::Agent => UsageStage::Agent,
            Ran::Tests => UsageStage::Tests,
            Ran::Eval => UsageStage::Evaluator,
            Ran::Replan => UsageStage::Replanner,
        }
    }
}

/// One thing the engine does for a finished command.
// A step lives only until it is carried out, a few at a time: boxing the command buys nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// Decide and record a command (issued by `by` when it names someone).
    Decide {
        /// The command.
        kind: CommandKind,
        /// Who issued it, when not the runner.
        by: Option<Principal>,
        /// What a refusal means.
        if_refused: IfRefused,
    },
    /// Keep a stream's output: inline when short, else its beginning inline and the whole in
    /// the blob area.
    Keep {
        /// The task it is recorded under.
        task: TaskId,
        /// `agent.stdout`, `replan.stderr`...
        stream: String,
        /// Everything it printed (kept up to the output cap).
        text: String,
    },
    /// Stop asking the replanner; the reason is posted on the run.
    GiveUpReplan(String),
}

/// What the engine does when the rules refuse a [`Step::Decide`].
#[derive(Debug, Clone, PartialEq)]
pub enum IfRefused {
    /// The runner asked for something the rules forbid: the run stops with the error.
    Error,
    /// Noted on the task as `ABOUT: REJECTION`; the steps after it go on.
    Note {
        /// The task.
        task: TaskId,
        /// What was refused.
        about: String,
    },
    /// The attempt fails instead, and the steps after it are dropped.
    FailAttempt {
        /// The task.
        task: TaskId,
        /// Which refusal fails it, and how its error reads.
        because: Because,
        /// How long the attempt took.
        duration_ms: u64,
    },
    /// The replanner is given up with the refusal as the reason.
    GiveUpReplan,
}

/// Why a refusal fails an attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Because {
    /// The tasks the agent added broke a plan rule (any refusal).
    AddedTasks,
    /// The agent submitted without its checkpoints (only that refusal; others are errors).
    MissingCheckpoints,
}

/// What to do after a refusal.
#[derive(Debug, Clone, PartialEq)]
pub enum Refusal {
    /// Stop the run with the rejection as the runner's error.
    Error,
    /// Do this (if anything), then go on with the next step.
    GoOn(Option<Step>),
    /// Do this, and nothing more of the plan.
    Instead(Step),
}

impl IfRefused {
    /// What the engine does when `r` refused its decision.
    pub fn refused(&self, r: &Rejection) -> Refusal {
        match self {
            IfRefused::Error => Refusal::Error,
            IfRefused::Note { task, about } => {
                Refusal::GoOn(Some(note(task, format!("{about}: {r}"))))
            }
            IfRefused::FailAttempt {
                task,
                because,
                duration_ms,
            } => {
                let (error, error_type) = match (because, r) {
                    (Because::AddedTasks, r) => (
                        format!("the tasks it added were refused: {r} ({})", r.hint()),
                        ErrorType::PlanRefused,
                    ),
                    (Because::MissingCheckpoints, Rejection::CheckpointsMissing { .. }) => {
                        (r.to_string(), ErrorType::Checkpoints)
                    }
                    (Because::MissingCheckpoints, _) => return Refusal::Error,
                };
                Refusal::Instead(record(CommandKind::FailStage {
                    task: task.clone(),
                    error,
                    error_type,
                    duration_ms: *duration_ms,
                }))
            }
            IfRefused::GiveUpReplan => Refusal::Instead(Step::GiveUpReplan(format!(
                "the replanner's plan was refused: {r}"
            ))),
        }
    }
}

/// A decision whose refusal is the runner's error.
pub fn record(kind: CommandKind) -> Step {
    decide(kind, IfRefused::Error)
}

fn decide(kind: CommandKind, if_refused: IfRefused) -> Step {
    Step::Decide {
        kind,
        by: None,
        if_refused,
    }
}

/// A message from runlog on the task's story.
pub fn note(task: &TaskId, text: String) -> Step {
    record(CommandKind::PostMessage {
        task: Some(task.clone()),
        from: "runlog".into(),
        text,
    })
}

/// `out` with every secret `redactor` knows replaced, and the record of what it replaced
/// (names and counts), which the engine records before anything read from `out` is.
pub fn redacted(
    redactor: &Redactor,
    task: Option<&TaskId>,
    mut out: Outcome,
) -> (Outcome, Option<CommandKind>) {
    let mut counts = Counts::new();
    redactor.redact_in_place(&mut out.stdout, &mut counts);
    redactor.redact_in_place(&mut out.stderr, &mut counts);
    if let Some(Failure::Spawn(why)) = &mut out.failure {
        redactor.redact_in_place(why, &mut counts);
    }
    (out, redaction(task, counts))
}

/// The record of secrets replaced, when any were.
pub fn redaction(task: Option<&TaskId>, counts: Counts) -> Option<CommandKind> {
    (!counts.is_empty()).then(|| CommandKind::RecordRedaction {
        task: task.cloned(),
        redactions: redactions(counts),
    })
}

/// What a command printed, kept (each stream that printed anything), with a note for each
/// stream cut to `cap` bytes, and one for processes it left running.
pub fn output(task: &TaskId, ran: Ran, out: &Outcome, cap: usize) -> Vec<Step> {
    let mut steps = Vec::new();
    let streams = [("stdout", &out.stdout), ("stderr", &out.stderr)];
    for ((stream, text), left_out) in streams.into_iter().zip(out.left_out) {
        if left_out > 0 {
            steps.push(note(
                task,
                format!(
                    "the {} command's {stream} was larger than output_cap_bytes ({cap}): {left_out} bytes in the middle were left out, the first and last {} bytes are kept",
                    ran.word(),
                    cap / 2
                ),
            ));
        }
        if !text.trim().is_empty() {
            steps.push(Step::Keep {
                task: task.clone(),
                stream: format!("{}.{stream}", ran.word()),
                text: text.clone(),
            });
        }
    }
    steps
}

/// A note for the processes of its group a command left running, if it did (never for the
/// replanner, whose group the engine stops with it).
pub fn leftovers(task: &TaskId, ran: Ran, out: &Outcome) -> Option<Step> {
    let text = out.leftovers_text()?;
    Some(note(task, format!("the {} command: {text}", ran.word())))
}

/// The usage a command reported on its stdout and in its `RUNLOG_USAGE` file (`appended`),
/// recorded; a line runlog cannot read is noted with why, and never stops the run. A
/// sub-project's agent reports nothing here: its child run records its own. When the gateway
/// `measured` the command's calls, what it reported is its claim: kept, never counted twice.
pub fn usage(
    state: &RunState,
    task: &TaskId,
    ran: Ran,
    stdout: &str,
    appended: &str,
    measured: bool,
) -> Vec<Step> {
    let stage = ran.stage();
    if state.child_run_of(task).is_some() && stage == UsageStage::Agent {
        return Vec::new();
    }
    let (mut reports, problems) = usage::reports_in(stdout);
    let (more, more_problems) = usage::reports_in(appended);
    reports.extend(more);
    let problems = problems.into_iter().chain(
        more_problems
            .into_iter()
            .map(|p| format!("RUNLOG_USAGE: {p}")),
    );
    let mut steps: Vec<Step> = problems
        .map(|p| note(task, format!("the {} command: {p}", stage.name())))
        .collect();
    if !reports.is_empty() {
        let task_ = task.clone();
        let kind = if measured {
            CommandKind::RecordUsageClaim {
                task: task_,
                stage,
                reports,
            }
        } else {
            CommandKind::RecordUsage {
                task: task_,
                stage,
                reports,
            }
        };
        steps.push(decide(
            kind,
            IfRefused::Note {
                task: task.clone(),
                about: format!("the {} command's usage was not recorded", stage.name()),
            },
        ));
    }
    steps
}

/// The note for a command whose task moved while it ran (its end decides nothing more).
pub fn moved_on(task: &TaskId, ran: Ran, out: &Outcome, cancelled: bool) -> Step {
    let how = match out.failure {
        Some(Failure::Stopped) => "was stopped",
        _ => "ended",
    };
    let why = if cancelled {
        "a plan revision cancelled the task"
    } else {
        "a decision recorded meanwhile (a rollback, an approval) moved the task on"
    };
    note(task, format!("its {} command {how}: {why}", ran.word()))
}

/// A sub-project's child run that ended, and whether it succeeded.
pub type ChildEnd = (RunId, bool);

/// An attempt's end, once its output, usage and changes are recorded: it failed; or what
/// its agent reported (checkpoints, classes, messages, tasks added) and its submission.
/// A child run that failed leaves the task waiting: nothing more.
pub fn attempt(
    state: &RunState,
    task: &TaskId,
    out: &Outcome,
    child: Option<&ChildEnd>,
    duration_ms: u64,
) -> Vec<Step> {
    if child.is_some_and(|(_, succeeded)| !succeeded) {
        return Vec::new();
    }
    if !out.succeeded() {
        let (error, error_type) = out.failure_text();
        return vec![record(CommandKind::FailStage {
            task: task.clone(),
            error,
            error_type,
            duration_ms,
        })];
    }
    let report = match child {
        // The child's own log holds its story; runlog's summary is not a report.
        Some((child, _)) => protocol::AgentReport {
            summary: format!("child run {child} succeeded"),
            result: serde_json::json!({ "child_run": child.as_str() }).into(),
            ..protocol::AgentReport::default()
        },
        None => protocol::agent_report(&out.stdout),
    };
    let mut steps: Vec<Step> = report
        .checkpoints
        .into_iter()
        .map(|name| {
            record(CommandKind::ReachCheckpoint {
                task: task.clone(),
                name,
            })
        })
        .collect();
    for class in report.classes {
        steps.push(decide(
            CommandKind::Classify {
                task: task.clone(),
                class,
            },
            IfRefused::Note {
                task: task.clone(),
                about: format!("classification {} refused", class.name()),
            },
        ));
    }
    let agent = state
        .task(task)
        .and_then(|t| t.agent.clone())
        .map_or_else(|| "agent".into(), |a| a.0);
    steps.extend(report.messages.into_iter().map(|text| {
        record(CommandKind::PostMessage {
            task: Some(task.clone()),
            from: agent.clone(),
            text,
        })
    }));
    steps.extend(report.problems.into_iter().map(|p| note(task, p)));
    if !report.add_tasks.is_empty() {
        match decompose(state, task, &agent, report.add_tasks) {
            Ok(revision) => steps.push(Step::Decide {
                kind: revision,
                by: Some(Principal {
                    name: agent.clone(),
                    via: Via::AgentOutput,
                }),
                if_refused: IfRefused::FailAttempt {
                    task: task.clone(),
                    because: Because::AddedTasks,
                    duration_ms,
                },
            }),
            Err(why) => {
                // Refused: the attempt fails with the reason, which its retry reads as feedback.
                steps.push(record(CommandKind::FailStage {
                    task: task.clone(),
                    error: format!("the tasks it added were refused: {why}"),
                    error_type: ErrorType::PlanRefused,
                    duration_ms,
                }));
                return steps;
            }
        }
    }
    steps.push(decide(
        CommandKind::SubmitTask {
            task: task.clone(),
            summary: report.summary,
            result: report.result,
            duration_ms,
        },
        IfRefused::FailAttempt {
            task: task.clone(),
            because: Because::MissingCheckpoints,
            duration_ms,
        },
    ));
    steps
}

/// The plan revision adding the tasks a planning agent printed (`{"add_tasks": [...]}`), in
/// the planner's group unless a task names another parent, with the agent as its author; or
/// why the task files are not tasks.
fn decompose(
    state: &RunState,
    planner: &TaskId,
    agent: &str,
    tasks: Vec<serde_json::Value>,
) -> Result<CommandKind, PlanError> {
    let group = state.task(planner).and_then(|t| t.spec.parent.clone());
    let files = tasks
        .into_iter()
        .enumerate()
        .map(|(i, task)| {
            serde_json::from_value::<TaskFile>(task).map_err(|e| PlanError::AddedTask {
                item: i + 1,
                why: e.to_string(),
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let mut add = revision::added_specs(&files)?;
    for spec in add.iter_mut().filter(|s| s.parent.is_none()) {
        spec.parent = group.clone();
    }
    Ok(CommandKind::RevisePlan {
        cancel: Vec::new(),
        add,
        replaces: Vec::new(),
        reason: format!("sub-tasks added at run time by {agent}, the agent of {planner}"),
        // Answers no replan request: any still pending stays pending.
        answers: Some(0),
    })
}

/// The tests' end: passed or not, with what their output says.
pub fn tests(task: &TaskId, out: &Outcome) -> Vec<Step> {
    vec![record(CommandKind::RecordTests {
        task: task.clone(),
        passed: out.succeeded(),
        details: test_details(out),
    })]
}

/// The evaluator's end: its score, or why there is none (it failed, or printed no score).
pub fn eval(state: &RunState, task: &TaskId, out: &Outcome) -> Vec<Step> {
    let evaluator = state
        .task(task)
        .and_then(|t| t.spec.eval.clone())
        .unwrap_or_default();
    let parsed = if out.succeeded() {
        protocol::evaluation(&out.stdout).map_err(|e| e.to_string())
    } else {
        Err(format!("the evaluator {}", out.failure_text().0))
    };
    let kind = match parsed {
        Ok(e) => CommandKind::ScoreEval {
            task: task.clone(),
            evaluator,
            score: e.score,
            dimensions: e.dimensions,
            notes: e.notes,
            judge: e.judge,
        },
        Err(error) => CommandKind::RecordEvalError {
            task: task.clone(),
            evaluator,
            error,
        },
    };
    vec![record(kind)]
}

/// The replanner's end, its output already kept: the revision it printed, decided on the
/// board it was shown (`seen`); or the replanner given up, with why.
pub fn replan(out: &Outcome, seen: u64) -> Vec<Step> {
    if !out.succeeded() {
        return vec![Step::GiveUpReplan(format!(
            "the replan command {}",
            out.failure_text().0
        ))];
    }
    match revision::parse_revision(&out.stdout, "revised by the replan command", Some(seen)) {
        Ok(kind) => vec![decide(kind, IfRefused::GiveUpReplan)],
        Err(e) => vec![Step::GiveUpReplan(format!(
            "the replan command's output is {e}"
        ))],
    }
}

/// What a test run's record says: the end of its output when it passed; why it failed and its
/// output (whole lines, head and tail) when it did not, which the retry's feedback shows.
fn test_details(out: &Outcome) -> String {
    if out.succeeded() {
        let said = crate::process::head_and_tail(&out.stdout, 500);
        return if said.is_empty() {
            "tests passed".into()
        } else {
            said
        };
    }
    let (why, _) = out.failure_text();
    let printed = match (out.stdout.trim().is_empty(), out.stderr.trim().is_empty()) {
        (false, false) => format!("{}\n--- stderr ---\n{}", out.stdout.trim_end(), out.stderr),
        (false, true) => out.stdout.clone(),
        _ => out.stderr.clone(),
    };
    format!(
        "{why}\n{}",
        crate::process::head_and_tail(&printed, TEST_FEEDBACK)
    )
    .trim_end()
    .to_owned()
}
