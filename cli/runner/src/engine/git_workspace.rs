//! The engine's side of a git workspace: a task's worktree made ready, its changes recorded,
//! done tasks merged, the branches following a rollback (see [`crate::workspace`]).

use super::{Engine, Result};
use crate::process::{Failure, Outcome};
use crate::workspace::Watch;
use runlog_core::dispatch::Job;
use runlog_core::outside::{OutsidePolicy, OutsideWrites};
use runlog_core::{CommandKind, TaskId};
use std::path::PathBuf;

impl Engine {
    /// Where a task's command runs in a git workspace: its worktree, made ready for an
    /// attempt; `None` without a workspace (the workflow's directory).
    pub(super) fn workspace_dir(&mut self, id: &TaskId, job: Job) -> Result<Option<PathBuf>> {
        let Some(ws) = &self.ctx.workspace else {
            return Ok(None);
        };
        let state = self.rec.state();
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
    pub(super) fn record_changes(&mut self, id: &TaskId) -> Result<()> {
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
        let mut counts = runlog_core::redact::Counts::new();
        let redactor = self.ctx.redactor.clone();
        let recorded = ws.record(self.rec.state(), id, self.rec.log().as_ref(), |patch| {
            redactor.redact_in_place(patch, &mut counts)
        })?;
        if let Some(command) = recorded {
            self.carry_out(
                crate::finished::redaction(Some(id), counts).map(crate::finished::record),
            )?;
            self.record(command)?;
        }
        Ok(())
    }

    /// Records what `id`'s attempt wrote outside its worktree since `watch` was taken (a git
    /// workspace); with `outside_writes = "fail"`, an attempt that succeeded fails, naming
    /// the paths. Nothing found there is changed.
    pub(super) fn check_outside(
        &mut self,
        id: &TaskId,
        watch: Option<Watch>,
        out: &mut Outcome,
    ) -> Result<()> {
        let (Some(ws), Some(watch)) = (self.ctx.workspace.clone(), watch) else {
            return Ok(());
        };
        let written = ws.written_since(&watch);
        if written.is_empty() {
            return Ok(());
        }
        let policy = self.ctx.runner.outside_writes;
        let writes = OutsideWrites {
            task: id.clone(),
            attempt: self.state().task(id).map_or(0, |t| t.attempt),
            written,
            policy,
        };
        let words = writes.describe();
        self.rec.note(&format!("⚠ {id} {words}"));
        self.record(CommandKind::RecordOutsideWrites {
            writes: Box::new(writes),
        })?;
        if policy == OutsidePolicy::Fail && out.succeeded() {
            out.failure = Some(Failure::WroteOutside(words));
        }
        Ok(())
    }

    /// Merges every done task not merged yet into the integration branch (a git workspace).
    pub(super) fn merge_due(&mut self) -> Result<()> {
        let Some(ws) = self.ctx.workspace.clone() else {
            return Ok(());
        };
        for task in self.state().merges_due() {
            if let Some(command) = ws.merge(self.rec.state(), &task)? {
                // Among workers, another may have recorded this merge first: a race lost, not
                // an error (the next step merges from the new head whatever is still due).
                if let Err(rejection) = self.rec.record(command)? {
                    tracing::debug!(%task, %rejection, "a merge recorded elsewhere first");
                    continue;
                }
            }
            if self
                .state()
                .task(&task)
                .is_some_and(|t| t.code.merged.is_some())
            {
                // Its work is on the integration branch: its worktree is not needed.
                if let Err(e) = ws.retire(self.rec.state(), &task) {
                    self.rec
                        .note(&format!("note: task {task}'s worktree stays: {e}"));
                }
            }
        }
        Ok(())
    }

    /// On taking a run on: its integration branch exists (a fork gets one of its own, from
    /// the commit at its seq).
    pub(super) fn adopt_workspace(&mut self) -> Result<()> {
        let Some(ws) = self.ctx.workspace.clone() else {
            return Ok(());
        };
        if let Some(open) = ws.adopt(self.rec.state())? {
            self.record(open)?;
        }
        Ok(())
    }

    /// Puts the git branches where the run's state says after a rollback recorded at `seq`.
    pub(super) fn follow_workspace(&mut self, seq: u64) -> Result<()> {
        if let Some(ws) = &self.ctx.workspace {
            ws.follow_rollback(self.rec.state(), seq)?;
        }
        Ok(())
    }
}
