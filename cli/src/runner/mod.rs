//! The workflow runner: one loop owns the run's state; every transition goes through `decide`
//! and is appended (durably) before the runner acts on it; agents, tests, evaluators and the
//! replan command run as processes on tokio tasks and report back over a channel.

pub mod clock;
pub mod process;
pub mod protocol;
pub mod view;

use crate::error::{CliError, ExitKind, Result};
use clock::Clock;
use process::Outcome;
use runlog_core::evolve::evolve_in_place;
use runlog_core::projections::Board;
use runlog_core::{
    decide, Command, CommandKind, Event, Hash, Readiness, Rejection, RunOutcome, RunState,
    RunStatus, TaskId, TaskStatus,
};
use runlog_replay::control::append;
use runlog_store::EventLog;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Instant;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use view::View;

/// Output longer than this goes to the blob area; the event keeps its beginning.
const INLINE_OUTPUT: usize = 4_096;

/// How to run.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// Plain lines only.
    pub quiet: bool,
    /// Override the workflow's `jobs`.
    pub jobs: Option<u32>,
}

/// Where the workflow's commands run and how plans are revised.
#[derive(Debug, Clone)]
pub struct Context {
    /// The workflow file's directory.
    pub dir: PathBuf,
    /// The replan command.
    pub replan: Option<String>,
    /// Where worktrees and feedback files live: `STORE/worktrees/RUN`.
    pub work: PathBuf,
}

/// Which of a task's commands a process runs.
#[derive(Debug, Clone, Copy)]
enum Job {
    Agent,
    Tests,
    Eval,
}

impl Job {
    fn command(self, spec: &runlog_core::TaskSpec) -> Option<&str> {
        match self {
            Job::Agent => spec.run.as_deref(),
            Job::Tests => spec.test.as_deref(),
            Job::Eval => spec.eval.as_deref(),
        }
    }

    fn done(self, task: TaskId, out: Outcome) -> Done {
        match self {
            Job::Agent => Done::Agent(task, out),
            Job::Tests => Done::Tests(task, out),
            Job::Eval => Done::Eval(task, out),
        }
    }
}

#[derive(Debug)]
enum Done {
    Agent(TaskId, Outcome),
    Tests(TaskId, Outcome),
    Eval(TaskId, Outcome),
    Replan(Outcome),
}

/// How a run ended, for the caller's summary.
#[derive(Debug)]
pub struct Ended {
    /// The final state.
    pub state: RunState,
    /// The exit kind (`None`: success).
    pub exit: Option<ExitKind>,
    /// Wall time of this invocation.
    pub elapsed: std::time::Duration,
}

/// The runner.
pub struct Engine<'l> {
    log: &'l dyn EventLog,
    run: String,
    state: RunState,
    ctx: Context,
    clock: Clock,
    view: View,
    jobs_override: Option<u32>,
    busy: HashMap<TaskId, JoinHandle<()>>,
    replanning: Option<JoinHandle<()>>,
    replan_gave_up: bool,
    tx: mpsc::UnboundedSender<Done>,
    rx: mpsc::UnboundedReceiver<Done>,
}

impl std::fmt::Debug for Engine<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine")
            .field("run", &self.run)
            .field("seq", &self.state.seq)
            .finish()
    }
}

fn internal(r: Rejection) -> CliError {
    CliError::failed(format!(
        "the runner issued a command the rules refused: {r}"
    ))
    .with_hint("this is a runlog bug; the log is intact: `runlog resume` continues the run")
}

impl<'l> Engine<'l> {
    /// A runner for `run`, whose state is `state` (the head).
    pub fn new(
        log: &'l dyn EventLog,
        run: &str,
        state: RunState,
        ctx: Context,
        opts: &RunOptions,
    ) -> Self {
        let (tx, rx) = mpsc::unbounded_channel();
        Self {
            log,
            run: run.to_owned(),
            state,
            ctx,
            clock: Clock::from_env(),
            view: View::new(opts.quiet),
            jobs_override: opts.jobs,
            busy: HashMap::new(),
            replanning: None,
            replan_gave_up: false,
            tx,
            rx,
        }
    }

    /// Processes at once: `--jobs`, else the run's setting (read from the state, which only
    /// has the workflow's settings once the run started).
    fn jobs(&self) -> usize {
        self.jobs_override
            .unwrap_or(self.state.settings.jobs)
            .max(1) as usize
    }

    /// Decides and records a command; the state follows.
    fn try_execute(
        &mut self,
        kind: CommandKind,
    ) -> Result<std::result::Result<Vec<Event>, Rejection>> {
        let events = match decide(&self.state, Command::new(self.clock.now(), kind)) {
            Ok(e) => e,
            Err(r) => return Ok(Err(r)),
        };
        append(self.log, &self.run, self.state.seq, &events)?;
        for e in &events {
            evolve_in_place(&mut self.state, e);
            self.view.event(e, &self.state);
        }
        Ok(Ok(events))
    }

    fn execute(&mut self, kind: CommandKind) -> Result<Vec<Event>> {
        self.try_execute(kind)?.map_err(internal)
    }

    /// Starts a run of a workflow.
    pub fn start(&mut self, start: CommandKind) -> Result<()> {
        self.execute(start).map(|_| ())
    }

    /// Makes an interrupted, crashed or paused run runnable again.
    pub fn prepare_resume(&mut self) -> Result<()> {
        if self.state.status == RunStatus::Running {
            // Nothing recorded how the last runner stopped (kill -9, power loss): say so, which
            // also abandons the attempts it had running; they are retried below.
            self.execute(CommandKind::Interrupt {
                reason: "the runner stopped without recording it; resuming".into(),
            })?;
        }
        if matches!(
            self.state.status,
            RunStatus::Finished(RunOutcome::Succeeded)
        ) {
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
            self.state.status,
            RunStatus::Finished(RunOutcome::Succeeded)
        )
    }

    /// Runs until every task is resolved or nothing more can happen; Ctrl-C interrupts.
    pub async fn drive(mut self) -> Result<Ended> {
        let started = Instant::now();
        let mut signals = Signals::new()?;
        loop {
            self.dispatch()?;
            let next_retry = self.next_retry_due();
            if self.busy.is_empty() && self.replanning.is_none() {
                match next_retry {
                    Some(due) => {
                        tokio::select! {
                            _ = self.clock.sleep_until(due) => continue,
                            _ = signals.recv() => return self.interrupt(started),
                        }
                    }
                    None => return self.finish(started),
                }
            }
            tokio::select! {
                Some(done) = self.rx.recv() => self.handle(done)?,
                _ = signals.recv() => return self.interrupt(started),
                _ = self.clock.sleep_until(next_retry.unwrap_or_default()), if next_retry.is_some() => {}
            }
        }
    }

    fn next_retry_due(&self) -> Option<runlog_core::Timestamp> {
        if self.state.replan.is_some() {
            return None;
        }
        self.state
            .tasks_in_order()
            .filter(|t| {
                t.status == TaskStatus::InProgress
                    && !t.running
                    && !self.busy.contains_key(&t.spec.id)
            })
            .filter_map(|t| t.retry_due)
            .min()
    }

    fn dispatch(&mut self) -> Result<()> {
        let replan_pending = self.state.replan.is_some();
        if let Some(replan) = &self.state.replan {
            let agents_busy = self
                .busy
                .keys()
                .any(|id| self.state.task(id).is_some_and(|t| t.running));
            if !replan.loop_detected
                && !agents_busy
                && self.replanning.is_none()
                && !self.replan_gave_up
            {
                match self.ctx.replan.clone() {
                    Some(cmd) => self.spawn_replan(cmd)?,
                    None => {
                        self.replan_gave_up = true;
                        self.view.say("⏸ a replan was requested and the workflow has no `replan` command: pausing");
                    }
                }
            }
        }
        let now = self.clock.peek();
        for id in self.state.order.clone() {
            if self.busy.len() >= self.jobs() {
                break;
            }
            if self.busy.contains_key(&id) || self.state.is_group(&id) {
                continue;
            }
            let Some(t) = self.state.task(&id) else {
                continue;
            };
            match t.status {
                TaskStatus::Testing => self.spawn(&id, Job::Tests),
                TaskStatus::PendingEval if t.spec.eval.is_some() && t.eval_error.is_none() => {
                    self.spawn(&id, Job::Eval)
                }
                TaskStatus::Open | TaskStatus::InProgress | TaskStatus::TestFailed
                    if !replan_pending =>
                {
                    if t.running || t.retry_due.is_some_and(|due| due > now) {
                        continue;
                    }
                    if t.status == TaskStatus::Open {
                        let circuit_open = self
                            .state
                            .stages
                            .get(&t.spec.stage_id())
                            .is_some_and(|s| s.circuit == runlog_core::state::Circuit::Open);
                        if self.state.readiness(&id) != Readiness::Ready || circuit_open {
                            continue;
                        }
                    }
                    self.execute(CommandKind::StartTask {
                        task: id.clone(),
                        agent: None,
                        worktree: None,
                    })?;
                    self.spawn(&id, Job::Agent);
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// The environment every command of a task sees.
    fn env_for(&self, id: &TaskId) -> Vec<(String, String)> {
        let Some(t) = self.state.task(id) else {
            return Vec::new();
        };
        let worktree = t.worktree.clone().unwrap_or_else(|| id.0.clone());
        let worktree = if Path::new(&worktree).is_absolute() {
            PathBuf::from(worktree)
        } else {
            self.ctx.work.join(worktree)
        };
        let _ = std::fs::create_dir_all(&worktree);
        let feedback = self.ctx.work.join(format!("{}.feedback", id.0));
        // The feedback file always exists; empty when there is nothing to say.
        let _ = std::fs::write(&feedback, t.feedback.clone().unwrap_or_default());
        vec![
            ("RUNLOG_RUN".into(), self.run.clone()),
            ("RUNLOG_TASK".into(), id.0.clone()),
            ("RUNLOG_ATTEMPT".into(), t.attempt.to_string()),
            ("RUNLOG_RESCUE".into(), t.rescues.to_string()),
            ("RUNLOG_WORKTREE".into(), worktree.display().to_string()),
            ("RUNLOG_FEEDBACK".into(), feedback.display().to_string()),
            ("RUNLOG_STAGE".into(), t.spec.stage_id().0),
        ]
    }

    /// Starts one of a task's commands; its outcome comes back as a `Done`.
    fn spawn(&mut self, id: &TaskId, job: Job) {
        let Some(task) = self.state.task(id) else {
            return;
        };
        let cmd = job.command(&task.spec).unwrap_or("true").to_owned();
        let timeout = self.state.strategy_for(task).timeout_ms;
        let env = self.env_for(id);
        let dir = self.ctx.dir.clone();
        let tx = self.tx.clone();
        let task = id.clone();
        let handle = tokio::spawn(async move {
            let out = process::run(&cmd, &dir, &env, None, timeout).await;
            let _ = tx.send(job.done(task, out));
        });
        self.busy.insert(id.clone(), handle);
    }

    fn spawn_replan(&mut self, cmd: String) -> Result<()> {
        let board = serde_json::to_string(&Board::of(&self.state)).map_err(|e| {
            CliError::failed(format!("cannot encode the board for the replanner: {e}"))
        })?;
        let env = vec![("RUNLOG_RUN".to_owned(), self.run.clone())];
        let dir = self.ctx.dir.clone();
        let tx = self.tx.clone();
        self.view.say("↺ running the replan command");
        self.replanning = Some(tokio::spawn(async move {
            let out = process::run(&cmd, &dir, &env, Some(board), None).await;
            let _ = tx.send(Done::Replan(out));
        }));
        Ok(())
    }

    /// Keeps a command's output: inline when small, in the blob area when large.
    fn record_output(&mut self, id: &TaskId, what: &str, out: &Outcome) -> Result<()> {
        for (stream, text) in [("stdout", &out.stdout), ("stderr", &out.stderr)] {
            if text.trim().is_empty() {
                continue;
            }
            let (inline, blob) = if text.len() > INLINE_OUTPUT {
                let hash = self.log.put_blob(text.as_bytes())?;
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

    fn handle(&mut self, done: Done) -> Result<()> {
        match done {
            Done::Agent(id, out) => {
                self.busy.remove(&id);
                self.record_output(&id, "agent", &out)?;
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
                let report = protocol::agent_report(&out.stdout);
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
                    .state
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
                    Err(r) => Err(internal(r)),
                }
            }
            Done::Tests(id, out) => {
                self.busy.remove(&id);
                self.record_output(&id, "test", &out)?;
                let details = match out.succeeded() {
                    true => {
                        process::tail(&out.stdout, 500).unwrap_or_else(|| "tests passed".into())
                    }
                    false => {
                        let (why, _) = out.failure_text();
                        let text = format!("{}\n{}", out.stdout, out.stderr);
                        format!("{why}\n{}", process::tail(&text, 2_000).unwrap_or_default())
                    }
                };
                self.execute(CommandKind::RecordTests {
                    task: id,
                    passed: out.succeeded(),
                    details,
                })
                .map(|_| ())
            }
            Done::Eval(id, out) => {
                self.busy.remove(&id);
                self.record_output(&id, "eval", &out)?;
                let evaluator = self
                    .state
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
                self.replanning = None;
                match self.revision(&out) {
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
        self.view.say(&format!("⏸ {why}"));
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

    /// Reads the replanner's answer (see [`crate::workflow::parse_revision`]).
    fn revision(&self, out: &Outcome) -> std::result::Result<CommandKind, String> {
        if !out.succeeded() {
            return Err(format!("the replan command {}", out.failure_text().0));
        }
        crate::workflow::parse_revision(&out.stdout, "revised by the replan command")
            .map_err(|e| format!("the replan command's output is {e}"))
    }

    fn abort_all(&mut self) {
        // Dropping a job's future kills its process group (see `process`).
        for (_, handle) in self.busy.drain() {
            handle.abort();
        }
        if let Some(h) = self.replanning.take() {
            h.abort();
        }
    }

    fn interrupt(mut self, started: Instant) -> Result<Ended> {
        self.abort_all();
        self.view.done();
        self.execute(CommandKind::Interrupt {
            reason: "interrupted (signal); `runlog resume` continues".into(),
        })?;
        Ok(Ended {
            state: self.state,
            exit: Some(ExitKind::Interrupted),
            elapsed: started.elapsed(),
        })
    }

    fn finish(mut self, started: Instant) -> Result<Ended> {
        self.view.done();
        self.execute(CommandKind::Finish)?;
        let exit = match &self.state.status {
            RunStatus::Finished(RunOutcome::Succeeded) => None,
            _ => Some(ExitKind::Failed),
        };
        Ok(Ended {
            state: self.state,
            exit,
            elapsed: started.elapsed(),
        })
    }
}

/// Ctrl-C and SIGTERM.
struct Signals {
    int: tokio::signal::unix::Signal,
    term: tokio::signal::unix::Signal,
}

impl Signals {
    fn new() -> Result<Self> {
        use tokio::signal::unix::{signal, SignalKind};
        let err = |e: std::io::Error| CliError::failed(format!("cannot listen for Ctrl-C: {e}"));
        Ok(Self {
            int: signal(SignalKind::interrupt()).map_err(err)?,
            term: signal(SignalKind::terminate()).map_err(err)?,
        })
    }

    async fn recv(&mut self) {
        tokio::select! {
            _ = self.int.recv() => {}
            _ = self.term.recv() => {}
        }
    }
}
