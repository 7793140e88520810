//! What a task is: its spec as written in the workflow or added by a replan.

use crate::ids::{StageId, TaskId};
use crate::settings::RetryStrategy;
use bincode::{Decode, Encode};
use serde::{Deserialize, Serialize};

/// A task as planned. Immutable once recorded in `TaskAdded` or `PlanRevised`.
#[derive(Debug, Clone, PartialEq, Encode, Decode, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
pub struct TaskSpec {
    /// Stable id.
    pub id: TaskId,
    /// What to do; also searched for file paths and destructive verbs (re-evaluation after a destructive task).
    pub description: String,
    /// Tasks that must be done first.
    pub after: Vec<TaskId>,
    /// The group this task belongs to; a task with children is a group whose status follows them.
    pub parent: Option<TaskId>,
    /// Files the task touches, beside those named in the description.
    pub files: Vec<String>,
    /// `Some(true)`/`Some(false)` says whether it is destructive; `None` guesses from the description.
    pub destructive: Option<bool>,
    /// The agent command.
    pub run: Option<String>,
    /// The test command; with `requires_testing`, submit leads to testing.
    pub test: Option<String>,
    /// The evaluator command; when set, passing tests lead to pending-eval, not done.
    pub eval: Option<String>,
    /// `false` skips testing even when a test command is set (planning and docs tasks).
    pub requires_testing: bool,
    /// Supervisor stage; defaults to the task id.
    pub stage: Option<StageId>,
    /// Retry strategy for stage failures (agent exited non-zero or timed out).
    pub retry: RetryStrategy,
    /// Checkpoints the agent must reach before the task may resolve (exhaustive analysis).
    pub checkpoints: Vec<String>,
}

impl TaskSpec {
    /// A task with the given id and description and every other field at its default.
    pub fn new(id: impl Into<TaskId>, description: impl Into<String>) -> Self {
        Self {
            id: id.into(),
            description: description.into(),
            after: Vec::new(),
            parent: None,
            files: Vec::new(),
            destructive: None,
            run: None,
            test: None,
            eval: None,
            requires_testing: true,
            stage: None,
            retry: RetryStrategy::default(),
            checkpoints: Vec::new(),
        }
    }

    /// The supervisor stage this task's attempts are recorded under.
    pub fn stage_id(&self) -> StageId {
        self.stage
            .clone()
            .unwrap_or_else(|| StageId(self.id.0.clone()))
    }

    /// Whether a submit goes through testing.
    pub fn is_tested(&self) -> bool {
        self.requires_testing && self.test.is_some()
    }

    /// Whether passing tests (or a submit) wait in pending-eval for a score.
    pub fn is_evaluated(&self) -> bool {
        self.eval.is_some()
    }
}

/// The classification of a refactoring task, recorded as an event.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Encode, Decode, Serialize, Deserialize,
)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
#[serde(rename_all = "kebab-case")]
pub enum TaskClass {
    /// Duplicate code to merge.
    Merge,
    /// Misplaced code to move.
    Move,
    /// Inconsistent pattern to refactor.
    Refactor,
    /// Conflicting implementations; keep the superior one.
    Integrate,
    /// Missing method that follows an existing pattern.
    Implement,
    /// A genuinely new requirement: reported, not attempted (only after full analysis).
    NewCode,
    /// Not understood yet: keep analysing.
    AnalyzeMore,
}

impl TaskClass {
    /// Every class, for parsing and help texts.
    pub const ALL: [TaskClass; 7] = [
        TaskClass::Merge,
        TaskClass::Move,
        TaskClass::Refactor,
        TaskClass::Integrate,
        TaskClass::Implement,
        TaskClass::NewCode,
        TaskClass::AnalyzeMore,
    ];

    /// The kebab-case name used in agent output (`::classify new-code`) and JSON.
    pub fn name(self) -> &'static str {
        match self {
            TaskClass::Merge => "merge",
            TaskClass::Move => "move",
            TaskClass::Refactor => "refactor",
            TaskClass::Integrate => "integrate",
            TaskClass::Implement => "implement",
            TaskClass::NewCode => "new-code",
            TaskClass::AnalyzeMore => "analyze-more",
        }
    }

    /// Parses a name as written by an agent; case and `_`/`-` are forgiven.
    pub fn parse(s: &str) -> Option<Self> {
        let norm = s.trim().to_ascii_lowercase().replace('_', "-");
        Self::ALL.into_iter().find(|c| c.name() == norm)
    }
}
