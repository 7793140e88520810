//! What the runner shows while it works: one line per meaningful transition, coloured by the
//! task's new status (pending-eval in chartreuse), and on a terminal a status line of counts
//! redrawn below them. Plain lines when not a terminal or with --quiet; `NO_COLOR` honoured.
//!
//! A step's lines go out together when the step ends (one write, not one or two a line): each
//! write to a terminal or a pipe wakes whoever reads it, and the engine starts the step's
//! commands only after it has shown their lines. The status line's counts, which walk every
//! task, are taken once a step, not at each event.

use crate::render::palette;
use runlog_core::{Event, EventKind, RunState, TaskStatus};
use runlog_runner::Observer;
use std::io::{IsTerminal, Write};

/// Back to the start of the terminal's line, and that line cleared (the status line): runlog's
/// own sequence, through the terminal writer.
static CLEAR_LINE: std::sync::LazyLock<String> =
    std::sync::LazyLock::new(|| crate::render::terminal::own("\r\x1b[2K"));

/// The progress view.
#[derive(Debug)]
pub struct View {
    color: bool,
    live: bool,
    quiet: bool,
    /// Lines not written yet.
    pending: String,
    /// The status line as last drawn.
    status: Option<String>,
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
            pending: String::new(),
            status: None,
        }
    }

    fn line(&mut self, text: &str) {
        if self.live {
            self.pending.push_str(&CLEAR_LINE);
        }
        self.pending.push_str(text);
        self.pending.push('\n');
    }

    /// Writes the pending lines, and on a terminal the status line under them (its counts
    /// taken from `state`, or as last drawn).
    pub fn show(&mut self, state: Option<&RunState>) {
        if self.live {
            if let Some(state) = state {
                let counts = self.counts(state);
                if self.pending.is_empty() && self.status.as_ref() == Some(&counts) {
                    // Drawn already.
                    return;
                }
                self.status = Some(counts);
            }
            if let Some(status) = &self.status {
                if self.pending.is_empty() {
                    self.pending.push_str(&CLEAR_LINE);
                }
                self.pending.push_str(status);
            }
        }
        if self.pending.is_empty() {
            return;
        }
        let mut err = crate::render::terminal::Terminal(std::io::stderr().lock());
        let _ = err.write_all(self.pending.as_bytes());
        let _ = err.flush();
        self.pending.clear();
    }

    /// Reports one recorded event (shown by the next [`View::show`]).
    pub fn event(&mut self, e: &Event, state: &RunState) {
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
    }

    /// The status line: how many tasks are in each status.
    fn counts(&self, state: &RunState) -> String {
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
        format!("  {}", parts.join("  "))
    }

    /// Prints a plain message, at once.
    pub fn say(&mut self, text: &str) {
        if !self.quiet {
            self.line(text);
            self.show(None);
        }
    }

    /// Writes what is pending and clears the status line before the summary.
    pub fn done(&mut self) {
        self.status = None;
        if self.live {
            self.pending.push_str(&CLEAR_LINE);
        }
        self.show(None);
    }
}

impl Observer for View {
    fn event(&mut self, _seq: u64, event: &Event, state: &RunState) {
        View::event(self, event, state);
    }

    fn note(&mut self, text: &str) {
        self.say(text);
    }

    fn step(&mut self, state: &RunState) {
        self.show(Some(state));
    }

    fn end(&mut self) {
        self.done();
    }
}

/// An engine that stops on an error still shows what it recorded.
impl Drop for View {
    fn drop(&mut self) {
        if !self.pending.is_empty() {
            self.done();
        }
    }
}
