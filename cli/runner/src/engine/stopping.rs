//! How driving ends: every task settled (the run finished), or the stop switch (the run
//! interrupted, or a worker leaving its tasks to the others).

use super::{Ended, Engine, Result, STOP_MARGIN};
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
        self.procs
            .stop_all(self.ctx.runner.grace + STOP_MARGIN)
            .await;
    }

    pub(super) async fn interrupt(mut self, started: Instant) -> Result<Ended> {
        tracing::debug!(
            run = self.rec.run(),
            running = self.procs.busy.len(),
            "stop asked: interrupting"
        );
        self.end_steps()?;
        self.rec
            .note("⏹ stopping: asking running commands to end (SIGTERM)");
        self.stop_all().await;
        self.rec.observer().end();
        match self.crew.clone().filter(|c| !c.owns_run) {
            // A worker leaves: what it holds goes to the others at once.
            Some(crew) => self.give_up_held(&crew)?,
            None => {
                self.record(CommandKind::Interrupt {
                    reason: "interrupted; `runlog resume` continues".into(),
                })?;
            }
        }
        self.settle_alerts().await?;
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
            let _ = self.rec.record(CommandKind::AbandonAttempt {
                task,
                worker: crew.me.clone(),
                reason: format!("worker {} left", crew.me),
            })?;
        }
        Ok(())
    }

    pub(super) fn into_ended(self, started: Instant, interrupted: bool) -> Ended {
        Ended {
            state: self.rec.into_state(),
            interrupted,
            elapsed: started.elapsed(),
        }
    }

    /// Outside the loop's steps every decision is appended as it is made.
    pub(super) fn end_steps(&mut self) -> Result<()> {
        let appended = self.rec.end_steps()?;
        self.appended(appended).map(|_| ())
    }

    pub(super) async fn finish(mut self, started: Instant) -> Result<Ended> {
        tracing::debug!(
            run = self.rec.run(),
            seq = self.state().seq,
            "nothing more can happen: finishing"
        );
        self.end_steps()?;
        self.rec.observer().end();
        // Every command has ended: nothing listed is left to stop.
        process::forget_groups(&self.ctx.layout.groups());
        match self.rec.record(CommandKind::Finish)? {
            Ok(_) => {}
            // Among workers another may have finished it first.
            Err(_) if self.crew.is_some() => {}
            Err(r) => return Err(RunnerError::Refused(Box::new(r))),
        }
        if let Some(ws) = &self.ctx.workspace {
            if let Err(e) = ws.close(self.rec.state()) {
                self.rec
                    .note(&format!("note: the run's worktrees stay: {e}"));
            }
        }
        self.settle_alerts().await?;
        Ok(self.into_ended(started, false))
    }
}
