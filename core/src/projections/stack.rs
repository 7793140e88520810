//! The supervisor's state stack, as a projection of the event stream.
//!
//! Every `StageCompleted` / `StageFailed` pushes an entry; popping is a rollback, never a
//! mutation. The stack is persistent: each entry points at the one below it, and the top is
//! recorded at every change, so the stack as it was after any seq (what a rollback restores)
//! is found by a binary search instead of a copy. Keeping it out of `RunState` keeps the state,
//! and so its snapshots, proportional to the number of tasks rather than to the history.

use crate::event::{Event, EventKind};
use crate::ids::{IdMap, StageId, TaskId, Timestamp};
use crate::value::Value;
use serde::Serialize;
use std::collections::BTreeMap;
use std::hash::Hash;

/// What a stack entry records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
#[serde(rename_all = "kebab-case")]
pub enum StackState {
    /// The stage completed.
    StageCompleted,
    /// The stage failed.
    StageFailed,
}

/// One entry of the stack.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
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

/// Distinct values, each stored once and named by its index: a long history's entries repeat
/// a few stages, tasks and error texts hundreds of thousands of times.
#[derive(Debug, Clone)]
struct Names<T> {
    values: Vec<T>,
    index: IdMap<T, u32>,
}

impl<T> Default for Names<T> {
    fn default() -> Self {
        Self {
            values: Vec::new(),
            index: IdMap::default(),
        }
    }
}

impl<T: Clone + Eq + Hash> Names<T> {
    fn name<Q>(&mut self, value: &Q) -> u32
    where
        Q: ?Sized + Hash + Eq + ToOwned<Owned = T>,
        T: std::borrow::Borrow<Q>,
    {
        if let Some(i) = self.index.get(value) {
            return *i;
        }
        let i = u32::try_from(self.values.len()).unwrap_or(u32::MAX);
        self.values.push(value.to_owned());
        self.index.insert(value.to_owned(), i);
        i
    }

    fn get(&self, i: u32) -> Option<&T> {
        self.values.get(i as usize)
    }
}

/// An entry as the stack keeps it: names instead of strings (a quarter of the memory of a
/// [`StackEntry`]; 240,000 entries took 59 MB as entries).
#[derive(Debug, Clone)]
struct Node {
    seq: u64,
    at: Timestamp,
    duration_ms: u64,
    retry_count: u32,
    stage: u32,
    task: u32,
    result: Option<Box<Value>>,
    /// Error text and type, as names in `texts`: a failed stage's entry has them, a completed
    /// one's does not.
    error: Option<(u32, u32)>,
    below: Option<u32>,
}

/// Nodes kept in blocks of a fixed size. A long history's stack holds hundreds of thousands
/// of them; in one vector grown by doubling, every doubling copied them all into fresh pages
/// (2.3 % of a replay that finds its snapshots).
#[derive(Debug, Clone, Default)]
struct Blocks {
    /// Every block full but the last.
    blocks: Vec<Vec<Node>>,
}

/// Nodes per block (256 KiB).
const BLOCK: usize = 4096;

impl Blocks {
    fn push(&mut self, node: Node) {
        match self.blocks.last_mut() {
            Some(block) if block.len() < BLOCK => block.push(node),
            _ => {
                let mut block = Vec::with_capacity(BLOCK);
                block.push(node);
                self.blocks.push(block);
            }
        }
    }

    fn get(&self, i: usize) -> Option<&Node> {
        self.blocks.get(i / BLOCK)?.get(i % BLOCK)
    }

    fn len(&self) -> usize {
        self.blocks
            .last()
            .map_or(0, |last| (self.blocks.len() - 1) * BLOCK + last.len())
    }
}

/// The stack with its history.
#[derive(Debug, Clone, Default)]
pub struct SupervisorStack {
    nodes: Blocks,
    /// (seq, top after that seq), one per change, seqs increasing.
    tops: Vec<(u64, Option<u32>)>,
    top: Option<u32>,
    stages: Names<StageId>,
    tasks: Names<TaskId>,
    texts: Names<String>,
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
        let error = entry
            .error
            .as_ref()
            .map(|(text, kind)| (text, kind.as_str()));
        self.push_parts(
            entry.seq,
            entry.at,
            (&entry.stage, &entry.task),
            (entry.result.as_ref(), error),
            (entry.duration_ms, entry.retry_count),
        );
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
            } => self.push_parts(
                seq,
                event.at,
                (stage, task),
                (Some(result), None),
                (*duration_ms, *retry_count),
            ),
            EventKind::StageFailed {
                stage,
                task,
                error,
                error_type,
                retry_count,
                duration_ms,
            } => self.push_parts(
                seq,
                event.at,
                (stage, task),
                (None, Some((error, error_type.as_str()))),
                (*duration_ms, *retry_count),
            ),
            EventKind::RolledBack { to_seq, .. } if *to_seq < seq => {
                self.top = self.top_at(*to_seq);
                self.tops.push((seq, self.top));
            }
            _ => {}
        }
    }

    /// Pushes an entry, naming the strings the stack already holds instead of copying them.
    fn push_parts(
        &mut self,
        seq: u64,
        at: Timestamp,
        (stage, task): (&StageId, &TaskId),
        (result, error): (Option<&Value>, Option<(&String, &str)>),
        (duration_ms, retry_count): (u64, u32),
    ) {
        let index = u32::try_from(self.nodes.len()).unwrap_or(u32::MAX);
        let error = error.map(|(text, kind)| (self.texts.name(text), self.texts.name(kind)));
        self.nodes.push(Node {
            seq,
            at,
            duration_ms,
            retry_count,
            stage: self.stages.name(stage),
            task: self.tasks.name(task),
            result: result.map(|r| Box::new(r.clone())),
            error,
            below: self.top,
        });
        self.top = Some(index);
        self.tops.push((seq, self.top));
    }

    fn walk(&self) -> impl Iterator<Item = &Node> {
        let mut next = self.top;
        let mut budget = self.nodes.len();
        std::iter::from_fn(move || {
            budget = budget.checked_sub(1)?;
            let node = self.nodes.get(next? as usize)?;
            next = node.below;
            Some(node)
        })
    }

    /// A node as the entry it was pushed as.
    fn entry(&self, node: &Node) -> StackEntry {
        let text = |i: u32| self.texts.get(i).cloned().unwrap_or_default();
        StackEntry {
            seq: node.seq,
            state: if node.error.is_some() {
                StackState::StageFailed
            } else {
                StackState::StageCompleted
            },
            stage: self
                .stages
                .get(node.stage)
                .cloned()
                .unwrap_or_else(|| StageId::from("")),
            task: self
                .tasks
                .get(node.task)
                .cloned()
                .unwrap_or_else(|| TaskId::from("")),
            result: node.result.as_deref().cloned(),
            error: node.error.map(|(t, k)| (text(t), text(k))),
            duration_ms: node.duration_ms,
            retry_count: node.retry_count,
            at: node.at,
        }
    }

    /// The live stack, most recent first.
    pub fn newest_first(&self) -> impl Iterator<Item = StackEntry> + '_ {
        self.walk().map(|n| self.entry(n))
    }

    /// The live stack, bottom first.
    pub fn entries(&self) -> Vec<StackEntry> {
        let mut v: Vec<StackEntry> = self.newest_first().collect();
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
    /// result (`Null`) has none, as the supervisor's stack always had.
    pub fn latest_result(&self, stage: &StageId) -> Option<&Value> {
        let stage = *self.stages.index.get(stage)?;
        self.walk()
            .filter(|n| n.stage == stage)
            .find_map(|n| n.result.as_deref().filter(|r| !r.is_null()))
    }

    /// The latest result of every stage that completed (`get_all_stage_results`).
    pub fn all_latest_results(&self) -> BTreeMap<&StageId, &Value> {
        let mut out = BTreeMap::new();
        for node in self.walk() {
            let result = node.result.as_deref().filter(|r| !r.is_null());
            if let (Some(result), Some(stage)) = (result, self.stages.get(node.stage)) {
                out.entry(stage).or_insert(result);
            }
        }
        out
    }
}
