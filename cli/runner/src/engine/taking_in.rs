//! Taking in what happened: a finished process (what it means is worked out by
//! [`crate::finished`]; here it is carried out), and what others appended to the run.

use super::{Done, Engine, Replanning, Result};
use crate::error::RunnerError;
use crate::finished::{self, Ran, Refusal, Step};
use crate::process::Outcome;
use crate::sub_project;
use runlog_core::dispatch::Job;
use runlog_core::{Command, CommandKind, Hash, RunId, TaskId, TaskStatus};

impl Engine {
    /// Takes in a process's end: its output cleaned of secrets (the replacement recorded
    /// first), kept, its usage recorded, then what its end decides.
    pub(super) fn handle(&mut self, done: Done) -> Result<()> {
        let redactor = self.ctx.redactor.clone();
        match done {
            Done::Replan(out) => {
                let (out, redaction) = finished::redacted(&redactor, None, out);
                self.carry_out(redaction.map(finished::record))?;
                let Some(Replanning { seen, after, .. }) = self.procs.replanning.take() else {
                    return Ok(());
                };
                self.withdraw_keys(&after);
                self.take_calls(None)?;
                self.took_output(&after, Ran::Replan, &out)?;
                self.carry_out(finished::replan(&out, seen))
            }
            Done::Task(id, job, out) => {
                tracing::debug!(
                    run = self.rec.run(),
                    task = %id,
                    ?job,
                    code = ?out.code,
                    failure = ?out.failure,
                    ms = out.duration.as_millis() as u64,
                    "a command ended"
                );
                // Its calls are recorded before its end, and its keys stop working.
                self.withdraw_keys(&id);
                self.take_calls(None)?;
                let (mut out, redaction) = finished::redacted(&redactor, Some(&id), out);
                self.carry_out(redaction.map(finished::record))?;
                let watch = self.procs.busy.get_mut(&id).and_then(|r| r.outside.take());
                if !self.ended(&id, Ran::of(job), &out)? {
                    return Ok(());
                }
                let steps = match job {
                    Job::Attempt => {
                        self.check_outside(&id, watch, &mut out)?;
                        self.record_changes(&id)?;
                        let child = self.child_ended(&id)?;
                        let duration_ms = self.rec.clock().duration_ms(out.duration);
                        finished::attempt(self.state(), &id, &out, child.as_ref(), duration_ms)
                    }
                    Job::Tests => finished::tests(&id, &out),
                    Job::Eval => finished::eval(self.state(), &id, &out),
                };
                self.carry_out(steps)
            }
        }
    }

    /// Records what a task's process printed, used and left behind. `false` when its task moved
    /// meanwhile (a cancel, a rollback): its end is noted and nothing more is decided for it.
    fn ended(&mut self, id: &TaskId, ran: Ran, out: &Outcome) -> Result<bool> {
        let removed = self.procs.busy.remove(id);
        if let (Some(crew), Some(_)) = (&self.crew, &removed) {
            crew.ended(1);
        }
        let started_for = removed.and_then(|r| r.phase);
        self.took_output(id, ran, out)?;
        self.carry_out(finished::leftovers(id, ran, out))?;
        let now = self.phase(id);
        if started_for.is_none() || started_for == now {
            return Ok(true);
        }
        let cancelled = now.is_some_and(|(status, ..)| status == TaskStatus::Cancelled);
        self.carry_out([finished::moved_on(id, ran, out, cancelled)])?;
        Ok(false)
    }

    /// Keeps a command's output and records the usage it reported (on stdout, and in its
    /// `RUNLOG_USAGE` file: one per task, a task running one command at a time, and one for
    /// the replanner).
    fn took_output(&mut self, id: &TaskId, ran: Ran, out: &Outcome) -> Result<()> {
        let cap = self.ctx.runner.output_cap;
        self.carry_out(finished::output(id, ran, out, cap))?;
        let file = match ran {
            Ran::Replan => self.ctx.layout.usage(None),
            _ => self.ctx.layout.usage(Some(id)),
        };
        // Made by the command's first append, left in place and emptied when the task's next
        // command starts: removed, it made ext4 (without a journal) search past one more
        // recently deleted inode for every file the next tasks made.
        let appended = read_capped(&file, cap);
        let measured = self.measured(id, ran);
        let steps = finished::usage(self.state(), id, ran, &out.stdout, &appended, measured);
        self.carry_out(steps)
    }

    /// Carries out what a finished command decided, in order; a refusal is handled as its
    /// step says (see [`finished::IfRefused`]).
    pub(super) fn carry_out(&mut self, steps: impl IntoIterator<Item = Step>) -> Result<()> {
        for step in steps {
            match step {
                Step::Decide {
                    kind,
                    by,
                    if_refused,
                } => {
                    let mut cmd = Command::new(self.rec.clock().now(), kind);
                    if let Some(by) = by {
                        cmd = cmd.issued_by(by);
                    }
                    let Err(r) = self.rec.record_as(cmd)? else {
                        continue;
                    };
                    match if_refused.refused(&r) {
                        Refusal::Error => return Err(RunnerError::Refused(Box::new(r))),
                        Refusal::GoOn(instead) => self.carry_out(instead)?,
                        Refusal::Instead(instead) => return self.carry_out([instead]),
                    }
                }
                Step::Keep { task, stream, text } => self.keep(task, stream, &text)?,
                Step::GiveUpReplan(why) => {
                    self.procs.replan_gave_up = true;
                    self.rec.note(&format!("⏸ {why}"));
                    self.record(CommandKind::PostMessage {
                        task: None,
                        from: "runlog".into(),
                        text: why,
                    })?;
                }
            }
        }
        Ok(())
    }

    /// Records a stream's output: inline when small, its beginning inline and the whole in the
    /// blob area when large.
    fn keep(&mut self, task: TaskId, stream: String, text: &str) -> Result<()> {
        let (inline, blob) = if text.len() > finished::INLINE_OUTPUT {
            let hash = self
                .rec
                .log()
                .put_blob(text.as_bytes())
                .map_err(RunnerError::Output)?;
            let mut cut = finished::INLINE_OUTPUT;
            while !text.is_char_boundary(cut) {
                cut -= 1;
            }
            (text.get(..cut).unwrap_or("").to_owned(), Some(Hash(hash)))
        } else {
            (text.to_owned(), None)
        };
        self.record(CommandKind::RecordOutput {
            task,
            stream,
            text: inline,
            blob,
            bytes: text.len() as u64,
        })?;
        Ok(())
    }

    /// A note from runlog on the task's story.
    pub(super) fn note(&mut self, id: &TaskId, text: String) -> Result<()> {
        self.carry_out([finished::note(id, text)])
    }

    /// Takes in what others appended to the run up to `seq`: a rollback among it moves the
    /// git branches, and the processes whose task moved are stopped.
    pub(super) fn take_foreign(&mut self, seq: u64) -> Result<()> {
        let events = self.rec.take_in(seq)?;
        // Most announcements are this engine's own appends: nothing to take in, nothing moved.
        if events.is_empty() {
            return Ok(());
        }
        let rolled_back = events
            .iter()
            .rev()
            .find(|(_, e)| matches!(e.kind, runlog_core::EventKind::RolledBack { .. }))
            .map(|(seq, _)| *seq);
        if let Some(seq) = rolled_back {
            self.follow_workspace(seq)?;
        }
        self.stop_moved();
        Ok(())
    }
    fn child_ended(&mut self, id: &TaskId) -> Result<Option<(RunId, bool)>> {
        let Some(child) = self.state().child_run_of(id).cloned() else {
            return Ok(None);
        };
        let (succeeded, failures) =
            match sub_project::child_end(self.rec.log().as_ref(), child.as_str())? {
                None => return Ok(None),
                Some(sub_project::ChildEnd::Succeeded) => (true, String::new()),
                Some(sub_project::ChildEnd::Failed(failures)) => (false, failures),
            };
        self.record(CommandKind::EndChildRun {
            task: id.clone(),
            child_run: child.clone(),
            succeeded,
            failures,
        })?;
        Ok(Some((child, succeeded)))
    }
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
