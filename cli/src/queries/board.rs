//! A run's board as `runlog status --json` and `GET /v1/runs/{run}` answer it: one shape, one
//! serialisation.

use runlog_core::projections::Board;
use runlog_core::RunState;
use runlog_replay::Replay;
use serde::Serialize;

/// The board of a run at a seq, with the edges the board does not hold, the child runs of its
/// sub-project tasks and its parent.
#[derive(Debug, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
pub struct BoardView {
    /// The run.
    pub run: String,
    /// The seq the board is at.
    pub seq: u64,
    /// The run's status word (running, finished, interrupted...).
    pub status: &'static str,
    /// The task board.
    pub board: Board,
    /// What each task waits for as its plan names it, and what replaced it.
    pub links: Vec<Link>,
    /// Each sub-project task's child run, with its board at its head.
    pub children: Vec<Child>,
    /// For a child run: its parent run and task.
    pub parent: Option<runlog_core::ParentLink>,
}

/// A task's edges of the task graph.
#[derive(Debug, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
pub struct Link {
    /// The task.
    pub id: runlog_core::TaskId,
    /// What it waits for, as its plan names it.
    pub after: Vec<runlog_core::TaskId>,
    /// The tasks that replaced it.
    pub replaced_by: Vec<runlog_core::TaskId>,
}

/// A sub-project task's child run (one level: a child's own view shows its children).
#[derive(Debug, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
pub struct Child {
    /// The task.
    pub task: runlog_core::TaskId,
    /// The child run.
    pub run: runlog_core::RunId,
    /// Its status word, when it could be read.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub status: Option<&'static str>,
    /// Its board at its head, when it could be read.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub board: Option<Board>,
    /// Why it could not be read.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub error: Option<String>,
}

impl BoardView {
    /// The view of `state`, a state of `run`; child runs are read through `replay`.
    pub fn of(replay: &Replay<'_>, run: &str, state: &RunState) -> Self {
        Self {
            run: run.to_owned(),
            seq: state.seq,
            status: state.status.name(),
            board: Board::of(state),
            links: links(state),
            children: children(replay, state),
            parent: state.parent.clone(),
        }
    }
}

fn children(replay: &Replay<'_>, state: &RunState) -> Vec<Child> {
    state
        .child_runs()
        .into_iter()
        .map(|(task, child)| {
            let read = replay.head_state(child.as_str());
            Child {
                task: task.clone(),
                run: child.clone(),
                status: read.as_ref().ok().map(|c| c.status.name()),
                board: read.as_ref().ok().map(Board::of),
                error: read.err().map(|e| e.to_string()),
            }
        })
        .collect()
}

fn links(state: &RunState) -> Vec<Link> {
    state
        .tasks_in_order()
        .filter(|t| !t.spec.after.is_empty() || !t.replaced_by.is_empty())
        .map(|t| Link {
            id: t.spec.id.clone(),
            after: t.spec.after.clone(),
            replaced_by: t.replaced_by.clone(),
        })
        .collect()
}
