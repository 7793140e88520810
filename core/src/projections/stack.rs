//! Seed 002's supervisor state stack, as a projection of the event stream.
//!
//! Every `StageCompleted` / `StageFailed` pushes an entry; popping is a rollback, never a
//! mutation. The stack is persistent: each entry points at the one below it, and the top is
//! recorded at every change, so the stack as it was after any seq (what a rollback restores)
//! is found by a binary search instead of a copy. Keeping it out of `RunState` keeps the state,
//! and so its snapshots, proportional to the number of tasks rather than to the history.

use crate::event::{Event, EventKind};
use crate::ids::{StageId, TaskId, Timestamp};
use crate::value::Value;
use serde::Serialize;
use std::collections::BTreeMap;

/// What a stack entry records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum StackState {
    /// The stage completed.
    StageCompleted,
    /// The stage failed.
    StageFailed,
}

/// One entry of the stack.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StackEntry {
    /// Seq of the event that pushed it.
    pub seq: u64,
    /// Completed or failed.
    pub state: StackState,
    /// The stage.
    pub stage: StageId,
    /// The task.
    pub task: TaskId,
    /// The result (completed entries).
    pub result: Option<Value>,
    /// The error and its type (failed entries).
    pub error: Option<(String, String)>,
    /// Duration of the attempt.
    pub duration_ms: u64,
    /// Retries so far.
    pub retry_count: u32,
    /// When.
    pub at: Timestamp,
}

#[derive(Debug, Clone)]
struct Node {
    entry: StackEntry,
    below: Option<u32>,
}

/// The stack with its history.
#[derive(Debug, Clone, Default)]
pub struct SupervisorStack {
    nodes: Vec<Node>,
    /// (seq, top after that seq), one per change, seqs increasing.
    tops: Vec<(u64, Option<u32>)>,
    top: Option<u32>,
}

impl SupervisorStack {
    /// A stack starting from `entries` (bottom first): a fork's inheritance.
    pub fn seeded(entries: Vec<StackEntry>) -> Self {
        let mut s = Self::default();
        for entry in entries {
            s.push(entry);
        }
        s
    }

    fn push(&mut self, entry: StackEntry) {
        let seq = entry.seq;
        let index = u32::try_from(self.nodes.len()).unwrap_or(u32::MAX);
        self.nodes.push(Node {
            entry,
            below: self.top,
        });
        self.top = Some(index);
        self.tops.push((seq, self.top));
    }

    /// The top as it was after `seq`.
    fn top_at(&self, seq: u64) -> Option<u32> {
        let i = self.tops.partition_point(|(s, _)| *s <= seq);
        i.checked_sub(1)
            .and_then(|i| self.tops.get(i))
            .and_then(|(_, t)| *t)
    }

    /// Folds one event with its seq.
    pub fn observe(&mut self, seq: u64, event: &Event) {
        match &event.kind {
            EventKind::StageCompleted {
                stage,
                task,
                result,
                duration_ms,
                retry_count,
            } => self.push(StackEntry {
                seq,
                state: StackState::StageCompleted,
                stage: stage.clone(),
                task: task.clone(),
                result: Some(result.clone()),
                error: None,
                duration_ms: *duration_ms,
                retry_count: *retry_count,
                at: event.at,
            }),
            EventKind::StageFailed {
                stage,
                task,
                error,
                error_type,
                retry_count,
                duration_ms,
            } => self.push(StackEntry {
                seq,
                state: StackState::StageFailed,
                stage: stage.clone(),
                task: task.clone(),
                result: None,
                error: Some((error.clone(), error_type.clone())),
                duration_ms: *duration_ms,
                retry_count: *retry_count,
                at: event.at,
            }),
            EventKind::RolledBack { to_seq, .. } if *to_seq < seq => {
                self.top = self.top_at(*to_seq);
                self.tops.push((seq, self.top));
            }
            _ => {}
        }
    }

    fn walk(&self) -> impl Iterator<Item = &StackEntry> {
        let mut next = self.top;
        let mut budget = self.nodes.len();
        std::iter::from_fn(move || {
            budget = budget.checked_sub(1)?;
            let node = self.nodes.get(next? as usize)?;
            next = node.below;
            Some(&node.entry)
        })
    }

    /// The live stack, most recent first.
    pub fn newest_first(&self) -> impl Iterator<Item = &StackEntry> {
        self.walk()
    }

    /// The live stack, bottom first.
    pub fn entries(&self) -> Vec<&StackEntry> {
        let mut v: Vec<&StackEntry> = self.walk().collect();
        v.reverse();
        v
    }

    /// Number of live entries.
    pub fn len(&self) -> usize {
        self.walk().count()
    }

    /// No live entries.
    pub fn is_empty(&self) -> bool {
        self.top.is_none()
    }

    /// The latest result a stage completed with (`get_stage_result`); a stage that printed no
    /// result (`Null`) has none, as in seed 002.
    pub fn latest_result(&self, stage: &StageId) -> Option<&Value> {
        self.walk()
            .filter(|e| &e.stage == stage)
            .find_map(|e| e.result.as_ref().filter(|r| !r.is_null()))
    }

    /// The latest result of every stage that completed (`get_all_stage_results`).
    pub fn all_latest_results(&self) -> BTreeMap<&StageId, &Value> {
        let mut out = BTreeMap::new();
        for entry in self.walk() {
            if let Some(result) = entry.result.as_ref().filter(|r| !r.is_null()) {
                out.entry(&entry.stage).or_insert(result);
            }
        }
        out
    }
}
