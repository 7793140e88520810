//! The one write path: a [`Session`] holds a run's head state, decides a command against it,
//! appends the events with the head it decided on, and applies them through the fold that
//! resolves rollbacks and forks. When someone else appended first (a typed `Conflict`), it
//! catches up from the log and decides again. The runner, `emit`, every control command and
//! the server write through it and nothing else.

use crate::error::{ReplayError, Result};
use crate::events;
use crate::history::Replay;
use runlog_core::codec::encode_event;
use runlog_core::{decide, Command, Event, Rejection, RunState};
use runlog_store::{EventLog, StoreError};

/// How often a command is decided again after losing a race before the conflict is reported:
/// each retry means another writer appended, so a bound only matters under a storm of writers.
/// On the shared store a catch-up and an append are several round trips, and workers busy on
/// one run win most races: 32 was seen exhausted by three workers on a 500-task DAG (the losing
/// worker's engine stopped, and its attempt was taken on again), so the bound is generous.
const MAX_CONFLICT_RETRIES: usize = 4_096;

/// What a command recorded: its events with their seqs.
#[derive(Debug, Clone, PartialEq)]
pub struct Recorded {
    /// `(seq, event)` in order.
    pub events: Vec<(u64, Event)>,
}

impl Recorded {
    /// The seq of the last event (the run's head after the command).
    pub fn head_seq(&self) -> Option<u64> {
        self.events.last().map(|(seq, _)| *seq)
    }
}

/// Sees each event as it is applied, with the state right after it.
pub type Observer<'o> = &'o mut dyn FnMut(u64, &Event, &RunState);

/// One writer's view of one run. See the module documentation.
#[derive(Debug)]
pub struct Session<'l> {
    replay: Replay<'l>,
    run: String,
    state: RunState,
}

impl<'l> Session<'l> {
    /// A session at the run's head; a run that does not exist yet starts empty (its first
    /// command must start it).
    pub fn open(log: &'l dyn EventLog, run: &str) -> Result<Self> {
        let replay = Replay::new(log);
        let state = match log.head(run)? {
            Some(_) => replay.head_state(run)?,
            None => RunState::default(),
        };
        Ok(Self::at(replay, run, state))
    }

    /// A session on an existing run only: an unknown run is an error listing the runs.
    pub fn existing(log: &'l dyn EventLog, run: &str) -> Result<Self> {
        let replay = Replay::new(log);
        let state = replay.head_state(run)?;
        Ok(Self::at(replay, run, state))
    }

    /// A session whose head state the caller already has (`state.seq` is its head).
    pub fn at(replay: Replay<'l>, run: &str, state: RunState) -> Self {
        Self {
            replay,
            run: run.to_owned(),
            state,
        }
    }

    /// The run.
    pub fn run(&self) -> &str {
        &self.run
    }

    /// The state every decision is taken on: the head as this session knows it.
    pub fn state(&self) -> &RunState {
        &self.state
    }

    /// Gives the state up (the session ends).
    pub fn into_state(self) -> RunState {
        self.state
    }

    /// The replay this session reads through.
    pub fn replay(&self) -> &Replay<'l> {
        &self.replay
    }

    /// Decides `cmd` on the head state and records it. `Ok(Err(_))` is the rules' refusal
    /// (nothing was recorded); `Err(_)` is a failure to read or write the log.
    pub fn execute(&mut self, cmd: Command) -> Result<std::result::Result<Recorded, Rejection>> {
        self.execute_observed(cmd, &mut |_, _, _| {})
    }

    /// [`Session::execute`], showing `observe` every event applied, others' included when it
    /// had to catch up first.
    pub fn execute_observed(
        &mut self,
        cmd: Command,
        observe: Observer<'_>,
    ) -> Result<std::result::Result<Recorded, Rejection>> {
        let mut retries = 0;
        loop {
            let events = match decide(&self.state, cmd.clone()) {
                Ok(events) => events,
                Err(rejection) => return Ok(Err(rejection)),
            };
            match self.append(&events) {
                Ok(()) => return self.apply_own(events, observe).map(Ok),
                Err(ReplayError::Store(StoreError::Conflict { .. }))
                    if retries < MAX_CONFLICT_RETRIES =>
                {
                    retries += 1;
                    self.catch_up_observed(observe)?;
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// Folds whatever others appended since this session's head; returns those events.
    pub fn catch_up(&mut self) -> Result<Vec<(u64, Event)>> {
        self.catch_up_observed(&mut |_, _, _| {})
    }

    fn catch_up_observed(&mut self, observe: Observer<'_>) -> Result<Vec<(u64, Event)>> {
        let head = match self.replay.log().head(&self.run)? {
            Some(h) => h.seq,
            None => return Ok(Vec::new()),
        };
        if head <= self.state.seq {
            return Ok(Vec::new());
        }
        let theirs = events::read(self.replay.log(), &self.run, self.state.seq + 1, head)?;
        for (seq, event) in &theirs {
            self.replay.apply(&self.run, &mut self.state, event)?;
            observe(*seq, event, &self.state);
        }
        Ok(theirs)
    }

    fn append(&self, events: &[Event]) -> Result<()> {
        let bodies = events
            .iter()
            .map(encode_event)
            .collect::<std::result::Result<Vec<_>, _>>()
            .map_err(|source| ReplayError::Encode {
                run: self.run.clone(),
                source,
            })?;
        self.replay
            .log()
            .append(&self.run, Some(self.state.seq), bodies)?;
        Ok(())
    }

    fn apply_own(&mut self, events: Vec<Event>, observe: Observer<'_>) -> Result<Recorded> {
        let mut recorded = Vec::with_capacity(events.len());
        for event in events {
            self.replay.apply(&self.run, &mut self.state, &event)?;
            observe(self.state.seq, &event, &self.state);
            recorded.push((self.state.seq, event));
        }
        Ok(Recorded { events: recorded })
    }
}
