//! The engine's one way to record. Every decision goes through [`Recorder::record`]: decided on
//! the head, staged in the step (the dispatch sees it at once) and appended with the step at
//! [`Recorder::commit`], after which the observer, the tasks' stories and the processes the
//! step planned see it. Outside a step (a git workspace, where each decision follows the git
//! operation it records, and before or after driving) a decision is appended as it is made.

use super::Result;
use crate::clock::Clock;
use crate::error::RunnerError;
use crate::history::Histories;
use crate::observer::{Observer, Unobserved};
use crate::step::{KillPoint, Planned};
use runlog_core::dispatch::Frontier;
use runlog_core::{Command, CommandKind, Event, Rejection, RunState, TaskId, TaskStatus};
use runlog_replay::{Replay, Session};
use runlog_store::EventLog;
use std::path::Path;
use std::sync::Arc;

/// What a decision came to: its events (with their seqs), or the rules' refusal, in which case
/// nothing was recorded.
pub(super) type Decided = std::result::Result<Vec<(u64, Event)>, Rejection>;

/// A decision the caller needs: a refusal is an error.
pub(super) fn required(decided: Decided) -> Result<Vec<(u64, Event)>> {
    decided.map_err(|r| RunnerError::Refused(Box::new(r)))
}

/// The session of the run (its head and its one write path) and everything that follows what
/// is recorded: the dispatch's frontier, the tasks' stories, the observer, the processes a step
/// starts once its append is durable.
pub(super) struct Recorder {
    session: Session<'static>,
    /// The store, shared with the session's replay: read beside the session's own borrows.
    log: Arc<dyn EventLog>,
    clock: Clock,
    observer: Box<dyn Observer>,
    /// The tasks the dispatch looks at, kept up to date with every event the session folds.
    frontier: Frontier,
    /// Each task's story so far, for its agent's `RUNLOG_HISTORY`.
    histories: Histories,
    /// The processes this step starts once its append is durable.
    planned: Vec<Planned>,
    kill_point: KillPoint,
    /// The tasks that end are reported with each append, their worktrees to be handed on
    /// (outside a git workspace, where each task keeps its own).
    hand_on: bool,
    /// Whether alerts are sent: then the ones each recorded event raises are kept, to send.
    alerting: bool,
    /// The alerts raised since they were last taken, with the seq of the event that raised each.
    raised: Vec<(u64, runlog_core::projections::alerts::Raised)>,
}

/// What a step's append came to.
#[derive(Debug, Default)]
pub(super) struct Appended {
    /// Others' events were appended first and the step was decided again on them: what it
    /// staged may have moved tasks under running processes.
    pub(super) redecided: bool,
    /// The tasks that ended in the append.
    pub(super) ended: Vec<TaskId>,
    /// The processes the step planned, to start now that it is durable.
    pub(super) planned: Vec<Planned>,
}

impl Recorder {
    pub(super) fn new(
        log: Arc<dyn EventLog>,
        run: &str,
        state: RunState,
        clock: Clock,
        history_cap: usize,
        kill_point: KillPoint,
        hand_on: bool,
    ) -> Self {
        Self {
            session: Session::at(Replay::shared(log.clone()), run, state),
            log,
            clock,
            observer: Box::new(Unobserved),
            frontier: Frontier::new(),
            histories: Histories::new(history_cap),
            planned: Vec::new(),
            kill_point,
            hand_on,
            alerting: false,
            raised: Vec::new(),
        }
    }

    /// From now on the alerts recorded events raise are kept, to send.
    pub(super) fn alerting(&mut self) {
        self.alerting = true;
    }

    /// The alerts raised since the last call.
    pub(super) fn take_raised(&mut self) -> Vec<(u64, runlog_core::projections::alerts::Raised)> {
        std::mem::take(&mut self.raised)
    }

    pub(super) fn observed_by(&mut self, observer: Box<dyn Observer>) {
        self.observer = observer;
    }

    /// The run's state as recorded (the head), with what the step staged.
    pub(super) fn state(&self) -> &RunState {
        self.session.state()
    }

    pub(super) fn run(&self) -> &str {
        self.session.run()
    }

    pub(super) fn log(&self) -> &Arc<dyn EventLog> {
        &self.log
    }

    pub(super) fn clock(&self) -> &Clock {
        &self.clock
    }

    /// What is shown of the engine's work.
    pub(super) fn observer(&mut self) -> &mut dyn Observer {
        self.observer.as_mut()
    }

    /// Shows the observer the state at the end of a step.
    pub(super) fn show_step(&mut self) {
        self.observer.step(self.session.state());
    }

    /// Says `text` to the observer.
    pub(super) fn note(&mut self, text: &str) {
        self.observer.note(text);
    }

    /// The dispatch's view and the state it looks at, together.
    pub(super) fn frontier(&mut self) -> (&mut Frontier, &RunState) {
        (&mut self.frontier, self.session.state())
    }

    /// Decides `kind` now (see [`Recorder::record_as`]).
    pub(super) fn record(&mut self, kind: CommandKind) -> Result<Decided> {
        self.record_as(Command::new(self.clock.now(), kind))
    }

    /// Decides `cmd` as it is (with its principal, if it names one) and records it: in a step
    /// it is staged (the dispatch sees it now, everything else once the step is appended);
    /// outside one it is appended at once.
    pub(super) fn record_as(&mut self, cmd: Command) -> Result<Decided> {
        let in_step = self.session.is_batching();
        let frontier = &mut self.frontier;
        let observer = &mut self.observer;
        let histories = &mut self.histories;
        let log = self.log.as_ref();
        let (alerting, raised) = (self.alerting, &mut self.raised);
        let decided = self.session.stage(cmd, &mut |seq, e, state| {
            frontier.observe(seq, &e.kind, state);
            if !in_step {
                histories.observe(log, seq, e);
                observer.event(seq, e, state);
                if alerting {
                    let now = runlog_core::projections::alerts::raised(&e.kind, state);
                    raised.extend(now.into_iter().map(|r| (seq, r)));
                }
            }
        })?;
        Ok(decided.map(|r| r.events))
    }

    /// Has `planned` start once the step is appended; outside a step it is handed back, to
    /// start now.
    pub(super) fn plan(&mut self, planned: Planned) -> Option<Planned> {
        if self.session.is_batching() {
            self.planned.push(planned);
            None
        } else {
            Some(planned)
        }
    }

    /// From now on decisions are staged and appended together, a step at a time.
    pub(super) fn in_steps(&mut self) {
        self.session.batching();
    }

    /// Appends what is staged, then records every decision as it is made.
    pub(super) fn end_steps(&mut self) -> Result<Appended> {
        let appended = self.commit()?;
        self.session.stop_batching();
        Ok(appended)
    }

    /// Ends a step: what it staged is appended as one append (the observer and the stories
    /// see it now). After a race lost to others' appends, the tasks their events name are
    /// found again.
    pub(super) fn commit(&mut self) -> Result<Appended> {
        let mut appended = Appended {
            planned: std::mem::take(&mut self.planned),
            ..Appended::default()
        };
        if self.session.staged() == 0 {
            return Ok(appended);
        }
        tracing::debug!(
            run = self.session.run(),
            staged = self.session.staged(),
            starts = appended.planned.len(),
            "appending a step"
        );
        let observer = &mut self.observer;
        let histories = &mut self.histories;
        let log = self.log.as_ref();
        let hand_on = self.hand_on;
        let ended = &mut appended.ended;
        let (alerting, raised) = (self.alerting, &mut self.raised);
        let commit = self.session.commit_observed(&mut |seq, e, state| {
            histories.observe(log, seq, e);
            if alerting {
                let now = runlog_core::projections::alerts::raised(&e.kind, state);
                raised.extend(now.into_iter().map(|r| (seq, r)));
            }
            if let Some(id) = e.kind.task().filter(|_| hand_on) {
                if state.status_of(id).is_some_and(TaskStatus::is_terminal) {
                    ended.push(id.clone());
                }
            }
            observer.event(seq, e, state)
        })?;
        if commit.redecided() {
            tracing::debug!(
                run = self.session.run(),
                "the step's append lost a race: decided again on the new head"
            );
            self.frontier
                .retouch(self.session.state(), commit.moved_by.iter());
            appended.redecided = true;
        }
        for (cmd, rejection) in commit.dropped {
            // Among workers, a start or claim that another worker's came before is the usual
            // race, not news.
            let race = matches!(
                cmd.kind,
                CommandKind::StartTaskAs { .. } | CommandKind::ClaimTask { .. }
            );
            if !race {
                self.observer.note(&format!(
                    "note: a decision was not recorded, one appended meanwhile came first: {rejection}"
                ));
            }
        }
        if !appended.planned.is_empty() {
            self.kill_point.appended();
        }
        Ok(appended)
    }

    /// Takes in what others appended up to `seq`; returns those events.
    pub(super) fn take_in(&mut self, seq: u64) -> Result<Vec<(u64, Event)>> {
        if seq <= self.state().seq {
            return Ok(Vec::new());
        }
        let events = self.session.catch_up()?;
        tracing::debug!(
            run = self.session.run(),
            events = events.len(),
            seq,
            "taking in what others appended"
        );
        for (seq, e) in &events {
            self.frontier.observe(*seq, &e.kind, self.session.state());
            self.histories.observe(self.log.as_ref(), *seq, e);
            self.observer.event(*seq, e, self.session.state());
        }
        Ok(events)
    }

    /// Writes `id`'s story to `path`, its stories first read up to the head (a resumed run's
    /// start with what was recorded before this engine).
    pub(super) fn write_history(&mut self, path: &Path, id: &TaskId) -> std::io::Result<()> {
        let seen_from = self.session.state().seq;
        self.histories
            .load(self.log.as_ref(), self.session.run(), seen_from);
        self.histories.write(path, id)
    }

    pub(super) fn into_state(self) -> RunState {
        self.session.into_state()
    }
}
