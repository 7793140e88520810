//! A task's story: the events of a run that name the task, as `runlog show RUN TASK` prints
//! them and its `--calls` and the API's calls route read them.

use runlog_core::{Event, EventKind, TaskId};

/// A task's events: those that name it, each with the `attributed` event before it that says
/// who recorded it.
pub fn story_of(events: &[(u64, Event)], task: &TaskId) -> Vec<(u64, Event)> {
    events
        .iter()
        .enumerate()
        .filter(|(i, (_, e))| match &e.kind {
            EventKind::Attributed { .. } => events
                .get(i + 1)
                .is_some_and(|(_, next)| next.kind.task() == Some(task)),
            kind => kind.task() == Some(task),
        })
        .map(|(_, e)| e.clone())
        .collect()
}
