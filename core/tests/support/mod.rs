//! Given/when/then harness for `decide` and `evolve`, and builders for specs and commands.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use runlog_core::*;
use std::collections::BTreeMap;

/// The harness clock starts here and advances one second per command.
pub const T0: u64 = 1_700_000_000_000;

/// A history of events and the state they fold to.
#[derive(Debug, Clone)]
pub struct Given {
    pub events: Vec<Event>,
    pub state: RunState,
    pub now: u64,
}

/// Starts from raw events (each stamped one second apart).
pub fn given(kinds: impl IntoIterator<Item = EventKind>) -> Given {
    let mut g = Given {
        events: Vec::new(),
        state: RunState::default(),
        now: T0,
    };
    for kind in kinds {
        g.push(Event {
            at: Timestamp(g.now),
            kind,
        });
        g.now += 1_000;
    }
    g
}

/// A started run with these tasks and default settings.
pub fn given_run(tasks: Vec<TaskSpec>) -> Given {
    given_run_with(Settings::default(), tasks)
}

/// A started run with these tasks and settings.
pub fn given_run_with(settings: Settings, tasks: Vec<TaskSpec>) -> Given {
    given([]).and(CommandKind::StartRun {
        run: RunId::from("run-1"),
        workflow: "test".into(),
        workflow_hash: Hash::of(b"test"),
        settings,
        tasks,
    })
}

impl Given {
    fn push(&mut self, event: Event) {
        self.state =
            runlog_core::fold::apply(std::mem::take(&mut self.state), &event, &mut |_| None);
        self.events.push(event);
        // Rollbacks need history: refold from the start when one is in the stream.
        if matches!(
            self.events.last().map(|e| &e.kind),
            Some(EventKind::RolledBack { .. })
        ) {
            self.state = fold(&self.events);
        }
    }

    /// Applies a command that must be accepted.
    #[track_caller]
    pub fn and(mut self, kind: CommandKind) -> Self {
        let cmd = Command::new(Timestamp(self.now), kind.clone());
        match decide(&self.state, cmd) {
            Ok(events) => {
                for e in events {
                    self.push(e);
                }
            }
            Err(r) => panic!("setup command {kind:?} was rejected: {r} ({})", r.hint()),
        }
        self.now += 1_000;
        self
    }

    /// Applies several commands that must be accepted.
    #[track_caller]
    pub fn and_all(self, kinds: impl IntoIterator<Item = CommandKind>) -> Self {
        kinds.into_iter().fold(self, |g, k| g.and(k))
    }

    /// Moves the clock forward.
    pub fn wait_ms(mut self, ms: u64) -> Self {
        self.now += ms;
        self
    }

    /// Issues the command under test.
    pub fn when(self, kind: CommandKind) -> When {
        let result = decide(&self.state, Command::new(Timestamp(self.now), kind));
        When {
            given: self,
            result,
        }
    }

    /// Status of a task (derived for groups).
    #[track_caller]
    pub fn status(&self, id: &str) -> TaskStatus {
        self.state
            .status_of(&TaskId::from(id))
            .expect("no such task")
    }

    /// A task's state.
    #[track_caller]
    pub fn task(&self, id: &str) -> &TaskState {
        self.state.task(&TaskId::from(id)).expect("no such task")
    }
}

/// The outcome of the command under test.
#[derive(Debug)]
pub struct When {
    pub given: Given,
    pub result: Result<Vec<Event>, Rejection>,
}

impl When {
    /// The command produced exactly these events.
    #[track_caller]
    pub fn then(self, expected: Vec<EventKind>) -> Given {
        match self.result {
            Ok(events) => {
                let kinds: Vec<EventKind> = events.iter().map(|e| e.kind.clone()).collect();
                assert_eq!(kinds, expected, "events differ");
                let mut g = self.given;
                for e in events {
                    g.push(e);
                }
                g
            }
            Err(r) => panic!("expected events, got rejection: {r}"),
        }
    }

    /// The command was accepted; returns the history with its events applied.
    #[track_caller]
    pub fn then_ok(self) -> Given {
        match self.result {
            Ok(events) => {
                let mut g = self.given;
                for e in events {
                    g.push(e);
                }
                g
            }
            Err(r) => panic!("expected acceptance, got rejection: {r} ({})", r.hint()),
        }
    }

    /// The command was rejected with exactly this rejection.
    #[track_caller]
    pub fn then_rejected(self, expected: Rejection) {
        match self.result {
            Ok(events) => panic!("expected rejection {expected:?}, got events {events:?}"),
            Err(r) => assert_eq!(r, expected),
        }
    }

    /// The command was rejected and the rejection satisfies `check`.
    #[track_caller]
    pub fn then_rejected_where(self, check: impl FnOnce(&Rejection) -> bool) {
        match self.result {
            Ok(events) => panic!("expected a rejection, got events {events:?}"),
            Err(r) => assert!(check(&r), "unexpected rejection: {r:?}"),
        }
    }
}

/// Spec builders.
pub trait SpecExt: Sized {
    fn after(self, deps: &[&str]) -> Self;
    fn parent(self, p: &str) -> Self;
    fn tested(self) -> Self;
    fn evaluated(self) -> Self;
    fn files(self, files: &[&str]) -> Self;
    fn destructive(self, d: bool) -> Self;
    fn checkpoints(self, names: &[&str]) -> Self;
    fn stage(self, s: &str) -> Self;
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

pub fn id(s: &str) -> TaskId {
    TaskId::from(s)
}

pub fn start(t: &str) -> CommandKind {
    CommandKind::StartTask {
        task: id(t),
        agent: None,
        worktree: None,
    }
}

pub fn start_as(t: &str, agent: &str, worktree: &str) -> CommandKind {
    CommandKind::StartTask {
        task: id(t),
        agent: Some(AgentId::from(agent)),
        worktree: Some(worktree.into()),
    }
}

pub fn submit(t: &str) -> CommandKind {
    CommandKind::SubmitTask {
        task: id(t),
        summary: format!("{t} done"),
        result: Value::Null,
        duration_ms: 100,
    }
}

pub fn submit_with(t: &str, result: Value) -> CommandKind {
    CommandKind::SubmitTask {
        task: id(t),
        summary: format!("{t} done"),
        result,
        duration_ms: 100,
    }
}

pub fn fail_stage(t: &str, error: &str) -> CommandKind {
    CommandKind::FailStage {
        task: id(t),
        error: error.into(),
        error_type: "exit-code".into(),
        duration_ms: 50,
    }
}

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

pub fn score(t: &str, s: f64) -> CommandKind {
    score_dims(t, s, &[("correctness", s)])
}

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
    }
}

pub fn approve(t: &str) -> CommandKind {
    CommandKind::Approve {
        task: id(t),
        by: "alice".into(),
    }
}

pub fn reject(t: &str, reopen: bool) -> CommandKind {
    CommandKind::Reject {
        task: id(t),
        by: "alice".into(),
        reopen,
        reason: "not good enough".into(),
    }
}

pub fn checkpoint(t: &str, name: &str) -> CommandKind {
    CommandKind::ReachCheckpoint {
        task: id(t),
        name: name.into(),
    }
}

/// Start, submit and pass everything a task needs to be done (tests and eval when it has them).
pub fn complete(g: Given, t: &str) -> Given {
    let g = g.and(start(t)).and(submit(t));
    let g = if g.status(t) == TaskStatus::Testing {
        g.and(tests(t, true))
    } else {
        g
    };
    if g.status(t) == TaskStatus::PendingEval {
        g.and(score(t, 0.9))
    } else {
        g
    }
}
