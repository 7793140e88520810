//! How driving ends: every task settled (the run finished), or the stop switch (the run
//! interrupted, or a worker leaving its tasks to the others).

use super::{Ended, Engine, Result, Running, STOP_MARGIN};
use crate::crew::Crew;
use crate::error::RunnerError;
use crate::process;
use runlog_core::{CommandKind, TaskId};
use std::time::Instant;

impl Engine {
    /// Stops every running process gently (SIGTERM, the grace period, SIGKILL) and waits, within
    /// a bound, for each to end; whatever does not end in time is abandoned, which kills its
    /// group (see `process`).
    pub(super) async fn stop_all(&mut self) {
        if let Some(crew) = &self.crew {
            crew.ended(self.procs.busy.len());
        }
        let mut all: Vec<Running> = self.procs.busy.drain().map(|(_, r)| r).collect();
        all.extend(self.procs.replanning.take().map(|r| r.running));
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

    pub(super) async fn interrupt(mut self, started: Instant) -> Result<Ended> {
        tracing::debug!(
            run = self.session.run(),
            running = self.procs.busy.len(),
            "stop asked: interrupting"
        );
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
    pub(super) fn give_up_held(&mut self, crew: &Crew) -> Result<()> {
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

    pub(super) fn into_ended(self, started: Instant, interrupted: bool) -> Ended {
        Ended {
            state: self.session.into_state(),
            interrupted,
            elapsed: started.elapsed(),
        }
    }

    /// Outside the loop's steps every decision is appended as it is made.
    pub(super) fn end_steps(&mut self) -> Result<()> {
        self.commit()?;
        self.session.stop_batching();
        Ok(())
    }

    pub(super) fn finish(mut self, started: Instant) -> Result<Ended> {
        tracing::debug!(
            run = self.session.run(),
            seq = self.state().seq,
            "nothing more can happen: finishing"
        );
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
