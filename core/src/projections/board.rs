//! The task board: every task with its status, attempts, rescues and readiness.

use crate::ids::{AgentId, TaskId};
use crate::projections::cost::BudgetLeft;
use crate::spec::TaskClass;
use crate::state::{Readiness, RunState, TaskState, TaskStatus};
use crate::usage::Spend;
use serde::Serialize;

/// One row of the board.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
pub struct BoardRow {
    /// Task id.
    pub id: TaskId,
    /// Description.
    pub description: String,
    /// Status (derived from children for a group).
    pub status: TaskStatus,
    /// For an open task: ready, waiting on, or blocked by.
    pub readiness: Option<Readiness>,
    /// Parent group.
    pub parent: Option<TaskId>,
    /// Nesting depth (1 = top level).
    pub depth: u32,
    /// Whether it is a group.
    pub group: bool,
    /// Attempts started.
    pub attempt: u32,
    /// Eval rescues since last opened.
    pub rescues: u32,
    /// Test failures since last opened.
    pub test_failures: u32,
    /// Agent identity.
    pub agent: Option<AgentId>,
    /// Worktree.
    pub worktree: Option<String>,
    /// Last eval score.
    pub score: Option<f64>,
    /// Checkpoints reached of those required.
    pub checkpoints: (usize, usize),
    /// Classification.
    pub class: Option<TaskClass>,
    /// Failed tasks under a group (failures bubble up).
    pub failed_children: Vec<TaskId>,
    /// Why it failed or was cancelled; an evaluator error while pending.
    pub note: Option<String>,
    /// What its commands used.
    pub spend: Spend,
    /// What its attempts wrote outside its worktree, an attempt a line, in words; left out
    /// when they wrote nothing there.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    #[cfg_attr(feature = "ts", ts(as = "Option<Vec<String>>", optional))]
    pub outside: Vec<String>,
}

/// The board: rows in plan order, children right after their parent.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
pub struct Board {
    /// Rows.
    pub rows: Vec<BoardRow>,
    /// Dispatch is paused for a replan after this task.
    pub paused_for_replan: Option<TaskId>,
    /// What the run's commands used.
    pub spend: Spend,
    /// The run's budget and the tasks' own, with what is left.
    pub budgets: Vec<BudgetLeft>,
}

impl Board {
    /// Builds the board of `state`.
    pub fn of(state: &RunState) -> Self {
        let mut rows = Vec::with_capacity(state.tasks.len());
        let roots = state.tasks_in_order().filter(|t| {
            t.spec
                .parent
                .as_ref()
                .is_none_or(|p| !state.tasks.contains_key(p))
        });
        let mut stack: Vec<(TaskId, u32)> = roots.map(|t| (t.spec.id.clone(), 1)).collect();
        stack.reverse();
        while let Some((id, depth)) = stack.pop() {
            if rows.len() >= state.tasks.len() {
                break;
            }
            if let Some(r) = row(state, &id, depth) {
                rows.push(r);
            }
            if let Some(children) = state.children.get(&id) {
                stack.extend(children.iter().rev().map(|c| (c.clone(), depth + 1)));
            }
        }
        Board {
            rows,
            paused_for_replan: state.replan.as_ref().map(|r| r.after_task.clone()),
            spend: state.spend,
            budgets: BudgetLeft::all(state),
        }
    }

    /// The row of a task.
    pub fn row(&self, id: &TaskId) -> Option<&BoardRow> {
        self.rows.iter().find(|r| &r.id == id)
    }
}

fn row(state: &RunState, id: &TaskId, depth: u32) -> Option<BoardRow> {
    let t = state.tasks.get(id)?;
    let status = state.status_of(id).unwrap_or(t.status);
    let group = state.is_group(id);
    Some(BoardRow {
        id: id.clone(),
        description: t.spec.description.clone(),
        status,
        readiness: (status == TaskStatus::Open && !group).then(|| state.readiness(id)),
        parent: t.spec.parent.clone(),
        depth,
        group,
        attempt: t.attempt,
        rescues: t.rescues,
        test_failures: t.test_failures,
        agent: t.agent.clone(),
        worktree: t.worktree.clone(),
        score: t.last_score,
        checkpoints: (
            t.spec
                .checkpoints
                .iter()
                .filter(|c| t.checkpoints.contains(*c))
                .count(),
            t.spec.checkpoints.len(),
        ),
        class: t.class,
        failed_children: if group {
            state.failed_descendants(id)
        } else {
            Vec::new()
        },
        note: t
            .eval_error
            .clone()
            .map(|e| format!("evaluator error: {e}"))
            .or_else(|| t.reason.clone())
            .or_else(|| sub_project_note(t)),
        spend: t.spend,
        outside: t.outside.iter().map(|w| w.describe()).collect(),
    })
}

/// Where a sub-project task's work is: its child run, and what failed there while it waits.
fn sub_project_note(t: &TaskState) -> Option<String> {
    let s = t.sub_project.as_ref()?;
    Some(match (&s.child, &s.waiting) {
        (Some(child), Some(failures)) => format!("waits for child run {child}: {failures}"),
        (Some(child), None) => format!("child run {child}"),
        (None, _) => format!("sub-project: {}", s.workflow),
    })
}
