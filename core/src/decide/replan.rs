//! Re-evaluation after a destructive task: after a destructive task is done, pending tasks that
//! touch its files pause dispatch until the plan is revised; a revision that regenerates an
//! earlier plan is reported as a loop.

use super::task::with_descendants;
use super::{find, require_started};
use crate::event::{Event, EventKind, GateOutcome, Replacement};
use crate::evolve::{evolve, shared_files};
use crate::files::is_destructive;
use crate::ids::{Hash, TaskId};
use crate::plan::{plan_hash, validate_new_tasks};
use crate::rejection::Rejection;
use crate::spec::TaskSpec;
use crate::state::{RunState, TaskStatus};
use std::collections::BTreeSet;

fn may_complete_a_task(kind: &EventKind) -> bool {
    matches!(
        kind,
        EventKind::TaskSubmitted { .. }
            | EventKind::TestsPassed { .. }
            | EventKind::TaskApproved { .. }
            | EventKind::GateDecided {
                outcome: GateOutcome::Pass,
                ..
            }
    )
}

/// Appends a `ReplanRequested` for each task these events make done that is destructive and
/// shares files with a pending (open) task.
pub(super) fn append_replan_requests(before: &RunState, events: &mut Vec<Event>) {
    // Only a destructive task finishing can trigger a replan; skip the fold otherwise.
    let destructive_finishing = events.iter().any(|e| {
        may_complete_a_task(&e.kind)
            && e.kind
                .task()
                .and_then(|t| before.tasks.get(t))
                .is_some_and(|t| is_destructive(&t.spec))
    });
    if !destructive_finishing {
        return;
    }
    let Some(at) = events.last().map(|e| e.at) else {
        return;
    };
    let after = events.iter().fold(before.clone(), evolve);
    let mut requests = Vec::new();
    for task in after.tasks_in_order() {
        let id = &task.spec.id;
        let was_done = before
            .tasks
            .get(id)
            .is_some_and(|t| t.status == TaskStatus::Done);
        if task.status != TaskStatus::Done || was_done || !is_destructive(&task.spec) {
            continue;
        }
        let mut touched = BTreeSet::new();
        let mut affected = Vec::new();
        for pending in after.tasks_in_order() {
            if pending.status != TaskStatus::Open
                || &pending.spec.id == id
                || after.is_group(&pending.spec.id)
            {
                continue;
            }
            let shared = shared_files(task, pending);
            if !shared.is_empty() {
                touched.extend(shared);
                affected.push(pending.spec.id.clone());
            }
        }
        if !affected.is_empty() {
            requests.push(EventKind::ReplanRequested {
                after_task: id.clone(),
                reason: format!(
                    "destructive task {id} changed files that pending tasks touch: {}",
                    touched.iter().cloned().collect::<Vec<_>>().join(", ")
                ),
                touched_files: touched.into_iter().collect(),
                affected,
            });
        }
    }
    events.extend(requests.into_iter().map(|kind| Event { at, kind }));
}

pub(super) fn revise(
    state: &RunState,
    cancel: Vec<TaskId>,
    add: Vec<TaskSpec>,
    replaces: Vec<Replacement>,
    reason: String,
    answers: Option<u64>,
) -> Result<Vec<EventKind>, Rejection> {
    require_started(state)?;
    let invalid = |reason: String| Err(Rejection::InvalidRevision { reason });
    let mut cancelled: Vec<TaskId> = Vec::new();
    for id in &cancel {
        let task = find(state, id)?;
        if task.status.is_terminal() {
            return invalid(format!(
                "task {id} is {} and cannot be cancelled",
                task.status
            ));
        }
        if task.running {
            return invalid(format!("task {id} is running; let it finish first"));
        }
        for t in with_descendants(state, id) {
            let live = state
                .tasks
                .get(&t)
                .is_some_and(|t| !t.status.is_terminal() && !t.running);
            if live && !cancelled.contains(&t) {
                cancelled.push(t);
            }
        }
    }
    let cancelling: BTreeSet<TaskId> = cancelled.iter().cloned().collect();
    let rewired: Vec<(TaskId, TaskId)> = replaces
        .iter()
        .map(|r| (r.old.clone(), r.new.clone()))
        .collect();
    validate_new_tasks(
        state,
        &add,
        &cancelling,
        &rewired,
        state.settings.max_depth,
        &|_| !state.budget.is_unbounded(),
    )?;
    for r in &replaces {
        if !cancelling.contains(&r.old) {
            return invalid(format!(
                "{} replaces {}, which is not cancelled",
                r.new, r.old
            ));
        }
        if !add.iter().any(|s| s.id == r.new) {
            return invalid(format!(
                "{} replaces {}, but {} is not added",
                r.new, r.old, r.new
            ));
        }
    }
    let provisional = EventKind::PlanRevised {
        cancelled: cancelled.clone(),
        added: add.clone(),
        replaces: replaces.clone(),
        reason: reason.clone(),
        plan_hash: Hash::default(),
    };
    let revised = evolve(
        state.clone(),
        &Event {
            at: crate::ids::Timestamp(0),
            kind: provisional,
        },
    );
    let hash = plan_hash(&revised);
    if let Some(i) = state.plan_hashes.iter().position(|h| *h == hash) {
        return Ok(vec![EventKind::ReplanLoopDetected {
            plan_hash: hash,
            same_as_revision: u32::try_from(i + 1).unwrap_or(u32::MAX),
            reason,
        }]);
    }
    let mut events = vec![EventKind::PlanRevised {
        cancelled,
        added: add,
        replaces,
        reason,
        plan_hash: hash,
    }];
    events.extend(unanswered(state, &revised, answers));
    Ok(events)
}

/// The requests raised after the state a revision was made from, raised again once the revision
/// is recorded (which clears the pending replan), so that a second revision serves them. Tasks
/// the revision cancelled or finished no longer need it; with none left, nothing is raised.
fn unanswered(before: &RunState, revised: &RunState, answers: Option<u64>) -> Option<EventKind> {
    let seen = answers?;
    let later: Vec<_> = before
        .replan
        .as_ref()?
        .requests
        .iter()
        .filter(|r| r.seq > seen)
        .collect();
    let last = later.last()?;
    let mut touched_files = BTreeSet::new();
    let mut affected = BTreeSet::new();
    for r in &later {
        touched_files.extend(r.touched_files.iter().cloned());
        affected.extend(
            r.affected
                .iter()
                .filter(|t| {
                    revised
                        .tasks
                        .get(*t)
                        .is_some_and(|t| !t.status.is_terminal())
                })
                .cloned(),
        );
    }
    (!affected.is_empty()).then(|| EventKind::ReplanRequested {
        after_task: last.after_task.clone(),
        reason: last.reason.clone(),
        touched_files: touched_files.into_iter().collect(),
        affected: affected.into_iter().collect(),
    })
}
