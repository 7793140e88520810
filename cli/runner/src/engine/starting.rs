//! Starting what the dispatch says: claiming a task (among workers), its worktree, its
//! environment, a sub-project's child run, and the process itself; stopping what moved.

use super::{Done, Engine, Replanning, Result, Running};
use crate::crew::Crew;
use crate::error::RunnerError;
use crate::process::Spec;
use crate::step::{Phase, Planned};
use crate::sub_project;
use runlog_core::dispatch::{Capacity, Job};
use runlog_core::projections::Board;
use runlog_core::{CommandKind, RunId, TaskId};
use std::path::PathBuf;

impl Engine {
    /// Starts what the dispatch policy proposes; returns when the next retry comes due.
    pub(super) fn dispatch(&mut self) -> Result<Option<runlog_core::Timestamp>> {
        self.abandon_lost()?;
        self.merge_due()?;
        let busy = &self.procs.busy;
        let crew = self.crew.as_ref();
        let running = crew.map_or(busy.len(), Crew::running);
        let free = self.jobs().saturating_sub(running);
        let now = self.rec.clock().peek();
        let (frontier, state) = self.rec.frontier();
        let cap = Capacity {
            busy: &|id| busy.contains_key(id) || crew.is_some_and(|c| c.held_elsewhere(state, id)),
            free,
            replanning: self.procs.replanning.is_some(),
            replan_stopped: self.procs.replan_gave_up,
        };
        let plan = frontier.dispatch(state, now, &cap);
        if !plan.over_budget.is_empty() {
            for task in plan.over_budget {
                // Another worker may have stopped it first: then there is nothing to do.
                if let Err(r) = self.rec.record(CommandKind::StopForBudget { task })? {
                    self.rec.note(&format!("note: {r}"));
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
                    self.procs.replan_gave_up = true;
                    self.rec.note("⏸ a replan was requested and the workflow has no `replan` command: pausing");
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
            let phase = self.phase(&id);
            let planned = Planned {
                id,
                job,
                command,
                dir,
                phase,
            };
            if let Some(now) = self.rec.plan(planned) {
                self.spawn(&now.id, now.job, now.command, now.dir);
            }
        }
        Ok(plan.next_due)
    }

    /// Takes the task on for `job`: an attempt starts here (among workers, claiming the task in
    /// the same append); tests or an eval go on here, after claiming the task from a lost
    /// worker. `false` when another worker won the race for it: nothing was recorded.
    pub(super) fn claim(&mut self, id: &TaskId, job: Job) -> Result<bool> {
        let Some(crew) = self.crew.clone() else {
            if job == Job::Attempt {
                self.record(CommandKind::StartTask {
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
        Ok(self.rec.record(command)?.is_ok())
    }

    /// Among workers: abandons the attempts of workers that were lost, so that the tasks are
    /// taken on (here or elsewhere).
    pub(super) fn abandon_lost(&mut self) -> Result<()> {
        let Some(crew) = self.crew.clone().filter(Crew::time_to_look) else {
            return Ok(());
        };
        let busy = &self.procs.busy;
        for (task, worker) in crew.lost(self.rec.state(), &|id| busy.contains_key(id)) {
            let reason = if worker == crew.me {
                "a process of this worker's name stopped without finishing it".to_owned()
            } else {
                format!("worker {worker}'s lease expired")
            };
            // Refused when another worker abandoned it first: nothing to do.
            let _ = self.rec.record(CommandKind::AbandonAttempt {
                task,
                worker,
                reason,
            })?;
        }
        Ok(())
    }

    /// The environment every command of a task sees; `slot` is the command's among those
    /// running (see [`Layout::feedback`]).
    pub(super) fn env_for(&mut self, id: &TaskId, slot: usize) -> Vec<(String, String)> {
        let Some(t) = self.rec.state().task(id) else {
            return Vec::new();
        };
        let layout = &self.ctx.layout;
        let worktree = layout.worktree(t.worktree.as_deref().unwrap_or(id.as_str()));
        // Made (or a spare moved in) first: the files below sit beside it.
        self.spares.make(&worktree);
        // Always there, empty when there is nothing to say.
        let feedback = layout.feedback(slot);
        let _ = crate::layout::rewrite(
            &feedback,
            t.feedback.as_deref().unwrap_or_default().as_bytes(),
        );
        let history = layout.history(slot);
        let usage = layout.usage(Some(id));
        crate::layout::empty_if_present(&usage);
        let env = vec![
            ("RUNLOG_RUN".into(), self.run().to_owned()),
            ("RUNLOG_TASK".into(), id.0.clone()),
            ("RUNLOG_ATTEMPT".into(), t.attempt.to_string()),
            ("RUNLOG_RESCUE".into(), t.rescues.to_string()),
            ("RUNLOG_WORKTREE".into(), worktree.display().to_string()),
            ("RUNLOG_FEEDBACK".into(), feedback.display().to_string()),
            ("RUNLOG_STAGE".into(), t.spec.stage_id().0),
            ("RUNLOG_HISTORY".into(), history.display().to_string()),
            ("RUNLOG_USAGE".into(), usage.display().to_string()),
        ];
        // Like the feedback file: always there, empty before the task has a story.
        let _ = self.rec.write_history(&history, id);
        env
    }

    /// A sub-project task's command for this attempt: run its child, or resume the one it
    /// has; a fork of the parent first gets a child of its own. `None` for other tasks.
    pub(super) fn child_command(&mut self, id: &TaskId) -> Result<Option<String>> {
        let Some(sp) = self.state().task(id).and_then(|t| t.sub_project.clone()) else {
            return Ok(None);
        };
        let log = self.rec.log().as_ref();
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
                sub_project::fork_child(
                    log,
                    inherited.as_str(),
                    &own,
                    &run,
                    id,
                    self.rec.clock().now(),
                )?;
                self.note(
                    id,
                    format!("child run {inherited} belongs to the run this one was forked from; this run's own, {own}, is forked from it at its head"),
                )?;
                (own, false)
            }
            None => (sub_project::new_child_id(log, &run, id)?, true),
        };
        self.record(CommandKind::LinkChildRun {
            task: id.clone(),
            child_run: RunId::from(child.as_str()),
        })?;
        let workflow = self.ctx.dir.join(&sp.workflow);
        let start = start.then_some((workflow.as_path(), run.as_str(), id));
        let store = self.ctx.shared.is_none().then_some(self.ctx.layout.store());
        sub_project::child_command(store, &child, start).map(Some)
    }

    /// Starts one of a task's commands (`command` instead of the spec's, for a sub-project);
    /// its outcome comes back as a `Done`.
    pub(super) fn spawn(
        &mut self,
        id: &TaskId,
        job: Job,
        command: Option<String>,
        dir: Option<PathBuf>,
    ) {
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
            .find(|i| self.procs.busy.values().all(|r| r.slot != *i))
            .unwrap_or_default();
        tracing::debug!(run = self.rec.run(), task = %id, ?job, dir = %dir.display(), "starting a command");
        let mut env = self.env_for(id, slot);
        env.extend(self.gateway_env(id, crate::finished::Ran::of(job)));
        env.extend(self.extra_env());
        if let (Some(url), true) = (&self.ctx.shared, child_run) {
            // A sub-project's child run: the same shared store, and this host's files for it.
            env.push(("RUNLOG_STORE".into(), url.clone()));
            let local = self.ctx.layout.store();
            env.push(("RUNLOG_LOCAL_DIR".into(), local.display().to_string()));
        }
        let outside = match (&self.ctx.workspace, job) {
            (Some(ws), Job::Attempt) if !child_run => Some(ws.watch()),
            _ => None,
        };
        let grace = self.ctx.runner.grace;
        let output_cap = self.ctx.runner.output_cap;
        let groups = self.ctx.layout.groups();
        let (tx, commands) = (self.procs.tx.clone(), self.procs.commands.clone());
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
            let out = commands.run(spec, stop).await;
            let _ = tx.send(Done::Task(task, job, out));
        });
        let running = Running {
            phase: self.phase(id),
            slot,
            outside,
            ..running
        };
        if let Some(crew) = &self.crew {
            crew.started_one();
        }
        self.procs.busy.insert(id.clone(), running);
    }

    pub(super) fn spawn_replan(&mut self, cmd: String) -> Result<()> {
        let Some(after) = self.state().replan.as_ref().map(|r| r.after_task.clone()) else {
            return Ok(());
        };
        let board = serde_json::to_string(&Board::of(self.state())).map_err(RunnerError::Board)?;
        let usage = self.ctx.layout.usage(None);
        crate::layout::empty_if_present(&usage);
        let mut env = vec![
            ("RUNLOG_RUN".to_owned(), self.run().to_owned()),
            ("RUNLOG_USAGE".to_owned(), usage.display().to_string()),
        ];
        // Its calls are charged to the task whose completion asked for it.
        env.extend(self.gateway_env(&after, crate::finished::Ran::Replan));
        env.extend(self.extra_env());
        let dir = self.ctx.dir.clone();
        let runner = self.ctx.runner.clone();
        let groups = self.ctx.layout.groups();
        let (tx, commands) = (self.procs.tx.clone(), self.procs.commands.clone());
        self.rec.note("↺ running the replan command");
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
            let out = commands.run(spec, stop).await;
            let _ = tx.send(Done::Replan(out));
        });
        self.procs.replanning = Some(Replanning {
            running,
            seen: self.state().seq,
            after,
        });
        Ok(())
    }

    pub(super) fn phase(&self, id: &TaskId) -> Option<Phase> {
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
    pub(super) fn stop_moved(&self) {
        for (id, running) in &self.procs.busy {
            if running.phase.is_some() && running.phase != self.phase(id) {
                running.stop();
            }
        }
    }
}

/// The command line of a task's job and the message its end sends back.
fn command_of(job: Job, spec: &runlog_core::TaskSpec) -> Option<&str> {
    match job {
        Job::Attempt => spec.run.as_deref(),
        Job::Tests => spec.test.as_deref(),
        Job::Eval => spec.eval.as_deref(),
    }
}
