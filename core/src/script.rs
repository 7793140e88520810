//! Scripts of commands: helpers to write runs as code (scenarios, tests, benchmarks) through
//! the real `decide`, with a deterministic clock. Pure, like the rest of the crate.

use crate::command::{Command, CommandKind};
use crate::decide::decide;
use crate::event::Event;
use crate::fold::{apply_in_place, state_at, Base};
use crate::ids::{AgentId, Hash, RunId, StageId, TaskId, Timestamp};
use crate::rejection::Rejection;
use crate::settings::{RetryStrategy, Settings};
use crate::spec::TaskSpec;
use crate::state::RunState;
use crate::value::Value;
use std::collections::BTreeMap;

/// Applies `event` to `state` and appends it to `events`; a rollback's base state is the fold of
/// the events up to its target (history held in memory, as scripts and tests do).
pub fn record(state: &mut RunState, events: &mut Vec<Event>, event: Event) {
    apply_in_place(state, &event, &mut |base| match base {
        Base::This(seq) => Some(state_at(events, seq)),
        Base::Parent(..) => None,
    });
    events.push(event);
}

/// Scripts start at this time and advance one second per command.
pub const T0: u64 = 1_700_000_000_000;

/// A run written as a chain of commands. The first rejection stops the script and is reported
/// by [`Script::finish`].
#[derive(Debug, Clone)]
pub struct Script {
    /// The state after the commands so far.
    pub state: RunState,
    /// The events so far.
    pub events: Vec<Event>,
    /// The clock.
    pub now: u64,
    error: Option<Rejection>,
}

impl Default for Script {
    fn default() -> Self {
        Self {
            state: RunState::default(),
            events: Vec::new(),
            now: T0,
            error: None,
        }
    }
}

impl Script {
    /// A run `run-1` with default settings and these tasks.
    pub fn run(tasks: Vec<TaskSpec>) -> Self {
        Self::run_with(Settings::default(), tasks)
    }

    /// A run `run-1` with these settings and tasks.
    pub fn run_with(settings: Settings, tasks: Vec<TaskSpec>) -> Self {
        Self::default().and(CommandKind::StartRun {
            run: RunId::from("run-1"),
            workflow: "test".into(),
            workflow_hash: Hash::of(b"test"),
            settings,
            tasks,
            cost: Default::default(),
            review: Default::default(),
        })
    }

    /// Records an event as is.
    pub fn push(&mut self, event: Event) {
        record(&mut self.state, &mut self.events, event);
    }

    /// Issues a command through `decide` (skipped once a command was rejected).
    pub fn and(mut self, kind: CommandKind) -> Self {
        if self.error.is_some() {
            return self;
        }
        match decide(&self.state, Command::new(Timestamp(self.now), kind)) {
            Ok(events) => events.into_iter().for_each(|e| self.push(e)),
            Err(r) => self.error = Some(r),
        }
        self.now += 1_000;
        self
    }

    /// Moves the clock forward.
    pub fn wait_ms(mut self, ms: u64) -> Self {
        self.now += ms;
        self
    }

    /// Whether a command was rejected.
    pub fn failed(&self) -> bool {
        self.error.is_some()
    }

    /// The events, or the first rejection.
    pub fn finish(self) -> Result<Vec<Event>, Rejection> {
        match self.error {
            Some(r) => Err(r),
            None => Ok(self.events),
        }
    }
}

/// Spec builders.
pub trait SpecExt: Sized {
    /// Depends on these tasks.
    fn after(self, deps: &[&str]) -> Self;
    /// Belongs to this group.
    fn parent(self, p: &str) -> Self;
    /// Has a test command.
    fn tested(self) -> Self;
    /// Has an evaluator.
    fn evaluated(self) -> Self;
    /// Touches these files.
    fn files(self, files: &[&str]) -> Self;
    /// Says whether it is destructive.
    fn destructive(self, d: bool) -> Self;
    /// Must reach these checkpoints.
    fn checkpoints(self, names: &[&str]) -> Self;
    /// Runs in this stage.
    fn stage(self, s: &str) -> Self;
    /// Retries like this.
    fn retry(self, r: RetryStrategy) -> Self;
}

impl SpecExt for TaskSpec {
    fn after(mut self, deps: &[&str]) -> Self {
        self.after = deps.iter().map(|d| TaskId::from(*d)).collect();
        self
    }
    fn parent(mut self, p: &str) -> Self {
        self.parent = Some(TaskId::from(p));
        self
    }
    fn tested(mut self) -> Self {
        self.test = Some("./test.sh".into());
        self
    }
    fn evaluated(mut self) -> Self {
        self.eval = Some("./eval.sh".into());
        self
    }
    fn files(mut self, files: &[&str]) -> Self {
        self.files = files.iter().map(|f| (*f).to_owned()).collect();
        self
    }
    fn destructive(mut self, d: bool) -> Self {
        self.destructive = Some(d);
        self
    }
    fn checkpoints(mut self, names: &[&str]) -> Self {
        self.checkpoints = names.iter().map(|n| (*n).to_owned()).collect();
        self
    }
    fn stage(mut self, s: &str) -> Self {
        self.stage = Some(StageId::from(s));
        self
    }
    fn retry(mut self, r: RetryStrategy) -> Self {
        self.retry = r;
        self
    }
}

/// A task with a run command and nothing else.
pub fn task(id: &str) -> TaskSpec {
    let mut s = TaskSpec::new(id, format!("do {id}"));
    s.run = Some(format!("./agent.sh {id}"));
    s
}

/// A task id.
pub fn id(s: &str) -> TaskId {
    TaskId::from(s)
}

/// Starts (or restarts) a task.
pub fn start(t: &str) -> CommandKind {
    CommandKind::StartTask {
        task: id(t),
        agent: None,
        worktree: None,
    }
}

/// Starts a task as this agent in this worktree.
pub fn start_as(t: &str, agent: &str, worktree: &str) -> CommandKind {
    CommandKind::StartTask {
        task: id(t),
        agent: Some(AgentId::from(agent)),
        worktree: Some(worktree.into()),
    }
}

/// The agent exits 0.
pub fn submit(t: &str) -> CommandKind {
    CommandKind::SubmitTask {
        task: id(t),
        summary: format!("{t} done"),
        result: Value::Null,
        duration_ms: 100,
    }
}

/// The agent exits 0 with a result.
pub fn submit_with(t: &str, result: Value) -> CommandKind {
    CommandKind::SubmitTask {
        task: id(t),
        summary: format!("{t} done"),
        result,
        duration_ms: 100,
    }
}

/// The agent fails.
pub fn fail_stage(t: &str, error: &str) -> CommandKind {
    CommandKind::FailStage {
        task: id(t),
        error: error.into(),
        error_type: "exit-code".into(),
        duration_ms: 50,
    }
}

/// The tests pass or fail.
pub fn tests(t: &str, passed: bool) -> CommandKind {
    CommandKind::RecordTests {
        task: id(t),
        passed,
        details: if passed {
            "ok".into()
        } else {
            format!("{t}: assertion failed")
        },
    }
}

/// The evaluator scores (one dimension).
pub fn score(t: &str, s: f64) -> CommandKind {
    score_dims(t, s, &[("correctness", s)])
}

/// The evaluator scores with dimensions.
pub fn score_dims(t: &str, s: f64, dims: &[(&str, f64)]) -> CommandKind {
    CommandKind::ScoreEval {
        task: id(t),
        evaluator: "judge".into(),
        score: s,
        dimensions: dims
            .iter()
            .map(|(k, v)| ((*k).to_owned(), *v))
            .collect::<BTreeMap<_, _>>(),
        notes: format!("notes for {t}"),
        judge: Default::default(),
    }
}

/// alice approves.
pub fn approve(t: &str) -> CommandKind {
    CommandKind::Approve {
        task: id(t),
        by: "alice".into(),
    }
}

/// alice rejects.
pub fn reject(t: &str, reopen: bool) -> CommandKind {
    CommandKind::Reject {
        task: id(t),
        by: "alice".into(),
        reopen,
        reason: "not good enough".into(),
    }
}

/// The agent reaches a checkpoint.
pub fn checkpoint(t: &str, name: &str) -> CommandKind {
    CommandKind::ReachCheckpoint {
        task: id(t),
        name: name.into(),
    }
}
