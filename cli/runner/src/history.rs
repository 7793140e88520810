//! Each task's story for its agent (`RUNLOG_HISTORY`): every event about the task so far, as
//! `runlog log --json` prints them (earlier attempts' outputs whole, up to the output cap, messages,
//! checkpoints, test and eval feedback, classification), so nothing is pruned between attempts.
//! Kept in memory as the engine records or takes in events, bounded per task (the newest kept),
//! and written to a file before each attempt.

use runlog_core::{Event, EventKind, TaskId};
use runlog_replay::events::EventLine;
use runlog_store::EventLog;
use std::collections::{HashMap, VecDeque};
use std::path::Path;

/// The stories of a run's tasks.
#[derive(Debug, Default)]
pub struct Histories {
    stories: HashMap<TaskId, Story>,
    cap: usize,
    /// The seq read up to when the stories were first needed; events up to it are in them.
    loaded_to: Option<u64>,
}

#[derive(Debug, Default)]
struct Story {
    lines: VecDeque<String>,
    bytes: usize,
    /// Events left out, oldest first, to stay within the cap.
    dropped: u64,
}

impl Histories {
    /// Stories of at most `cap` bytes each.
    pub fn new(cap: usize) -> Self {
        Self {
            cap,
            ..Self::default()
        }
    }

    /// Reads the run's history once, up to `to` (a resumed run's agents see what came before).
    pub fn load(&mut self, log: &dyn EventLog, run: &str, to: u64) {
        if self.loaded_to.is_some() {
            return;
        }
        self.loaded_to = Some(0);
        let mut seen = Vec::new();
        // A history that cannot be read leaves the stories to what this engine sees next;
        // the run itself does not depend on them.
        let _ = runlog_replay::events::for_each(log, run, 1, to, &mut |seq, e| {
            seen.push((seq, e));
            Ok(true)
        });
        for (seq, e) in seen {
            self.observe(log, seq, &e);
        }
        self.loaded_to = Some(to);
    }

    /// Adds an event to its task's story (events about no task are not part of one). Before
    /// the stories are loaded, events are left to [`Histories::load`], which reads them.
    pub fn observe(&mut self, log: &dyn EventLog, seq: u64, event: &Event) {
        if self.loaded_to.is_none_or(|to| seq <= to && to > 0) {
            return;
        }
        let Some(task) = event.kind.task().cloned() else {
            return;
        };
        let whole;
        let event = match &event.kind {
            // An output larger than the event holds: its whole text, from the blob area.
            EventKind::OutputRecorded {
                blob: Some(hash), ..
            } => match log.get_blob(&hash.0).ok().flatten() {
                Some(bytes) => {
                    whole = with_text(event, String::from_utf8_lossy(&bytes).into_owned());
                    &whole
                }
                None => event,
            },
            _ => event,
        };
        let Ok(line) = serde_json::to_string(&EventLine::of(seq, event)) else {
            return;
        };
        let cap = self.cap;
        let story = self.stories.entry(task).or_default();
        story.bytes += line.len() + 1;
        story.lines.push_back(line);
        while story.bytes > cap {
            let Some(old) = story.lines.pop_front() else {
                break;
            };
            story.bytes -= old.len() + 1;
            story.dropped += 1;
        }
    }

    /// Writes `task`'s story to `path` ([`crate::Layout::history`]), one JSON event per
    /// line, oldest first; the first line says how many older events were left out, if any.
    pub fn write(&self, path: &Path, task: &TaskId) -> std::io::Result<()> {
        let mut text = String::new();
        if let Some(story) = self.stories.get(task) {
            if story.dropped > 0 {
                text.push_str(
                    &serde_json::json!({"left_out": story.dropped, "why": "older than the history cap (history_cap_bytes)"})
                        .to_string(),
                );
                text.push('\n');
            }
            for line in &story.lines {
                text.push_str(line);
                text.push('\n');
            }
        }
        crate::layout::rewrite(path, text.as_bytes())
    }
}

fn with_text(event: &Event, text: String) -> Event {
    let mut e = event.clone();
    if let EventKind::OutputRecorded { text: t, blob, .. } = &mut e.kind {
        *t = text;
        *blob = None;
    }
    e
}
