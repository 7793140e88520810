//! The one write path: a [`Session`] holds a run's head state, decides a command against it,
//! appends the events with the head it decided on, and applies them through the fold that
//! resolves rollbacks and forks. When someone else appended first (a typed `Conflict`), it
//! catches up from the log and decides again. The runner, `emit`, every control command and
//! the server write through it and nothing else.
//!
//! A batching session (the runner's) can also [`stage`](Session::stage) several commands, each
//! decided on the state the ones before it left, and
//! [`commit_observed`](Session::commit_observed) them as one append: one durable write for a
//! whole step of the engine. It keeps a second state, the head as appended, so that what it
//! shows as committed is shown with the state right after each event, and a conflict is
//! settled without reading the run again: the head catches up, the staged commands are decided
//! again on it, and those the rules now refuse are dropped.
//!
//! As it records, a session writes the snapshots due on the events it appended (see
//! [`Replay::recorded`]), after its observers have seen them: a run's first replay and first
//! `state_at` find them instead of writing them.

use crate::error::{ReplayError, Result};
use crate::events;
use crate::history::{Replay, SnapshotSchedule};
use runlog_core::{decide, Command, Event, EventKind, Rejection, RunState};
use runlog_store::{EventLog, Head, StoreError};

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

/// What a [`Session::commit_observed`] did.
#[derive(Debug, Default)]
pub struct Commit {
    /// Events appended by others that the session took in first (the append had lost a race).
    pub foreign: usize,
    /// Staged commands the rules refused once decided again on the new head: nothing of them
    /// was recorded.
    pub dropped: Vec<(Command, Rejection)>,
    /// When decided again: every event the state went through since the staged events were
    /// first decided (those undone, others' taken in, and those appended), so that what was
    /// kept beside the state (a dispatch's frontier) can be brought to it.
    pub moved_by: Vec<EventKind>,
}

impl Commit {
    /// Whether the staged commands were decided again (the state is not the one they were
    /// first decided on).
    pub fn redecided(&self) -> bool {
        self.foreign > 0
    }
}

/// A batching session's commands decided and not appended yet.
#[derive(Debug)]
struct Batch {
    /// The head as appended: `state` without the staged events.
    head: RunState,
    commands: Vec<Command>,
    events: Vec<Event>,
}

/// One writer's view of one run. See the module documentation.
#[derive(Debug)]
pub struct Session<'l> {
    replay: Replay<'l>,
    run: String,
    /// The state every decision is taken on: the head and, batching, what is staged.
    state: RunState,
    batch: Option<Batch>,
    /// Where the run's next snapshot falls: the writer writes it as the run is recorded.
    snapshots: SnapshotSchedule,
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
        let snapshots = replay.snapshot_schedule(run, state.seq);
        Self {
            replay,
            run: run.to_owned(),
            state,
            batch: None,
            snapshots,
        }
    }

    /// Lets this session stage commands and commit them together (see the module
    /// documentation). It keeps a copy of the head from now on.
    pub fn batching(&mut self) {
        if self.batch.is_none() {
            self.batch = Some(Batch {
                head: self.state.clone(),
                commands: Vec::new(),
                events: Vec::new(),
            });
        }
    }

    /// Whether this session stages commands (see [`Session::batching`]).
    pub fn is_batching(&self) -> bool {
        self.batch.is_some()
    }

    /// Records each command as it is decided again, and lets the head copy go. Anything still
    /// staged is committed by the caller first: with something staged, nothing changes.
    pub fn stop_batching(&mut self) {
        if self.staged() == 0 {
            self.batch = None;
        }
    }

    /// How many events are staged and not appended yet.
    pub fn staged(&self) -> usize {
        self.batch.as_ref().map_or(0, |b| b.events.len())
    }

    /// The run.
    pub fn run(&self) -> &str {
        &self.run
    }

    /// The state every decision is taken on: the head as this session knows it, and what is
    /// staged on it.
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
        if self.staged() > 0 {
            // After what is staged, and appended with it.
            if let Err(rejection) = self.stage(cmd, &mut |_, _, _| {})? {
                return Ok(Err(rejection));
            }
            return self
                .commit_observed(observe)
                .map(|c| match c.dropped.into_iter().next() {
                    Some((_, rejection)) => Err(rejection),
                    None => Ok(Recorded { events: Vec::new() }),
                });
        }
        let mut retries = 0;
        loop {
            let events = match decide(&self.state, cmd.clone()) {
                Ok(events) => events,
                Err(rejection) => return Ok(Err(rejection)),
            };
            match self.append(&events) {
                Ok(head) => return self.apply_own(events, Some(head), observe).map(Ok),
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
        if self.staged() > 0 {
            // Others' events go under what is staged: the staged commands are decided again.
            let (theirs, _dropped) = self.rebase(observe)?;
            return Ok(theirs);
        }
        let theirs = self.appended_after(self.state.seq)?;
        for (seq, event) in &theirs {
            self.replay.apply(&self.run, &mut self.state, event)?;
            if let Some(b) = self.batch.as_mut() {
                self.replay.apply(&self.run, &mut b.head, event)?;
            }
            observe(*seq, event, &self.state);
            self.replay
                .recorded(&self.run, &self.state, false, None, &mut self.snapshots);
        }
        Ok(theirs)
    }

    /// Decides `cmd` on the state, staged commands included, and stages its events: the
    /// state moves on, the log does not until [`Session::commit_observed`]. `decided` sees each
    /// event with the state after it, at the seq it will have if nothing else is appended first.
    /// Without [`Session::batching`] the command is recorded at once.
    pub fn stage(
        &mut self,
        cmd: Command,
        decided: Observer<'_>,
    ) -> Result<std::result::Result<Recorded, Rejection>> {
        if self.batch.is_none() {
            return self.execute_observed(cmd, decided);
        }
        let events = match decide(&self.state, cmd.clone()) {
            Ok(events) => events,
            Err(rejection) => return Ok(Err(rejection)),
        };
        let recorded = self.apply_own(events.clone(), None, decided)?;
        if let Some(b) = self.batch.as_mut() {
            b.commands.push(cmd);
            b.events.extend(events);
        }
        Ok(Ok(recorded))
    }

    /// Appends every staged event as one append on the head it was decided on. After losing a
    /// race it takes in what others appended, decides the staged commands again and tries
    /// again. `observe` sees each event appended (others' included) with the state right
    /// after it, in the log's order.
    pub fn commit_observed(&mut self, observe: Observer<'_>) -> Result<Commit> {
        let mut commit = Commit::default();
        let mut retries = 0;
        loop {
            let Some(b) = self.batch.as_mut().filter(|b| !b.events.is_empty()) else {
                return Ok(commit);
            };
            let expected = b.head.seq;
            match events::append(self.replay.log(), &self.run, expected, &b.events) {
                Ok(head) => {
                    let events = std::mem::take(&mut b.events);
                    b.commands.clear();
                    if commit.redecided() {
                        commit
                            .moved_by
                            .extend(events.iter().map(|e| e.kind.clone()));
                    }
                    for event in &events {
                        self.replay.apply(&self.run, &mut b.head, event)?;
                        observe(b.head.seq, event, &b.head);
                        let hash = (b.head.seq == head.seq).then_some(&head.hash);
                        self.replay
                            .recorded(&self.run, &b.head, true, hash, &mut self.snapshots);
                    }
                    return Ok(commit);
                }
                Err(ReplayError::Store(StoreError::Conflict { .. }))
                    if retries < MAX_CONFLICT_RETRIES =>
                {
                    retries += 1;
                    let undone: Vec<EventKind> = b.events.iter().map(|e| e.kind.clone()).collect();
                    let (theirs, dropped) = self.rebase(observe)?;
                    commit.foreign += theirs.len();
                    commit.dropped.extend(dropped);
                    commit.moved_by.extend(undone);
                    commit
                        .moved_by
                        .extend(theirs.into_iter().map(|(_, e)| e.kind));
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// The head catches up with the log (`observe` sees others' events), and the staged
    /// commands are decided again on it; those now refused are returned, nothing of them kept.
    #[allow(clippy::type_complexity)]
    fn rebase(
        &mut self,
        observe: Observer<'_>,
    ) -> Result<(Vec<(u64, Event)>, Vec<(Command, Rejection)>)> {
        let Some(known) = self.batch.as_ref().map(|b| b.head.seq) else {
            return Ok((Vec::new(), Vec::new()));
        };
        let theirs = self.appended_after(known)?;
        let Some(b) = self.batch.as_mut() else {
            return Ok((Vec::new(), Vec::new()));
        };
        for (seq, event) in &theirs {
            self.replay.apply(&self.run, &mut b.head, event)?;
            observe(*seq, event, &b.head);
            self.replay
                .recorded(&self.run, &b.head, false, None, &mut self.snapshots);
        }
        self.state = b.head.clone();
        let commands = std::mem::take(&mut b.commands);
        b.events.clear();
        let mut dropped = Vec::new();
        for cmd in commands {
            if let Err(rejection) = self.stage(cmd.clone(), &mut |_, _, _| {})? {
                dropped.push((cmd, rejection));
            }
        }
        Ok((theirs, dropped))
    }

    /// What the log holds of the run after `known` (one read: on a shared store, one round
    /// trip fewer than asking for the head first).
    fn appended_after(&self, known: u64) -> Result<Vec<(u64, Event)>> {
        events::read(self.replay.log(), &self.run, known + 1, u64::MAX)
    }

    fn append(&self, events: &[Event]) -> Result<Head> {
        events::append(self.replay.log(), &self.run, self.state.seq, events)
    }

    /// Applies events this session decided to its state; `appended` (the head after them):
    /// they are in the log, so a batching session's head takes them too (staged ones wait for
    /// the commit) and the snapshots due on them are written.
    fn apply_own(
        &mut self,
        events: Vec<Event>,
        appended: Option<Head>,
        observe: Observer<'_>,
    ) -> Result<Recorded> {
        let mut recorded = Vec::with_capacity(events.len());
        for event in events {
            self.replay.apply(&self.run, &mut self.state, &event)?;
            if let Some(b) = self.batch.as_mut().filter(|_| appended.is_some()) {
                self.replay.apply(&self.run, &mut b.head, &event)?;
            }
            observe(self.state.seq, &event, &self.state);
            if let Some(head) = &appended {
                let hash = (self.state.seq == head.seq).then_some(&head.hash);
                self.replay
                    .recorded(&self.run, &self.state, true, hash, &mut self.snapshots);
            }
            recorded.push((self.state.seq, event));
        }
        Ok(Recorded { events: recorded })
    }
}
