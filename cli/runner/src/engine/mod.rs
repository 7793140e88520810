//! The engine: one loop owns a run's session (its head state and the one write path); every
//! transition goes through `decide` and is appended (durably) before the engine acts on it.
//! What to start comes from the pure dispatch policy in `runlog-core`; agents, tests,
//! evaluators and the replan command run as processes on tokio tasks and report back over a
//! channel.

mod git_workspace;
mod model_calls;
mod running;
mod starting;
mod stopping;
mod taking_in;

use crate::clock::Clock;
use crate::crew::{Crew, TICK};
use crate::error::RunnerError;
use crate::layout::Layout;
use crate::observer::{Observer, Unobserved};
use crate::process;
use crate::step::{KillPoint, Planned};
use crate::workflow::RunnerSettings;
use runlog_core::dispatch::Frontier;
use runlog_core::{
    Command, CommandKind, Event, Rejection, RunId, RunOutcome, RunState, RunStatus, TaskId,
    TaskStatus,
};
use runlog_replay::{Replay, Session};
use runlog_store::EventLog;
use running::{Done, Foreign, Processes, Replanning, Running, StopSwitch};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::watch;

/// Shorthand.
pub type Result<T> = std::result::Result<T, RunnerError>;

/// Beyond the grace period, how long an interrupt waits for stopped processes to report.
const STOP_MARGIN: Duration = Duration::from_secs(3);

/// How to drive a run, checked when made.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RunOptions {
    jobs: Option<u32>,
}

impl RunOptions {
    /// At most `jobs` commands at once instead of the workflow's `jobs`, checked by the same
    /// rule as the workflow's.
    pub fn with_jobs(jobs: Option<u32>) -> Result<Self> {
        if let Some(n) = jobs {
            runlog_core::validate_settings(&runlog_core::Settings {
                jobs: n,
                ..runlog_core::Settings::default()
            })
            .map_err(|r| RunnerError::Invalid(Box::new(r)))?;
        }
        Ok(Self { jobs })
    }

    /// The override of the workflow's `jobs`, if any.
    pub fn jobs(&self) -> Option<u32> {
        self.jobs
    }
}

/// Where the workflow's commands run and how plans are revised.
#[derive(Debug, Clone)]
pub struct Context {
    /// The workflow file's directory.
    pub dir: PathBuf,
    /// The replan command, its timeout, the grace before SIGKILL.
    pub runner: RunnerSettings,
    /// Where the run's files are on this host.
    pub layout: Layout,
    /// The shared store's URL, which a sub-project's child run must use too (in its
    /// environment, where `ps` does not show the password).
    pub shared: Option<String>,
    /// The run's git workspace on this host, when its tasks work in git worktrees.
    pub workspace: Option<crate::workspace::RunWorkspace>,
    /// What this process's environment gave (its clock, its fault points).
    pub host: crate::Host,
    /// The secrets replaced in everything the run's commands leave before it is recorded: the
    /// environment's by name, the `redact_file`'s, and the well-known key shapes.
    pub redactor: Arc<runlog_core::redact::Redactor>,
}

/// How a run ended, for the caller's summary.
#[derive(Debug)]
pub struct Ended {
    /// The final state.
    pub state: RunState,
    /// A signal stopped it (the run is interrupted, not finished).
    pub interrupted: bool,
    /// Wall time of this invocation.
    pub elapsed: std::time::Duration,
}

impl Ended {
    /// Every task done.
    pub fn succeeded(&self) -> bool {
        matches!(
            self.state.status,
            RunStatus::Finished(RunOutcome::Succeeded)
        )
    }
}

/// The runner.
pub struct Engine {
    session: Session<'static>,
    /// The store, shared with the session's replay: read beside the session's own borrows.
    log: Arc<dyn EventLog>,
    ctx: Context,
    clock: Clock,
    observer: Box<dyn Observer>,
    jobs_override: Option<u32>,
    /// The processes it started and the channel they report back on.
    procs: Processes,
    /// The tasks the dispatch looks at, kept up to date with every event the session folds.
    frontier: Frontier,
    /// Turns true when the driver wants the run stopped (a signal, the API).
    stop: Option<watch::Receiver<bool>>,
    /// The run is resumed: it is made runnable again when driving starts.
    resuming: bool,
    /// What a person should hear when driving starts (how the run's tasks work).
    notes: Vec<String>,
    /// Each task's story so far, for its agent's `RUNLOG_HISTORY`.
    histories: super::history::Histories,
    /// Working the run as one worker among many (the shared store); `None` alone.
    crew: Option<Crew>,
    /// The processes this step starts once its append is durable.
    planned: Vec<Planned>,
    kill_point: KillPoint,
    /// Worktrees of ended tasks, handed on to tasks that start (outside a git workspace).
    spares: super::spare::Spares,
    /// The model gateway, when the workflow turns it on (opened as driving starts).
    calls: Option<model_calls::ModelCalls>,
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine")
            .field("run", &self.session.run())
            .field("seq", &self.session.state().seq)
            .finish()
    }
}

impl Engine {
    /// A runner for `run`, whose state is `state` (the head). See [`crate::Launcher`].
    pub(crate) fn new(
        log: Arc<dyn EventLog>,
        run: &str,
        state: RunState,
        ctx: Context,
        opts: RunOptions,
    ) -> Self {
        let histories = super::history::Histories::new(ctx.runner.history_cap);
        let (clock, kill_point) = (ctx.host.clock(), ctx.host.kill_point());
        Self {
            session: Session::at(Replay::shared(log.clone()), run, state),
            log,
            ctx,
            clock,
            observer: Box::new(Unobserved),
            jobs_override: opts.jobs(),
            procs: Processes::new(),
            frontier: Frontier::new(),
            stop: None,
            resuming: false,
            notes: Vec::new(),
            histories,
            crew: None,
            planned: Vec::new(),
            kill_point,
            spares: super::spare::Spares::default(),
            calls: None,
        }
    }

    /// Works the run as one worker among many (see [`super::crew`]).
    pub fn as_worker(&mut self, crew: Crew) {
        self.crew = Some(crew);
    }

    /// Shows the engine's work to `observer` (nothing is shown by default).
    pub fn observed_by(mut self, observer: impl Observer + 'static) -> Self {
        self.observer = Box::new(observer);
        self
    }

    /// Stops the run when `stop` turns true: running commands are stopped gently and the
    /// interrupt is recorded (a worker that does not own the run leaves it to the others).
    pub fn stop_when(mut self, stop: watch::Receiver<bool>) -> Self {
        self.stop = Some(stop);
        self
    }

    /// Says `note` to the observer when driving starts.
    pub(crate) fn note_at_start(&mut self, note: String) {
        self.notes.push(note);
    }

    /// Records a command the launcher prepared (opening the workspace).
    pub(crate) fn record_now(&mut self, kind: CommandKind) -> Result<()> {
        self.execute(kind).map(|_| ())
    }

    /// The run.
    pub fn run_id(&self) -> &str {
        self.run()
    }

    /// Processes at once: `--jobs`, else the run's setting (read from the state, which only
    /// has the workflow's settings once the run started).
    fn jobs(&self) -> usize {
        // Both are checked to be at least 1 (`validate_settings`); max(1) keeps a run going
        // should an old log hold 0.
        self.jobs_override
            .unwrap_or(self.state().settings.jobs)
            .max(1) as usize
    }

    /// The run's state as this engine knows it (the head).
    pub fn state(&self) -> &RunState {
        self.session.state()
    }

    fn run(&self) -> &str {
        self.session.run()
    }

    /// Decides and records a command through the session; the observer sees each event.
    fn try_execute(
        &mut self,
        kind: CommandKind,
    ) -> Result<std::result::Result<Vec<(u64, Event)>, Rejection>> {
        let cmd = Command::new(self.clock.now(), kind);
        self.try_record(cmd)
    }

    /// Decides and records a command as it is (with its principal, if it names one). In a
    /// step, it is staged: the frontier sees it now, everything else once it is appended.
    fn try_record(
        &mut self,
        cmd: Command,
    ) -> Result<std::result::Result<Vec<(u64, Event)>, Rejection>> {
        if self.session.is_batching() {
            let frontier = &mut self.frontier;
            let staged = self.session.stage(cmd, &mut |seq, e, state| {
                frontier.observe(seq, &e.kind, state)
            })?;
            return Ok(staged.map(|r| r.events));
        }
        let observer = &mut self.observer;
        let histories = &mut self.histories;
        let log = self.log.as_ref();
        let frontier = &mut self.frontier;
        let recorded = self.session.execute_observed(cmd, &mut |seq, e, state| {
            frontier.observe(seq, &e.kind, state);
            histories.observe(log, seq, e);
            observer.event(seq, e, state)
        })?;
        Ok(recorded.map(|r| r.events))
    }

    /// Ends a step: what it staged is appended as one append (its observers see it now), then
    /// the processes it planned start, each only if its task still stands where the step
    /// left it. `true` when others' events were taken in first (the state moved under the
    /// step's dispatch).
    fn commit(&mut self) -> Result<bool> {
        let mut took_in = false;
        if self.session.staged() > 0 {
            tracing::debug!(
                run = self.session.run(),
                staged = self.session.staged(),
                starts = self.planned.len(),
                "appending a step"
            );
            let observer = &mut self.observer;
            let histories = &mut self.histories;
            let log = self.log.as_ref();
            let hand_on = self.ctx.workspace.is_none();
            let mut ended = Vec::new();
            let commit = self.session.commit_observed(&mut |seq, e, state| {
                histories.observe(log, seq, e);
                if let Some(id) = e.kind.task().filter(|_| hand_on) {
                    if state.status_of(id).is_some_and(TaskStatus::is_terminal) {
                        ended.push(id.clone());
                    }
                }
                observer.event(seq, e, state)
            })?;
            for id in ended {
                self.spares.offer(self.ctx.layout.worktree(id.as_str()));
            }
            if commit.redecided() {
                tracing::debug!(
                    run = self.session.run(),
                    "the step's append lost a race: decided again on the new head"
                );
                // It saw events that were decided again: the tasks they name are found again,
                // and what those events moved is stopped.
                self.frontier
                    .retouch(self.session.state(), commit.moved_by.iter());
                self.stop_moved();
                took_in = true;
            }
            for (cmd, rejection) in commit.dropped {
                // Among workers, a start or claim that another worker's came before is the
                // usual race, not news.
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
            if !self.planned.is_empty() {
                self.kill_point.appended();
            }
        }
        for p in std::mem::take(&mut self.planned) {
            if self.phase(&p.id) == p.phase {
                self.spawn(&p.id, p.job, p.command, p.dir);
            }
        }
        Ok(took_in)
    }

    fn execute(&mut self, kind: CommandKind) -> Result<Vec<(u64, Event)>> {
        self.try_execute(kind)?
            .map_err(|r| RunnerError::Refused(Box::new(r)))
    }

    /// Starts a run of a workflow: the start-run command, then what the workflow records with
    /// it (the test commands found by convention).
    pub fn start(&mut self, commands: Vec<CommandKind>) -> Result<()> {
        for command in commands {
            self.execute(command)?;
        }
        Ok(())
    }

    /// Links this run to the task of another run it is the sub-project of.
    pub fn link_parent(&mut self, parent_run: RunId, task: TaskId) -> Result<()> {
        self.execute(CommandKind::LinkParentRun { parent_run, task })
            .map(|_| ())
    }

    /// Makes the run runnable again when driving starts: a resumed run (interrupted, crashed
    /// or paused), once the driver has enlisted the engine as it will work.
    pub fn resuming(&mut self) {
        self.resuming = true;
    }

    /// Makes an interrupted, crashed or paused run runnable again.
    async fn prepare_resume(&mut self) -> Result<()> {
        // Among workers a running run is the usual case; the attempts of lost ones are
        // abandoned as the engine goes.
        if self.state().status == RunStatus::Running && self.crew.is_none() {
            // Nothing recorded how the last runner stopped (kill -9, power loss): its agents
            // may still run, in groups of their own. Stop them before anything is retried in
            // their worktrees, then say so, which also abandons their attempts.
            let stopped = process::stop_leftover_groups(
                &self.ctx.layout.groups(),
                self.run(),
                self.ctx.runner.grace,
            )
            .await;
            self.execute(CommandKind::Interrupt {
                reason: "the runner stopped without recording it; resuming".into(),
            })?;
            for text in stopped {
                self.execute(CommandKind::PostMessage {
                    task: None,
                    from: "runlog".into(),
                    text,
                })?;
            }
        }
        if self.succeeded() || self.state().status == RunStatus::Running {
            return Ok(());
        }
        self.execute(CommandKind::Resume {
            reason: "runlog resume".into(),
        })
        .map(|_| ())
    }

    /// Whether the run already succeeded.
    pub fn succeeded(&self) -> bool {
        matches!(
            self.state().status,
            RunStatus::Finished(RunOutcome::Succeeded)
        )
    }

    /// Runs until every task is resolved or nothing more can happen; the stop switch
    /// interrupts. While it drives a run of a store directory, it holds the run's marker.
    pub async fn drive(mut self) -> Result<Ended> {
        let started = Instant::now();
        let mut stop = StopSwitch(self.stop.take());
        let _executing = self
            .ctx
            .shared
            .is_none()
            .then(|| super::marker::hold(&self.ctx.layout.marker()))
            .flatten();
        tracing::debug!(
            run = self.session.run(),
            seq = self.state().seq,
            resuming = self.resuming,
            worker = self.crew.as_ref().map(|c| c.me.as_str()),
            "driving"
        );
        for note in std::mem::take(&mut self.notes) {
            self.observer.note(&format!("note: {note}"));
        }
        if std::mem::take(&mut self.resuming) {
            self.prepare_resume().await?;
            if self.succeeded() {
                return Ok(self.into_ended(started, false));
            }
        }
        if self.state().status == RunStatus::Running {
            self.adopt_workspace()?;
        }
        self.open_gateway().await?;
        let mut foreign = Foreign::watch(self.log.as_ref(), self.run());
        let crew = self.crew.is_some();
        // Without a git workspace, a step's decisions are appended together (among workers
        // too: a start that lost its race is decided again, dropped, and its process never
        // started); in a git workspace each one follows a git operation it records.
        if self.ctx.workspace.is_none() {
            self.session.batching();
        }
        loop {
            if crew && self.state().status != RunStatus::Running {
                // Someone else finished or interrupted the run.
                self.stop_all().await;
                return Ok(self.into_ended(started, false));
            }
            let next_due = self.dispatch()?;
            if self.commit()? {
                // The append lost a race and took in others' events first: what they freed
                // (a dependency done elsewhere) is dispatched before this engine waits or ends.
                continue;
            }
            self.observer.step(self.session.state());
            // Usage recorded, a budget raised: the gateway refuses calls by the budgets now.
            self.refresh_budgets();
            if self.procs.busy.is_empty() && self.procs.replanning.is_none() {
                let others = self
                    .crew
                    .as_ref()
                    .is_some_and(|c| c.others_at_work(self.state()));
                match next_due {
                    Some(due) => {
                        tokio::select! {
                            _ = self.clock.sleep_until(due) => continue,
                            Some(seq) = foreign.appended.recv() => self.take_foreign(foreign.latest(seq))?,
                            () = stop.asked() => return self.interrupt(started).await,
                            _ = tokio::time::sleep(TICK), if crew => {}
                        }
                        continue;
                    }
                    // Other workers still hold tasks: their ends (or their loss) come in.
                    None if others => {
                        tokio::select! {
                            Some(seq) = foreign.appended.recv() => self.take_foreign(foreign.latest(seq))?,
                            () = stop.asked() => return self.interrupt(started).await,
                            _ = tokio::time::sleep(TICK) => {}
                        }
                        continue;
                    }
                    // Tasks done while this step merged others (taken in with a race it
                    // lost) are merged before the run can end.
                    None if !self.state().merges_due().is_empty() => continue,
                    None => return self.finish(started),
                }
            }
            tokio::select! {
                Some(done) = self.procs.rx.recv() => {
                    // Every process that ended by now is taken in by this step.
                    self.handle(done)?;
                    while let Ok(done) = self.procs.rx.try_recv() {
                        self.handle(done)?;
                    }
                }
                Some(passed) = Self::next_call(&mut self.calls) => {
                    self.record_call(passed)?;
                    self.take_calls()?;
                }
                Some(seq) = foreign.appended.recv() => self.take_foreign(foreign.latest(seq))?,
                () = stop.asked() => return self.interrupt(started).await,
                _ = self.clock.sleep_until(next_due.unwrap_or_default()), if next_due.is_some() => {}
                _ = tokio::time::sleep(TICK), if crew => {}
            }
        }
    }
}
