//! The engine: one loop owns a run's session (its head state and the one write path); every
//! transition goes through `decide` and is appended (durably) before the engine acts on it.
//! What to start comes from the pure dispatch policy in `runlog-core`; agents, tests,
//! evaluators and the replan command run as processes on tokio tasks and report back over a
//! channel.

use super::clock::Clock;
use super::crew::{Crew, TICK};
use super::error::RunnerError;
use super::layout::Layout;
use super::observer::{Observer, Unobserved};
use super::process::{self, Outcome, Spec};
use super::protocol;
use super::step::{KillPoint, Phase, Planned};
use super::sub_project;
use super::workflow::RunnerSettings;
use runlog_core::dispatch::{Capacity, Frontier, Job};
use runlog_core::projections::Board;
use runlog_core::redact::{redactions, Counts};
use runlog_core::usage::{self, UsageStage};
use runlog_core::{
    Command, CommandKind, Event, Hash, Rejection, RunId, RunOutcome, RunState, RunStatus, TaskId,
    TaskStatus,
};
use runlog_replay::{Replay, Session};
use runlog_store::EventLog;
use std::collections::HashMap;
use std::future::Future;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;

/// Shorthand.
pub type Result<T> = std::result::Result<T, RunnerError>;

/// Output longer than this goes to the blob area; the event keeps its beginning.
const INLINE_OUTPUT: usize = 4_096;

/// The most of a failed test's output that goes into its feedback (head and tail, whole lines).
const TEST_FEEDBACK: usize = 8_000;

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
}

/// The command line of a task's job and the message its end sends back.
fn command_of(job: Job, spec: &runlog_core::TaskSpec) -> Option<&str> {
    match job {
        Job::Attempt => spec.run.as_deref(),
        Job::Tests => spec.test.as_deref(),
        Job::Eval => spec.eval.as_deref(),
    }
}

fn done_of(job: Job, task: TaskId, out: Outcome) -> Done {
    match job {
        Job::Attempt => Done::Agent(task, out),
        Job::Tests => Done::Tests(task, out),
        Job::Eval => Done::Eval(task, out),
    }
}

/// A process the engine started: its task and the switch that stops it gently.
struct Running {
    handle: JoinHandle<()>,
    stop: watch::Sender<bool>,
    /// Where its task stood when it started: a decision made elsewhere that moves the task
    /// (a rollback undoing the attempt, a cancel, an approval) makes its result moot.
    phase: Option<Phase>,
    /// Which of the engine's files for running commands (feedback, history) it was given.
    slot: usize,
}

impl Running {
    fn start<F>(job: impl FnOnce(watch::Receiver<bool>) -> F) -> Self
    where
        F: Future<Output = ()> + Send + 'static,
    {
        let (stop, stopped) = watch::channel(false);
        Self {
            handle: tokio::spawn(job(stopped)),
            stop,
            phase: None,
            slot: 0,
        }
    }

    fn stop(&self) {
        // The job may have ended already; then there is nothing to stop.
        let _ = self.stop.send(true);
    }
}

/// The seqs appended to the engine's run by anyone (its own appends included), from a thread
/// that blocks on the store's subscription so the engine's loop does not.
struct Foreign {
    appended: mpsc::UnboundedReceiver<u64>,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

impl Foreign {
    fn watch(log: &dyn EventLog, run: &str) -> Self {
        use std::sync::atomic::Ordering;
        let records = log.subscribe(Some(run));
        let (tx, appended) = mpsc::unbounded_channel();
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let stopped = stop.clone();
        let _ = std::thread::Builder::new()
            .name("runlog-engine-watch".into())
            .spawn(move || {
                while !stopped.load(Ordering::Acquire) {
                    match records.recv_timeout(Duration::from_millis(100)) {
                        Ok(r) if tx.send(r.seq).is_err() => return,
                        Ok(_) | Err(crossbeam_channel::RecvTimeoutError::Timeout) => {}
                        Err(crossbeam_channel::RecvTimeoutError::Disconnected) => return,
                    }
                }
            });
        Self { appended, stop }
    }
}

impl Foreign {
    /// The last seq announced so far, `first` included: a burst of appends (other workers')
    /// is taken in with one catch-up and one dispatch, not one per event.
    fn latest(&mut self, first: u64) -> u64 {
        let mut last = first;
        while let Ok(seq) = self.appended.try_recv() {
            last = last.max(seq);
        }
        last
    }
}

impl Drop for Foreign {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Release);
    }
}

/// The replan command while it runs: the seq of the board it was given and the task whose
/// request it answers (its output is recorded under that task).
struct Replanning {
    running: Running,
    seen: u64,
    after: TaskId,
}

#[derive(Debug)]
enum Done {
    Agent(TaskId, Outcome),
    Tests(TaskId, Outcome),
    Eval(TaskId, Outcome),
    Replan(Outcome),
}

/// The driver's stop switch: `asked` ends once it turns true; never without one, or once its
/// sender is gone (a driver that can no longer ask).
struct StopSwitch(Option<watch::Receiver<bool>>);

impl StopSwitch {
    async fn asked(&mut self) {
        let asked = match self.0.as_mut() {
            Some(stop) => stop.wait_for(|yes| *yes).await.is_ok(),
            None => false,
        };
        if !asked {
            std::future::pending::<()>().await;
        }
    }
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
    busy: HashMap<TaskId, Running>,
    replanning: Option<Replanning>,
    replan_gave_up: bool,
    /// The tasks the dispatch looks at, kept up to date with every event the session folds.
    frontier: Frontier,
    tx: mpsc::UnboundedSender<Done>,
    rx: mpsc::UnboundedReceiver<Done>,
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
        let (tx, rx) = mpsc::unbounded_channel();
        let histories = super::history::Histories::new(ctx.runner.history_cap);
        Self {
            session: Session::at(Replay::shared(log.clone()), run, state),
            log,
            ctx,
            clock: Clock::from_env(),
            observer: Box::new(Unobserved),
            jobs_override: opts.jobs(),
            busy: HashMap::new(),
            replanning: None,
            replan_gave_up: false,
            frontier: Frontier::new(),
            tx,
            rx,
            stop: None,
            resuming: false,
            notes: Vec::new(),
            histories,
            crew: None,
            planned: Vec::new(),
            kill_point: KillPoint::from_env(),
            spares: super::spare::Spares::default(),
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

    /// Adds the tasks a planning agent printed (`{"add_tasks": [...]}`) to the plan, in its own
    /// group unless a task names another parent: one plan revision through `decide`, recorded
    /// with the agent as its author. `Err` says why the rules or the task files refused them.
    fn decompose(
        &mut self,
        planner: &TaskId,
        agent: &str,
        tasks: Vec<serde_json::Value>,
    ) -> Result<std::result::Result<(), String>> {
        use super::workflow::TaskFile;
        let group = self
            .state()
            .task(planner)
            .and_then(|t| t.spec.parent.clone());
        let mut files = Vec::new();
        for (i, task) in tasks.into_iter().enumerate() {
            match serde_json::from_value::<TaskFile>(task) {
                Ok(file) => files.push(file),
                Err(e) => return Ok(Err(format!("add_tasks item {}: {e}", i + 1))),
            }
        }
        let mut add = match super::workflow::added_specs(&files) {
            Ok(add) => add,
            Err(why) => return Ok(Err(why)),
        };
        for spec in add.iter_mut().filter(|s| s.parent.is_none()) {
            spec.parent = group.clone();
        }
        let revision = CommandKind::RevisePlan {
            cancel: Vec::new(),
            add,
            replaces: Vec::new(),
            reason: format!("sub-tasks added at run time by {agent}, the agent of {planner}"),
            // Answers no replan request: any still pending stays pending.
            answers: Some(0),
        };
        let cmd = Command::new(self.clock.now(), revision).issued_by(runlog_core::Principal {
            name: agent.to_owned(),
            via: "agent-output".into(),
        });
        Ok(self
            .try_record(cmd)?
            .map(|_| ())
            .map_err(|r| format!("{r} ({})", r.hint())))
    }

    /// Ends a step: what it staged is appended as one append (its observers see it now), then
    /// the processes it planned start, each only if its task still stands where the step
    /// left it. `true` when others' events were taken in first (the state moved under the
    /// step's dispatch).
    fn commit(&mut self) -> Result<bool> {
        let mut took_in = false;
        if self.session.staged() > 0 {
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
                // It saw events that were decided again: it finds the tasks again, and stops
                // what those events moved.
                self.frontier = Frontier::new();
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
            if self.busy.is_empty() && self.replanning.is_none() {
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
                    None => return self.finish(started),
                }
            }
            tokio::select! {
                Some(done) = self.rx.recv() => {
                    // Every process that ended by now is taken in by this step.
                    self.handle(done)?;
                    while let Ok(done) = self.rx.try_recv() {
                        self.handle(done)?;
                    }
                }
                Some(seq) = foreign.appended.recv() => self.take_foreign(foreign.latest(seq))?,
                () = stop.asked() => return self.interrupt(started).await,
                _ = self.clock.sleep_until(next_due.unwrap_or_default()), if next_due.is_some() => {}
                _ = tokio::time::sleep(TICK), if crew => {}
            }
        }
    }

    /// Starts what the dispatch policy proposes; returns when the next retry comes due.
    fn dispatch(&mut self) -> Result<Option<runlog_core::Timestamp>> {
        self.abandon_lost()?;
        self.merge_due()?;
        let busy = &self.busy;
        let (crew, state) = (self.crew.as_ref(), self.session.state());
        let running = crew.map_or(busy.len(), Crew::running);
        let cap = Capacity {
            busy: &|id| busy.contains_key(id) || crew.is_some_and(|c| c.held_elsewhere(state, id)),
            free: self.jobs().saturating_sub(running),
            replanning: self.replanning.is_some(),
            replan_stopped: self.replan_gave_up,
        };
        let plan = self.frontier.dispatch(state, self.clock.peek(), &cap);
        if !plan.over_budget.is_empty() {
            for task in plan.over_budget {
                // Another worker may have stopped it first: then there is nothing to do.
                if let Err(r) = self.try_execute(CommandKind::StopForBudget { task })? {
                    self.observer.note(&format!("note: {r}"));
                }
            }
            // Each round fails at least one task, so this ends.
            return self.dispatch();
        }
        self.stop_moved();
        if plan.replan {
            match self.ctx.runner.replan.clone() {
                Some(cmd) => {
                    // The replanner reads the board: what it is shown is appended first.
                    self.commit()?;
                    self.spawn_replan(cmd)?
                }
                None => {
                    self.replan_gave_up = true;
                    self.observer.note("⏸ a replan was requested and the workflow has no `replan` command: pausing");
                }
            }
        }
        for (id, job) in plan.starts {
            let mut command = None;
            if !self.claim(&id, job)? {
                continue;
            }
            if job == Job::Attempt {
                command = self.child_command(&id)?;
            }
            let dir = match command {
                Some(_) => None,
                None => self.workspace_dir(&id, job)?,
            };
            if self.session.is_batching() {
                let phase = self.phase(&id);
                self.planned.push(Planned {
                    id,
                    job,
                    command,
                    dir,
                    phase,
                });
            } else {
                self.spawn(&id, job, command, dir);
            }
        }
        Ok(plan.next_due)
    }

    /// Where a task's command runs in a git workspace: its worktree, made ready for an
    /// attempt; `None` without a workspace (the workflow's directory).
    fn workspace_dir(&mut self, id: &TaskId, job: Job) -> Result<Option<PathBuf>> {
        let Some(ws) = &self.ctx.workspace else {
            return Ok(None);
        };
        let state = self.session.state();
        let dir = match job {
            Job::Attempt => ws.prepare(state, id)?,
            // Tests and the evaluator judge the worktree the attempt left.
            _ => {
                let dir = ws.dir_of(state, id);
                if dir.exists() {
                    dir
                } else {
                    ws.prepare(state, id)?
                }
            }
        };
        Ok(Some(dir))
    }

    /// Records what the task's attempt changed in its worktree (a git workspace only).
    fn record_changes(&mut self, id: &TaskId) -> Result<()> {
        let Some(ws) = self.ctx.workspace.clone() else {
            return Ok(());
        };
        if self
            .state()
            .task(id)
            .is_some_and(|t| t.sub_project.is_some())
        {
            return Ok(());
        }
        let mut counts = Counts::new();
        let redactor = self.ctx.runner.redactor.clone();
        let recorded = ws.record(self.session.state(), id, self.log.as_ref(), |patch| {
            redactor.redact_in_place(patch, &mut counts)
        })?;
        if let Some(command) = recorded {
            self.record_redaction(Some(id), counts)?;
            self.execute(command)?;
        }
        Ok(())
    }

    /// Merges every done task not merged yet into the integration branch (a git workspace).
    fn merge_due(&mut self) -> Result<()> {
        let Some(ws) = self.ctx.workspace.clone() else {
            return Ok(());
        };
        for task in self.state().merges_due() {
            if let Some(command) = ws.merge(self.session.state(), &task)? {
                self.execute(command)?;
            }
            if self
                .state()
                .task(&task)
                .is_some_and(|t| t.code.merged.is_some())
            {
                // Its work is on the integration branch: its worktree is not needed.
                if let Err(e) = ws.retire(self.session.state(), &task) {
                    self.observer
                        .note(&format!("note: task {task}'s worktree stays: {e}"));
                }
            }
        }
        Ok(())
    }

    /// On taking a run on: its integration branch exists (a fork gets one of its own, from
    /// the commit at its seq).
    fn adopt_workspace(&mut self) -> Result<()> {
        let Some(ws) = self.ctx.workspace.clone() else {
            return Ok(());
        };
        if let Some(open) = ws.adopt(self.session.state())? {
            self.execute(open)?;
        }
        Ok(())
    }

    /// Puts the git branches where the run's state says after a rollback recorded at `seq`.
    fn follow_workspace(&mut self, seq: u64) -> Result<()> {
        if let Some(ws) = &self.ctx.workspace {
            ws.follow_rollback(self.session.state(), seq)?;
        }
        Ok(())
    }

    /// Takes the task on for `job`: an attempt starts here (among workers, claiming the task in
    /// the same append); tests or an eval go on here, after claiming the task from a lost
    /// worker. `false` when another worker won the race for it: nothing was recorded.
    fn claim(&mut self, id: &TaskId, job: Job) -> Result<bool> {
        let Some(crew) = self.crew.clone() else {
            if job == Job::Attempt {
                self.execute(CommandKind::StartTask {
                    task: id.clone(),
                    agent: None,
                    worktree: None,
                })?;
            }
            return Ok(true);
        };
        let fresh_worktree = crew.fresh(&self.ctx.layout, self.state(), id);
        let (task, worker) = (id.clone(), crew.me.clone());
        let command = match job {
            Job::Attempt => CommandKind::StartTaskAs {
                task,
                worker,
                fresh_worktree,
            },
            _ if self.state().task(id).and_then(|t| t.held_by()) == Some(crew.me.as_str()) => {
                return Ok(true)
            }
            _ => CommandKind::ClaimTask {
                task,
                worker,
                fresh_worktree,
            },
        };
        Ok(self.try_execute(command)?.is_ok())
    }

    /// Among workers: abandons the attempts of workers that were lost, so that the tasks are
    /// taken on (here or elsewhere).
    fn abandon_lost(&mut self) -> Result<()> {
        let Some(crew) = self.crew.clone().filter(Crew::time_to_look) else {
            return Ok(());
        };
        let busy = &self.busy;
        for (task, worker) in crew.lost(self.session.state(), &|id| busy.contains_key(id)) {
            let reason = if worker == crew.me {
                "a process of this worker's name stopped without finishing it".to_owned()
            } else {
                format!("worker {worker}'s lease expired")
            };
            // Refused when another worker abandoned it first: nothing to do.
            let _ = self.try_execute(CommandKind::AbandonAttempt {
                task,
                worker,
                reason,
            })?;
        }
        Ok(())
    }

    /// The environment every command of a task sees; `slot` is the command's among those
    /// running (see [`Layout::feedback`]).
    fn env_for(&mut self, id: &TaskId, slot: usize) -> Vec<(String, String)> {
        let Some(t) = self.session.state().task(id) else {
            return Vec::new();
        };
        let layout = &self.ctx.layout;
        let worktree = layout.worktree(t.worktree.as_deref().unwrap_or(id.as_str()));
        self.spares.make(&worktree);
        // Always there, empty when there is nothing to say.
        let feedback = layout.feedback(slot);
        let _ = crate::layout::rewrite(
            &feedback,
            t.feedback.as_deref().unwrap_or_default().as_bytes(),
        );
        let history = layout.history(slot);
        // Like the feedback file: always there, empty before the task has a story.
        let _ = self.histories.write(&history, id);
        let usage = layout.usage(Some(id));
        crate::layout::empty_if_present(&usage);
        vec![
            ("RUNLOG_RUN".into(), self.run().to_owned()),
            ("RUNLOG_TASK".into(), id.0.clone()),
            ("RUNLOG_ATTEMPT".into(), t.attempt.to_string()),
            ("RUNLOG_RESCUE".into(), t.rescues.to_string()),
            ("RUNLOG_WORKTREE".into(), worktree.display().to_string()),
            ("RUNLOG_FEEDBACK".into(), feedback.display().to_string()),
            ("RUNLOG_STAGE".into(), t.spec.stage_id().0),
            ("RUNLOG_HISTORY".into(), history.display().to_string()),
            ("RUNLOG_USAGE".into(), usage.display().to_string()),
        ]
    }

    /// A sub-project task's command for this attempt: run its child, or resume the one it
    /// has; a fork of the parent first gets a child of its own. `None` for other tasks.
    fn child_command(&mut self, id: &TaskId) -> Result<Option<String>> {
        let Some(sp) = self.state().task(id).and_then(|t| t.sub_project.clone()) else {
            return Ok(None);
        };
        let log = self.log.as_ref();
        let run = self.run().to_owned();
        let exists = |c: &str| {
            log.head(c)
                .map(|h| h.is_some())
                .map_err(runlog_replay::ReplayError::from)
        };
        let (child, start) = match sp.child {
            Some(c) if !exists(c.as_str())? => (c.0, true),
            Some(c) if sub_project::is_child_of(log, c.as_str(), &run, id)? => (c.0, false),
            Some(inherited) => {
                let own = sub_project::new_child_id(log, &run, id)?;
                sub_project::fork_child(log, inherited.as_str(), &own, &run, id, self.clock.now())?;
                self.note(
                    id,
                    format!("child run {inherited} belongs to the run this one was forked from; this run's own, {own}, is forked from it at its head"),
                )?;
                (own, false)
            }
            None => (sub_project::new_child_id(log, &run, id)?, true),
        };
        self.execute(CommandKind::LinkChildRun {
            task: id.clone(),
            child_run: RunId::from(child.as_str()),
        })?;
        let workflow = self.ctx.dir.join(&sp.workflow);
        let start = start.then_some((workflow.as_path(), run.as_str(), id));
        let store = self.ctx.shared.is_none().then_some(self.ctx.layout.store());
        sub_project::child_command(store, &child, start).map(Some)
    }

    /// A sub-project task's child finished: its log says how, recorded, with the child. Succeeded:
    /// the task is submitted like any agent's. Failed: the task waits. Not finished (`None`):
    /// the command's own failure counts.
    fn child_ended(&mut self, id: &TaskId) -> Result<Option<(RunId, bool)>> {
        let Some(child) = self.state().child_run_of(id).cloned() else {
            return Ok(None);
        };
        let (succeeded, failures) = match sub_project::child_end(self.log.as_ref(), child.as_str())?
        {
            None => return Ok(None),
            Some(sub_project::ChildEnd::Succeeded) => (true, String::new()),
            Some(sub_project::ChildEnd::Failed(failures)) => (false, failures),
        };
        self.execute(CommandKind::EndChildRun {
            task: id.clone(),
            child_run: child.clone(),
            succeeded,
            failures,
        })?;
        Ok(Some((child, succeeded)))
    }

    /// Starts one of a task's commands (`command` instead of the spec's, for a sub-project);
    /// its outcome comes back as a `Done`.
    fn spawn(&mut self, id: &TaskId, job: Job, command: Option<String>, dir: Option<PathBuf>) {
        // The stories start with what was recorded before this engine (a resumed run).
        let seen_from = self.session.state().seq;
        self.histories
            .load(self.log.as_ref(), self.session.run(), seen_from);
        let Some(task) = self.state().task(id) else {
            return;
        };
        let child_run = command.is_some();
        let cmd =
            command.unwrap_or_else(|| command_of(job, &task.spec).unwrap_or("true").to_owned());
        let dir = dir.unwrap_or_else(|| self.ctx.dir.clone());
        let timeout_ms = self.state().strategy_for(task).timeout_ms;
        // The lowest slot no running command holds: at most `jobs` of each file, rewritten.
        let slot = (0..)
            .find(|i| self.busy.values().all(|r| r.slot != *i))
            .unwrap_or_default();
        let mut env = self.env_for(id, slot);
        if let (Some(url), true) = (&self.ctx.shared, child_run) {
            // A sub-project's child run: the same shared store, and this host's files for it.
            env.push(("RUNLOG_STORE".into(), url.clone()));
            let local = self.ctx.layout.store();
            env.push(("RUNLOG_LOCAL_DIR".into(), local.display().to_string()));
        }
        let grace = self.ctx.runner.grace;
        let output_cap = self.ctx.runner.output_cap;
        let groups = self.ctx.layout.groups();
        let tx = self.tx.clone();
        let task = id.clone();
        let running = Running::start(move |stop| async move {
            let spec = Spec {
                cmd: &cmd,
                dir: &dir,
                env: &env,
                stdin: None,
                timeout_ms,
                grace,
                groups: Some(&groups),
                output_cap,
            };
            let out = process::run(spec, stop).await;
            let _ = tx.send(done_of(job, task, out));
        });
        let running = Running {
            phase: self.phase(id),
            slot,
            ..running
        };
        if let Some(crew) = &self.crew {
            crew.started_one();
        }
        self.busy.insert(id.clone(), running);
    }

    fn spawn_replan(&mut self, cmd: String) -> Result<()> {
        let Some(after) = self.state().replan.as_ref().map(|r| r.after_task.clone()) else {
            return Ok(());
        };
        let board = serde_json::to_string(&Board::of(self.state())).map_err(RunnerError::Board)?;
        let usage = self.ctx.layout.usage(None);
        crate::layout::empty_if_present(&usage);
        let env = vec![
            ("RUNLOG_RUN".to_owned(), self.run().to_owned()),
            ("RUNLOG_USAGE".to_owned(), usage.display().to_string()),
        ];
        let dir = self.ctx.dir.clone();
        let runner = self.ctx.runner.clone();
        let groups = self.ctx.layout.groups();
        let tx = self.tx.clone();
        self.observer.note("↺ running the replan command");
        let running = Running::start(move |stop| async move {
            let spec = Spec {
                cmd: &cmd,
                dir: &dir,
                env: &env,
                stdin: Some(board),
                timeout_ms: Some(
                    u64::try_from(runner.replan_timeout.as_millis()).unwrap_or(u64::MAX),
                ),
                grace: runner.grace,
                groups: Some(&groups),
                output_cap: runner.output_cap,
            };
            let out = process::run(spec, stop).await;
            let _ = tx.send(Done::Replan(out));
        });
        self.replanning = Some(Replanning {
            running,
            seen: self.state().seq,
            after,
        });
        Ok(())
    }

    fn phase(&self, id: &TaskId) -> Option<Phase> {
        let task = self.state().task(id)?;
        Some((
            self.state().status_of(id)?,
            task.attempt,
            task.running,
            task.held_by().map(str::to_owned),
        ))
    }

    /// Stops the processes whose task moved since they started: a plan revision cancelled it,
    /// or someone else's decision (a rollback undoing the attempt) did. Each reports back as
    /// stopped and its end is recorded.
    fn stop_moved(&self) {
        for (id, running) in &self.busy {
            if running.phase.is_some() && running.phase != self.phase(id) {
                running.stop();
            }
        }
    }

    /// Takes in what others appended to the run (`runlog approve`, `rollback`, `emit` from
    /// another terminal or the API): the state catches up, the observer sees it, processes whose
    /// task it moved stop, and the next dispatch acts on it at once.
    fn take_foreign(&mut self, seq: u64) -> Result<()> {
        if seq <= self.state().seq {
            return Ok(());
        }
        let events = self.session.catch_up()?;
        let mut rolled_back = None;
        for (seq, e) in &events {
            self.frontier.observe(*seq, &e.kind, self.session.state());
            self.histories.observe(self.log.as_ref(), *seq, e);
            self.observer.event(*seq, e, self.session.state());
            if matches!(e.kind, runlog_core::EventKind::RolledBack { .. }) {
                rolled_back = Some(*seq);
            }
        }
        if let Some(seq) = rolled_back {
            self.follow_workspace(seq)?;
        }
        self.stop_moved();
        Ok(())
    }

    /// Records what a task's process printed and left behind. `false` when the task was
    /// cancelled meanwhile: its end is noted and nothing more is decided for it.
    fn ended(&mut self, id: &TaskId, what: &str, out: &Outcome) -> Result<bool> {
        let removed = self.busy.remove(id);
        if let (Some(crew), Some(_)) = (&self.crew, &removed) {
            crew.ended(1);
        }
        let started_for = removed.and_then(|r| r.phase);
        self.record_output(id, what, out)?;
        let stage = match what {
            "agent" => UsageStage::Agent,
            "test" => UsageStage::Tests,
            _ => UsageStage::Evaluator,
        };
        self.record_usage(id, stage, out)?;
        if let Some(text) = out.leftovers_text() {
            self.note(id, format!("the {what} command: {text}"))?;
        }
        let now = self.phase(id);
        if started_for.is_none() || started_for == now {
            return Ok(true);
        }
        let how = match out.failure {
            Some(process::Failure::Stopped) => "was stopped",
            _ => "ended",
        };
        let why = if now.is_some_and(|(status, ..)| status == TaskStatus::Cancelled) {
            "a plan revision cancelled the task"
        } else {
            "a decision recorded meanwhile (a rollback, an approval) moved the task on"
        };
        self.note(id, format!("its {what} command {how}: {why}"))?;
        Ok(false)
    }

    /// Keeps a command's output: inline when small, in the blob area when large.
    fn record_output(&mut self, id: &TaskId, what: &str, out: &Outcome) -> Result<()> {
        let streams = [("stdout", &out.stdout), ("stderr", &out.stderr)];
        for ((stream, text), left_out) in streams.into_iter().zip(out.left_out) {
            if left_out > 0 {
                self.note(
                    id,
                    format!(
                        "the {what} command's {stream} was larger than output_cap_bytes ({}): {left_out} bytes in the middle were left out, the first and last {} bytes are kept",
                        self.ctx.runner.output_cap,
                        self.ctx.runner.output_cap / 2
                    ),
                )?;
            }
            if text.trim().is_empty() {
                continue;
            }
            let (inline, blob) = if text.len() > INLINE_OUTPUT {
                let hash = self
                    .log
                    .put_blob(text.as_bytes())
                    .map_err(RunnerError::Output)?;
                let mut cut = INLINE_OUTPUT;
                while !text.is_char_boundary(cut) {
                    cut -= 1;
                }
                (text.get(..cut).unwrap_or("").to_owned(), Some(Hash(hash)))
            } else {
                (text.clone(), None)
            };
            self.execute(CommandKind::RecordOutput {
                task: id.clone(),
                stream: format!("{what}.{stream}"),
                text: inline,
                blob,
                bytes: text.len() as u64,
            })?;
        }
        Ok(())
    }

    /// Records what a command reported it used: the usage lines of its stdout and those it
    /// appended to its `RUNLOG_USAGE` file (a sub-project's child records its own). A line that
    /// is not usage as runlog reads it is noted with why; it never stops the run.
    fn record_usage(&mut self, id: &TaskId, stage: UsageStage, out: &Outcome) -> Result<()> {
        let file = self.usage_file(stage, id);
        // Made by the command's first append, left in place and emptied when the task's next
        // command starts: removed, it made ext4 (without a journal) search past one more
        // recently deleted inode for every file the next tasks made.
        let appended = read_capped(&file, self.ctx.runner.output_cap);
        if self.state().child_run_of(id).is_some() && stage == UsageStage::Agent {
            return Ok(());
        }
        let (mut reports, mut problems) = usage::reports_in(&out.stdout);
        let (more, more_problems) = usage::reports_in(&appended);
        reports.extend(more);
        problems.extend(
            more_problems
                .into_iter()
                .map(|p| format!("RUNLOG_USAGE: {p}")),
        );
        for problem in problems {
            self.note(id, format!("the {} command: {problem}", stage.name()))?;
        }
        if reports.is_empty() {
            return Ok(());
        }
        let record = CommandKind::RecordUsage {
            task: id.clone(),
            stage,
            reports,
        };
        match self.try_execute(record)? {
            Ok(_) => Ok(()),
            Err(r) => self.note(
                id,
                format!("the {} command's usage was not recorded: {r}", stage.name()),
            ),
        }
    }

    /// The file a command appends usage lines to (`RUNLOG_USAGE`): one per task (a task runs
    /// one command at a time) and one for the replanner.
    fn usage_file(&self, stage: UsageStage, id: &TaskId) -> PathBuf {
        match stage {
            UsageStage::Replanner => self.ctx.layout.usage(None),
            _ => self.ctx.layout.usage(Some(id)),
        }
    }

    /// A command's output with every secret replaced, and the replacement recorded (names and
    /// counts) before anything read from that output is: nothing after this sees the secret.
    fn redacted(&mut self, task: Option<&TaskId>, mut out: Outcome) -> Result<Outcome> {
        let mut counts = Counts::new();
        let redactor = self.ctx.runner.redactor.clone();
        redactor.redact_in_place(&mut out.stdout, &mut counts);
        redactor.redact_in_place(&mut out.stderr, &mut counts);
        if let Some(process::Failure::Spawn(why)) = &mut out.failure {
            redactor.redact_in_place(why, &mut counts);
        }
        self.record_redaction(task, counts)?;
        Ok(out)
    }

    fn record_redaction(&mut self, task: Option<&TaskId>, counts: Counts) -> Result<()> {
        if !counts.is_empty() {
            self.execute(CommandKind::RecordRedaction {
                task: task.cloned(),
                redactions: redactions(counts),
            })?;
        }
        Ok(())
    }

    fn handle(&mut self, done: Done) -> Result<()> {
        let done = match done {
            Done::Agent(id, out) => Done::Agent(id.clone(), self.redacted(Some(&id), out)?),
            Done::Tests(id, out) => Done::Tests(id.clone(), self.redacted(Some(&id), out)?),
            Done::Eval(id, out) => Done::Eval(id.clone(), self.redacted(Some(&id), out)?),
            Done::Replan(out) => Done::Replan(self.redacted(None, out)?),
        };
        match done {
            Done::Agent(id, out) => {
                if !self.ended(&id, "agent", &out)? {
                    return Ok(());
                }
                self.record_changes(&id)?;
                let child = self.child_ended(&id)?;
                if child.as_ref().is_some_and(|(_, succeeded)| !succeeded) {
                    return Ok(());
                }
                let duration_ms = self.clock.duration_ms(out.duration);
                if !out.succeeded() {
                    let (error, error_type) = out.failure_text();
                    return self
                        .execute(CommandKind::FailStage {
                            task: id,
                            error,
                            error_type: error_type.into(),
                            duration_ms,
                        })
                        .map(|_| ());
                }
                let report = match child {
                    // The child's own log holds its story; runlog's summary is not a report.
                    Some((child, _)) => protocol::AgentReport {
                        summary: format!("child run {child} succeeded"),
                        result: serde_json::json!({ "child_run": child.as_str() }).into(),
                        ..protocol::AgentReport::default()
                    },
                    None => protocol::agent_report(&out.stdout),
                };
                for name in report.checkpoints {
                    self.execute(CommandKind::ReachCheckpoint {
                        task: id.clone(),
                        name,
                    })?;
                }
                for class in report.classes {
                    if let Err(r) = self.try_execute(CommandKind::Classify {
                        task: id.clone(),
                        class,
                    })? {
                        self.note(&id, format!("classification {} refused: {r}", class.name()))?;
                    }
                }
                let agent = self
                    .state()
                    .task(&id)
                    .and_then(|t| t.agent.clone())
                    .map_or_else(|| "agent".into(), |a| a.0);
                for text in report.messages {
                    self.execute(CommandKind::PostMessage {
                        task: Some(id.clone()),
                        from: agent.clone(),
                        text,
                    })?;
                }
                for problem in report.problems {
                    self.note(&id, problem)?;
                }
                if !report.add_tasks.is_empty() {
                    if let Err(why) = self.decompose(&id, &agent, report.add_tasks)? {
                        // Refused: the attempt fails with the reason, which its retry reads
                        // as feedback.
                        return self
                            .execute(CommandKind::FailStage {
                                task: id,
                                error: format!("the tasks it added were refused: {why}"),
                                error_type: "plan-refused".into(),
                                duration_ms,
                            })
                            .map(|_| ());
                    }
                }
                let submit = CommandKind::SubmitTask {
                    task: id.clone(),
                    summary: report.summary,
                    result: report.result,
                    duration_ms,
                };
                match self.try_execute(submit)? {
                    Ok(_) => Ok(()),
                    Err(r @ Rejection::CheckpointsMissing { .. }) => self
                        .execute(CommandKind::FailStage {
                            task: id,
                            error: r.to_string(),
                            error_type: "checkpoints".into(),
                            duration_ms,
                        })
                        .map(|_| ()),
                    Err(r) => Err(RunnerError::Refused(Box::new(r))),
                }
            }
            Done::Tests(id, out) => {
                if !self.ended(&id, "test", &out)? {
                    return Ok(());
                }
                let details = test_details(&out);
                self.execute(CommandKind::RecordTests {
                    task: id,
                    passed: out.succeeded(),
                    details,
                })
                .map(|_| ())
            }
            Done::Eval(id, out) => {
                if !self.ended(&id, "eval", &out)? {
                    return Ok(());
                }
                let evaluator = self
                    .state()
                    .task(&id)
                    .and_then(|t| t.spec.eval.clone())
                    .unwrap_or_default();
                let parsed = if out.succeeded() {
                    protocol::evaluation(&out.stdout)
                } else {
                    Err(format!("the evaluator {}", out.failure_text().0))
                };
                let kind = match parsed {
                    Ok(e) => CommandKind::ScoreEval {
                        task: id,
                        evaluator,
                        score: e.score,
                        dimensions: e.dimensions,
                        notes: e.notes,
                    },
                    Err(error) => CommandKind::RecordEvalError {
                        task: id,
                        evaluator,
                        error,
                    },
                };
                self.execute(kind).map(|_| ())
            }
            Done::Replan(out) => {
                let Some(Replanning { seen, after, .. }) = self.replanning.take() else {
                    return Ok(());
                };
                self.record_output(&after, "replan", &out)?;
                self.record_usage(&after, UsageStage::Replanner, &out)?;
                match self.revision(&out, seen) {
                    Ok(kind) => match self.try_execute(kind)? {
                        Ok(_) => Ok(()),
                        Err(r) => {
                            self.give_up_replan(format!("the replanner's plan was refused: {r}"))
                        }
                    },
                    Err(why) => self.give_up_replan(why),
                }
            }
        }
    }

    fn give_up_replan(&mut self, why: String) -> Result<()> {
        self.replan_gave_up = true;
        self.observer.note(&format!("⏸ {why}"));
        self.execute(CommandKind::PostMessage {
            task: None,
            from: "runlog".into(),
            text: why,
        })
        .map(|_| ())
    }

    fn note(&mut self, id: &TaskId, text: String) -> Result<()> {
        self.execute(CommandKind::PostMessage {
            task: Some(id.clone()),
            from: "runlog".into(),
            text,
        })
        .map(|_| ())
    }

    /// Reads the replanner's answer (see [`super::workflow::parse_revision`]).
    fn revision(&self, out: &Outcome, seen: u64) -> std::result::Result<CommandKind, String> {
        if !out.succeeded() {
            return Err(format!("the replan command {}", out.failure_text().0));
        }
        super::workflow::parse_revision(&out.stdout, "revised by the replan command", Some(seen))
            .map_err(|e| format!("the replan command's output is {e}"))
    }

    /// Stops every running process gently (SIGTERM, the grace period, SIGKILL) and waits, within
    /// a bound, for each to end; whatever does not end in time is abandoned, which kills its
    /// group (see `process`).
    async fn stop_all(&mut self) {
        if let Some(crew) = &self.crew {
            crew.ended(self.busy.len());
        }
        let mut all: Vec<Running> = self.busy.drain().map(|(_, r)| r).collect();
        all.extend(self.replanning.take().map(|r| r.running));
        for r in &all {
            r.stop();
        }
        let deadline = Instant::now() + self.ctx.runner.grace + STOP_MARGIN;
        for mut r in all {
            let left = deadline.saturating_duration_since(Instant::now());
            if tokio::time::timeout(left, &mut r.handle).await.is_err() {
                r.handle.abort();
            }
        }
    }

    async fn interrupt(mut self, started: Instant) -> Result<Ended> {
        self.end_steps()?;
        self.observer
            .note("⏹ stopping: asking running commands to end (SIGTERM)");
        self.stop_all().await;
        self.observer.end();
        match self.crew.clone().filter(|c| !c.owns_run) {
            // A worker leaves: what it holds goes to the others at once.
            Some(crew) => self.give_up_held(&crew)?,
            None => {
                self.execute(CommandKind::Interrupt {
                    reason: "interrupted; `runlog resume` continues".into(),
                })?;
            }
        }
        Ok(self.into_ended(started, true))
    }

    /// Abandons every unfinished task this worker holds, as it leaves.
    fn give_up_held(&mut self, crew: &Crew) -> Result<()> {
        let held: Vec<TaskId> = self
            .state()
            .tasks
            .values()
            .filter(|t| !t.status.is_terminal() && t.held_by() == Some(crew.me.as_str()))
            .map(|t| t.spec.id.clone())
            .collect();
        for task in held {
            let _ = self.try_execute(CommandKind::AbandonAttempt {
                task,
                worker: crew.me.clone(),
                reason: format!("worker {} left", crew.me),
            })?;
        }
        Ok(())
    }

    fn into_ended(self, started: Instant, interrupted: bool) -> Ended {
        Ended {
            state: self.session.into_state(),
            interrupted,
            elapsed: started.elapsed(),
        }
    }

    /// Outside the loop's steps every decision is appended as it is made.
    fn end_steps(&mut self) -> Result<()> {
        self.commit()?;
        self.session.stop_batching();
        Ok(())
    }

    fn finish(mut self, started: Instant) -> Result<Ended> {
        self.end_steps()?;
        self.observer.end();
        // Every command has ended: nothing listed is left to stop.
        process::forget_groups(&self.ctx.layout.groups());
        match self.try_execute(CommandKind::Finish)? {
            Ok(_) => {}
            // Among workers another may have finished it first.
            Err(_) if self.crew.is_some() => {}
            Err(r) => return Err(RunnerError::Refused(Box::new(r))),
        }
        if let Some(ws) = &self.ctx.workspace {
            if let Err(e) = ws.close(self.session.state()) {
                self.observer
                    .note(&format!("note: the run's worktrees stay: {e}"));
            }
        }
        Ok(self.into_ended(started, false))
    }
}

/// What a test run's record says: the end of its output when it passed; why it failed and its
/// output (whole lines, head and tail) when it did not, which the retry's feedback shows.
fn test_details(out: &Outcome) -> String {
    if out.succeeded() {
        let said = process::head_and_tail(&out.stdout, 500);
        return if said.is_empty() {
            "tests passed".into()
        } else {
            said
        };
    }
    let (why, _) = out.failure_text();
    let printed = match (out.stdout.trim().is_empty(), out.stderr.trim().is_empty()) {
        (false, false) => format!("{}\n--- stderr ---\n{}", out.stdout.trim_end(), out.stderr),
        (false, true) => out.stdout.clone(),
        _ => out.stderr.clone(),
    };
    format!("{why}\n{}", process::head_and_tail(&printed, TEST_FEEDBACK))
        .trim_end()
        .to_owned()
}

/// At most `cap` bytes of a file a command wrote, as text; nothing when it is not there.
fn read_capped(path: &std::path::Path, cap: usize) -> String {
    use std::io::Read;
    let mut bytes = Vec::new();
    if let Ok(f) = std::fs::File::open(path) {
        let _ = f
            .take(u64::try_from(cap).unwrap_or(u64::MAX))
            .read_to_end(&mut bytes);
    }
    String::from_utf8_lossy(&bytes).into_owned()
}
