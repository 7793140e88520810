//! Given/when/then harness for `decide` and `evolve`, and builders for specs and commands.
#![allow(dead_code)]

use runlog_core::*;

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
        cost: Default::default(),
        review: Default::default(),
    })
}

impl Given {
    fn push(&mut self, event: Event) {
        record(&mut self.state, &mut self.events, event);
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

pub use runlog_core::script::*;

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

/// A call `n` of task `t`'s agent in attempt `attempt`, answered, with these tokens.
pub fn call(
    t: &str,
    attempt: u32,
    n: u32,
    input: u64,
    output: u64,
) -> runlog_core::model_call::ModelCall {
    runlog_core::model_call::ModelCall {
        task: TaskId::from(t),
        attempt,
        stage: runlog_core::usage::UsageStage::Agent,
        n,
        provider: "anthropic".into(),
        api: runlog_core::model_call::ModelApi::Messages,
        model: Some("sonnet".into()),
        streamed: false,
        status: 200,
        end: runlog_core::model_call::CallEnd::Answered,
        first_byte_ms: Some(40),
        duration_ms: 120,
        tokens: runlog_core::usage::Tokens {
            input,
            output,
            ..Default::default()
        },
        cost_usd: None,
        cost: runlog_core::usage::CostSource::Unpriced,
        request: None,
        response: None,
        assembled: None,
        error: None,
    }
}

/// A started run whose workflow gives these prices and budgets.
pub fn given_costed(tasks: Vec<TaskSpec>, cost: CostPolicy) -> Given {
    given([]).and(CommandKind::StartRun {
        run: RunId::from("run-1"),
        workflow: "test".into(),
        workflow_hash: Hash::of(b"test"),
        settings: Settings::default(),
        tasks,
        cost,
        review: Default::default(),
    })
}
