//! One task's whole story as `runlog show RUN TASK --json` and `GET /v1/runs/{run}/tasks/{task}`
//! answer it: its board row and spec, every event about it with its words (the changes each
//! attempt recorded among them, patch and all), and its model calls.

use crate::render::event::Worded;
use runlog_core::projections::board::{Board, BoardRow};
use runlog_core::{Event, RunState, TaskId, TaskSpec};
use runlog_store::EventLog;
use serde::Serialize;

/// A task's story.
#[derive(Debug, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
pub struct TaskView<'a> {
    /// The run.
    pub run: &'a str,
    /// Its row on the run's board at its head.
    pub task: Option<BoardRow>,
    /// The task as planned.
    pub spec: &'a TaskSpec,
    /// Every event about it, in order, each with its words: its attempts, their output, tests
    /// and verdicts, and the changes each attempt recorded (`changes-recorded`, with the patch
    /// or its beginning).
    pub events: Vec<Worded<'a>>,
    /// Its model calls, each with what was new in its request and what the model answered.
    pub calls: crate::queries::calls::CallsView,
}

/// Task `id`'s story in `state` (a run's head), from `story`, its events.
pub fn view<'a>(
    log: &dyn EventLog,
    run: &'a str,
    state: &RunState,
    spec: &'a TaskSpec,
    story: &'a [(u64, Event)],
) -> TaskView<'a> {
    let id: &TaskId = &spec.id;
    TaskView {
        run,
        task: Board::of(state).row(id).cloned(),
        spec,
        events: story.iter().map(|(seq, e)| Worded::of(*seq, e)).collect(),
        calls: crate::queries::calls::CallsView::of(log, run, id.as_str(), story, None, false),
    }
}
