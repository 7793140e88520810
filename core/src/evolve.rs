//! `evolve`: applies one recorded fact to the state. Total: it never fails and never refuses;
//! all rules live in `decide`. Events about unknown tasks change nothing.

use crate::event::{Event, EventKind, GateOutcome};
use crate::family::Family;
use crate::files::touched_files;
use crate::ids::{StageId, TaskId, Timestamp};
use crate::state::{
    Circuit, ForkOrigin, PendingReplan, ReplanRequest, RunInfo, RunState, RunStatus, StageHealth,
    TaskState, TaskStatus,
};
use std::fmt::Write as _;
use std::sync::Arc;

/// Applies `event` to `state`. For `RolledBack` and `Forked` the caller passes the historical
/// base state (see `fold::apply`); here they only record their marker.
pub fn evolve(mut state: RunState, event: &Event) -> RunState {
    evolve_in_place(&mut state, event);
    state
}

/// [`evolve`] on a state borrowed mutably: a long replay then never moves the state around.
pub fn evolve_in_place(state: &mut RunState, event: &Event) {
    state.seq += 1;
    let at = event.at;
    let kind = &event.kind;
    match kind.family() {
        Family::Run => run_moved(state, at, kind),
        Family::Plan => plan_changed(state, kind),
        Family::Attempt => task_moved(state, at, kind),
        Family::Judgement => task_judged(state, kind),
        Family::SubProject => sub_project_moved(state, kind),
        Family::Code => code_moved(state, kind),
        Family::Spend => spend_moved(state, kind),
        Family::Stage => stage_moved(state, at, kind),
        // Said for people, audits and `diff`, or a usage claim kept beside the measure (only the
        // measure counts): the state does not change.
        Family::Said => {}
    }
    if !state.in_flight.is_empty() {
        let ended = |t: &TaskState, attempt: u32| t.attempt != attempt || t.status.is_terminal();
        let tasks = &state.tasks;
        // A call of an attempt that ended (or was replaced) holds nothing any more: its
        // command is gone, and a late record of it counts what it spent.
        state
            .in_flight
            .retain(|r| tasks.get(&r.task).is_some_and(|t| !ended(t, r.attempt)));
    }
}

/// The run as a whole: started, ended, stopped, resumed, forked, rerun, linked to a parent.
fn run_moved(state: &mut RunState, at: Timestamp, kind: &EventKind) {
    match kind {
        EventKind::RunStarted {
            run,
            workflow,
            workflow_hash,
            settings,
        } => {
            state.run = Some(RunInfo {
                id: run.clone(),
                workflow: workflow.clone(),
                workflow_hash: *workflow_hash,
                started_at: at,
            });
            state.settings = settings.clone();
            state.status = RunStatus::Running;
        }
        EventKind::RunFinished { outcome } => {
            state.status = RunStatus::Finished(outcome.clone());
            state.in_flight.clear();
        }
        EventKind::RunInterrupted { .. } => {
            state.status = RunStatus::Interrupted;
            state.in_flight.clear();
            stop_all_attempts(state);
        }
        EventKind::RunResumed { .. } => {
            state.status = RunStatus::Running;
            // A resume takes each sub-project waiting on a failed child on again.
            for t in state.tasks.values_mut() {
                if t.sub_project.as_ref().is_some_and(|s| s.waiting.is_some()) {
                    if let Some(s) = &mut Arc::make_mut(t).sub_project {
                        s.waiting = None;
                    }
                }
            }
        }
        EventKind::Forked {
            run,
            from_run,
            at_seq,
            from_hash,
        } => {
            let workflow = state
                .run
                .as_ref()
                .map(|r| (r.workflow.clone(), r.workflow_hash));
            let (workflow, workflow_hash) = workflow.unwrap_or_default();
            state.run = Some(RunInfo {
                id: run.clone(),
                workflow,
                workflow_hash,
                started_at: at,
            });
            state.fork = Some(ForkOrigin {
                from_run: from_run.clone(),
                at_seq: *at_seq,
                from_hash: *from_hash,
            });
            state.status = RunStatus::Running;
            stop_all_attempts(state);
            state.in_flight.clear();
        }
        // Calls in flight at the point rolled back to are not this run's any more.
        EventKind::RolledBack { .. } => state.in_flight.clear(),
        EventKind::ParentLinked { parent_run, task } => {
            state.parent = Some(crate::state::ParentLink {
                run: parent_run.clone(),
                task: task.clone(),
            });
        }
        EventKind::RerunStarted(rerun) => start_rerun(state, rerun),
        EventKind::CommandKeyed {
            key,
            command,
            events,
        } => {
            let last = state.seq;
            let keyed = crate::state::KeyedCommand {
                command: *command,
                first: last.saturating_sub(*events),
                last,
            };
            state.keys.insert(key.clone(), keyed);
        }
        _ => {}
    }
}

/// The plan: tasks added, a replan asked for, the plan revised.
fn plan_changed(state: &mut RunState, kind: &EventKind) {
    match kind {
        EventKind::TaskAdded { spec } => add_task(state, (**spec).clone()),
        EventKind::ReplanRequested {
            after_task,
            reason,
            touched_files,
            affected,
        } => {
            let mut replan = state.replan.take().unwrap_or(PendingReplan {
                after_task: after_task.clone(),
                reason: String::new(),
                touched_files: Vec::new(),
                affected: Vec::new(),
                loop_detected: false,
                requests: Vec::new(),
            });
            replan.requests.push(ReplanRequest {
                seq: state.seq,
                after_task: after_task.clone(),
                reason: reason.clone(),
                touched_files: touched_files.clone(),
                affected: affected.clone(),
            });
            replan.after_task = after_task.clone();
            replan.reason = reason.clone();
            merge_sorted(&mut replan.touched_files, touched_files);
            merge_sorted(&mut replan.affected, affected);
            state.replan = Some(replan);
        }
        EventKind::PlanRevised {
            cancelled,
            added,
            replaces,
            reason,
            plan_hash,
        } => {
            for id in cancelled {
                with_task(state, id, |t| {
                    t.status = TaskStatus::Cancelled;
                    t.running = false;
                    t.reason = Some(format!("superseded by a replan: {reason}"));
                });
            }
            for spec in added {
                add_task(state, spec.clone());
            }
            for r in replaces {
                with_task(state, &r.old, |t| t.replaced_by.push(r.new.clone()));
                let waiting: Vec<TaskId> =
                    state.dependents.get(&r.old).cloned().unwrap_or_default();
                for id in waiting {
                    let Some(task) = state.tasks.get_mut(&id) else {
                        continue;
                    };
                    if task.status.is_terminal() || id == r.new {
                        continue;
                    }
                    let task = Arc::make_mut(task);
                    task.spec.after.retain(|d| d != &r.old);
                    if !task.spec.after.contains(&r.new) {
                        task.spec.after.push(r.new.clone());
                    }
                    let dependents = Arc::make_mut(&mut state.dependents);
                    if let Some(list) = dependents.get_mut(&r.old) {
                        list.retain(|d| d != &id);
                    }
                    let list = dependents.entry(r.new.clone()).or_default();
                    if !list.contains(&id) {
                        list.push(id.clone());
                    }
                }
            }
            state.plan_hashes.push(*plan_hash);
            state.replan = None;
        }
        EventKind::ReplanLoopDetected { .. } => {
            if let Some(r) = state.replan.as_mut() {
                r.loop_detected = true;
            }
        }
        _ => {}
    }
}

/// A task's attempts: started, submitted, tested, ended, reopened, claimed, abandoned.
fn task_moved(state: &mut RunState, at: Timestamp, kind: &EventKind) {
    match kind {
        EventKind::TaskStarted {
            task,
            agent,
            worktree,
            attempt,
        } => with_task(state, task, |t| {
            t.status = TaskStatus::InProgress;
            t.attempt = *attempt;
            t.running = true;
            t.agent = Some(agent.clone());
            t.worktree = Some(worktree.clone());
            t.first_started_at.get_or_insert(at);
            t.retry_due = None;
            t.eval_error = None;
        }),
        EventKind::TaskSubmitted { task, .. } => with_task(state, task, |t| {
            t.running = false;
            t.stage_retries = 0;
            t.status = if t.spec.is_tested() {
                TaskStatus::Testing
            } else if t.spec.is_evaluated() {
                TaskStatus::PendingEval
            } else {
                TaskStatus::Done
            };
        }),
        EventKind::TestsStarted { task, .. } => {
            with_task(state, task, |t| t.status = TaskStatus::Testing)
        }
        EventKind::TestsPassed { task, .. } => with_task(state, task, |t| {
            t.last_tests_passed = Some(true);
            t.feedback = None;
            t.status = if t.spec.is_evaluated() {
                TaskStatus::PendingEval
            } else {
                TaskStatus::Done
            };
        }),
        EventKind::TestsFailed { task, details, .. } => with_task(state, task, |t| {
            t.last_tests_passed = Some(false);
            t.test_failures += 1;
            t.status = TaskStatus::TestFailed;
            t.feedback = Some(format!("tests failed:\n{details}"));
        }),
        EventKind::TaskFailed { task, reason } => with_task(state, task, |t| {
            t.held = None;
            t.status = TaskStatus::Failed;
            t.running = false;
            t.retry_due = None;
            t.reason = Some(reason.clone());
        }),
        EventKind::TaskCancelled { task, reason } => with_task(state, task, |t| {
            t.held = None;
            t.status = TaskStatus::Cancelled;
            t.running = false;
            t.retry_due = None;
            t.reason = Some(reason.clone());
        }),
        EventKind::TaskReopened { task, .. } => with_task(state, task, reopen_task),
        EventKind::CheckpointReached { task, name } => with_task(state, task, |t| {
            t.checkpoints.insert(name.clone());
        }),
        EventKind::TaskClassified { task, class } => {
            with_task(state, task, |t| t.class = Some(*class))
        }
        EventKind::WorkerClaimed { task, worker, .. } => with_task(state, task, |t| {
            t.worker = Some(worker.clone());
            t.abandoned = false;
        }),
        EventKind::AttemptAbandoned { task, .. } => with_task(state, task, |t| {
            // In progress still, with no attempt running: the next start continues it.
            t.running = false;
            t.abandoned = true;
        }),
        _ => {}
    }
}

/// A task's evaluation, gate and review.
fn task_judged(state: &mut RunState, kind: &EventKind) {
    match kind {
        EventKind::EvalScored {
            task,
            score,
            dimensions,
            notes,
            ..
        } => with_task(state, task, |t| {
            t.last_score = Some(*score);
            t.last_dimensions = dimensions.clone();
            t.eval_error = None;
            t.feedback = Some(crate::feedback::eval_feedback(*score, dimensions, notes));
        }),
        EventKind::GateDecided {
            task,
            score,
            threshold,
            outcome,
        } => with_task(state, task, |t| {
            t.last_gate = Some(*outcome);
            match outcome {
                GateOutcome::Pass => {
                    t.status = TaskStatus::Done;
                    t.feedback = None;
                }
                GateOutcome::Rescue { n } => {
                    t.status = TaskStatus::InProgress;
                    t.running = false;
                    t.rescues = *n;
                }
                GateOutcome::Fail => {
                    t.status = TaskStatus::Failed;
                    t.reason = Some(format!("eval score {score} below threshold {threshold}"));
                }
            }
        }),
        EventKind::TaskApproved { task, .. } => with_task(state, task, |t| {
            t.held = None;
            t.status = TaskStatus::Done;
            t.reason = None;
            t.eval_error = None;
        }),
        EventKind::TaskRejected {
            task,
            reopen,
            reason,
            ..
        } => with_task(state, task, |t| {
            t.held = None;
            if *reopen {
                reopen_task(t);
                t.feedback = Some(format!("rejected: {reason}"));
            } else {
                t.status = TaskStatus::Failed;
                t.reason = Some(format!("rejected: {reason}"));
            }
        }),
        EventKind::ReviewSet { policy } => state.review = *policy,
        EventKind::ReviewHeld { task, outcome, .. } => with_task(state, task, |t| {
            t.last_gate = Some(*outcome);
            t.held = Some(*outcome);
        }),
        EventKind::PendingValidation { task } => with_task(state, task, |t| {
            // Upcast of the pre-gate status: the task goes through the gate like a new submit,
            // unless it is already resolved.
            if !t.status.is_terminal() {
                t.status = TaskStatus::PendingEval;
                t.running = false;
            }
        }),
        EventKind::EvalErrored { task, error, .. } => {
            with_task(state, task, |t| t.eval_error = Some(error.clone()))
        }
        _ => {}
    }
}

/// A task that is a sub-project: its child run declared, started, ended.
fn sub_project_moved(state: &mut RunState, kind: &EventKind) {
    match kind {
        EventKind::SubProjectDeclared { task, workflow } => with_task(state, task, |t| {
            t.sub_project = Some(crate::state::SubProject {
                workflow: workflow.clone(),
                child: None,
                waiting: None,
            });
        }),
        EventKind::ChildRunStarted { task, child_run } => with_task(state, task, |t| {
            if let Some(s) = &mut t.sub_project {
                s.child = Some(child_run.clone());
                s.waiting = None;
            }
        }),
        EventKind::ChildRunEnded {
            task,
            succeeded,
            failures,
            ..
        } => with_task(state, task, |t| {
            if !*succeeded {
                // In progress still, but no attempt runs: it waits for a resume.
                t.running = false;
                if let Some(s) = &mut t.sub_project {
                    s.waiting = Some(failures.clone());
                }
            }
        }),
        _ => {}
    }
}

/// The run's git workspace and each task's changes in it.
fn code_moved(state: &mut RunState, kind: &EventKind) {
    match kind {
        EventKind::WorkspaceOpened { repo, branch, base } => {
            state.workspace = Some(crate::state::Workspace {
                repo: repo.clone(),
                branch: branch.clone(),
                base: base.clone(),
                tip: base.clone(),
            });
        }
        EventKind::ChangesRecorded { task, commit, .. } => with_task(state, task, |t| {
            t.code.commit = Some(commit.clone());
        }),
        EventKind::TaskMerged { task, commit } => {
            with_task(state, task, |t| {
                t.code.merged = Some(commit.clone());
                t.code.conflict = None;
            });
            if let Some(w) = state.workspace.as_mut() {
                w.tip = commit.clone();
            }
        }
        EventKind::MergeConflicted {
            task,
            files,
            rescue,
        } => with_task(state, task, |t| {
            t.code.conflict = Some(files.clone());
            t.feedback = Some(crate::feedback::conflict_feedback(files));
            match rescue {
                Some(n) => {
                    t.status = TaskStatus::InProgress;
                    t.running = false;
                    t.rescues = *n;
                }
                None => t.status = TaskStatus::PendingEval,
            }
        }),
        EventKind::WroteOutside(writes) => {
            with_task(state, &writes.task, |t| t.outside.push((**writes).clone()))
        }
        _ => {}
    }
}

/// Usage, prices and budgets.
fn spend_moved(state: &mut RunState, kind: &EventKind) {
    match kind {
        EventKind::UsageRecorded { usage } => add_usage(state, usage.clone()),
        EventKind::ModelCalled(call) => {
            // Its record settles what it held.
            let key = (&call.task, call.attempt, call.stage, call.n);
            state.in_flight.retain(|r| r.key() != key);
            add_usage(state, call.usage());
        }
        EventKind::ModelCallReserved(r) => state.in_flight.push((**r).clone()),
        EventKind::ModelCallDidNotFit(d) => with_task(state, &d.reservation.task, |t| {
            t.did_not_fit = Some((**d).clone())
        }),
        EventKind::PricesSet { prices } => state.prices = prices.clone(),
        EventKind::BudgetSet { task, limits, .. } => {
            match task {
                Some(task) => with_task(state, task, |t| t.budget = *limits),
                None => state.budget = *limits,
            }
            // A changed budget is judged again on the next call.
            let refused: Vec<TaskId> = state
                .tasks
                .values()
                .filter(|t| t.did_not_fit.is_some())
                .map(|t| t.spec.id.clone())
                .collect();
            for id in refused {
                with_task(state, &id, |t| t.did_not_fit = None);
            }
        }
        EventKind::BudgetSpent { task, .. } => {
            let stop = kind.budget_stop();
            with_task(state, task, |t| t.budget_stop = stop);
        }
        _ => {}
    }
}

/// Each stage's health, its retries and its circuit.
fn stage_moved(state: &mut RunState, at: Timestamp, kind: &EventKind) {
    match kind {
        EventKind::StageStarted { stage, .. } => with_stage(state, stage, |h| h.executions += 1),
        EventKind::StageCompleted {
            stage, duration_ms, ..
        } => {
            with_stage(state, stage, |h| {
                h.completions += 1;
                h.total_duration_ms = h.total_duration_ms.saturating_add(*duration_ms);
                h.consecutive_failures = 0;
            });
        }
        EventKind::StageFailed {
            stage,
            task,
            error,
            error_type,
            retry_count,
            duration_ms,
        } => {
            with_stage(state, stage, |h| {
                h.failures += 1;
                h.total_duration_ms = h.total_duration_ms.saturating_add(*duration_ms);
                h.consecutive_failures += 1;
            });
            with_task(state, task, |t| {
                t.running = false;
                t.stage_retries = *retry_count;
                // Written over the last attempt's, not formatted anew: every failed attempt of
                // a long history comes through here.
                let feedback = t.feedback.get_or_insert_with(String::new);
                feedback.clear();
                // Writing into a String cannot fail.
                let _ = write!(feedback, "previous attempt failed ({error_type}): {error}");
            });
        }
        EventKind::RetryScheduled { task, delay_ms, .. } => with_task(state, task, |t| {
            t.retry_due = Some(crate::ids::Timestamp(at.0.saturating_add(*delay_ms)));
        }),
        EventKind::CircuitOpened { stage, .. } => {
            with_stage(state, stage, |h| h.circuit = Circuit::Open)
        }
        EventKind::CircuitClosed { stage } => with_stage(state, stage, |h| {
            h.circuit = Circuit::Closed;
            h.consecutive_failures = 0;
        }),
        EventKind::StrategySet { stage, strategy } => {
            with_stage(state, stage, |h| h.strategy = Some(strategy.clone()))
        }
        _ => {}
    }
}

/// Updates the stage's health, creating it on first use; the key is only cloned then (stage
/// events are the hot path of a long replay).
fn with_stage(state: &mut RunState, stage: &StageId, f: impl FnOnce(&mut StageHealth)) {
    match state.stages.get_mut(stage) {
        Some(h) => f(h),
        None => f(state.stages.entry(stage.clone()).or_default()),
    }
}

/// Usage a command reported, or a call measured: the task's, the run's, and its record.
fn add_usage(state: &mut RunState, usage: crate::usage::UsageRecord) {
    with_task(state, &usage.task, |t| {
        t.spend.add(&usage.tokens, usage.cost_usd)
    });
    state.spend.add(&usage.tokens, usage.cost_usd);
    state.usage.push(usage);
}

fn with_task(state: &mut RunState, id: &TaskId, f: impl FnOnce(&mut TaskState)) {
    if let Some(t) = state.tasks.get_mut(id) {
        f(Arc::make_mut(t));
    }
}

fn add_task(state: &mut RunState, spec: crate::spec::TaskSpec) {
    if state.tasks.contains_key(&spec.id) {
        return;
    }
    if let Some(parent) = &spec.parent {
        Arc::make_mut(&mut state.children)
            .entry(parent.clone())
            .or_default()
            .push(spec.id.clone());
    }
    let dependents = Arc::make_mut(&mut state.dependents);
    for dep in &spec.after {
        dependents
            .entry(dep.clone())
            .or_default()
            .push(spec.id.clone());
    }
    Arc::make_mut(&mut state.order).push(spec.id.clone());
    state
        .tasks
        .insert(spec.id.clone(), Arc::new(TaskState::new(spec)));
}

fn reopen_task(t: &mut TaskState) {
    t.status = TaskStatus::Open;
    t.budget_stop = None;
    t.did_not_fit = None;
    t.running = false;
    t.rescues = 0;
    t.test_failures = 0;
    t.stage_retries = 0;
    t.retry_due = None;
    t.reason = None;
    t.eval_error = None;
    t.last_gate = None;
    t.held = None;
}

/// The rerun's specs in force, its tasks back where they stood at its point, and the run
/// stopped, to be resumed.
fn start_rerun(state: &mut RunState, rerun: &crate::rerun::Rerun) {
    for spec in &rerun.specs {
        with_task(state, &spec.id, |t| t.spec = spec.clone());
    }
    for again in &rerun.tasks {
        with_task(state, &again.task, |t| {
            reopen_task(t);
            t.code = crate::state::TaskCode {
                commit: again.commit.clone(),
                merged: None,
                conflict: None,
            };
        });
    }
    // Driven by `resume`, as a run that stopped: the attempts running at its point are run
    // again (listed above), never taken for running.
    if state.status != RunStatus::NotStarted {
        state.status = RunStatus::Interrupted;
        stop_all_attempts(state);
    }
}

fn stop_all_attempts(state: &mut RunState) {
    // Only the running ones: a task shared with another copy of the state is copied once
    // changed.
    for t in state.tasks.values_mut().filter(|t| t.running) {
        Arc::make_mut(t).running = false;
    }
}

fn merge_sorted<T: Ord + Clone>(into: &mut Vec<T>, from: &[T]) {
    into.extend(from.iter().cloned());
    into.sort();
    into.dedup();
}

/// Files a finished task shares with an open task, used by the replan rule.
pub(crate) fn shared_files(a: &TaskState, b: &TaskState) -> Vec<String> {
    let fa = touched_files(&a.spec);
    let fb = touched_files(&b.spec);
    fa.intersection(&fb).cloned().collect()
}
