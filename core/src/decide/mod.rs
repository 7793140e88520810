//! `decide`: every rule of the engine. Pure: it reads the state and the command (whose `at` is
//! the only time it knows) and returns the events to record, or why not.

mod budget;
pub(crate) mod control;
mod gate;
mod replan;
mod rerun;
mod sub_project;
mod supervisor;
mod task;
mod workers;
mod workspace;

use crate::command::{Command, CommandKind};
use crate::event::{Event, EventKind};
use crate::ids::{Hash, TaskId, Timestamp};
use crate::rejection::Rejection;
use crate::state::{RunState, RunStatus, TaskState, TaskStatus};

pub use control::outcome;
pub use task::startable;

/// Turns a command into the events that record it, or a rejection saying why it is not allowed.
pub fn decide(state: &RunState, cmd: Command) -> Result<Vec<Event>, Rejection> {
    let at = cmd.at;
    let keyed = match cmd.key {
        Some(key) => Some(keyed(state, key, &cmd.kind)?),
        None => None,
    };
    let attributed =
        cmd.principal
            .filter(|_| cmd.kind.is_decision())
            .map(|p| EventKind::Attributed {
                principal: p.name,
                via: p.via.as_str().to_owned(),
            });
    let kinds = decide_kinds(state, cmd.kind, at)?;
    let redacted = (!cmd.redacted.is_empty()).then(|| EventKind::SecretsRedacted {
        task: kinds.iter().find_map(|k| k.task().cloned()),
        redactions: cmd.redacted,
    });
    let mut events: Vec<Event> = attributed
        .into_iter()
        .chain(kinds)
        .chain(redacted)
        .map(|kind| Event { at, kind })
        .collect();
    replan::append_replan_requests(state, &mut events);
    if let Some((key, command)) = keyed {
        let kind = EventKind::CommandKeyed {
            key,
            command,
            events: events.len() as u64,
        };
        events.push(Event { at, kind });
    }
    Ok(events)
}

/// A key and its command's hash, for a key this run has not recorded; the same command sent
/// again with its key, or another command with it, is refused with what the key recorded.
fn keyed(state: &RunState, key: String, kind: &CommandKind) -> Result<(String, Hash), Rejection> {
    // A command's JSON is deterministic (its maps are ordered), and it holds no time.
    let command = Hash::of(&serde_json::to_vec(kind).unwrap_or_default());
    match state.keys.get(&key) {
        None => Ok((key, command)),
        Some(k) if k.command == command => Err(Rejection::AlreadyRecorded {
            key,
            first: k.first,
            last: k.last,
        }),
        Some(k) => Err(Rejection::KeyReused {
            key,
            first: k.first,
            last: k.last,
        }),
    }
}

fn decide_kinds(
    state: &RunState,
    cmd: CommandKind,
    at: Timestamp,
) -> Result<Vec<EventKind>, Rejection> {
    match cmd {
        CommandKind::StartRun {
            run,
            workflow,
            workflow_hash,
            settings,
            tasks,
            cost,
            review,
        } => control::start_run(
            state,
            run,
            workflow,
            workflow_hash,
            settings,
            tasks,
            (cost, review),
        ),
        CommandKind::StartFork {
            run,
            from_run,
            at_seq,
            from_hash,
        } => control::start_fork(state, run, from_run, at_seq, from_hash),
        CommandKind::AddTask { spec } => control::add_task(state, spec),
        CommandKind::StartTask {
            task,
            agent,
            worktree,
        } => task::start(state, task, agent, worktree, at),
        CommandKind::SubmitTask {
            task,
            summary,
            result,
            duration_ms,
        } => task::submit(state, task, summary, result, duration_ms),
        CommandKind::FailStage {
            task,
            error,
            error_type,
            duration_ms,
        } => supervisor::fail_stage(state, task, error, error_type, duration_ms, at),
        CommandKind::RecordTests {
            task,
            passed,
            details,
        } => task::record_tests(state, task, passed, details),
        CommandKind::ScoreEval {
            task,
            evaluator,
            score,
            dimensions,
            notes,
            judge,
        } => gate::score(state, task, evaluator, score, dimensions, notes, judge),
        CommandKind::RecordEvalError {
            task,
            evaluator,
            error,
        } => gate::record_error(state, task, evaluator, error),
        CommandKind::Approve { task, by } => gate::approve(state, task, by),
        CommandKind::Reject {
            task,
            by,
            reopen,
            reason,
        } => gate::reject(state, task, by, reopen, reason),
        CommandKind::Reopen { task, by } => task::reopen(state, task, by),
        CommandKind::Cancel { task, reason } => task::cancel(state, task, reason),
        CommandKind::ReachCheckpoint { task, name } => task::checkpoint(state, task, name),
        CommandKind::Classify { task, class } => task::classify(state, task, class),
        CommandKind::PostMessage { task, from, text } => {
            control::post_message(state, task, from, text)
        }
        CommandKind::RevisePlan {
            cancel,
            add,
            replaces,
            reason,
            answers,
        } => replan::revise(state, cancel, add, replaces, reason, answers),
        CommandKind::SetStrategy { stage, strategy } => {
            supervisor::set_strategy(state, stage, strategy)
        }
        CommandKind::CloseCircuit { stage } => supervisor::close_circuit(state, stage),
        CommandKind::Rollback { to_seq, reason, by } => {
            control::rollback(state, to_seq, reason, by)
        }
        CommandKind::Interrupt { reason } => control::interrupt(state, reason),
        CommandKind::Resume { reason } => control::resume(state, reason),
        CommandKind::Finish => control::finish(state),
        CommandKind::RecordOutput {
            task,
            stream,
            text,
            blob,
            bytes,
        } => control::record_output(state, task, stream, text, blob, bytes),
        CommandKind::RecordTestsDiscovered {
            task,
            convention,
            test,
        } => control::tests_discovered(state, task, convention, test),
        CommandKind::DeclareSubProject { task, workflow } => {
            sub_project::declare(state, task, workflow)
        }
        CommandKind::LinkChildRun { task, child_run } => {
            sub_project::link_child(state, task, child_run)
        }
        CommandKind::LinkParentRun { parent_run, task } => {
            sub_project::link_parent(state, parent_run, task)
        }
        CommandKind::EndChildRun {
            task,
            child_run,
            succeeded,
            failures,
        } => sub_project::end_child(state, task, child_run, succeeded, failures),
        CommandKind::StartTaskAs {
            task,
            worker,
            fresh_worktree,
        } => workers::start_as(state, task, worker, fresh_worktree, at),
        CommandKind::ClaimTask {
            task,
            worker,
            fresh_worktree,
        } => workers::claim(state, task, worker, fresh_worktree),
        CommandKind::AbandonAttempt {
            task,
            worker,
            reason,
        } => workers::abandon(state, task, worker, reason),
        CommandKind::OpenWorkspace { repo, branch, base } => {
            workspace::open(state, repo, branch, base)
        }
        CommandKind::RecordChanges { task, changes } => {
            workspace::record_changes(state, task, changes)
        }
        CommandKind::RecordMerge {
            task,
            commit,
            conflicts,
        } => workspace::record_merge(state, task, commit, conflicts),
        CommandKind::RecordUsage {
            task,
            stage,
            reports,
        } => budget::record_usage(state, task, stage, reports, false),
        CommandKind::SetBudget {
            task,
            max_cost_usd,
            max_tokens,
            by,
        } => budget::set_budget(state, task, max_cost_usd, max_tokens, by),
        CommandKind::StopForBudget { task } => budget::stop_for_budget(state, task),
        CommandKind::RecordModelCall { call } => budget::record_model_call(state, *call),
        CommandKind::RecordUsageClaim {
            task,
            stage,
            reports,
        } => budget::record_usage(state, task, stage, reports, true),
        CommandKind::RecordRedaction { task, redactions } => {
            control::record_redaction(state, task, redactions)
        }
        CommandKind::StartRerun { rerun } => rerun::start_rerun(state, *rerun),
        CommandKind::RecordDivergence { divergence } => {
            rerun::record_divergence(state, *divergence)
        }
        CommandKind::RecordAnswerMapped { mapped } => rerun::record_answer_mapped(state, *mapped),
        CommandKind::RecordOutsideWrites { writes } => {
            require_started(state)?;
            find(state, &writes.task)?;
            Ok(vec![EventKind::WroteOutside(writes)])
        }
        CommandKind::JoinExperiment { lineage } => rerun::join_experiment(state, *lineage),
        CommandKind::ReserveModelCall { reservation } => {
            budget::reserve_model_call(state, *reservation)
        }
        CommandKind::RecordAlert { sent } => {
            require_started(state)?;
            Ok(vec![EventKind::AlertSent(sent)])
        }
    }
}

/// The run is started (any status but not-started).
fn require_started(state: &RunState) -> Result<(), Rejection> {
    match state.status {
        RunStatus::NotStarted => Err(Rejection::RunNotStarted),
        _ => Ok(()),
    }
}

/// The run is running: the engine may start, submit and score attempts.
fn require_running(state: &RunState) -> Result<(), Rejection> {
    match state.status {
        RunStatus::NotStarted => Err(Rejection::RunNotStarted),
        RunStatus::Running => Ok(()),
        RunStatus::Interrupted => Err(Rejection::RunInterrupted),
        RunStatus::Finished(_) => Err(Rejection::RunFinished),
    }
}

fn find<'s>(state: &'s RunState, id: &TaskId) -> Result<&'s TaskState, Rejection> {
    state
        .task(id)
        .ok_or_else(|| Rejection::UnknownTask { task: id.clone() })
}

/// The task is in one of `allowed`, else a rejection naming the action and the allowed statuses.
fn require_status(task: &TaskState, action: &str, allowed: &[TaskStatus]) -> Result<(), Rejection> {
    if allowed.contains(&task.status) {
        Ok(())
    } else {
        Err(Rejection::WrongStatus {
            task: task.spec.id.clone(),
            action: action.into(),
            status: task.status,
            allowed: allowed.to_vec(),
        })
    }
}

/// The task has an attempt running right now.
fn require_running_attempt(task: &TaskState, action: &str) -> Result<(), Rejection> {
    require_status(task, action, &[TaskStatus::InProgress])?;
    if task.running {
        Ok(())
    } else {
        Err(Rejection::NotRunning {
            task: task.spec.id.clone(),
        })
    }
}
