//! The engine: one loop owns a run's session (its head state and the one write path); every
//! transition goes through `decide` and is appended (durably) before the engine acts on it.
//! What to start comes from the pure dispatch policy in `runlog-core`; agents, tests,
//! evaluators and the replan command run as processes on tokio tasks and report back over a
//! channel.

mod alerts;
mod call_bodies;
mod git_workspace;
mod model_calls;
mod recorder;
mod running;
mod starting;
mod stopping;
mod taking_in;

use crate::crew::{Crew, TICK};
use crate::error::RunnerError;
use crate::layout::Layout;
use crate::observer::Observer;
use crate::process;
use crate::workflow::RunnerSettings;
use model_calls::FromGateway;
use recorder::{required, Recorder};
use runlog_core::{CommandKind, Event, RunId, RunOutcome, RunState, RunStatus, TaskId};
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
    /// Where the commands run: processes of this host ([`process::Os`]) unless the program
    /// embedding the engine says otherwise ([`crate::Launcher::with_commands`]).
    pub commands: Arc<dyn process::Commands>,
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
    /// The run's head and the one way to record (see [`recorder`]).
    rec: Recorder,
    ctx: Context,
    jobs_override: Option<u32>,
    /// The processes it started and the channel they report back on.
    procs: Processes,
    /// Turns true when the driver wants the run stopped (a signal, the API).
    stop: Option<watch::Receiver<bool>>,
    /// The run is resumed: it is made runnable again when driving starts.
    resuming: bool,
    /// What a person should hear when driving starts (how the run's tasks work).
    notes: Vec<String>,
    /// Working the run as one worker among many (the shared store); `None` alone.
    crew: Option<Crew>,
    /// Worktrees of ended tasks, handed on to tasks that start (outside a git workspace).
    spares: super::spare::Spares,
    /// The model gateway, when the workflow turns it on (opened as driving starts).
    calls: Option<model_calls::ModelCalls>,
    /// What the program driving the run gives every command besides, held while the engine
    /// lives (see [`Engine::with_access`]).
    access: Vec<Access>,
    /// Where the run's alerts go, when the workflow names receivers (opened as driving starts).
    alerts: Option<alerts::Alerts>,
}

/// What the program driving a run gives its commands: variables, which of them are secrets, and
/// what must live while the run is driven (a token that stops working once it is dropped).
pub struct Access {
    /// The variables.
    pub vars: Vec<(String, String)>,
    /// The names of those whose values are secrets.
    pub secret: Vec<String>,
    /// Dropped with the engine.
    pub held: Box<dyn std::any::Any + Send>,
}

impl std::fmt::Debug for Access {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = self.vars.iter().map(|(n, _)| n.as_str()).collect();
        f.debug_struct("Access").field("vars", &names).finish()
    }
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine")
            .field("run", &self.rec.run())
            .field("seq", &self.rec.state().seq)
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
        let (clock, kill_point) = (ctx.host.clock(), ctx.host.kill_point());
        let hand_on = ctx.workspace.is_none();
        let rec = Recorder::new(
            log,
            run,
            state,
            clock,
            ctx.runner.history_cap,
            kill_point,
            hand_on,
        );
        Self {
            rec,
            procs: Processes::new(ctx.commands.clone()),
            ctx,
            jobs_override: opts.jobs(),
            stop: None,
            resuming: false,
            notes: Vec::new(),
            crew: None,
            spares: super::spare::Spares::default(),
            calls: None,
            access: Vec::new(),
            alerts: None,
        }
    }

    /// Works the run as one worker among many (see [`super::crew`]).
    pub fn as_worker(&mut self, crew: Crew) {
        self.crew = Some(crew);
    }

    /// Shows the engine's work to `observer` (nothing is shown by default).
    pub fn observed_by(mut self, observer: impl Observer + 'static) -> Self {
        self.rec.observed_by(Box::new(observer));
        self
    }

    /// Every command the run starts also gets `access`'s variables (how to reach the program
    /// driving it, say), its secrets replaced like the environment's in everything the run's
    /// commands leave; what `access` holds lives as long as the engine.
    pub fn with_access(mut self, access: Access) -> Self {
        for (name, value) in &access.vars {
            if access.secret.contains(name) {
                self.ctx.redactor = Arc::new(self.ctx.redactor.with(name, value));
            }
        }
        self.access.push(access);
        self
    }

    /// The variables every command the run starts is given besides its own.
    pub(super) fn extra_env(&self) -> impl Iterator<Item = (String, String)> + '_ {
        self.access.iter().flat_map(|a| a.vars.iter().cloned())
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

    /// Records `kind`, which the rules must accept (a refusal is an error): what the launcher
    /// prepared (opening the workspace), and the engine's own decisions that cannot be refused.
    pub(crate) fn record(&mut self, kind: CommandKind) -> Result<Vec<(u64, Event)>> {
        required(self.rec.record(kind)?)
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
        self.rec.state()
    }

    fn run(&self) -> &str {
        self.rec.run()
    }

    /// Ends a step: what it staged is appended as one append, then the processes it planned
    /// start, each only if its task still stands where the step left it. `true` when others'
    /// events were taken in first (the state moved under the step's dispatch).
    fn commit(&mut self) -> Result<bool> {
        let appended = self.rec.commit()?;
        self.appended(appended)
    }

    /// What follows a step's append: the ended tasks' worktrees handed on, the processes whose
    /// task moved stopped, the planned ones started.
    fn appended(&mut self, appended: recorder::Appended) -> Result<bool> {
        for id in appended.ended {
            self.spares.offer(self.ctx.layout.worktree(id.as_str()));
        }
        if appended.redecided {
            self.stop_moved();
        }
        for p in appended.planned {
            if self.phase(&p.id) == p.phase {
                self.spawn(&p.id, p.job, p.command, p.dir);
            }
        }
        Ok(appended.redecided)
    }

    /// Starts a run of a workflow: the start-run command, then what the workflow records with
    /// it (the test commands found by convention).
    pub fn start(&mut self, commands: Vec<CommandKind>) -> Result<()> {
        for command in commands {
            self.record(command)?;
        }
        Ok(())
    }

    /// Links this run to the task of another run it is the sub-project of.
    pub fn link_parent(&mut self, parent_run: RunId, task: TaskId) -> Result<()> {
        self.record(CommandKind::LinkParentRun { parent_run, task })
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
            // Its calls in flight are recorded as cut off: what they held is let go, and
            // `cost` shows them.
            for r in self.state().in_flight.clone() {
                self.record(CommandKind::RecordModelCall {
                    call: Box::new(r.interrupted()),
                })?;
            }
            self.record(CommandKind::Interrupt {
                reason: "the runner stopped without recording it; resuming".into(),
            })?;
            for text in stopped {
                self.record(CommandKind::PostMessage {
                    task: None,
                    from: "runlog".into(),
                    text,
                })?;
            }
        }
        if self.succeeded() || self.state().status == RunStatus::Running {
            return Ok(());
        }
        self.record(CommandKind::Resume {
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
            run = self.rec.run(),
            seq = self.state().seq,
            resuming = self.resuming,
            worker = self.crew.as_ref().map(|c| c.me.as_str()),
            "driving"
        );
        for note in std::mem::take(&mut self.notes) {
            self.rec.observer().note(&format!("note: {note}"));
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
        self.open_alerts();
        let mut foreign = Foreign::watch(self.rec.log().as_ref(), self.run());
        let crew = self.crew.is_some();
        // Without a git workspace, a step's decisions are appended together (among workers
        // too: a start that lost its race is decided again, dropped, and its process never
        // started); in a git workspace each one follows a git operation it records.
        if self.ctx.workspace.is_none() {
            self.rec.in_steps();
        }
        loop {
            if crew && self.state().status != RunStatus::Running {
                // Someone else finished or interrupted the run.
                self.stop_all().await;
                return Ok(self.into_ended(started, false));
            }
            let next_due = self.dispatch()?;
            let raced = self.commit()?;
            self.send_alerts();
            if raced {
                // The append lost a race and took in others' events first: what they freed
                // (a dependency done elsewhere) is dispatched before this engine waits or ends.
                continue;
            }
            self.rec.show_step();
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
                            _ = self.rec.clock().sleep_until(due) => continue,
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
                    None => return self.finish(started).await,
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
                Some(from) = Self::next_from_gateway(&mut self.calls) => match from {
                    FromGateway::Call(passed) => self.take_calls(Some(*passed))?,
                    FromGateway::Reserve(asked) => self.judge(asked)?,
                    FromGateway::Asked(asked) => self.store_requests(Some(asked)),
                },
                Some(seq) = foreign.appended.recv() => self.take_foreign(foreign.latest(seq))?,
                Some(sent) = Self::next_alert(&mut self.alerts) => self.record_alert(sent)?,
                () = stop.asked() => return self.interrupt(started).await,
                _ = self.rec.clock().sleep_until(next_due.unwrap_or_default()), if next_due.is_some() => {}
                _ = tokio::time::sleep(TICK), if crew => {}
            }
        }
    }
}
