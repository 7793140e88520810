//! What the runner shows while it works: one line per meaningful transition, coloured by the
//! task's new status (pending-eval in chartreuse), and on a terminal a status line of counts
//! redrawn below them. Plain lines when not a terminal or with --quiet; `NO_COLOR` honoured.

use crate::render::palette;
use runlog_core::{Event, EventKind, RunState, TaskStatus};
use runlog_runner::Observer;
use std::io::{IsTerminal, Write};

/// The progress view.
#[derive(Debug)]
pub struct View {
    color: bool,
    live: bool,
    quiet: bool,
}

fn paint(color: bool, status: TaskStatus, text: &str) -> String {
    crate::render::paint(text, palette::colour(status).filter(|_| color))
}

impl View {
    /// A view on stderr.
    pub fn new(quiet: bool) -> Self {
        let tty = std::io::stderr().is_terminal();
        let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
        Self {
            color: tty && !no_color && !quiet,
            live: tty && !quiet,
            quiet,
        }
    }

    fn line(&self, text: &str) {
        let mut err = std::io::stderr().lock();
        if self.live {
            let _ = write!(err, "\r\x1b[2K");
        }
        let _ = writeln!(err, "{text}");
    }

    /// Reports one recorded event.
    pub fn event(&self, e: &Event, state: &RunState) {
        if self.quiet {
            return;
        }
        let task = e
            .kind
            .task()
            .map(|t| t.as_str().to_owned())
            .unwrap_or_default();
        let status = e
            .kind
            .task()
            .and_then(|t| state.status_of(t))
            .unwrap_or(TaskStatus::Open);
        let text = match &e.kind {
            EventKind::TaskStarted { attempt, agent, .. } => {
                format!("▶ {task} attempt {attempt} ({agent})")
            }
            EventKind::TestsStarted { .. } => format!("… {task} testing"),
            EventKind::TestsPassed { .. } => format!("✓ {task} tests passed"),
            EventKind::TestsFailed { .. } => format!("✗ {task} tests failed"),
            EventKind::GateDecided {
                score,
                threshold,
                outcome,
                ..
            } => {
                format!(
                    "◆ {task} scored {score} (threshold {threshold}): {}",
                    crate::render::gate_word(outcome)
                )
            }
            EventKind::EvalErrored { error, .. } => format!("! {task} evaluator error: {error}"),
            EventKind::StageFailed {
                error, retry_count, ..
            } => format!("✗ {task} attempt failed ({retry_count}): {error}"),
            EventKind::RetryScheduled {
                delay_ms, attempt, ..
            } => format!("↻ {task} retry {attempt} in {delay_ms} ms"),
            EventKind::TaskFailed { reason, .. } => format!("✗ {task} failed: {reason}"),
            EventKind::TaskCancelled { reason, .. } => format!("⊘ {task} cancelled: {reason}"),
            EventKind::CircuitOpened { stage, failures } => {
                format!("⚡ circuit of stage {stage} opened after {failures} failures")
            }
            EventKind::ReplanRequested { reason, .. } => format!("⏸ replan requested: {reason}"),
            EventKind::PlanRevised {
                cancelled, added, ..
            } => {
                format!(
                    "↺ plan revised: {} cancelled, {} added",
                    cancelled.len(),
                    added.len()
                )
            }
            EventKind::ReplanLoopDetected {
                same_as_revision, ..
            } => {
                format!("⏸ the replanner regenerated revision {same_as_revision}: regeneration loop, pausing")
            }
            EventKind::TaskSubmitted { .. } if status == TaskStatus::Done => {
                format!("✓ {task} done")
            }
            EventKind::TaskSubmitted { .. } if status == TaskStatus::PendingEval => {
                format!("◇ {task} pending-eval")
            }
            _ => return,
        };
        self.line(&paint(self.color, status, &text));
        self.status_line(state);
    }

    /// Redraws the counts under the event lines (terminal only).
    pub fn status_line(&self, state: &RunState) {
        if !self.live {
            return;
        }
        let mut counts: Vec<(TaskStatus, usize)> = Vec::new();
        for t in state
            .tasks_in_order()
            .filter(|t| !state.is_group(&t.spec.id))
        {
            let s = t.status;
            match counts.iter_mut().find(|(k, _)| *k == s) {
                Some((_, n)) => *n += 1,
                None => counts.push((s, 1)),
            }
        }
        counts.sort();
        let parts: Vec<String> = counts
            .iter()
            .map(|(s, n)| paint(self.color, *s, &format!("{n} {s}")))
            .collect();
        let mut err = std::io::stderr().lock();
        let _ = write!(err, "\r\x1b[2K  {}", parts.join("  "));
        let _ = err.flush();
    }

    /// Prints a plain message.
    pub fn say(&self, text: &str) {
        if !self.quiet {
            self.line(text);
        }
    }

    /// Clears the status line before the summary.
    pub fn done(&self) {
        if self.live {
            let _ = write!(std::io::stderr().lock(), "\r\x1b[2K");
        }
    }
}

impl Observer for View {
    fn event(&mut self, _seq: u64, event: &Event, state: &RunState) {
        View::event(self, event, state);
    }

    fn note(&mut self, text: &str) {
        self.say(text);
    }

    fn end(&mut self) {
        self.done();
    }
}
